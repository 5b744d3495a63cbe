"""Faults (issue 15): signals at random points, SIGKILL and the next run, a full disk, and a
large input streamed both ways in bounded memory.

    python benchmarks/faults.py --runs 50            # signals: 50 runs per signal and direction
    python benchmarks/faults.py --big 1024           # + a 1,024 MiB input both ways (order2 -1)
    python benchmarks/faults.py --runs 0 --kills 20  # SIGKILL of a -T 2 worker or the guardian

Signals: ``seqzip compress`` / ``decompress`` of a 400 KB file is sent SIGINT, SIGTERM or
SIGHUP after a random delay (0-4 s: before, during and after coding).  Afterwards the
directory must hold the input (unchanged) and either no output or a complete output that
decodes to the input; nothing else.  SIGKILL of the whole process group (the guardian child
too) leaves the temporary file; the next run of the same command must remove it.

Kills (issue 23): ``seqzip -T 2`` compress / decompress of a 1.5 MB file; once the victim
exists and after a random delay (0-2 s), one worker process, or the guardian of temporary
files, gets SIGKILL (as from the out-of-memory killer).  The run must end within 10 s of the kill, with exit status 1 and
one line naming what died and nothing written (or, if it finished first, status 0 and a
complete output); the directory must hold nothing else.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import os
import random
import resource
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import seqzip  # noqa: E402
from seqzip import corpora  # noqa: E402

SEQZIP = [sys.executable, "-m", "seqzip.cli"]
ENV = dict(os.environ, PYTHONPATH=ROOT)


def digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def _default_signals() -> None:
    """A shell starts background jobs with SIGINT ignored, and seqzip keeps ignored signals
    ignored (as nohup wants): give the child the default actions, as a terminal would."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _workspace(prefix: str, size: int, processes: int) -> tuple[str, bytes, str, str]:
    """A fresh directory holding ``in.txt`` (``size`` bytes of generated English) and
    ``packed.sqz`` (it at cm -1, in ``processes`` pieces): (directory, data, their paths)."""
    work = tempfile.mkdtemp(prefix=prefix)
    data = corpora.generate("english", size, seed=1).data
    source = os.path.join(work, "in.txt")
    with open(source, "wb") as f:
        f.write(data)
    packed = os.path.join(work, "packed.sqz")
    with open(packed, "wb") as f:
        seqzip.compress_file(io.BytesIO(data), f, model="cm", level=1, processes=processes)
    return work, data, source, packed


def _output_restores(out: str, direction: str, data: bytes) -> bool:
    """Whether a run's output file restores ``data`` (a compressed one once decoded); the
    file is removed."""
    with open(out, "rb") as f:
        got = f.read()
    os.unlink(out)
    return (seqzip.decompress(got) if direction == "compress" else got) == data


def signal_runs(runs: int, seed: int, signals=("SIGINT", "SIGTERM", "SIGHUP")) -> dict:
    rng = random.Random(seed)
    work, data, source, packed = _workspace("seqzip-faults-", 400_000, processes=1)
    want = {source: digest(source), packed: digest(packed)}
    results = {}
    for direction in ("compress", "decompress"):
        for signame in signals:
            bad, outputs = [], 0
            for i in range(runs):
                out = os.path.join(work, "out")
                args = (["compress", "--model", "cm", "-1", "-q", "-o", out, source]
                        if direction == "compress" else ["decompress", "-q", "-o", out, packed])
                process = subprocess.Popen(SEQZIP + args, env=ENV, stderr=subprocess.DEVNULL,
                                           start_new_session=True, preexec_fn=_default_signals)
                time.sleep(rng.uniform(0.0, 4.0))
                try:
                    os.killpg(process.pid, getattr(signal, signame))
                except ProcessLookupError:
                    pass
                process.wait()
                time.sleep(0.05)  # the guardian child removes the temporary file
                names = sorted(os.listdir(work))
                extra = [n for n in names if n not in ("in.txt", "packed.sqz", "out")]
                if extra or digest(source) != want[source] or digest(packed) != want[packed]:
                    bad.append((i, extra))
                if os.path.exists(out):
                    outputs += 1
                    if not _output_restores(out, direction, data):
                        bad.append((i, "partial output"))
            results[f"{direction} {signame}"] = {"runs": runs, "complete outputs": outputs,
                                                 "failures": bad}
            print(f"{direction:10} {signame:7} {runs} runs: {outputs} finished before the "
                  f"signal, {len(bad)} with a stray or partial file", flush=True)
    # SIGKILL of the whole group: the temporary stays; the next run removes it.
    out = os.path.join(work, "out")
    process = subprocess.Popen(SEQZIP + ["compress", "--model", "cm", "-9", "-q", "-o", out,
                                         source], env=ENV, start_new_session=True)
    time.sleep(1.5)
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    left = [n for n in os.listdir(work) if n.endswith(".sqztmp")]
    subprocess.run(SEQZIP + ["compress", "--model", "order2", "-q", "-o", out, source],
                   env=ENV, check=True)
    after = [n for n in os.listdir(work) if n.endswith(".sqztmp")]
    print(f"SIGKILL of the group left {left}; the next run left {after}")
    results["sigkill"] = {"left": left, "after next run": after}
    return results


def _children(pid: int) -> list[int]:
    """The child processes of ``pid``, oldest first (the guardian is forked before the
    workers)."""
    kids = []
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as f:
            kids += [int(k) for k in f.read().split()]

    def started(kid: int) -> int:
        with open(f"/proc/{kid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])

    alive = []
    for kid in kids:
        try:
            alive.append((started(kid), kid))
        except OSError:
            pass
    return [kid for _, kid in sorted(alive)]


def kill_runs(runs: int, seed: int) -> dict:
    """SIGKILL of one worker (or of the guardian) of ``-T 2`` runs: see the module's text."""
    rng = random.Random(seed)
    work, data, source, packed = _workspace("seqzip-kills-", 1_500_000, processes=2)
    results = {}
    for direction in ("compress", "decompress"):
        for victim in ("worker", "guardian"):
            ended, bad, seconds = {"one line": 0, "finished first": 0, "no victim": 0}, [], []
            for i in range(runs):
                out = os.path.join(work, "out")
                args = (["compress", "--model", "cm", "-1", "-T", "2", "-q", "-o", out, source]
                        if direction == "compress"
                        else ["decompress", "-T", "2", "-q", "-o", out, packed])
                process = subprocess.Popen(SEQZIP + args, env=ENV, stderr=subprocess.PIPE,
                                           start_new_session=True, text=True)
                # the guardian is the oldest child; the workers (forked after piece 0) the
                # others: wait for the victim to exist, then a random while longer
                need, kids = (1 if victim == "guardian" else 3), []
                while process.poll() is None and len(kids) < need:
                    time.sleep(0.05)
                    kids = _children(process.pid)
                time.sleep(rng.uniform(0.0, 2.0))
                kids = _children(process.pid) if process.poll() is None else []
                target = (kids[:1] if victim == "guardian" else kids[1:])[-1:]
                killed = time.monotonic()
                if target:
                    os.kill(target[0], signal.SIGKILL)
                try:
                    stderr = process.communicate(timeout=30)[1]
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    stderr = process.communicate()[1]
                    bad.append((i, "hung: killed after 30 s"))
                took = time.monotonic() - killed
                names = sorted(n for n in os.listdir(work) if n not in ("in.txt", "packed.sqz"))
                if not target:
                    ended["no victim"] += 1
                elif process.returncode == 1 and stderr.count("\n") == 1 and names == [] \
                        and victim in stderr:
                    ended["one line"] += 1
                    seconds.append(took)
                    if took > 10:
                        bad.append((i, f"{took:.1f} s after the kill"))
                elif process.returncode == 0 and names == ["out"]:
                    ended["finished first"] += 1
                else:
                    bad.append((i, process.returncode, names, stderr.strip()[-200:]))
                if os.path.exists(out) and not _output_restores(out, direction, data):
                    bad.append((i, "a wrong output"))
            worst = max(seconds, default=0.0)
            results[f"{direction} {victim}"] = {"runs": runs, **ended, "failures": bad,
                                                "slowest end after the kill": round(worst, 2)}
            print(f"{direction:10} {victim:8} {runs} runs: {ended['one line']} ended with one "
                  f"line (slowest {worst:.2f} s after the kill), {ended['finished first']} "
                  f"finished first, {ended['no victim']} without a victim, {len(bad)} "
                  f"failures {bad[:3]}", flush=True)
    return results


def big_run(mib: int) -> dict:
    """A ``mib`` MiB generated text file through order2 -1 both ways, file to file; peak RSS
    of each child process."""
    work = tempfile.mkdtemp(prefix="seqzip-big-")
    source = os.path.join(work, "big.txt")
    block = corpora.generate("english", 1 << 20, seed=2).data
    with open(source, "wb") as f:
        for i in range(mib):
            f.write(block[i % 7:] + block[:i % 7])
    out = {}
    for direction, args in (("compress", ["compress", "--model", "order2", "-1", "-q", "-o",
                                          source + ".sqz", source]),
                            ("decompress", ["decompress", "-q", "-o", source + ".out",
                                            source + ".sqz"])):
        start = time.time()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(SEQZIP + args, env=ENV, check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        out[direction] = {"seconds": round(time.time() - start, 1),
                          "cpu_seconds": round(after.ru_utime - before.ru_utime, 1),
                          "peak_rss_mib": after.ru_maxrss // 1024}
        print(f"{mib} MiB {direction}: {out[direction]}", flush=True)
    same = digest(source) == digest(source + ".out")
    out["compressed_bytes"] = os.path.getsize(source + ".sqz")
    out["round_trip_exact"] = same
    print(f"{mib} MiB -> {out['compressed_bytes']:,} bytes; round trip exact: {same}")
    for name in (source, source + ".sqz", source + ".out"):
        os.unlink(name)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--big", type=int, default=0, help="MiB of the large input (0: none)")
    parser.add_argument("--signals", default="SIGINT,SIGTERM,SIGHUP")
    parser.add_argument("--kills", type=int, default=0,
                        help="runs per direction and victim of SIGKILL of a -T 2 worker or of "
                        "the guardian (0: none)")
    args = parser.parse_args()
    if args.runs:
        signal_runs(args.runs, args.seed, args.signals.split(","))
    if args.kills:
        kill_runs(args.kills, args.seed)
    if args.big:
        big_run(args.big)


if __name__ == "__main__":
    main()
