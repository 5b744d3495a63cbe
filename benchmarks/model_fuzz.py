"""Fuzz model files (``.sqm``): mutated state arrays, metadata and entries of every model
family's file, SHA-256 repaired, through ``Predictor.load``, ``probs()`` and a compress /
decompress round trip with the file as dictionary (the target and mutator of
``tests/model_fuzzing.py``; the suite runs a short seeded run of the same target).

Each batch runs in a child process, so a signal (SIGSEGV, SIGABRT) is counted, not fatal: the
input that killed a child is kept under ``--findings`` (by default tests/model_regressions, as a
regression file named after the family and the signal), and so is every input that raised
another exception than ``DictionaryError`` or decoded to other data.

    python benchmarks/model_fuzz.py --runs 2000                 # every family
    python benchmarks/model_fuzz.py --runs 100000 --families ctw --batch 500 --json out.json
    python benchmarks/model_fuzz.py --runs 3000 --families cm@1,cm@2,cm@6  # small-table cm

Prints, per family: executions, rejected (DictionaryError), round trips, signals, findings by
exception type, CPU seconds (children's).

Under AddressSanitizer: build a copy of the tree with ``SEQZIP_SANITIZE=address python3 setup.py
build_ext --inplace`` (not the working tree: its kernels would then need libasan everywhere)
and run this script from that copy with the sanitizer's runtime preloaded into Python, leak
checks off (the interpreter's own allocations are not ours) and a report turned into SIGABRT
so that it is counted as a signal and its input kept:

    LD_PRELOAD=$(gcc -print-file-name=libasan.so) \
    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:allocator_may_return_null=1 \
        python3 benchmarks/model_fuzz.py --families cm,ctw --runs 1000 --findings /tmp/asan
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from tests.model_fuzzing import FAMILIES  # noqa: E402

CHILD = """
import json, sys
sys.path.insert(0, {root!r})
from tests import model_fuzzing
family, runs, seed, last, findings = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \\
    sys.argv[4], sys.argv[5]
seeds = None
if "@" in family:  # cm@LEVEL: cm at LEVEL with 4 KB tables (thousands of files a minute)
    import dataclasses
    from seqzip.models.cm import CMConfig
    from seqzip.predictor import Predictor
    level = int(family.split("@")[1])
    config = dataclasses.replace(CMConfig.for_level(level), table_bits=12, history_bits=12)
    p = Predictor("cm", config=config, alphabet=bytes(sorted(set(model_fuzzing.TEXT))))
    p.feed(model_fuzzing.TEXT[:600])
    seeds = {{family: (p.to_bytes(), model_fuzzing.TEXT[600:760])}}
counts = model_fuzzing.run(family, runs, seed=seed, seeds=seeds, last_input=last)
for i, (data, message) in enumerate(counts.pop("_findings")):
    name = model_fuzzing.finding_name(family, data, message)
    with open(f"{{findings}}/{{name}}", "wb") as f:
        f.write(data)
print(json.dumps(counts))
"""


def run_batch(family: str, runs: int, seed: int, findings: str, timeout: float) -> dict:
    """One child process's batch: its counts, or ``signal:NAME`` / ``timeout`` for the input
    that ended it (kept in ``findings``)."""
    with tempfile.TemporaryDirectory() as tmp:
        last = os.path.join(tmp, "last.sqm")
        code = CHILD.format(root=ROOT)
        try:
            result = subprocess.run([sys.executable, "-c", code, family, str(runs), str(seed),
                                     last, findings], capture_output=True, timeout=timeout,
                                    cwd=ROOT)
        except subprocess.TimeoutExpired:
            return {**_keep(last, family, "timeout", findings), "timeout": 1}
        if result.returncode < 0:
            name = signal.Signals(-result.returncode).name
            return {**_keep(last, family, name, findings), f"signal:{name}": 1}
        if result.returncode != 0:
            tail = result.stderr.decode(errors="replace").strip().splitlines()[-1:]
            return {f"child failed: {tail}": 1}
        return json.loads(result.stdout.decode().strip().splitlines()[-1])


def _keep(last: str, family: str, what: str, findings: str) -> dict:
    """Keep the input that ended a child; return the counts of the inputs before it."""
    if not os.path.exists(last):
        return {}
    with open(last, "rb") as f:
        data = f.read()
    digest = hashlib.sha256(data).hexdigest()[:12]
    with open(os.path.join(findings, f"{family}-{what.lower()}-{digest}.sqm"), "wb") as f:
        f.write(data)
    try:
        with open(last + ".json") as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="executions per family")
    parser.add_argument("--batch", type=int, default=250, help="executions per child")
    parser.add_argument("--families", default=",".join(FAMILIES))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per batch")
    parser.add_argument("--findings", default=os.path.join(ROOT, "tests", "model_regressions"))
    parser.add_argument("--json", help="write the counts here")
    args = parser.parse_args()
    os.makedirs(args.findings, exist_ok=True)
    table = {}
    print(f"{'family':9} {'runs':>7} {'rejected':>9} {'round trip':>10} {'signals':>8} "
          f"{'CPU s':>8}  other")
    for family in args.families.split(","):
        totals: dict[str, int] = {}
        done, batch_seed = 0, args.seed * 1_000_003
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        while done < args.runs:
            runs = min(args.batch, args.runs - done)
            counts = run_batch(family, runs, batch_seed, args.findings, args.timeout)
            batch_seed += 1
            done += max(sum(counts.values()), 1)  # a killed batch: the inputs it ran, + 1
            for key, value in counts.items():
                totals[key] = totals.get(key, 0) + value
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        signals = sum(v for k, v in totals.items() if k.startswith("signal:"))
        other = {k: v for k, v in totals.items()
                 if k not in ("rejected", "round trip") and not k.startswith("signal:")}
        table[family] = {"executions": sum(totals.values()), "cpu_seconds": round(cpu, 1),
                         **totals}
        print(f"{family:9} {sum(totals.values()):7} {totals.get('rejected', 0):9} "
              f"{totals.get('round trip', 0):10} {signals:8} {cpu:8.1f}  "
              f"{json.dumps({**other, **{k: v for k, v in totals.items() if k.startswith('signal:')}})}",
              flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table, f, indent=2)


if __name__ == "__main__":
    main()
