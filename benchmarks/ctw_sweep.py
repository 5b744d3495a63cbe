#!/usr/bin/env python3
"""Sweep CTW settings on text files: how the default depth, estimator and alpha were chosen.

    python benchmarks/ctw_sweep.py [FILES...] [--depths 4,6,8,10,12] [--alphas 0.5,0.125]
"""
from __future__ import annotations

import argparse
import itertools
import os
import time
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from seqzip import coder
from seqzip.api import symbols_of
from seqzip.models import create
from seqzip.models.ctw import CTWConfig

DEFAULT_DIR = os.environ.get("SEQZIP_CORPORA", os.path.join(os.path.dirname(__file__), "..",
                                                            "..", "shared", "corpora"))
TEXTS = ["alice29.txt", "lcet10.txt", "plrabn12.txt"]


def measure(job):
    path, config = job
    data = open(path, "rb").read()
    symbols, alphabet = symbols_of(data)
    model = create("ctw", config, alphabet_size=len(alphabet), seed=0)
    start = time.perf_counter()
    bits = coder.log_loss_bits(model, symbols).sum()
    elapsed = time.perf_counter() - start
    return os.path.basename(path), config, bits / len(data), len(data) / 1000 / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("files", nargs="*")
    parser.add_argument("--depths", default="4,6,8,10")
    parser.add_argument("--alphas", default="0.5,0.25,0.125,0.0625")
    parser.add_argument("--estimators", default="kt,zr")
    parser.add_argument("--limits", default="65535")
    parser.add_argument("--jobs", type=int, default=os.cpu_count())
    args = parser.parse_args()
    files = args.files or [os.path.join(DEFAULT_DIR, "canterbury", f) for f in TEXTS]
    configs = [CTWConfig(depth=int(d), alpha=float(a), estimator=e, count_limit=int(c))
               for d, a, e, c in itertools.product(args.depths.split(","),
                                                   args.alphas.split(","),
                                                   args.estimators.split(","),
                                                   args.limits.split(","))]
    jobs = [(f, c) for c in configs for f in files]
    results: dict = {}
    with ProcessPoolExecutor(args.jobs) as pool:
        for name, config, bpc, speed in pool.map(measure, jobs):
            results.setdefault(config, {})[name] = (bpc, speed)
    names = [os.path.basename(f) for f in files]
    print(f"{'depth':>5} {'alpha':>7} {'est':>4} {'limit':>6} "
          + " ".join(f"{n[:12]:>12}" for n in names) + f" {'mean':>7} {'KB/s':>6}")
    for config, row in sorted(results.items(), key=lambda kv: np.mean([v[0] for v in
                                                                          kv[1].values()])):
        bpcs = [row[n][0] for n in names]
        speed = np.mean([row[n][1] for n in names])
        print(f"{config.depth:>5} {config.alpha:>7.4f} {config.estimator:>4} "
              f"{config.count_limit:>6} " + " ".join(f"{b:>12.4f}" for b in bpcs)
              + f" {np.mean(bpcs):>7.4f} {speed:>6.0f}")


if __name__ == "__main__":
    main()
