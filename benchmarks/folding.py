"""What case folding (cm's presets 141 and 142, ``seqzip.textcase``) does to exact streams.

For each file: the stream the encoder writes (its choice: folded or not), the stream it writes
when never folding and, with ``--forced``, when always folding (over ``MAX_FOLDED`` too), each
through ``seqzip.compress`` and checked by decoding; the preset each names; compressing CPU
time of the call, each in a fresh process (as ``seqzip FILE`` runs: the memory a model
touches first costs there, and a process that has coded before codes faster).  Files run on
``--jobs`` processes (sizes are exact; run with ``--jobs 1`` on a free
machine for the speeds).

    python benchmarks/folding.py FILE... [--level 6] [--forced] [--jobs 2]
"""
from __future__ import annotations

import argparse
import os
import time
from multiprocessing import Pool

import seqzip
import seqzip.session as session
from seqzip.header import parse_header

CHOICE = session.fold_pays
FOLD_LIMIT = session.MAX_FOLDED


def _one(job: tuple[str, int, str]) -> tuple[int, int, float]:
    path, level, mode = job
    session.fold_pays = {"choice": CHOICE, "never": lambda sample: False,
                         "forced": lambda sample: True}[mode]
    session.MAX_FOLDED = 1 << 40 if mode == "forced" else FOLD_LIMIT
    data = open(path, "rb").read()
    start = time.process_time()
    packed = seqzip.compress(data, level)
    seconds = time.process_time() - start
    if seqzip.decompress(packed) != data:
        raise SystemExit(f"{path}: round trip failed")
    return len(packed), parse_header(packed)[0].config[0], seconds



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--level", type=int, default=6)
    parser.add_argument("--forced", action="store_true", help="also always folding")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    modes = ["choice", "never"] + (["forced"] if args.forced else [])
    jobs = [(f, args.level, m) for f in args.files for m in modes]  # modes side by side
    with Pool(args.jobs, maxtasksperchild=1) as pool:
        results = dict(zip(jobs, pool.map(_one, jobs, chunksize=1)))
    print(f"level {args.level}: bytes (preset id) and compressing KB/s of CPU")
    print(f"{'file':16s} {'never':>16s} {'choice':>16s}" +
          (f" {'forced':>16s}" if args.forced else "") + "   choice vs never")
    totals = dict.fromkeys(modes, 0)
    for f in args.files:
        kb = os.path.getsize(f) / 1000
        cells = []
        for m in ["never", "choice"] + (["forced"] if args.forced else []):
            size, preset_id, seconds = results[f, args.level, m]
            totals[m] += size
            cells.append(f"{size:>9,} ({preset_id:3d}) {kb / max(seconds, 1e-9):5.1f}")
        never, choice = results[f, args.level, "never"][0], results[f, args.level, "choice"][0]
        print(f"{os.path.basename(f):16s} " + " ".join(cells) +
              f"   {100 * (choice / never - 1):+.2f}%")
    print(f"{'total':16s} " + " ".join(f"{totals[m]:>9,}{'':12s}" for m in
                                       ["never", "choice"] + (["forced"] if args.forced else []))
          + f"   {100 * (totals['choice'] / totals['never'] - 1):+.2f}%")


if __name__ == "__main__":
    main()
