#!/usr/bin/env python3
"""Online GLNN (the default model) at every level beside CTW and bzip2 -9, in one run.

Every row goes through the full API (container, range coder, decode and byte comparison).

    python benchmarks/online_glnn.py                      # levels 1-9 on alice29.txt; level 6,
                                                          # ablations, CTW on all three texts
    python benchmarks/online_glnn.py --levels 1,6 --files alice29.txt
    python benchmarks/online_glnn.py --synthetic          # validation regret, train+valid online
    python benchmarks/online_glnn.py --synthetic --models glnn,mlstm --levels 6

Ablation rows (``--ablations``) separate what the network adds from what the experts add:
``glnn-alone`` is the network without experts, ``mix-only`` the same experts with one unit and
no transition learning (so the gates see only a constant and one slow unit).
"""
from __future__ import annotations

import argparse
import dataclasses
import os

from seqzip import bench, corpora
from seqzip.models.glnn import GLNNConfig

DIR = os.environ.get("SEQZIP_CORPORA", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "..", "shared", "corpora"))
TEXTS = "alice29.txt,lcet10.txt,plrabn12.txt"
ABLATIONS = {
    "glnn-alone": dataclasses.replace(GLNNConfig(), experts=""),
    "mix-only": dataclasses.replace(GLNNConfig(), n_units=1, rate_tau=0.0),
}


def config_row(path: str, method: str, config: GLNNConfig) -> dict:
    with open(path, "rb") as f:
        return bench.measure(os.path.basename(path), f.read(), "glnn", config=config,
                             label=method)


def synthetic(levels: list[int], models: list[str]) -> None:
    """Code train+validation online; regret on the validation part (000 Sect. 4 protocol)."""
    print(f"{'problem':<11} {'method':<10} {'valid bits':>11} {'regret':>9}")
    for problem in ("insertions", "anbn"):
        train = corpora.generate(problem, None, seed=1)
        valid = corpora.generate(problem, None, seed=2)
        methods = ["bzip2-9", "ctw"] + [f"{model}-{level}" for model in models
                                        for level in levels]
        for method in methods:
            name, _, level = method.partition("-")
            if name in models:
                bits = bench.validation_bits(name, train.data, valid.data, level=int(level))
            else:
                bits = bench.validation_bits(method, train.data, valid.data)
            print(f"{problem:<11} {method:<10} {bits:>11.1f} {bits - valid.true_bits:>9.1f}",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--levels", default="1,2,3,4,5,6,7,8,9")
    parser.add_argument("--level-files", default="alice29.txt",
                        help="files for the all-levels table")
    parser.add_argument("--files", default=TEXTS, help="files for default level, CTW, bzip2")
    parser.add_argument("--ablations", action="store_true")
    parser.add_argument("--synthetic", action="store_true")
    parser.add_argument("--models", default="glnn", help="with --synthetic: e.g. glnn,mlstm")
    args = parser.parse_args()
    levels = [int(v) for v in args.levels.split(",")]
    if args.synthetic:
        synthetic(levels, args.models.split(","))
        return
    canterbury = os.path.join(DIR, "canterbury")
    files = [os.path.join(canterbury, f) for f in args.files.split(",")]
    rows = bench.run(files, models=["glnn", "ctw"], level=6)
    if args.ablations:
        rows += [config_row(path, name, config) for path in files
                 for name, config in ABLATIONS.items()]
    print(bench.format_table(rows), flush=True)
    level_files = [os.path.join(canterbury, f) for f in args.level_files.split(",")]
    level_rows = []
    for level in levels:
        level_rows += [r for r in bench.run(level_files, models=["glnn"], level=level)
                       if r["method"] == "glnn"]
    print(bench.format_table(level_rows))


if __name__ == "__main__":
    main()
