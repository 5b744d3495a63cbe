#!/usr/bin/env python3
"""Hessian-free against Adam on 100 KB of text: validation bits per character at equal CPU time.

    python benchmarks/hf.py --budget 600 --json hf.json
    python benchmarks/hf.py --optimizers hf --damping line-search --budget 300

Training text: the first ``--train-bytes`` of ``--corpus`` (default lcet10.txt); validation:
the next ``--valid-bytes`` (disjoint).  Both optimizers train the same model (``--kind``,
``--units``) from the same initial weights on the same sequences of ``--seq-len`` symbols; the
CPU clock counts training only (validation passes are not charged).  BLAS runs single-threaded
(set before numpy loads) so that CPU seconds measure the work, not thread contention.
"""
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402

from seqzip.research import hf, training  # noqa: E402

CORPUS = "/work/shared/corpora/canterbury/lcet10.txt"


def best_by(history, t):
    """Best validation bpc reached within t CPU seconds (early stopping keeps the best)."""
    values = [bpc for s, bpc in history if s <= t]
    return min(values) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", default=CORPUS)
    parser.add_argument("--train-bytes", type=int, default=100_000)
    parser.add_argument("--valid-bytes", type=int, default=20_000)
    parser.add_argument("--kind", default="mlstm", choices=hf.KINDS)
    parser.add_argument("--units", type=int, default=64)
    parser.add_argument("--seq-len", type=int, default=100)
    parser.add_argument("--budget", type=float, default=600.0, help="CPU seconds per optimizer")
    parser.add_argument("--optimizers", default="hf,adam")
    parser.add_argument("--damping", default="structural", choices=hf.DAMPINGS)
    parser.add_argument("--mu", type=float, default=0.1)
    parser.add_argument("--lam", type=float, default=0.01)
    parser.add_argument("--max-cg", type=int, default=100)
    parser.add_argument("--curvature-fraction", type=float, default=0.25)
    parser.add_argument("--adam-lr", type=float, default=2e-3)
    parser.add_argument("--adam-batch", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    with open(args.corpus, "rb") as f:
        raw = f.read(args.train_bytes + args.valid_bytes)
    train, valid = raw[:args.train_bytes], raw[args.train_bytes:]
    alphabet = sorted(set(train) | set(valid))
    x, v = training.encode(train, alphabet), training.encode(valid, alphabet)
    config = hf.HFConfig(damping=args.damping, mu=args.mu, lam=args.lam, max_cg=args.max_cg,
                         curvature_fraction=args.curvature_fraction)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
          f"{args.kind} {args.units} units, {len(alphabet)} symbols, train {len(train):,} B, "
          f"valid {len(valid):,} B, seq_len {args.seq_len}, budget {args.budget:.0f} CPU s",
          flush=True)
    results = {}
    for optimizer in args.optimizers.split(","):
        def progress(seconds, bpc, info, name=optimizer):
            detail = ""
            if info:
                detail = (f"  f {info['f']:.4f} cg {info['cg_iterations']} ({info['cg_stop']}) "
                          f"lam {info['lam']:.3g} mu {info['mu']:.3g} "
                          f"rho {info.get('rho', float('nan')):.2f} rate {info['rate']:.2f}")
            print(f"  {name:<5} {seconds:8.1f} s  {bpc:.4f} bpc{detail}", flush=True)

        result = hf.fit(args.kind, x, v, alphabet_size=len(alphabet), n_units=args.units,
                        budget=args.budget, seed=args.seed, optimizer=optimizer,
                        seq_len=args.seq_len, config=config,
                        adam={"lr": args.adam_lr, "batch": args.adam_batch},
                        progress=progress)
        results[optimizer] = result
        print(f"{optimizer}: best {result.validation_bpc:.4f} bpc after {result.steps} steps, "
              f"{result.seconds:.0f} CPU s", flush=True)
    marks = [args.budget * k / 10 for k in range(1, 11)]
    print("\nbest validation bpc by CPU time (training seconds)")
    print("optimizer " + " ".join(f"{t:>7.0f}" for t in marks))
    for name, result in results.items():
        print(f"{name:<9} " + " ".join(f"{best_by(result.history, t):>7.4f}" for t in marks))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args),
                       "runs": {name: {"history": r.history, "best_bpc": r.validation_bpc,
                                       "steps": r.steps, "seconds": r.seconds, "log": r.log}
                                for name, r in results.items()}}, f, indent=2)


if __name__ == "__main__":
    main()
