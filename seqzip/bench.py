"""Bits per character and speed of seqzip's models beside real baselines, in one run.

Each model compresses each file through the public API (container and coder included) and the
result is decoded and compared byte for byte.  bzip2 -9 (stdlib ``bz2``) is the baseline row of
every report; lzma (xz -9e) always, and PPMd order 6 and zstd -19 when their packages are
installed, are extra rows.  Regret (model bits - true bits) is shown for generated corpora whose
true model is known.

    >>> rows = run(None, models=["order2"], sizes={"markov2": 3000, "text": 3000})
    >>> sorted({r["method"] for r in rows}) >= ["bzip2-9", "order2"]
    True
"""
from __future__ import annotations

import io
import os
import time
from typing import Callable

from . import api, baselines
from .models import DEFAULT_LEVEL, MODELS, spec_by_name

DEFAULT_SIZES = {"text": 100_000, "markov2": 50_000}  # every model in ~2 minutes


def _inputs(files: list[str] | None, sizes: dict[str, int]) -> list[tuple[str, bytes, float | None]]:
    if files:
        out = []
        for path in files:
            with open(path, "rb") as f:
                out.append((os.path.basename(path), f.read(), None))
        return out
    from . import corpora

    samples = [corpora.generate(name, n, seed=0) for name, n in sizes.items()]
    return [(f"{s.name} (generated)", s.data, s.true_bits) for s in samples]


def _row(name: str, data: bytes, method: str, level: int | None, packed_size: int,
         t_compress: float, t_decompress: float, ok: bool, truth: float | None) -> dict:
    bits = 8.0 * packed_size
    n = len(data)
    return {
        "file": name, "size": n, "method": method, "level": level,
        "compressed_bytes": packed_size,
        "bits_per_character": bits / n if n else 0.0,
        "regret_bits": bits - truth if truth is not None else None,
        "true_bits_per_character": truth / n if truth is not None and n else None,
        "compress_kb_s": n / 1000 / t_compress if t_compress > 0 else None,
        "decompress_kb_s": n / 1000 / t_decompress if t_decompress > 0 else None,
        "round_trip_ok": ok,
    }


def _timed(func, arg):
    start = time.perf_counter()
    result = func(arg)
    return result, time.perf_counter() - start


def run(files: list[str] | None = None, *, models: list[str] | None = None,
        level: int = DEFAULT_LEVEL, sizes: dict[str, int] | None = None,
        progress: Callable[[str], None] | None = None) -> list[dict]:
    """Benchmark ``models`` (default: all) and the baselines on ``files`` (default: generated).

    Returns one dict per (file, method) with size, compressed bytes, bits per character, regret
    where the truth is known, compress and decompress KB/s (1 KB = 1000 bytes), and whether the
    round trip restored the input.
    """
    names = models if models else sorted(MODELS)
    for name in names:
        spec_by_name(name)  # ValueError for unknown names before any work
    rows = []
    for file_name, data, truth in _inputs(files, sizes or DEFAULT_SIZES):
        for method in baselines.available():
            rows.append(measure_baseline(file_name, data, method, truth=truth))
        for name in names:
            if progress:
                progress(f"{file_name}: {name} -{level} ...")
            rows.append(measure(file_name, data, name, level=level, truth=truth))
    return rows


def measure_baseline(file_name: str, data: bytes, method: str, *,
                     truth: float | None = None) -> dict:
    """One row for baseline ``method`` ("bzip2-9", "xz-9e", ...)."""
    comp, decomp = baselines.available()[method]
    packed, tc = _timed(comp, data)
    restored, td = _timed(decomp, packed)
    return _row(file_name, data, method, None, len(packed), tc, td, restored == data, truth)


def measure(file_name: str, data: bytes, model: str, *, level: int | None = DEFAULT_LEVEL,
            config=None, label: str | None = None, truth: float | None = None) -> dict:
    """One row: compress ``data`` with ``model`` at ``level`` (or with ``config``), decompress,
    compare; ``label`` names the row (default: the model's name)."""
    def compress(d: bytes) -> bytes:
        out = io.BytesIO()
        if config is None:
            api.compress_file(io.BytesIO(d), out, model=model, level=level)
        else:
            api.compress_file(io.BytesIO(d), out, model=model, config=config)
        return out.getvalue()

    packed, tc = _timed(compress, data)
    restored, td = _timed(api.decompress, packed)
    return _row(file_name, data, label or model, level if config is None else None,
                len(packed), tc, td, restored == data, truth)


def format_table(rows: list[dict]) -> str:
    """A plain-text table, one line per (file, method)."""
    head = (f"{'file':<22} {'size':>10} {'method':<12} {'bytes':>10} {'bpc':>7} {'regret':>10} "
            f"{'comp KB/s':>10} {'dec KB/s':>10} {'ok':>3}")
    lines = [head, "-" * len(head)]
    for r in rows:
        method = r["method"] + (f" -{r['level']}" if r["level"] is not None else "")
        regret = f"{r['regret_bits']:.0f}" if r["regret_bits"] is not None else "-"
        comp = f"{r['compress_kb_s']:.1f}" if r["compress_kb_s"] else "-"
        dec = f"{r['decompress_kb_s']:.1f}" if r["decompress_kb_s"] else "-"
        lines.append(f"{r['file'][:22]:<22} {r['size']:>10,} {method:<12} "
                     f"{r['compressed_bytes']:>10,} {r['bits_per_character']:>7.3f} {regret:>10} "
                     f"{comp:>10} {dec:>10} {'yes' if r['round_trip_ok'] else 'NO':>3}")
    truths = {(r["file"], r["true_bits_per_character"]) for r in rows
              if r["true_bits_per_character"] is not None}
    for name, bpc in sorted(truths):
        lines.append(f"true model of {name}: {bpc:.3f} bits per character")
    return "\n".join(lines)
