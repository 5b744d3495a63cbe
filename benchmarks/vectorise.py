#!/usr/bin/env python3
"""Does the compiler vectorise the recurrent kernels?  Builds the kernels three ways in
temporary copies and times the same mLSTM coding run with each (CPU time), one after the other:

* ``-O2``, ``-O2 -fno-tree-vectorize``, ``-O3`` (the shipped build; setup.py adds
  ``-ffp-contract=off -fno-math-errno -fno-strict-aliasing`` to each);

and checks that all three produce the same stream (no build reassociates a sum).
``gcc -fopt-info-vec-optimized`` lists the loops it vectorised in ``lstm.c`` (``--report``).

    python benchmarks/vectorise.py [--bytes 40000] [--model mlstm] [--report]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DIR = os.environ.get("SEQZIP_CORPORA", os.path.join(ROOT, "..", "shared", "corpora"))
BUILDS = {"-O2": ("-O2", ""), "-O2 -fno-tree-vectorize": ("-O2", "-fno-tree-vectorize"),
          "-O3": ("-O3", "")}
TIMER = """
import hashlib, sys, time, seqzip
data = open(sys.argv[1], "rb").read()[:int(sys.argv[2])]
best = None
for _ in range(2):
    t = time.process_time(); packed = seqzip.compress(data, model=sys.argv[3]); dt = time.process_time() - t
    best = dt if best is None else min(best, dt)
assert seqzip.decompress(packed) == data
print(len(data) / best / 1000, hashlib.sha256(packed).hexdigest())
"""


def build(where: str, opt: str, cflags: str, report: bool) -> str:
    shutil.copytree(os.path.join(ROOT, "seqzip"), os.path.join(where, "seqzip"),
                    ignore=shutil.ignore_patterns("*.so", "*.c", "__pycache__"))
    shutil.copy(os.path.join(ROOT, "setup.py"), where)
    flags = cflags + (" -fopt-info-vec-optimized" if report else "")
    env = dict(os.environ, SEQZIP_OPT=opt, CFLAGS=flags)
    done = subprocess.run([sys.executable, "setup.py", "build_ext", "--inplace"], cwd=where,
                          env=env, capture_output=True, text=True, check=True)
    return "\n".join(line for line in done.stderr.splitlines() if "lstm.c" in line
                     and "vectorized" in line)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bytes", type=int, default=40_000)
    parser.add_argument("--model", default="mlstm")
    parser.add_argument("--report", action="store_true")
    args = parser.parse_args()
    text = os.path.join(DIR, "canterbury", "alice29.txt")
    results = {}
    for label, (opt, cflags) in BUILDS.items():
        with tempfile.TemporaryDirectory() as where:
            report = build(where, opt, cflags, args.report)
            if report and args.report:
                print(f"--- {label}: vectorised loops in lstm.c\n{report}")
            out = subprocess.run([sys.executable, "-c", TIMER, text, str(args.bytes), args.model],
                                 env=dict(os.environ, PYTHONPATH=where), cwd=where,
                                 capture_output=True, text=True, check=True).stdout.split()
            results[label] = (float(out[0]), out[1])
    print(f"{args.model} level 6, first {args.bytes:,} bytes of alice29.txt, compress KB/s "
          f"(CPU time, best of 2)")
    for label, (speed, digest) in results.items():
        print(f"  {label:<26} {speed:7.2f}  stream sha256 {digest[:16]}")
    print("identical streams:", len({d for _, d in results.values()}) == 1)


if __name__ == "__main__":
    main()
