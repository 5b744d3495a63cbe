#!/usr/bin/env python3
"""The Canterbury corpus through seqzip's context mixer at given levels: whole streams, bytes
per file, the total, bits per character and CPU speed both ways, beside paq8px -8's published
sizes and PPMd order 6 (when ``pyppmd`` is installed).

    python benchmarks/canterbury.py [--levels 1,6,9] [--files alice29.txt,ptt5,/any/path]
        [--set text=1 --set aligned=1] [--prefix 200000] [--no-decode] [--ablate] [--json out]

``--set field=value`` overrides a cm config field at every level (an int, then a float, else a
string); such a stream's header holds its config in full, so its size is also given as if the
config were a preset (one byte): the ``bytes`` column.  ``--ablate`` compresses each file once
per expert group removed (``ABLATIONS``: config overrides) and reports what each removal costs
(bytes, bpc) and saves (CPU).  CPU time is ``time.process_time`` of one process (never wall
time); KB/s are input kilobytes (1000 bytes) per CPU second.
"""
from __future__ import annotations

import argparse
import dataclasses
import io
import json
import os
import time

import seqzip
from seqzip import api
from seqzip.models.base import config_to_header
from seqzip.models.cm import LEVELS, CMConfig

DIR = os.environ.get("SEQZIP_CORPORA", "/work/shared/corpora")
# paq8px v216 -8, per file (its README; bytes)
PAQ8PX_8 = {"alice29.txt": 33070, "asyoulik.txt": 31515, "cp.html": 5408, "fields.c": 2027,
            "grammar.lsp": 861, "kennedy.xls": 8140, "lcet10.txt": 79110,
            "plrabn12.txt": 117450, "ptt5": 19633, "sum": 6662, "xargs.1": 1295}
# expert groups and the overrides that remove each (those a level has not are skipped)
ABLATIONS = {
    "network": dict(network="", network_config="", gate_units=0),
    "symbol experts": dict(experts=""),
    "ctw": dict(experts="order2"),
    "order2 expert": dict(experts="ctw8@96"),
    "match": dict(match=0, match2=0),
    "orders above 6": dict(orders="2,3,4,5,6"),
    "match2": dict(match2=0),
    "word": dict(word=0),
    "sparse": dict(sparse=0),
    "indirect": dict(indirect=0),
    "record": dict(record=0, columns=0),
    "columns": dict(columns=0),
    "text": dict(text=0),
    "aligned": dict(aligned=0),
    "apm": dict(apm=0),
    "markup": dict(markup=0),
    "image": dict(image=0),
    "samples": dict(samples=0),
    "16-bit/numeric": dict(aligned16=0, numeric=0),
    "six sets": dict(sets="node,match,order,c1,word"),
    "sets to one": dict(sets="c12n", layer2=False),
    "runs": dict(runs=0),
    "sse": dict(sse=0),
    "rows": dict(rows=0),
    "mix_init": dict(mix_init=0),
    "code": dict(code=0),
}


# groups that are removed only from a config that has them (their overrides would add to others)
ABLATION_NEEDS = {
    "ctw": lambda c: "ctw" in c.experts,
    "order2 expert": lambda c: "order2" in c.experts,
    "orders above 6": lambda c: any(int(o) > 6 for o in c.orders.split(",") if o),
    "six sets": lambda c: len(c.sets.split(",")) > 5,
}


def parse_value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


FIRST = False  # --first: levels as their first presets (before issue 20), for comparison


def base_config(level: int) -> CMConfig:
    return CMConfig.for_preset_id(level) if FIRST else CMConfig.for_level(level)


def config_for(level: int, overrides: dict) -> CMConfig:
    fields = dataclasses.asdict(base_config(level))
    unknown = set(overrides) - set(fields)
    if unknown:
        raise SystemExit(f"no cm config field {sorted(unknown)}")
    fields.update(overrides)
    return CMConfig(**fields)


def removals(config: CMConfig, groups=None) -> dict[str, CMConfig]:
    """Each expert group the config has (of ``groups``: all when None), removed (name -> the
    config without it)."""
    out = {}
    for name, overrides in ABLATIONS.items():
        if groups is not None and name not in groups:
            continue
        if all(getattr(config, k) == v for k, v in overrides.items()) or \
                not ABLATION_NEEDS.get(name, lambda c: True)(config):
            continue
        try:
            out[name] = dataclasses.replace(config, **overrides)
        except ValueError:
            continue
    return out


def measure(data: bytes, config: CMConfig, level: int, decode: bool) -> dict:
    t0 = time.process_time()
    out = io.BytesIO()  # a preset's config is one byte, a custom one its fields
    api.compress_file(io.BytesIO(data), out, model="cm", config=config)
    stream = out.getvalue()
    t_enc = time.process_time() - t0
    t_dec = None
    if decode:
        t0 = time.process_time()
        if seqzip.decompress(stream) != data:
            raise SystemExit("a round trip failed")
        t_dec = time.process_time() - t0
    # as if the config were a preset (one byte; nothing changes for a preset)
    size = len(stream) - (len(config_to_header(CMConfig, config)) - 1)
    return {"bytes": size, "stream": len(stream), "enc_cpu": t_enc, "dec_cpu": t_dec}


def read(name: str, prefix: int | None) -> bytes:
    """A Canterbury file by name, or any file by its path (a name holding a "/")."""
    path = name if "/" in name else os.path.join(DIR, "canterbury", name)
    with open(path, "rb") as f:
        return f.read()[:prefix]


def ppmd6(data: bytes):
    try:
        import pyppmd
    except ImportError:
        return None
    return len(pyppmd.compress(data, max_order=6, mem_size=16 << 20))


def kbs(n: int, cpu) -> str:
    return f"{n / cpu / 1000:7.1f}" if cpu else "      -"


def run_level(level: int, files: list[str], overrides: dict, prefix: int | None,
              decode: bool) -> list[dict]:
    config = config_for(level, overrides)
    print(f"\nlevel {level}" + (f" with {overrides}" if overrides else ""))
    print(f"{'file':<13} {'in':>8} {'bytes':>8} {'bpc':>6} {'paq8px':>8} {'vs':>7} "
          f"{'ppmd6':>8} {'enc KB/s':>8} {'dec KB/s':>8}")
    rows = []
    for name in files:
        data = read(name, prefix)
        r = dict(measure(data, config, level, decode), file=os.path.basename(name), level=level, n=len(data),
                 ppmd6=ppmd6(data))
        paq = PAQ8PX_8.get(name) if prefix is None or prefix >= len(data) else None
        r["paq8px"] = paq
        rows.append(r)
        print(f"{os.path.basename(name)[:13]:<13} {len(data):>8} {r['bytes']:>8} {8 * r['bytes'] / len(data):6.3f} "
              f"{paq or '-':>8} {(r['bytes'] / paq - 1) if paq else 0:>+7.1%} "
              f"{r['ppmd6'] or '-':>8} {kbs(len(data), r['enc_cpu'])} "
              f"{kbs(len(data), r['dec_cpu'])}", flush=True)
    n = sum(r["n"] for r in rows)
    total = sum(r["bytes"] for r in rows)
    paq = sum(r["paq8px"] or 0 for r in rows)
    enc = sum(r["enc_cpu"] for r in rows)
    dec = sum(r["dec_cpu"] or 0 for r in rows)
    ppm = sum(r["ppmd6"] or 0 for r in rows)
    print(f"{'total':<13} {n:>8} {total:>8} {8 * total / n:6.3f} {paq:>8} "
          f"{total / paq - 1 if paq else 0:>+7.1%} {ppm or '-':>8} {kbs(n, enc)} "
          f"{kbs(n, dec if decode else None)}")
    return rows


def run_ablation(level: int, files: list[str], overrides: dict, prefix: int | None,
                 groups=None) -> dict:
    config = config_for(level, overrides)
    datas = {}
    for name in files:
        datas[name] = read(name, prefix)
    base = {name: measure(d, config, level, False) for name, d in datas.items()}
    n = sum(len(d) for d in datas.values())
    print(f"\nablation at level {level}: each group removed (+ bytes = what it gains; "
          f"cpu = the share of the time it takes)")
    print(f"{'removed':<15} " + " ".join(f"{os.path.basename(name)[:12]:>12}" for name in files) +
          f" {'total':>9} {'bpc':>7} {'cpu':>6}")
    base_cpu = sum(r["enc_cpu"] for r in base.values())
    print(f"{'(none)':<15} " + " ".join(f"{base[f]['bytes']:>12}" for f in files) +
          f" {sum(r['bytes'] for r in base.values()):>9} {'':>7} {base_cpu:5.1f}s")
    out = {"level": level, "base": base, "removed": {}}
    for group, reduced in removals(config, groups).items():
        rows = {name: measure(d, reduced, level, False) for name, d in datas.items()}
        diff = {f: rows[f]["bytes"] - base[f]["bytes"] for f in files}
        cpu = sum(r["enc_cpu"] for r in rows.values())
        print(f"{group:<15} " + " ".join(f"{diff[f]:>+12}" for f in files) +
              f" {sum(diff.values()):>+9} {8 * sum(diff.values()) / n:>+7.4f} "
              f"{1 - cpu / base_cpu:>6.0%}", flush=True)
        out["removed"][group] = rows
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--levels", default="1,6,9")
    parser.add_argument("--files", default=",".join(PAQ8PX_8))
    parser.add_argument("--set", action="append", default=[], help="field=value")
    parser.add_argument("--prefix", type=int, default=None, help="the first N bytes of each")
    parser.add_argument("--no-decode", action="store_true", help="compress only")
    parser.add_argument("--ablate", action="store_true")
    parser.add_argument("--groups", default=None, help="--ablate only these groups of "
                        + ",".join(ABLATIONS))
    parser.add_argument("--first", action="store_true",
                        help="the levels' first presets (before issue 20's changes)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    global FIRST
    FIRST = args.first
    overrides = {}
    for item in args.set:
        key, _, value = item.partition("=")
        overrides[key] = parse_value(value)
    files = args.files.split(",")
    levels = [int(v) for v in args.levels.split(",")]
    if any(level not in LEVELS for level in levels):
        raise SystemExit(f"levels are {sorted(LEVELS)}")
    report: dict = {"set": overrides, "prefix": args.prefix, "levels": {}}
    for level in levels:
        if args.ablate:
            groups = args.groups.split(",") if args.groups else None
            report["levels"][level] = run_ablation(level, files, overrides, args.prefix, groups)
        else:
            report["levels"][level] = run_level(level, files, overrides, args.prefix,
                                                not args.no_decode)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
