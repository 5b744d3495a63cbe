"""Lean streams against checked ones (``seqzip.container``): exact stream bytes of each file at
a level, written lean (as ``seqzip.compress`` writes a stream of up to 64 Ki symbols today)
and checked (``session.LEAN`` off: every frame check and block check, the payload in whole
words), each lean stream checked by decoding.  Sizes only; files run on ``--jobs`` processes.

    python benchmarks/lean.py FILE... [--level 6] [--jobs 2]
"""
from __future__ import annotations

import argparse
from multiprocessing import Pool

import seqzip
import seqzip.session as session


def _one(job: tuple[str, int]) -> tuple[str, int, int, int]:
    path, level = job
    data = open(path, "rb").read()
    session.LEAN = True
    lean = seqzip.compress(data, level)
    if seqzip.decompress(lean) != data:
        raise SystemExit(f"{path}: round trip failed")
    session.LEAN = False
    checked = seqzip.compress(data, level)
    return path, len(data), len(lean), len(checked)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--level", type=int, default=6)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    with Pool(args.jobs) as pool:
        rows = pool.map(_one, [(path, args.level) for path in args.files])
    print(f"{'file':32} {'bytes':>9} {'checked':>8} {'lean':>8} {'change':>14}")
    for path, n, lean, checked in rows:
        print(f"{path[-32:]:32} {n:9,} {checked:8,} {lean:8,} {lean - checked:+5} "
              f"{100 * (lean - checked) / checked:+7.2f}%")
    total_lean, total_checked = sum(r[2] for r in rows), sum(r[3] for r in rows)
    print(f"{'total':32} {sum(r[1] for r in rows):9,} {total_checked:8,} {total_lean:8,} "
          f"{total_lean - total_checked:+5} {100 * (total_lean / total_checked - 1):+7.2f}%")


if __name__ == "__main__":
    main()
