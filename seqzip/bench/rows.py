"""The bench's measurements: each model (at its own level) and each baseline compresses each
input through the public API (container and coder included), the result is decoded and compared
byte for byte, and both directions are timed (:mod:`seqzip.bench.timing`).

    >>> rows = run(None, models=["order2"], sizes={"markov2": 3000, "english": 3000})
    >>> sorted({r["method"] for r in rows}) >= ["bzip2-9", "order2"]
    True
"""
from __future__ import annotations

import hashlib
import io
import os
from dataclasses import dataclass
from typing import Callable

from .. import api, baselines, coder
from ..models import DEFAULT_LEVEL, MODELS, check_level, create, make_config, spec_by_name
from .timing import Timing, timed

# The built-in data of `seqzip bench`: prose like a novel's (bzip2 -9 within 0.1 bpc of
# alice29.txt's 2.27), a binary table with structure like a spreadsheet's or an executable's,
# and a source of known entropy for regret; every model runs in a few minutes.
DEFAULT_SIZES = {"english": 100_000, "binary": 60_000, "markov2": 50_000}
GENERATED_SEED = 0
Progress = Callable[[str, str, int], None]  # (file, method, size) when a job starts


@dataclass(frozen=True)
class Input:
    """One input of the bench: its name in the tables, its bytes, its true bits when a
    generating model is known, and where it came from."""
    name: str
    data: bytes
    truth: float | None
    description: dict

    def __iter__(self):  # (name, data, truth), as the bench's callers unpack it
        return iter((self.name, self.data, self.truth))


def inputs(files: list[str] | None, sizes: dict[str, int] | None = None) -> list[Input]:
    """The bench's inputs: the files, or the generated corpora of ``sizes`` (default
    :data:`DEFAULT_SIZES`), each described (source, size, SHA-256; generator, seed and what it
    is for generated data).

        >>> [i.description["generator"] for i in inputs(None, {"markov2": 100})]
        ['markov2']
    """
    if files:
        out = []
        for path in files:
            with open(path, "rb") as f:
                data = f.read()
            out.append(Input(path, data, None, {
                "name": path, "source": "file", "path": os.path.abspath(path),
                "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}))
        return out
    from .. import corpora

    out = []
    for name, n in (sizes or DEFAULT_SIZES).items():
        sample = corpora.generate(name, n, seed=GENERATED_SEED)
        gen = corpora.GENERATORS[name]
        label = f"{name} (generated)"
        out.append(Input(label, sample.data, sample.true_bits, {
            "name": label, "source": "generated", "generator": name, "units": n,
            "unit": gen.unit, "seed": GENERATED_SEED, "summary": gen.summary,
            "size": len(sample.data), "sha256": hashlib.sha256(sample.data).hexdigest(),
            "true_bits_per_character": sample.true_bits / len(sample.data)
            if sample.true_bits is not None and sample.data else None}))
    return out


def parse_jobs(models: list[str] | None, level: int = DEFAULT_LEVEL) -> list[tuple[str, int]]:
    """(model, level) pairs from names such as ``cm``, ``cm:1``, ``ctw:8`` (``level`` where
    none is given; all models when ``models`` is empty).

    Raises:
        ValueError: an unknown model or a bad level.

        >>> parse_jobs(["cm:1", "cm:6", "ctw"], level=8)
        [('cm', 1), ('cm', 6), ('ctw', 8)]
    """
    jobs = []
    for item in (models or sorted(MODELS)):
        name, _, lvl = item.strip().partition(":")
        spec_by_name(name)  # ValueError for unknown names before any work
        if lvl:
            if not lvl.isdigit():
                raise ValueError(f"bad level {lvl!r} in {item!r}: use MODEL:LEVEL, e.g. cm:6")
            job_level = int(lvl)
        else:
            job_level = level
        check_level(job_level)
        jobs.append((name, job_level))
    return jobs


def _row(name: str, data: bytes, method: str, level: int | None, packed_size: int,
         compress_time: Timing, decompress_time: Timing, ok: bool,
         truth: float | None) -> dict:
    bits = 8.0 * packed_size
    n = len(data)
    c, d = compress_time.cpu_median, decompress_time.cpu_median
    return {
        "file": name, "size": n, "method": method, "level": level,
        "compressed_bytes": packed_size,
        "bits_per_character": bits / n if n else 0.0,
        "regret_bits": bits - truth if truth is not None else None,
        "regret_bits_per_character": (bits - truth) / n if truth is not None and n else None,
        "true_bits_per_character": truth / n if truth is not None and n else None,
        "compress_kb_s": n / 1000 / c if c > 0 else None,
        "decompress_kb_s": n / 1000 / d if d > 0 else None,
        "compress_wall_s": compress_time.wall_median, "compress_cpu_s": c,
        "decompress_wall_s": decompress_time.wall_median, "decompress_cpu_s": d,
        "runs": compress_time.runs,
        "timing": {"compress": compress_time.summary(),
                   "decompress": decompress_time.summary()},
        "round_trip_ok": ok,
    }


def run(files: list[str] | None = None, *, models: list[str] | None = None,
        level: int = DEFAULT_LEVEL, sizes: dict[str, int] | None = None, runs: int = 1,
        progress: Progress | None = None, verbose: bool = False,
        scheduler=None) -> list[dict]:
    """Benchmark ``models`` (default: all; ``"cm:1"`` names a level, else ``level``) and the
    baselines on ``files`` (default: generated).

    Returns one dict per (file, method) with size, compressed bytes, bits per character, regret
    where the truth is known, compress and decompress KB/s (1 KB = 1000 bytes, from the median
    CPU seconds), the median, min and max CPU and wall seconds of ``runs`` runs, and whether
    the round trip restored the input.  ``progress(file, method, size)`` is called as each job
    starts.  With ``verbose`` the rows of models with dense recurrent matrices also hold their
    spectral radii before and after a pass over the file (:func:`recurrent_spectra`).  With
    ``scheduler`` (a Dask scheduler's address or a ``distributed.Client``) every (file,
    method) job is a Dask task on that cluster (``progress`` is not called).

        >>> rows = run(None, models=["order2:1", "order2:6"], sizes={"markov2": 2000})
        >>> [(r["method"], r["level"]) for r in rows if r["level"] is not None]
        [('order2', 1), ('order2', 6)]
    """
    jobs = parse_jobs(models, level)
    if scheduler is not None:
        return _run_on_cluster(scheduler, files, sizes, jobs, runs)
    rows = []
    for file_name, data, truth in inputs(files, sizes):
        for method in baselines.available():
            if progress:
                progress(file_name, method, len(data))
            rows.append(measure_baseline(file_name, data, method, truth=truth, runs=runs))
        for name, job_level in jobs:
            if progress:
                progress(file_name, f"{name} -{job_level}", len(data))
            rows.append(measure(file_name, data, name, level=job_level, truth=truth, runs=runs))
            if verbose:
                spectra = recurrent_spectra(data, name, job_level)
                if spectra:
                    rows[-1]["spectral_radius"] = {k: list(v) for k, v in spectra.items()}
    return rows


def spectral_radius(matrix) -> float:
    """The largest modulus of the eigenvalues of a square matrix (reporting only: numpy).

        >>> spectral_radius([[0.0, 2.0], [0.5, 0.0]])
        1.0
    """
    import numpy as np

    return float(np.abs(np.linalg.eigvals(np.asarray(matrix, dtype=float))).max())


def recurrent_spectra(data: bytes, model: str, level: int = DEFAULT_LEVEL,
                      config=None) -> dict[str, tuple[float, float]] | None:
    """Spectral radius of each dense recurrent matrix of ``model`` at the start and after it
    has coded ``data`` ({name: (before, after)}); None for models without one.  002 Sect. III-A
    reads exploding gradients off this radius growing past 1.

        >>> spectra = recurrent_spectra(b"abcab" * 40, "relu-rnn", 1)
        >>> sorted(spectra), spectra["R"][0] < 1.0
        (['R'], True)
    """
    symbols, alphabet = api.symbols_of(data)
    if not len(symbols):
        return None
    net = create(model, config or make_config(model, level), alphabet=alphabet)
    if not hasattr(net, "recurrent_matrices"):
        return None
    before = {name: spectral_radius(m) for name, m in net.initial_recurrent.items()}
    coder.log_loss_bits(net, symbols)
    return {name: (before[name], spectral_radius(m))
            for name, m in net.recurrent_matrices().items()}


def _run_on_cluster(scheduler, files, sizes, jobs, runs) -> list[dict]:
    """The jobs of :func:`run` as Dask tasks: the same rows, in the same order."""
    from ..cluster import map_jobs

    tasks = []
    for file_name, data, truth in inputs(files, sizes):
        tasks += [(file_name, data, method, None, truth, runs) for method in baselines.available()]
        tasks += [(file_name, data, name, level, truth, runs) for name, level in jobs]
    return map_jobs(scheduler, _job, tasks)


def _job(file_name: str, data: bytes, method: str, level: int | None, truth: float | None,
         runs: int) -> dict:
    if level is None:
        return measure_baseline(file_name, data, method, truth=truth, runs=runs)
    return measure(file_name, data, method, level=level, truth=truth, runs=runs)


def measure_baseline(file_name: str, data: bytes, method: str, *,
                     truth: float | None = None, runs: int = 1) -> dict:
    """One row for baseline ``method`` ("bzip2-9", "xz-9e", ...).

        >>> measure_baseline("f", b"abc" * 100, "bzip2-9")["round_trip_ok"]
        True
    """
    comp, decomp = baselines.available()[method]
    packed, tc = timed(comp, data, runs)
    restored, td = timed(decomp, packed, runs)
    return _row(file_name, data, method, None, len(packed), tc, td, restored == data, truth)


def measure(file_name: str, data: bytes, model: str, *, level: int | None = DEFAULT_LEVEL,
            config=None, label: str | None = None, truth: float | None = None,
            runs: int = 1) -> dict:
    """One row: compress ``data`` with ``model`` at ``level`` (or with ``config``), decompress,
    compare; ``label`` names the row (default: the model's name).

        >>> r = measure("f", b"abc" * 1000, "order2", level=1)
        >>> r["method"], r["level"], r["bits_per_character"] < 1.0
        ('order2', 1, True)
    """
    def compress(d: bytes) -> bytes:
        out = io.BytesIO()
        if config is None:
            api.compress_file(io.BytesIO(d), out, model=model, level=level)
        else:
            api.compress_file(io.BytesIO(d), out, model=model, config=config)
        return out.getvalue()

    packed, tc = timed(compress, data, runs)
    restored, td = timed(api.decompress, packed, runs)
    return _row(file_name, data, label or model, level if config is None else None,
                len(packed), tc, td, restored == data, truth)
