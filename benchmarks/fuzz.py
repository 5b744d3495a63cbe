"""Fuzz the decoder: ``decompress()``, the incremental decompressor, ``open()`` and the header
parser, with the target and mutator of ``tests/fuzzing.py`` (the suite runs a short seeded run
of the same target).

With atheris installed (``pip install atheris``) the run is coverage-guided: libFuzzer keeps the
inputs that reach new code of the instrumented ``seqzip`` modules and mutates them with
``tests.fuzzing.mutate`` (structure-aware: it repairs checksums half of the time) as well as its
own byte-level mutations.  Without atheris, or with ``--plain``, the seeded mutation loop runs
instead.  Every input that breaks a promise is written to ``--findings`` (keep it as a
regression test in ``tests/fuzz_regressions``); inputs slower than ``--slow`` CPU seconds are
written there too.

    python benchmarks/fuzz.py --runs 1000000            # atheris when available
    python benchmarks/fuzz.py --runs 100000 --plain --seed 3
"""
from __future__ import annotations

import argparse
import hashlib
import os
import random
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--plain", action="store_true", help="the seeded loop, not atheris")
    parser.add_argument("--all-models", action="store_true",
                        help="seeds of every model (slower executions)")
    parser.add_argument("--findings", default=os.path.join(ROOT, "fuzz-findings"))
    parser.add_argument("--slow", type=float, default=1.0, help="CPU seconds")
    args = parser.parse_args()
    try:
        import atheris
    except ImportError:
        atheris = None
    if atheris is not None and not args.plain:
        with atheris.instrument_imports(include=["seqzip"]):
            import seqzip  # noqa: F401
            from tests import fuzzing
    else:
        from tests import fuzzing

    seeds = fuzzing.seed_streams(small=not args.all_models)
    known = {stream: data for stream, data in seeds}
    streams = [stream for stream, _ in seeds]
    os.makedirs(args.findings, exist_ok=True)
    counts: dict[str, int] = {}
    slow = [0]

    def keep(data: bytes, kind: str) -> None:
        name = f"{kind}-{hashlib.sha256(data).hexdigest()[:16]}.sqz"
        with open(os.path.join(args.findings, name), "wb") as f:
            f.write(data)

    def one_input(data: bytes) -> None:
        start = time.process_time()
        try:
            result = fuzzing.check(data, known)
        except fuzzing.Finding as finding:
            keep(data, finding.kind.replace(" ", "-"))
            raise
        seconds = time.process_time() - start
        if seconds > args.slow:
            slow[0] += 1
            keep(data, "slow")
        name = "decoded" if isinstance(result, bytes) else result.__name__
        counts[name] = counts.get(name, 0) + 1
        total = sum(counts.values())
        if total % 50_000 == 0:  # libFuzzer ends the process without returning: report as we go
            print(f"{total:,} executions in {time.process_time() - started:.0f} CPU s: "
                  f"{counts}; slow inputs (> {args.slow} s): {slow[0]}", flush=True)

    started = time.process_time()
    if atheris is not None and not args.plain:
        corpus = tempfile.mkdtemp(prefix="seqzip-fuzz-")
        for stream in streams:
            with open(os.path.join(corpus, hashlib.sha256(stream).hexdigest()[:16]), "wb") as f:
                f.write(stream)

        def custom_mutator(data: bytes, max_size: int, seed: int) -> bytes:
            rng = random.Random(seed)
            if rng.random() < 0.25:
                return atheris.Mutate(data, max_size)
            return fuzzing.mutate(data, rng, streams)[:max_size]

        atheris.Setup([sys.argv[0], f"-runs={args.runs}", f"-seed={args.seed}",
                       "-max_len=4096", "-print_final_stats=1", corpus], one_input,
                      custom_mutator=custom_mutator)
        atheris.Fuzz()
    rng = random.Random(args.seed)
    for _ in range(args.runs):
        one_input(fuzzing.mutate(rng.choice(streams), rng, streams))
    print(f"{sum(counts.values()):,} executions in {time.process_time() - started:.0f} CPU s: "
          f"{counts}; slow inputs (> {args.slow} s): {slow[0]}")


if __name__ == "__main__":
    main()
