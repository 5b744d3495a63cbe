#!/usr/bin/env python3
"""Canterbury text files: every model beside bzip2 -9, xz, PPMd o6 (pyppmd) and zstd, one run.

    pip install pyppmd zstandard     # the optional peers
    python benchmarks/canterbury.py [--models ctw,order2] [--level 6] [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import os

from seqzip import bench

DIR = os.environ.get("SEQZIP_CORPORA", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                     "..", "..", "shared", "corpora"))
TEXTS = ["alice29.txt", "lcet10.txt", "plrabn12.txt"]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default=None)
    parser.add_argument("--level", type=int, default=6)
    parser.add_argument("--files", default=",".join(TEXTS))
    parser.add_argument("--json", default=None, help="also write the rows here")
    args = parser.parse_args()
    paths = [os.path.join(DIR, "canterbury", f) for f in args.files.split(",")]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        raise SystemExit(f"corpus files not found: {missing} (set SEQZIP_CORPORA)")
    models = args.models.split(",") if args.models else None
    rows = bench.run(paths, models=models, level=args.level)
    print(bench.format_table(rows))
    by_file: dict = {}
    for r in rows:
        by_file.setdefault(r["file"], {})[r["method"]] = r["bits_per_character"]
    if all("ppmd-o6" in v for v in by_file.values()):
        print("\nbits per character minus PPMd order 6:")
        for name, methods in by_file.items():
            print(f"  {name:<14} " + "  ".join(f"{m} {b - methods['ppmd-o6']:+.3f}"
                                               for m, b in methods.items() if m != "ppmd-o6"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
