"""The cost of hostile streams under the default limits (issue 15): CPU seconds and peak memory.

For every model family, the most expensive config the header ranges allow (the level-9 preset
with every size field at its maximum) is put in a header of a forged stream: frames of 2^24
symbols with a valid frame CRC around an empty payload, a random one, or a real payload of
other data, and block checks of zeros.  Each case runs ``seqzip.decompress`` in a fresh child
process (its own peak RSS), under the default limits, and must end in a ``SeqzipError``.

    python benchmarks/hostile.py            # the table
    python benchmarks/hostile.py --json out.json
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from seqzip import container  # noqa: E402
from seqzip.models import MODELS, make_config  # noqa: E402
from seqzip.models.base import config_to_header  # noqa: E402


def worst_config(name: str):
    """The level-9 preset with every size field at the largest value its range allows."""
    base = make_config(name, 9)
    cls = type(base)
    if name in ("lstm", "mlstm", "mrnn"):
        return dataclasses.replace(base, hidden=320, window=256, interval=128,
                                   experts="ctw24@1024+order2")
    if name == "relu-rnn":
        return dataclasses.replace(base, hidden=384, window=256, interval=64,
                                   experts="ctw24@1024+order2")
    if name == "glnn":
        return dataclasses.replace(base, n_units=64, connectivity=8, window=256, interval=32,
                                   experts="ctw24@1024+order2")
    if name == "ctw":
        return dataclasses.replace(base, depth=24, memory_mb=1024)
    if name == "cm":
        from seqzip.models.cm import network_config
        return dataclasses.replace(base, table_bits=24, history_bits=24,
                                   experts="ctw24@1024+order2", network="mlstm",
                                   network_config=network_config("mlstm", hidden=320,
                                                                 window=256, interval=128))
    return cls.for_level(9)


def hostile_stream(name: str, payload_kind: str, alphabet_size: int = 256) -> bytes:
    config = worst_config(name)
    spec = MODELS[name]
    n = container.MAX_FRAME
    header = container.StreamHeader(spec.model_id, config_to_header(spec.config_class, config),
                                    0, 1000 * n, n, bytes(range(alphabet_size)), 0).pack()
    rng = random.Random(1)
    payload = {"empty": b"", "random": bytes(rng.randrange(256) for _ in range(512))}[payload_kind]
    checks = b"\0\0" * len(container.block_bounds(n))
    return header + container.pack_frame(n, payload, checks)


CHILD = """
import resource, sys, time
import seqzip
data = sys.stdin.buffer.read()
start = time.process_time()
try:
    seqzip.decompress(data)
    outcome = "decoded!"
except seqzip.SeqzipError as exc:
    outcome = type(exc).__name__ + ": " + str(exc)[:60]
except MemoryError:
    outcome = "MemoryError"
cpu = time.process_time() - start
print(f"{cpu:.3f} {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024} {outcome}")
"""


def run_case(stream: bytes) -> dict:
    base = subprocess.run([sys.executable, "-c", "import seqzip, resource; import numpy;"
                           "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"],
                          capture_output=True, text=True, cwd=ROOT)
    result = subprocess.run([sys.executable, "-c", CHILD], input=stream, capture_output=True,
                            cwd=ROOT)
    cpu, rss, outcome = result.stdout.decode().strip().split(" ", 2)
    return {"cpu_seconds": float(cpu), "peak_rss_mib": int(rss),
            "import_rss_mib": int(base.stdout.strip()), "outcome": outcome}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    rows = []
    print(f"{'model':8} {'payload':7} {'bytes':>6} {'CPU s':>7} {'peak MiB':>9}  outcome")
    for name in args.models.split(","):
        for kind in ("empty", "random"):
            stream = hostile_stream(name, kind)
            row = {"model": name, "payload": kind, "bytes": len(stream), **run_case(stream)}
            rows.append(row)
            print(f"{name:8} {kind:7} {row['bytes']:6} {row['cpu_seconds']:7.2f} "
                  f"{row['peak_rss_mib']:9}  {row['outcome']}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
