#!/usr/bin/env python3
"""mLSTM, LSTM and mRNN trained online, beside the default GLNN, CTW and bzip2 -9, in one run.

Every row goes through the full API (container, range coder, decode and byte comparison).

    python benchmarks/recurrent.py                       # default level, the three texts
    python benchmarks/recurrent.py --files alice29.txt --jobs 1
    python benchmarks/recurrent.py --levels 1,6,9 --models mlstm --files alice29.txt

Rows: each model at ``--level`` (the three cells have the same parameter count within 2%),
plus variants: the Riemannian optimiser instead of Adam (for the mLSTM and the LSTM),
orthogonal initialisation, the network alone without experts, the ReLU RNN by SGD instead of
path-SGD, and OINIT / OPEN (002) on the ReLU RNN, the LSTM and the mLSTM.  ``--jobs 2`` runs two rows
at a time: bits are unaffected, speeds are then those of two jobs sharing the machine.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
from concurrent.futures import ProcessPoolExecutor

from seqzip import bench
from seqzip.models import make_config

DIR = os.environ.get("SEQZIP_CORPORA", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "..", "shared", "corpora"))
TEXTS = "alice29.txt,lcet10.txt,plrabn12.txt"


def variants(level: int) -> dict[str, tuple[str, object]]:
    """label -> (model, config or None for the level's config)."""
    mlstm, lstm = make_config("mlstm", level), make_config("lstm", level)
    relu = make_config("relu-rnn", level)
    return {
        "mlstm-riemannian": ("mlstm", dataclasses.replace(mlstm, optimizer="riemannian",
                                                          lr=0.02)),
        "lstm-riemannian": ("lstm", dataclasses.replace(lstm, optimizer="riemannian", lr=0.02)),
        "mlstm-orthogonal": ("mlstm", dataclasses.replace(mlstm, init="orthogonal")),
        "mlstm-alone": ("mlstm", dataclasses.replace(mlstm, experts="")),
        # 003's path-SGD against plain SGD, 002's OINIT and OPEN (level's config otherwise)
        "relu-rnn-sgd": ("relu-rnn", dataclasses.replace(relu, optimizer="sgd")),
        "relu-rnn-oinit": ("relu-rnn", dataclasses.replace(relu, oinit=True)),
        "relu-rnn-open": ("relu-rnn", dataclasses.replace(relu, open_penalty=0.01)),
        "lstm-oinit": ("lstm", dataclasses.replace(lstm, oinit=True)),
        "mlstm-oinit": ("mlstm", dataclasses.replace(mlstm, oinit=True)),
        "mlstm-open": ("mlstm", dataclasses.replace(mlstm, open_penalty=0.01)),
    }


def job(args: tuple) -> dict:
    path, model, level, config, label = args
    with open(path, "rb") as f:
        data = f.read()
    if model == "bzip2-9":
        return bench.measure_baseline(os.path.basename(path), data, model)
    return bench.measure(os.path.basename(path), data, model, level=level, config=config,
                         label=label)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", default=TEXTS)
    parser.add_argument("--levels", default="6")
    parser.add_argument("--models", default="mlstm,lstm,mrnn,relu-rnn,glnn,ctw")
    parser.add_argument("--no-variants", action="store_true")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    paths = [os.path.join(DIR, "canterbury", f) for f in args.files.split(",")]
    jobs = []
    for path in paths:
        jobs.append((path, "bzip2-9", None, None, None))
        for level in [int(v) for v in args.levels.split(",")]:
            for model in args.models.split(","):
                jobs.append((path, model, level, None, None))
            if not args.no_variants:
                for label, (model, config) in variants(level).items():
                    jobs.append((path, model, level, config, label))
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = list(pool.map(job, jobs))
    print(bench.format_table(rows))


if __name__ == "__main__":
    main()
