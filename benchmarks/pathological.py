#!/usr/bin/env python3
"""002 Table I, temporal order row, here: the longest T each tanh RNN solves (test error under
1%) with the same budget: SRNN, SRNN + OINIT, SRNN + OPEN.

    python benchmarks/pathological.py --iterations 3000 --jobs 3 --json pathological.json

002's protocol (Sect. III-A): from T = 10, T rises by 10 while the network solves the problem;
100 tanh units, normalised initialisation, SGD on minibatches of 20, the test error checked
every 100 iterations (on --test fresh sequences; the paper used 10,000), at most --iterations
per T (the paper: 100,000).  Every variant gets the same rate and budget; OPEN adds
lambda ||W W^T - I||^2 (eq. 31), OINIT pre-trains Whh to below 1e-6 (eq. 16-18).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
from concurrent.futures import ProcessPoolExecutor

from seqzip.research import recurrent


def one(args):
    variant, task, a = args
    return variant, recurrent.longest_solved(task, variant, start=a.start, step=a.step,
                                             limit=a.limit, iterations=a.iterations,
                                             rate=a.rate, penalty=a.penalty, hidden=a.hidden,
                                             test_size=a.test, seed=a.seed)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", default="temporal-order",
                        choices=["temporal-order", "temporal-order-3bit"])
    parser.add_argument("--iterations", type=int, default=3000, help="budget per T")
    parser.add_argument("--rate", type=float, default=0.01)
    parser.add_argument("--penalty", type=float, default=1.0, help="OPEN's lambda")
    parser.add_argument("--hidden", type=int, default=100)
    parser.add_argument("--test", type=int, default=1000)
    parser.add_argument("--start", type=int, default=10)
    parser.add_argument("--step", type=int, default=10)
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", default=None)
    a = parser.parse_args()
    with ProcessPoolExecutor(a.jobs) as pool:
        results = dict(pool.map(one, [(v, a.task, a) for v in recurrent.VARIANTS]))
    print(f"# {a.task}: {platform.machine()}, {os.cpu_count()} cores, load "
          f"{os.getloadavg()[0]:.1f}; budget {a.iterations} iterations of 20 per T, rate "
          f"{a.rate}, lambda {a.penalty}, {a.hidden} units, seed {a.seed}")
    print(f"{'network':<12} {'longest T':>9}  runs (T: iterations, best error, radius "
          f"before -> after, CPU s)")
    for variant, (best, runs) in results.items():
        detail = "; ".join(f"{r['t']}: {r['iterations']}, {r['best_error']:.3f}, "
                           f"{r['radius_before']:.2f} -> {r['radius_after']:.2f}, "
                           f"{r['cpu_seconds']:.0f}" for r in runs)
        print(f"{variant:<12} {best:>9}  {detail}")
    print("002 Table I (100,000 iterations): SRNN 50, SRNN+OPEN 80, SRNN+OINIT 120")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"settings": vars(a), "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
