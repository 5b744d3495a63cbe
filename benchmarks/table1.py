#!/usr/bin/env python3
"""Reproduce Ollivier 000 Table 1 here: regret on validation sequences, methods side by side.

    python benchmarks/table1.py --budget 600 --methods glnn-qdh-rbpm --problems insertions,music,anbn
    python benchmarks/table1.py --budget 120 --jobs 2 --json table1.json

Each (problem, method) runs in its own process (``--jobs`` at a time); the budget is CPU
seconds per method and problem, shared by the method's scan over network sizes.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
from concurrent.futures import ProcessPoolExecutor

from seqzip.research import table1


def one(args):
    problem, method, budget, seed, fit_options, sizes = args
    methods = [method] if method else []
    rows = table1.run_table([problem], methods, budget=budget, seed=seed, sizes=sizes,
                            fit_options=fit_options)
    return rows if not method else [r for r in rows if r["method"] == method]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--budget", type=float, default=600.0, help="CPU seconds per method")
    parser.add_argument("--problems", default=",".join(table1.PROBLEMS))
    parser.add_argument("--methods", default=",".join(table1.METHODS))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", default=None)
    parser.add_argument("--xor", action="store_true", help="also the distant-XOR run")
    parser.add_argument("--xor-lines", type=int, default=1000)
    parser.add_argument("--no-sanity", action="store_true", help="skip the bzip2 / CTW rows")
    parser.add_argument("--sizes", default=None, help="comma-separated network sizes (no scan)")
    parser.add_argument("--connectivity", type=int, default=None, help="edges per unit")
    # Training switches studied for the Table 1 gaps (defaults: the original trainer).
    parser.add_argument("--eval-every", type=int, default=2, help="steps between validations")
    parser.add_argument("--retry", type=int, default=0,
                        help="retry a rejected step at once at half the rate, up to N times")
    parser.add_argument("--relative-eps", type=float, default=0.0,
                        help="per-(j, y) damping of the transition metric")
    parser.add_argument("--tau-prior", type=float, default=0.0,
                        help="Gaussian prior on tau (and rho) around their initial values")
    args = parser.parse_args()
    problems = args.problems.split(",")
    fit_options = {"eval_every": args.eval_every,
                   "config_options": {"retry": args.retry, "relative_eps": args.relative_eps,
                                      "tau_prior": args.tau_prior}}
    if args.connectivity:
        fit_options["connectivity"] = [args.connectivity]
    sizes = [int(n) for n in args.sizes.split(",")] if args.sizes else None
    jobs = [] if args.no_sanity else [(p, None, 0, args.seed, None, None) for p in problems]
    jobs += [(p, m, args.budget, args.seed, fit_options, sizes) for p in problems
             for m in args.methods.split(",")]
    with ProcessPoolExecutor(args.jobs) as pool:
        rows = [r for part in pool.map(one, jobs) for r in part]
    order = {p: i for i, p in enumerate(problems)}
    rows.sort(key=lambda r: order[r["problem"]])
    print(f"# {platform.machine()}, {os.cpu_count()} cores, budget {args.budget:.0f} CPU s per "
          f"method and problem, seed {args.seed}, options {fit_options}")
    print(table1.format_table(rows))
    xor = None
    if args.xor:
        xor = table1.xor_run(args.budget, n_lines=args.xor_lines, seed=args.seed)
        print(table1.format_xor(xor))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "xor": xor}, f, indent=2, default=float)


if __name__ == "__main__":
    main()
