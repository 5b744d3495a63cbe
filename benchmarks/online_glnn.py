#!/usr/bin/env python3
"""Online GLNN at every level beside CTW and bzip2 -9: bpc and KB/s through the full API.

    python benchmarks/online_glnn.py [--levels 1,3,6,9] [--files alice29.txt,lcet10.txt]
    python benchmarks/online_glnn.py --synthetic      # validation regret, train+valid coded online
"""
from __future__ import annotations

import argparse
import os

from seqzip import bench, corpora

DIR = os.environ.get("SEQZIP_CORPORA", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "..", "shared", "corpora"))


def synthetic(levels: list[int]) -> None:
    """Code train+validation online; regret on the validation part (000 Sect. 4 protocol)."""
    print(f"{'problem':<11} {'method':<10} {'valid bits':>11} {'regret':>9}")
    for problem in ("insertions", "anbn"):
        train = corpora.generate(problem, None, seed=1)
        valid = corpora.generate(problem, None, seed=2)
        methods = ["bzip2-9", "ctw"] + [f"glnn-{level}" for level in levels]
        for method in methods:
            name, _, level = method.partition("-")
            if name == "glnn":
                bits = bench.validation_bits("glnn", train.data, valid.data, level=int(level))
            else:
                bits = bench.validation_bits(method, train.data, valid.data)
            print(f"{problem:<11} {method:<10} {bits:>11.1f} {bits - valid.true_bits:>9.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--levels", default="1,6")
    parser.add_argument("--files", default="alice29.txt")
    parser.add_argument("--synthetic", action="store_true")
    args = parser.parse_args()
    levels = [int(v) for v in args.levels.split(",")]
    if args.synthetic:
        synthetic(levels)
        return
    paths = [os.path.join(DIR, "canterbury", f) for f in args.files.split(",")]
    rows = []
    for level in levels:
        rows += [r for r in bench.run(paths, models=["glnn"], level=level)
                 if r["method"] == "glnn" or level == levels[0]]
    rows += [r for r in bench.run(paths, models=["ctw"], level=6) if r["method"] == "ctw"]
    print(bench.format_table(rows))


if __name__ == "__main__":
    main()
