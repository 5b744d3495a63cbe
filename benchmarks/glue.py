"""Coding speed through the public API of a seqzip checkout, for comparing two builds side by side.

The issue 10 target: order2 and CTW at least 1.5x faster after the coding loop moved into
Cython and experts into the kernels.  Run it on two checkouts, interleaved, on a quiet machine:

    python benchmarks/glue.py --repo OLD_CHECKOUT --repo . --models order2,ctw --rounds 3

Each round times compress and decompress of every model in each checkout (in a fresh process
per checkout, so the two builds never share an import); the table shows the best round.
"""
import argparse
import json
import os
import subprocess
import sys

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import seqzip
data = open(sys.argv[2], 'rb').read()
out = {}
for name in sys.argv[3].split(','):
    level = int(sys.argv[4])
    # warm up: imports are lazy in newer checkouts, so the first call would time them
    assert seqzip.decompress(seqzip.compress(data[:1000], model=name, level=level)) == data[:1000]
    t = time.perf_counter(); packed = seqzip.compress(data, model=name, level=level)
    tc = time.perf_counter() - t
    t = time.perf_counter(); back = seqzip.decompress(packed); td = time.perf_counter() - t
    assert back == data
    out[name] = [len(packed), tc, td]
print(json.dumps(out))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", action="append", required=True)
    parser.add_argument("--models", default="order2,ctw")
    parser.add_argument("--level", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--file", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                       "shared", "corpora", "canterbury",
                                                       "alice29.txt"))
    args = parser.parse_args()
    size = os.path.getsize(args.file)
    best: dict = {}
    for _ in range(args.rounds):
        for repo in args.repo:
            got = json.loads(subprocess.run(
                [sys.executable, "-c", CHILD, os.path.abspath(repo), args.file, args.models,
                 str(args.level)], check=True, capture_output=True, text=True).stdout)
            for name, (packed, tc, td) in got.items():
                key = (repo, name)
                old = best.get(key, (packed, tc, td))
                best[key] = (packed, min(old[1], tc), min(old[2], td))
    print(f"{os.path.basename(args.file)} ({size:,} bytes), level {args.level}, best of "
          f"{args.rounds}")
    print(f"{'checkout':<28} {'model':<8} {'bytes':>9} {'comp KB/s':>10} {'dec KB/s':>9}")
    for (repo, name), (packed, tc, td) in best.items():
        print(f"{repo[-28:]:<28} {name:<8} {packed:>9,} {size / 1000 / tc:>10.1f} "
              f"{size / 1000 / td:>9.1f}")


if __name__ == "__main__":
    main()
