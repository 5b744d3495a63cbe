"""What config changes gain on given files: a preset beside the same preset with changes,
as payload bytes (the -log2 p the coder spends, summed; a preset stream adds a header of
40-60 bytes) and CPU seconds of the coding loop (the score path: the same step as compress).
Issue 20 (machine code) ran, on a 68000 object, an x86-64 object, sum and kennedy.xls:

    python3 benchmarks/code_contexts.py 20 '{"sets": "code,match,ordern,c1,word,c2", \\
        "code": 5, "aligned16": 0}' m68k_all.o ctw.o sum kennedy.xls

Arguments: the preset id, the changes (a JSON object of CMConfig fields), files.
"""
import json
import math
import sys
import time

import numpy as np

from seqzip.coder import log_loss_bits
from seqzip.models.cm import CMConfig, CMModel, PRESETS


def payload_bytes(config: CMConfig, data: bytes) -> tuple[int, float]:
    """The bytes the coder spends on ``data`` under ``config`` (within a byte or two) and the
    CPU seconds it took."""
    symbols = np.frombuffer(bytearray(data), np.uint8)
    start = time.process_time()
    model = CMModel(config, alphabet=bytes(range(int(symbols.max()) + 1)), seed=0)
    bits = float(log_loss_bits(model, symbols).sum())
    return math.ceil(bits / 8), time.process_time() - start


def main() -> None:
    preset_id, changes = int(sys.argv[1]), json.loads(sys.argv[2])
    base = CMConfig.for_preset_id(preset_id)
    changed = CMConfig(**dict(PRESETS[preset_id], **changes))
    print("file bytes payload(preset) payload(changed) change CPU_s(preset) CPU_s(changed)")
    for path in sys.argv[3:]:
        data = open(path, "rb").read()
        a, ta = payload_bytes(base, data)
        b, tb = payload_bytes(changed, data)
        print(f"{path} {len(data)} {a} {b} {100 * (b / a - 1):+.2f}% "
              f"{ta:.1f} {tb:.1f}", flush=True)


if __name__ == "__main__":
    main()
