#!/usr/bin/env python3
"""Log-loss of cm configs side by side: a preset and field overrides of it, over files, each
file's cost in bytes (the model's summed -log2 p / 8, from the coding loop's SCORE step, with
the input's length known as a stream's header gives it; no header or frames), the change
against the first config, and the total.  Session 22 chose level 6's ``mix_skip`` with it:

    python3 benchmarks/cm_loss.py --preset 133 --jobs 2 \\
        --files alice29.txt,asyoulik.txt,lcet10.txt,plrabn12.txt,cp.html,fields.c \\
        '{}' '{"mix_skip": 0.005}' '{"mix_skip": 0.01}'

Files are Canterbury names (from ``$SEQZIP_CORPORA``/canterbury) or paths.  ``--jobs`` runs
that many at a time (the CPU column is then only a rough guide: benchmarks/cm_cpu.py pairs
timings properly).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

DIR = os.path.join(os.environ.get("SEQZIP_CORPORA", "/work/shared/corpora"), "canterbury")


def _path(name: str) -> str:
    return name if os.sep in name or not os.path.exists(os.path.join(DIR, name)) else \
        os.path.join(DIR, name)


def loss(job: tuple[int, str, str]) -> tuple[float, float]:
    """(bytes of log-loss, CPU seconds) of ``path`` under preset ``preset_id`` with the
    overrides ``overrides`` (JSON): ``seqzip.coder.log_loss_bits`` over the byte values."""
    from seqzip.coder import log_loss_bits
    from seqzip.models.cm import CMConfig, CMModel
    preset_id, overrides, path = job
    data = open(path, "rb").read()
    config = CMConfig(**dict(CMConfig.PRESETS[preset_id], **json.loads(overrides)))
    model = CMModel(config, alphabet=bytes(range(256)), seed=0, size_hint=len(data))
    start = time.process_time()
    bits = log_loss_bits(model, np.frombuffer(bytearray(data), np.uint8)).sum()
    return float(bits / 8), time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("configs", nargs="+", help="JSON objects of field overrides")
    parser.add_argument("--preset", type=int, default=42, help="the preset id they override")
    parser.add_argument("--files", default="alice29.txt,cp.html,fields.c")
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    files = [_path(f) for f in args.files.split(",") if f]
    for c in args.configs:
        json.loads(c)  # a bad override is reported before anything runs
    jobs = [(args.preset, c, f) for f in files for c in args.configs]
    with ProcessPoolExecutor(args.jobs) as pool:
        results = dict(zip(jobs, pool.map(loss, jobs)))
    print(f"preset {args.preset}; bytes of log-loss (change against the first config), CPU s")
    width = max(len(os.path.basename(f)) for f in files)
    totals = [0.0] * len(args.configs)
    for f in files:
        cells, base = [], results[args.preset, args.configs[0], f][0]
        for k, c in enumerate(args.configs):
            b, cpu = results[args.preset, c, f]
            totals[k] += b
            cells.append(f"{b:12.1f} ({(b / base - 1) * 100:+.3f}%) {cpu:6.1f}")
        print(f"{os.path.basename(f):{width}s}  " + "  ".join(cells))
    print(f"{'total':{width}s}  " + "  ".join(
        f"{t:12.1f} ({(t / totals[0] - 1) * 100:+.3f}%)       " for t in totals))
    print("configs: " + "  ".join(f"[{k}] {c}" for k, c in enumerate(args.configs)))


if __name__ == "__main__":
    sys.exit(main())
