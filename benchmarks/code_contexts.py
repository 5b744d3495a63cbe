"""What config changes gain on given files: a preset beside the same preset with changes,
as payload bytes (the -log2 p the coder spends, summed; a preset stream adds a header of
40-60 bytes) and CPU seconds of the coding loop (the score path: the same step as compress).
Issue 20 (machine code) ran, on a 68000 object, an x86-64 object, sum and kennedy.xls:

    python3 benchmarks/code_contexts.py 20 '{"sets": "code,match,ordern,c1,word,c2", \\
        "code": 5, "aligned16": 0}' m68k_all.o ctw.o sum kennedy.xls

Arguments: the preset id, the changes (a JSON object of CMConfig fields), files.  Each
file's 68000 signature (``m68k_words``) is printed beside: the changes above cost ptt5 +0.95%
and kennedy.xls +0.26%, so they belong in a variant the encoder picks by such a detector.
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


# 68000 instruction words that compiled code is full of: RTS, LINK A6, UNLK A6, JSR abs.l,
# JSR d16(A5) (the Macintosh jump table), MOVEM.L to and from the stack, JSR d16(PC)
M68K_WORDS = [0x4E75, 0x4E56, 0x4E5E, 0x4EB9, 0x4EAD, 0x48E7, 0x4CDF, 0x4EBA]


def m68k_words(data: bytes) -> float:
    """Signature words per KiB at even offsets: 11.3 in 99 KB of 68000 objects, 0.00-0.02 in
    an x86-64 object, sum (SPARC), kennedy.xls, ptt5 and the Canterbury texts."""
    words = np.frombuffer(data[:len(data) // 2 * 2], ">u2")
    return int(np.isin(words, M68K_WORDS).sum()) * 1024 / max(len(data), 1)


def main() -> None:
    preset_id, changes = int(sys.argv[1]), json.loads(sys.argv[2])
    base = CMConfig.for_preset_id(preset_id)
    changed = CMConfig(**dict(PRESETS[preset_id], **changes))
    print("file bytes payload(preset) payload(changed) change CPU_s(preset) CPU_s(changed) "
          "m68k_words/KiB")
    for path in sys.argv[3:]:
        data = open(path, "rb").read()
        a, ta = payload_bytes(base, data)
        b, tb = payload_bytes(changed, data)
        print(f"{path} {len(data)} {a} {b} {100 * (b / a - 1):+.2f}% "
              f"{ta:.1f} {tb:.1f} {m68k_words(data):.2f}", flush=True)


if __name__ == "__main__":
    main()
