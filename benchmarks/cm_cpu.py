"""CPU-time coding speed of the default model (cm) in two or more checkouts, side by side:
interleaved rounds, a fresh process per run, the median per checkout (benchmarks/glue.py
measures wall time).  Issue 19 (the cm bank) ran:

    python3 benchmarks/cm_cpu.py /work/main,. 5 1:1000000000
    python3 benchmarks/cm_cpu.py /work/main,. 3 6:1000000000,9:60000

Arguments: comma-separated checkouts (the first is the base), rounds, level:prefix_bytes pairs.
"""
import json, os, subprocess, sys
CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import seqzip
data = open(sys.argv[2], 'rb').read()[:int(sys.argv[4])]
level = int(sys.argv[3])
seqzip.decompress(seqzip.compress(data[:1000], level=level))
t = time.process_time(); packed = seqzip.compress(data, level=level); tc = time.process_time() - t
t = time.process_time(); back = seqzip.decompress(packed); td = time.process_time() - t
assert back == data
print(json.dumps([len(data), len(packed), tc, td]))
"""
repos = [os.path.abspath(r) for r in sys.argv[1].split(",")]
f = "/work/shared/corpora/canterbury/alice29.txt"
cases = [tuple(map(int, c.split(":"))) for c in sys.argv[3].split(",")]
rounds = int(sys.argv[2])
best = {}
for r in range(rounds):
    for level, size in cases:
        for repo in repos:
            out = json.loads(subprocess.run([sys.executable, "-c", CHILD, repo, f, str(level), str(size)],
                             capture_output=True, text=True, check=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout)
            key = (level, repo)
            best.setdefault(key, []).append(out)
            print(r, level, repo, out, flush=True)
import statistics
print("level repo bytes packed compress_KB/s decompress_KB/s (median of rounds, CPU time)")
def med(runs):
    return [runs[0][0], runs[0][1], statistics.median(r[2] for r in runs), statistics.median(r[3] for r in runs)]
for level, size in cases:
    base = med(best[(level, repos[0])])
    for repo in repos:
        n, p, tc, td = med(best[(level, repo)])
        print(level, repo, n, p, round(n / tc / 1000, 2), round(n / td / 1000, 2),
              f"compress {100 * (tc / base[2] - 1):+.1f}% decompress {100 * (td / base[3] - 1):+.1f}%")
