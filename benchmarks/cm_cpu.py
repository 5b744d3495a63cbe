"""CPU-time coding speed of the default model (cm) in two or more checkouts, side by side:
interleaved rounds, a fresh process per run, the median per checkout (benchmarks/glue.py
measures wall time).  Issue 19 (the cm bank) ran:

    python3 benchmarks/cm_cpu.py /work/main,. 5 1:1000000000
    python3 benchmarks/cm_cpu.py /work/main,. 3 6:1000000000,9:60000

Arguments: comma-separated checkouts (the first is the base), rounds, level:prefix_bytes pairs,
and optionally the file (alice29.txt by default).  A checkout written ``path@0`` runs with
SEQZIP_SIMD=0 (the generic copies of the vector loops), ``path@1`` with the CPU's choice; the
same checkout twice compares them (session 23:

    python3 benchmarks/cm_cpu.py /work/main@0,/work/main@1 6 6:1000000000
    python3 benchmarks/cm_cpu.py /work/main@0,/work/main@1 3 9:60000
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
repos = sys.argv[1].split(",")
f = sys.argv[4] if len(sys.argv) > 4 else "/work/shared/corpora/canterbury/alice29.txt"


def _env(repo):
    env = dict(os.environ)
    env.pop("SEQZIP_SIMD", None)
    if "@" in repo:
        env["SEQZIP_SIMD"] = repo.rsplit("@", 1)[1]
    return env


cases = [tuple(map(int, c.split(":"))) for c in sys.argv[3].split(",")]
rounds = int(sys.argv[2])
best = {}
for r in range(rounds):
    for level, size in cases:
        for repo in repos:
            path = os.path.abspath(repo.rsplit("@", 1)[0])
            out = json.loads(subprocess.run([sys.executable, "-c", CHILD, path, f, str(level), str(size)],
                             capture_output=True, text=True, check=True, env=_env(repo),
                             cwd=os.path.dirname(os.path.abspath(__file__))).stdout)
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
