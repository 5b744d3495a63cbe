#!/usr/bin/env python3
"""Coder-loop throughput and coding overhead, side by side for each model and level.

Measures symbols per second through the public API (container, coder and model) for compress
and decompress, and the payload overhead over the model's own log-loss (sum of -log2 p).

    python benchmarks/throughput.py                      # generated text, 1 MB
    python benchmarks/throughput.py FILE... --models order2 --levels 1,6,9 --repeat 3
"""
from __future__ import annotations

import argparse
import os
import platform
import time

import seqzip
from seqzip import coder, corpora
from seqzip.api import symbols_of
from seqzip.models import create, make_config


def best_time(func, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*")
    parser.add_argument("--models", default="order2")
    parser.add_argument("--levels", default="1,6,9")
    parser.add_argument("--size", type=int, default=1 << 20, help="bytes of generated text")
    parser.add_argument("--repeat", type=int, default=3, help="best of N timings")
    args = parser.parse_args()
    inputs = [(os.path.basename(p), open(p, "rb").read()) for p in args.files] or \
        [("text (generated)", corpora.generate("text", args.size, seed=0).data)]
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, best of {args.repeat}")
    print(f"{'file':<20} {'model':<8} {'lvl':>3} {'size':>9} {'bpc':>7} {'overhead':>10} "
          f"{'comp sym/s':>11} {'dec sym/s':>11}")
    for name, data in inputs:
        symbols, alphabet = symbols_of(data)
        size = len(alphabet)
        for model in args.models.split(","):
            for level in map(int, args.levels.split(",")):
                packed = seqzip.compress(data, model=model, level=level)
                assert seqzip.decompress(packed) == data
                tc = best_time(lambda: seqzip.compress(data, model=model, level=level),
                               args.repeat)
                td = best_time(lambda: seqzip.decompress(packed), args.repeat)
                config = make_config(model, level)
                ideal = coder.log_loss_bits(create(model, config, alphabet_size=size, seed=0),
                                            symbols).sum()
                payload = coder.encode(create(model, config, alphabet_size=size, seed=0),
                                       symbols)
                overhead = (8 * len(payload) - ideal) / len(data)
                print(f"{name[:20]:<20} {model:<8} {level:>3} {len(data):>9,} "
                      f"{8 * len(packed) / len(data):>7.4f} {overhead:>10.2e} "
                      f"{len(data) / tc:>11,.0f} {len(data) / td:>11,.0f}")


if __name__ == "__main__":
    main()
