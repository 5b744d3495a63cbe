"""Streams coded on threads at once against one after the other: cm codes without the
interpreter lock, so N streams on N threads should take about the wall time of one.

For each level and round, a fresh process codes one text both ways (the first model of a
process pays for fresh memory; the two threads' models still take one model's memory fresh,
which counts against them), then compresses N generated texts one after the other,
then the same N on N threads (checking the bytes are the same), then decompresses the streams
both ways, and prints the wall and CPU time of each; the medians over the rounds come last.

    python3 benchmarks/threads.py [--levels 1:600000,6:100000,9:30000] [--rounds 3] [--n 2]
    python3 benchmarks/threads.py --files 16:60000 --level 6 [--rounds 3] [--n 2]

``--files COUNT:SIZE`` measures the command line instead: COUNT generated texts of about SIZE
bytes (sizes from SIZE/4 to 7 SIZE/4) in a folder, ``seqzip -r -T 1`` against ``-T N`` and the
same with ``-d``, each a fresh process, wall and CPU time (of the child), outputs compared.

The children import the seqzip of the directory they run in: run it from the checkout to
measure (``cd /tmp/old && python3 /work/main/benchmarks/threads.py``).
"""
import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
from concurrent.futures import ThreadPoolExecutor
import seqzip
from seqzip import corpora
level, size, n = map(int, sys.argv[1:4])
texts = [corpora.generate("text", size, seed=s).data for s in range(1, n + 1)]
seqzip.decompress(seqzip.compress(texts[0], level))  # the process's first model pays for memory
t, c = time.monotonic(), time.process_time()
alone = [seqzip.compress(x, level) for x in texts]
t1, c1 = time.monotonic(), time.process_time()
with ThreadPoolExecutor(n) as pool:
    together = list(pool.map(lambda x: seqzip.compress(x, level), texts))
t2, c2 = time.monotonic(), time.process_time()
assert together == alone
t3, c3 = time.monotonic(), time.process_time()
back = [seqzip.decompress(x) for x in alone]
t4, c4 = time.monotonic(), time.process_time()
with ThreadPoolExecutor(n) as pool:
    back_together = list(pool.map(seqzip.decompress, alone))
t5, c5 = time.monotonic(), time.process_time()
assert back == back_together == texts
print(json.dumps([t1 - t, c1 - c, t2 - t1, c2 - c1, t4 - t3, c4 - c3, t5 - t4, c5 - c4]))
"""


def _timed(argv: list) -> tuple:
    """Wall and CPU seconds of one command line run (a fresh process)."""
    import resource
    import time

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    subprocess.run(argv, check=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def files(args) -> None:
    import os
    import shutil
    import tempfile

    from seqzip import corpora

    count, size = map(int, args.files.split(":"))
    root = tempfile.mkdtemp(prefix="seqzip-threads-")
    try:
        texts = [corpora.generate("text", size // 4 + (6 * size // 4) * i // max(1, count - 1),
                                  seed=100 + i).data for i in range(count)]
        runs: dict = {}
        for r in range(args.rounds):
            outs = {}
            for t in (1, args.n):
                folder = os.path.join(root, f"T{t}")
                shutil.rmtree(folder, ignore_errors=True)
                os.makedirs(folder)
                for i, text in enumerate(texts):
                    with open(os.path.join(folder, f"f{i:03d}.txt"), "wb") as f:
                        f.write(text)
                cmd = [sys.executable, "-m", "seqzip.cli", "-q", f"-{args.level}", "--rm",
                       "-T", str(t), "-r", folder]
                runs.setdefault(("compress", t), []).append(_timed(cmd))
                outs[t] = {name: open(os.path.join(folder, name), "rb").read()
                           for name in sorted(os.listdir(folder))}
                runs.setdefault(("decompress", t), []).append(_timed(cmd[:4] + ["-d"] + cmd[4:]))
                for i, text in enumerate(texts):
                    with open(os.path.join(folder, f"f{i:03d}.txt"), "rb") as f:
                        assert f.read() == text
            assert outs[1] == outs[args.n]
            print(r, {f"{k[0]} -T {k[1]}": [round(v, 2) for v in runs[k][-1]] for k in runs},
                  flush=True)
        total = sum(map(len, texts))
        print(f"{count} texts, {total} bytes, level {args.level}: wall / CPU seconds "
              f"(medians of {args.rounds})")
        for verb in ("compress", "decompress"):
            one, many = ([statistics.median(run[i] for run in runs[(verb, t)]) for i in (0, 1)]
                         for t in (1, args.n))
            print(f"{verb}: -T 1 {one[0]:.2f} / {one[1]:.2f}, -T {args.n} {many[0]:.2f} / "
                  f"{many[1]:.2f}, {one[0] / many[0]:.2f}x")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="1:600000,6:100000,9:30000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--n", type=int, default=2)
    ap.add_argument("--files", help="COUNT:SIZE: the command line on a folder of texts")
    ap.add_argument("--level", type=int, default=6)
    args = ap.parse_args()
    if args.files:
        files(args)
        return
    cases = [tuple(map(int, c.split(":"))) for c in args.levels.split(",")]
    runs: dict = {}
    for r in range(args.rounds):
        for level, size in cases:
            out = json.loads(subprocess.run([sys.executable, "-c", CHILD, str(level), str(size),
                                             str(args.n)], capture_output=True, text=True,
                                            check=True).stdout)
            runs.setdefault(level, []).append(out)
            print(r, level, size, " ".join(f"{v:.2f}" for v in out), flush=True)
    print(f"level, direction: serial wall / CPU, {args.n} threads wall / CPU (s), wall "
          f"speed-up (medians of {args.rounds})")
    for level, size in cases:
        med = [statistics.median(run[i] for run in runs[level]) for i in range(8)]
        for name, m in (("compress", med[:4]), ("decompress", med[4:])):
            print(f"{level} {name} ({args.n} x {size} bytes): {m[0]:.2f} / {m[1]:.2f}, "
                  f"{m[2]:.2f} / {m[3]:.2f}, {m[0] / m[2]:.2f}x")


if __name__ == "__main__":
    main()
