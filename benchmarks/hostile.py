"""The cost of hostile streams under the default limits (issue 15): CPU seconds and peak memory.

For every model family, the most expensive config the header ranges allow (the level-9 preset
with every size field at its maximum) is put in a header of a forged stream: frames of 2^24
symbols with a valid frame CRC around an empty payload, a random one, or a real payload of
other data, and block checks of zeros.  Each case runs ``seqzip.decompress`` in a fresh child
process (its own peak RSS), under the default limits, and must end in a ``SeqzipError``.

The ``lean`` case forges a lean stream (``seqzip.container``: one frame of at most
``LEAN_MAX`` symbols with no checks, the data's CRC-32 checked at its end) of ``LEAN_MAX``
symbols around a random payload: it costs what decoding a valid stream of that length costs
(which a few hundred bytes can also ask for), not one block's work.

The ``switches`` cases (issue 23) turn on every option of the family at its worst allowed value
as well (OINIT at the slowest rate, orthogonal or large initial weights, the OPEN penalty, cm's
network with OINIT), and the ``1-unit`` cases shrink the network to one unit: all of the work
before the first block check must stay within 5 CPU s and 256 MB.

    python benchmarks/hostile.py            # the table
    python benchmarks/hostile.py --json out.json
    python benchmarks/hostile.py --tree /other/checkout --timeout 60   # another build, capped
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


def with_switches(name: str, config, units: int | None = None):
    """``config`` with every switch at its worst allowed value (and ``units`` network units)."""
    if name in ("lstm", "mlstm", "mrnn"):
        config = dataclasses.replace(config, oinit=True, oinit_rate=1e-6, open_penalty=1e6,
                                     init="normal", init_std=10.0)
    elif name == "relu-rnn":
        config = dataclasses.replace(config, oinit=True, oinit_rate=1e-6, open_penalty=1e6,
                                     init_radius=10.0)
    elif name == "cm":
        from seqzip.models.cm import network_config
        config = dataclasses.replace(config, network_config=network_config(
            "mlstm", hidden=units or 320, window=256, interval=128, oinit=True,
            oinit_rate=1e-6, open_penalty=1e6, init_std=10.0))
        return config
    if units is not None:
        field = "n_units" if name == "glnn" else "hidden"
        if hasattr(config, field):
            config = dataclasses.replace(config, **{field: units})
    return config


CASES = {"empty": ("empty", None), "random": ("random", None),
         "switches": ("empty", "worst"), "1-unit": ("empty", 1), "lean": ("lean", None)}


def hostile_stream(name: str, payload_kind: str, alphabet_size: int = 256,
                   switches=None) -> bytes:
    config = worst_config(name)
    if switches is not None:
        config = with_switches(name, config, None if switches == "worst" else switches)
    spec = MODELS[name]
    rng = random.Random(1)
    if payload_kind == "lean":  # a lean stream (its one frame unchecked) of LEAN_MAX symbols
        header = container.StreamHeader(spec.model_id,
                                        config_to_header(spec.config_class, config), 0,
                                        container.LEAN_MAX, container.DEFAULT_FRAME,
                                        bytes(range(alphabet_size)), 0)
        payload = bytes(rng.randrange(256) for _ in range(512))
        return header.pack() + container.pack_frame(header.coded, payload,
                                                    version=header.version)
    n = container.MAX_FRAME
    header = container.StreamHeader(spec.model_id, config_to_header(spec.config_class, config),
                                    0, 1000 * n, n, bytes(range(alphabet_size)), 0).pack()
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


def run_case(stream: bytes, tree: str = ROOT, timeout: float | None = None) -> dict:
    base = subprocess.run([sys.executable, "-c", "import seqzip, resource; import numpy;"
                           "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"],
                          capture_output=True, text=True, cwd=tree)
    try:
        result = subprocess.run([sys.executable, "-c", CHILD], input=stream,
                                capture_output=True, cwd=tree, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"cpu_seconds": float(timeout), "peak_rss_mib": 0,
                "import_rss_mib": int(base.stdout.strip()),
                "outcome": f"still running after {timeout:.0f} s (killed)"}
    if result.returncode != 0:
        tail = result.stderr.decode(errors="replace").strip().splitlines()[-1:]
        return {"cpu_seconds": 0.0, "peak_rss_mib": 0, "import_rss_mib": 0,
                "outcome": f"child failed ({result.returncode}): {tail}"}
    cpu, rss, outcome = result.stdout.decode().strip().split(" ", 2)
    return {"cpu_seconds": float(cpu), "peak_rss_mib": int(rss),
            "import_rss_mib": int(base.stdout.strip()), "outcome": outcome}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--tree", default=ROOT, help="the seqzip checkout (and build) to run")
    parser.add_argument("--timeout", type=float, help="kill a case after this many seconds")
    args = parser.parse_args()
    rows = []
    print(f"{'model':8} {'case':8} {'bytes':>6} {'CPU s':>7} {'peak MiB':>9}  outcome")
    for name in args.models.split(","):
        for case in args.cases.split(","):
            kind, switches = CASES[case]
            if switches is not None and name in ("ctw", "order2"):
                continue  # no switches, no units
            if kind == "lean" and MODELS[name].model_id not in container.LEAN_MODEL_IDS:
                continue  # the online networks' streams are never lean
            stream = hostile_stream(name, kind, switches=switches)
            row = {"model": name, "case": case, "bytes": len(stream),
                   **run_case(stream, args.tree, args.timeout)}
            rows.append(row)
            print(f"{name:8} {case:8} {row['bytes']:6} {row['cpu_seconds']:7.2f} "
                  f"{row['peak_rss_mib']:9}  {row['outcome']}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
