"""The bench's reports: the JSON document (its schema is ``schema.json`` beside this module), a
plain-text table and a Markdown table, each with its legend, the inputs described and the
machine and library versions the figures were measured with.

    >>> doc = report([])
    >>> doc["schema_version"], doc["mode"], doc["rows"]
    (2, 'files', [])
"""
from __future__ import annotations

import json
import os
import platform
from importlib import metadata, resources
from typing import Any

from .. import __version__, baselines
from .timing import machine_metadata

SCHEMA_VERSION = 2
LEGEND = ("bpc: bits per character, 8 x compressed / original bytes, lower is better; * the "
          "best bpc of each file.  -N: seqzip level (-1 fastest ... -9 strongest).  regret: "
          "bits per character beyond the true model's.  KB/s: original bytes per CPU second "
          "/ 1000; CPU s: processor seconds to compress; both the median of {runs} run(s) "
          "(spread: --json).")
# the libraries whose versions a report records (None when not installed)
LIBRARIES = ("numpy", "constriction", "click", "pyperf", "Cython", "matplotlib", "pyppmd",
             "zstandard", "dask", "distributed")


def versions() -> dict[str, str | None]:
    """The installed version of each library in :data:`LIBRARIES` (None: not installed).

        >>> versions()["constriction"] is not None
        True
    """
    out: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def machine() -> dict:
    """What the figures were measured on: the platform, the interpreter, the libraries,
    pyperf's record of the CPU and its load, and which compiled copy of the vector loops ran
    (``simd``: "avx2" or "generic"; the same bits either way, not the same speed).

        >>> {"python", "numpy", "cpu_count", "constriction", "simd"} <= set(machine())
        True
    """
    from .._kernels.cm import simd_path

    lib = versions()
    return {"platform": platform.platform(), "machine": platform.machine(),
            "processor": platform.processor() or None, "cpu_count": os.cpu_count(),
            "python": platform.python_version(), "numpy": lib["numpy"],
            "constriction": lib["constriction"], "libraries": lib,
            "pyperf": machine_metadata(), "simd": simd_path()}


def schema() -> dict:
    """The JSON Schema of every report of ``seqzip bench --json`` (``schema.json`` in the
    package): the stable, documented shape of its output in each mode.

        >>> schema()["properties"]["schema_version"]
        {'const': 2}
    """
    return json.loads(resources.files(__package__).joinpath("schema.json").read_text())


def _context(runs: int) -> dict[str, Any]:
    try:
        load = [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        load = None
    return {"schema_version": SCHEMA_VERSION, "seqzip_version": __version__,
            "machine": machine(), "load_average": load, "runs": runs}


def report(rows: list[dict], *, runs: int = 1, inputs: list[dict] | None = None) -> dict:
    """The JSON document of ``seqzip bench --json``: the rows, the inputs they were measured
    on, and the machine (its shape is :func:`schema`, mode ``files``)."""
    return {**_context(runs), "mode": "files", "legend": LEGEND.format(runs=runs),
            "missing_baselines": baselines.missing(), "inputs": inputs or [], "rows": rows}


def validation_report(rows: list[dict], *, train: dict, validation: dict) -> dict:
    """The JSON document of ``seqzip bench --train T --validation V --json`` (mode
    ``validation``): bits(train + validation) - bits(train) of each model and baseline.

        >>> validation_report([], train={"name": "t"}, validation={"name": "v"})["mode"]
        'validation'
    """
    return {**_context(1), "mode": "validation", "train": train, "validation": validation,
            "rows": rows}


def table1_report(rows: list[dict], xor: dict | None, *, budget: float) -> dict:
    """The JSON document of ``seqzip bench --table1 --json`` (mode ``table1``).

        >>> table1_report([], None, budget=5.0)["budget_cpu_s"]
        5.0
    """
    return {**_context(1), "mode": "table1", "budget_cpu_s": budget, "rows": rows, "xor": xor}


def best_rows(rows: list[dict]) -> set[int]:
    """Indices of the rows with the lowest bits per character of their file.

        >>> best_rows([{"file": "f", "bits_per_character": 2.0, "round_trip_ok": True},
        ...            {"file": "f", "bits_per_character": 1.5, "round_trip_ok": True}])
        {1}
    """
    best: dict[str, int] = {}
    for i, r in enumerate(rows):
        if r["round_trip_ok"] and (r["file"] not in best or r["bits_per_character"]
                                   < rows[best[r["file"]]]["bits_per_character"]):
            best[r["file"]] = i
    return set(best.values())


def _cells(r: dict) -> dict[str, str]:
    method = r["method"] + (f" -{r['level']}" if r["level"] is not None else "")
    regret = r.get("regret_bits_per_character")
    return {
        "method": method,
        "regret": f"{regret:.4f}" if regret is not None else "-",
        "comp": f"{r['compress_kb_s']:.1f}" if r["compress_kb_s"] else "-",
        "dec": f"{r['decompress_kb_s']:.1f}" if r["decompress_kb_s"] else "-",
        "cpu": f"{r['compress_cpu_s']:.2f}" if r.get("compress_cpu_s") is not None else "-",
    }


def describe_inputs(inputs: list[dict]) -> list[str]:
    """One line per input: what it is, its size and the start of its SHA-256.

        >>> describe_inputs([{"name": "a", "source": "file", "size": 3, "sha256": "ab" * 32}])
        ['input a: file, 3 bytes, sha256 abababababab...']
    """
    lines = []
    for d in inputs:
        if d["source"] == "generated":
            what = (f"generated by seqzip.corpora '{d['generator']}' ({d['summary']}), "
                    f"{d['units']:,} {d['unit']}, seed {d['seed']}")
        else:
            what = "file"
        lines.append(f"input {d['name']}: {what}, {d['size']:,} bytes, "
                     f"sha256 {d['sha256'][:12]}...")
    return lines


def format_table(rows: list[dict], runs: int = 1, inputs: list[dict] | None = None) -> str:
    """A plain-text table, one line per (file, method), with its legend and notes; names are
    never cut (the file column is as wide as the longest name).

        >>> print(format_table([]).splitlines()[0][:41])
        bpc: bits per character, 8 x compressed /
    """
    width = max([4] + [len(r["file"]) for r in rows])
    mwidth = max([12] + [len(_cells(r)["method"]) for r in rows])
    head = (f"{'file':<{width}} {'size':>10} {'method':<{mwidth}} {'bytes':>10} {'bpc':>8} "
            f"{'regret':>9} {'comp KB/s':>10} {'dec KB/s':>10} {'CPU s':>7} {'ok':>3}")
    lines = [LEGEND.format(runs=runs), "", head, "-" * len(head)]
    best = best_rows(rows)
    for i, r in enumerate(rows):
        c = _cells(r)
        bpc = f"{r['bits_per_character']:.3f}{'*' if i in best else ' '}"
        lines.append(f"{r['file']:<{width}} {r['size']:>10,} {c['method']:<{mwidth}} "
                     f"{r['compressed_bytes']:>10,} {bpc:>8} {c['regret']:>9} "
                     f"{c['comp']:>10} {c['dec']:>10} {c['cpu']:>7} "
                     f"{'yes' if r['round_trip_ok'] else 'NO':>3}")
    truths = {(r["file"], r["true_bits_per_character"]) for r in rows
              if r["true_bits_per_character"] is not None}
    for name, bpc in sorted(truths):
        lines.append(f"true model of {name}: {bpc:.3f} bits per character")
    for r in rows:
        if r.get("spectral_radius"):
            radii = ", ".join(f"{name} {a:.3f} -> {b:.3f}"
                              for name, (a, b) in r["spectral_radius"].items())
            lines.append(f"spectral radius, {r['method']} -{r['level']} on {r['file']}: {radii}")
    lines += describe_inputs(inputs or [])
    missing = baselines.missing()
    if missing:
        lines.append(f"not run: {', '.join(sorted(missing))} (pip install "
                     f"{' '.join(sorted(set(missing.values())))}, or pip install "
                     f"'seqzip[bench]')")
    return "\n".join(lines)


def format_markdown(rows: list[dict], runs: int = 1, inputs: list[dict] | None = None) -> str:
    """The table as Markdown (for papers and READMEs): one row per (file, method), the best
    bits per character of each file in bold, then the legend, the inputs and the machine.

        >>> from seqzip.bench.timing import Timing
        >>> from seqzip.bench.rows import _row
        >>> t = Timing((1.0,), (1.0,))
        >>> rows = [_row("f", b"abcd", "order2", 6, 3, t, t, True, None)]
        >>> print(format_markdown(rows).splitlines()[2])
        | f | 4 | order2 -6 | 3 | **6.000** | - | 0.0 | 0.0 | 1.00 |
    """
    best = best_rows(rows)
    lines = ["| file | size | method | bytes | bpc | regret (bpc) | compress KB/s | "
             "decompress KB/s | CPU s |", "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for i, r in enumerate(rows):
        c = _cells(r)
        bpc = f"{r['bits_per_character']:.3f}"
        if i in best:
            bpc = f"**{bpc}**"
        if not r["round_trip_ok"]:
            bpc += " (round trip FAILED)"
        lines.append(f"| {r['file']} | {r['size']:,} | {c['method']} | "
                     f"{r['compressed_bytes']:,} | {bpc} | {c['regret']} | {c['comp']} | "
                     f"{c['dec']} | {c['cpu']} |")
    m = machine()
    cpu = m["pyperf"].get("cpu_model_name", m["processor"] or m["machine"])
    lines += ["", LEGEND.format(runs=runs).replace("*", "bold:"), ""]
    lines += [f"- {line}" for line in describe_inputs(inputs or [])]
    lines += ["", f"seqzip {__version__}, Python {m['python']}, numpy {m['numpy']}, "
              f"constriction {m['constriction']}, {m['platform']}, {cpu}, "
              f"{m['cpu_count']} CPUs, {m['simd']} loops."]
    truths = sorted({(r["file"], r["true_bits_per_character"]) for r in rows
                     if r["true_bits_per_character"] is not None})
    lines += [f"True model of {name}: {bpc:.3f} bits per character." for name, bpc in truths]
    return "\n".join(lines)
