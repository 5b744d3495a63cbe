"""Bits per character and speed of seqzip's models beside real baselines, in one run.

Each model compresses each file through the public API (container and coder included) and the
result is decoded and compared byte for byte.  bzip2 -9 (stdlib ``bz2``) is the baseline row of
every report; lzma (xz -9e) always, and PPMd order 6 and zstd -19 when their packages are
installed, are extra rows (the table says how to get the missing ones).  Regret (model bits -
true bits) is shown for generated corpora whose true model is known.  Times are the best of
``runs`` runs, wall clock and CPU.

    >>> rows = run(None, models=["order2"], sizes={"markov2": 3000, "english": 3000})
    >>> sorted({r["method"] for r in rows}) >= ["bzip2-9", "order2"]
    True
    >>> report(rows)["seqzip_version"] == __version__
    True
"""
from __future__ import annotations

import importlib.util
import io
import os
import platform
import time
from typing import Callable

from . import __version__, api, baselines, coder
from .models import DEFAULT_LEVEL, MODELS, create, make_config, spec_by_name

# The built-in data of `seqzip bench`: prose like a novel's (bzip2 -9 within 0.1 bpc of
# alice29.txt's 2.27), a binary table with structure like a spreadsheet's or an executable's,
# and a source of known entropy for regret; every model runs in a few minutes.
DEFAULT_SIZES = {"english": 100_000, "binary": 60_000, "markov2": 50_000}
LEGEND = ("bpc: bits per character, 8 x compressed / original bytes, lower is better; * the "
          "best bpc of each file.  -N: seqzip level (-1 fastest ... -9 strongest).  regret: "
          "bits beyond the true model's.  KB/s: original bytes per second / 1000, wall clock; "
          "CPU s: processor seconds to compress; both the best of {runs} run(s).")
Progress = Callable[[str, str, int], None]  # (file, method, size) when a job starts


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
         compress_times: tuple[float, float], decompress_times: tuple[float, float], ok: bool,
         truth: float | None) -> dict:
    bits = 8.0 * packed_size
    n = len(data)
    (tc, cpu_c), (td, cpu_d) = compress_times, decompress_times
    return {
        "file": name, "size": n, "method": method, "level": level,
        "compressed_bytes": packed_size,
        "bits_per_character": bits / n if n else 0.0,
        "regret_bits": bits - truth if truth is not None else None,
        "true_bits_per_character": truth / n if truth is not None and n else None,
        "compress_kb_s": n / 1000 / tc if tc > 0 else None,
        "decompress_kb_s": n / 1000 / td if td > 0 else None,
        "compress_wall_s": tc, "compress_cpu_s": cpu_c,
        "decompress_wall_s": td, "decompress_cpu_s": cpu_d,
        "round_trip_ok": ok,
    }


def _timed(func, arg, runs: int = 1):
    """``func(arg)`` and the best wall and CPU seconds (each minimised separately) of ``runs``
    runs."""
    best_wall = best_cpu = float("inf")
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        result = func(arg)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        best_wall, best_cpu = min(best_wall, wall), min(best_cpu, cpu)
    return result, (best_wall, best_cpu)


def run(files: list[str] | None = None, *, models: list[str] | None = None,
        level: int = DEFAULT_LEVEL, sizes: dict[str, int] | None = None, runs: int = 1,
        progress: Progress | None = None, verbose: bool = False) -> list[dict]:
    """Benchmark ``models`` (default: all) and the baselines on ``files`` (default: generated).

    Returns one dict per (file, method) with size, compressed bytes, bits per character, regret
    where the truth is known, compress and decompress KB/s (1 KB = 1000 bytes), wall and CPU
    seconds (the best of ``runs``), and whether the round trip restored the input.
    ``progress(file, method, size)`` is called as each job starts.  With ``verbose`` the
    rows of models with dense recurrent matrices also hold their spectral radii before and
    after a pass over the file (:func:`recurrent_spectra`).
    """
    names = models if models else sorted(MODELS)
    for name in names:
        spec_by_name(name)  # ValueError for unknown names before any work
    rows = []
    for file_name, data, truth in _inputs(files, sizes or DEFAULT_SIZES):
        for method in baselines.available():
            if progress:
                progress(file_name, method, len(data))
            rows.append(measure_baseline(file_name, data, method, truth=truth, runs=runs))
        for name in names:
            if progress:
                progress(file_name, name, len(data))
            rows.append(measure(file_name, data, name, level=level, truth=truth, runs=runs))
            if verbose:
                spectra = recurrent_spectra(data, name, level)
                if spectra:
                    rows[-1]["spectral_radius"] = spectra
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


def measure_baseline(file_name: str, data: bytes, method: str, *,
                     truth: float | None = None, runs: int = 1) -> dict:
    """One row for baseline ``method`` ("bzip2-9", "xz-9e", ...)."""
    comp, decomp = baselines.available()[method]
    packed, tc = _timed(comp, data, runs)
    restored, td = _timed(decomp, packed, runs)
    return _row(file_name, data, method, None, len(packed), tc, td, restored == data, truth)


def measure(file_name: str, data: bytes, model: str, *, level: int | None = DEFAULT_LEVEL,
            config=None, label: str | None = None, truth: float | None = None,
            runs: int = 1) -> dict:
    """One row: compress ``data`` with ``model`` at ``level`` (or with ``config``), decompress,
    compare; ``label`` names the row (default: the model's name)."""
    def compress(d: bytes) -> bytes:
        out = io.BytesIO()
        if config is None:
            api.compress_file(io.BytesIO(d), out, model=model, level=level)
        else:
            api.compress_file(io.BytesIO(d), out, model=model, config=config)
        return out.getvalue()

    packed, tc = _timed(compress, data, runs)
    restored, td = _timed(api.decompress, packed, runs)
    return _row(file_name, data, label or model, level if config is None else None,
                len(packed), tc, td, restored == data, truth)


def machine() -> dict:
    """What the figures were measured on."""
    import numpy

    try:
        import constriction

        constriction_version = getattr(constriction, "__version__", None)
    except ImportError:  # pragma: no cover - a dependency
        constriction_version = None
    return {"platform": platform.platform(), "machine": platform.machine(),
            "processor": platform.processor() or None, "cpu_count": os.cpu_count(),
            "python": platform.python_version(), "numpy": numpy.__version__,
            "constriction": constriction_version}


def report(rows: list[dict], *, runs: int = 1) -> dict:
    """The JSON document of ``seqzip bench --json``: the rows with what they were measured on.
    """
    return {"seqzip_version": __version__, "machine": machine(), "runs": runs,
            "legend": LEGEND.format(runs=runs), "missing_baselines": baselines.missing(),
            "rows": rows}


def best_rows(rows: list[dict]) -> set[int]:
    """Indices of the rows with the lowest bits per character of their file."""
    best: dict[str, int] = {}
    for i, r in enumerate(rows):
        if r["round_trip_ok"] and (r["file"] not in best or r["bits_per_character"]
                                   < rows[best[r["file"]]]["bits_per_character"]):
            best[r["file"]] = i
    return set(best.values())


def format_table(rows: list[dict], runs: int = 1) -> str:
    """A plain-text table, one line per (file, method), with its legend and notes.

        >>> print(format_table([]).splitlines()[0][:41])
        bpc: bits per character, 8 x compressed /
    """
    head = (f"{'file':<22} {'size':>10} {'method':<12} {'bytes':>10} {'bpc':>8} {'regret':>9} "
            f"{'comp KB/s':>10} {'dec KB/s':>10} {'CPU s':>7} {'ok':>3}")
    lines = [LEGEND.format(runs=runs), "", head, "-" * len(head)]
    best = best_rows(rows)
    for i, r in enumerate(rows):
        method = r["method"] + (f" -{r['level']}" if r["level"] is not None else "")
        regret = f"{r['regret_bits']:.0f}" if r["regret_bits"] is not None else "-"
        comp = f"{r['compress_kb_s']:.1f}" if r["compress_kb_s"] else "-"
        dec = f"{r['decompress_kb_s']:.1f}" if r["decompress_kb_s"] else "-"
        cpu = f"{r['compress_cpu_s']:.2f}" if r.get("compress_cpu_s") is not None else "-"
        bpc = f"{r['bits_per_character']:.3f}{'*' if i in best else ' '}"
        lines.append(f"{r['file'][:22]:<22} {r['size']:>10,} {method:<12} "
                     f"{r['compressed_bytes']:>10,} {bpc:>8} {regret:>9} "
                     f"{comp:>10} {dec:>10} {cpu:>7} {'yes' if r['round_trip_ok'] else 'NO':>3}")
    truths = {(r["file"], r["true_bits_per_character"]) for r in rows
              if r["true_bits_per_character"] is not None}
    for name, bpc in sorted(truths):
        lines.append(f"true model of {name}: {bpc:.3f} bits per character")
    for r in rows:
        if r.get("spectral_radius"):
            radii = ", ".join(f"{name} {a:.3f} -> {b:.3f}"
                              for name, (a, b) in r["spectral_radius"].items())
            lines.append(f"spectral radius, {r['method']} -{r['level']} on {r['file']}: {radii}")
    missing = baselines.missing()
    if missing:
        lines.append(f"not run: {', '.join(sorted(missing))} (pip install "
                     f"{' '.join(sorted(set(missing.values())))}, or pip install "
                     f"'seqzip[bench]')")
    return "\n".join(lines)


def can_plot() -> bool:
    """True when matplotlib is installed (``seqzip bench --plot``)."""
    return importlib.util.find_spec("matplotlib") is not None


def learning_curve(data: bytes, model: str, level: int = DEFAULT_LEVEL,
                   window: int | None = None) -> list[float]:
    """Bits per character along ``data`` under ``model`` (moving average over ``window``
    symbols, default 1/50 of the data), from the probabilities the coder would use.

        >>> curve = learning_curve(b"abracadabra " * 200, "order2", window=100)
        >>> len(curve), curve[0] > curve[-1]
        (2301, True)
    """
    import numpy as np

    symbols, alphabet = api.symbols_of(data)
    if not len(symbols):
        return []
    if len(alphabet) == 1:
        return [0.0] * len(symbols)
    bits = coder.log_loss_bits(create(model, make_config(model, level), alphabet=alphabet),
                               symbols)
    window = max(1, min(len(bits), window or len(bits) // 50))
    cumulative = np.concatenate([[0.0], np.cumsum(bits)])
    return ((cumulative[window:] - cumulative[:-window]) / window).tolist()


def plot(files: list[str] | None, path: str, *, models: list[str] | None = None,
         level: int = DEFAULT_LEVEL, sizes: dict[str, int] | None = None) -> None:
    """Draw the learning curve of every model on every file (one panel per file) to ``path``
    (PNG).

    Raises:
        ImportError: matplotlib is not installed (see :func:`can_plot`).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    inputs = _inputs(files, sizes or DEFAULT_SIZES)
    names = models if models else sorted(MODELS)
    figure, axes = plt.subplots(len(inputs), 1, figsize=(9, 3.2 * len(inputs)), squeeze=False)
    for ax, (file_name, data, truth) in zip(axes[:, 0], inputs):
        for name in names:
            curve = learning_curve(data, name, level)
            window = max(1, len(data) // 50)
            ax.plot(range(window, window + len(curve)), curve, label=f"{name} -{level}",
                    linewidth=1)
        if truth is not None and data:
            ax.axhline(truth / len(data), color="black", linestyle=":", label="true model")
        ax.set_title(file_name)
        ax.set_xlabel("position (bytes)")
        ax.set_ylabel("bits per character")
        ax.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
