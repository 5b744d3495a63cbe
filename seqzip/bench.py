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
        progress: Progress | None = None, verbose: bool = False,
        scheduler=None) -> list[dict]:
    """Benchmark ``models`` (default: all) and the baselines on ``files`` (default: generated).

    Returns one dict per (file, method) with size, compressed bytes, bits per character, regret
    where the truth is known, compress and decompress KB/s (1 KB = 1000 bytes), wall and CPU
    seconds (the best of ``runs``), and whether the round trip restored the input.
    ``progress(file, method, size)`` is called as each job starts.  With ``verbose`` the
    rows of models with dense recurrent matrices also hold their spectral radii before and
    after a pass over the file (:func:`recurrent_spectra`).  With ``scheduler`` (a Dask
    scheduler's address or a ``distributed.Client``) every (file, method) job is a Dask task
    on that cluster (``progress`` is not called).

        >>> rows = run(None, models=["order2"], sizes={"markov2": 2000})
        >>> models = [r["method"] for r in rows if r["level"] is not None]
        >>> models, all(r["round_trip_ok"] for r in rows)
        (['order2'], True)
    """
    names = models if models else sorted(MODELS)
    for name in names:
        spec_by_name(name)  # ValueError for unknown names before any work
    if scheduler is not None:
        return _run_on_cluster(scheduler, files, names, level, sizes, runs)
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


def _run_on_cluster(scheduler, files, names, level, sizes, runs) -> list[dict]:
    """The jobs of :func:`run` as Dask tasks: the same rows, in the same order."""
    from .cluster import map_jobs

    jobs = []
    for file_name, data, truth in _inputs(files, sizes or DEFAULT_SIZES):
        jobs += [(file_name, data, method, None, truth, runs) for method in baselines.available()]
        jobs += [(file_name, data, name, level, truth, runs) for name in names]
    return map_jobs(scheduler, _job, jobs)


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
    packed, tc = _timed(comp, data, runs)
    restored, td = _timed(decomp, packed, runs)
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

    packed, tc = _timed(compress, data, runs)
    restored, td = _timed(api.decompress, packed, runs)
    return _row(file_name, data, label or model, level if config is None else None,
                len(packed), tc, td, restored == data, truth)


def machine() -> dict:
    """What the figures were measured on.

        >>> {"python", "numpy", "cpu_count"} <= set(machine())
        True
    """
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


SCHEMA_VERSION = 1


def schema() -> dict:
    """The JSON Schema of :func:`report` (``seqzip/bench_schema.json``, in the package): the
    stable, documented shape of ``seqzip bench --json``.

        >>> schema()["properties"]["schema_version"]
        {'const': 1}
    """
    import json
    from importlib import resources

    return json.loads(resources.files(__package__).joinpath("bench_schema.json").read_text())


def report(rows: list[dict], *, runs: int = 1) -> dict:
    """The JSON document of ``seqzip bench --json``: the rows with what they were measured on
    (its shape is :func:`schema`).

        >>> doc = report([])
        >>> doc["schema_version"], doc["rows"]
        (1, [])
    """
    try:
        load = [round(v, 2) for v in os.getloadavg()]
    except (AttributeError, OSError):
        load = None
    return {"schema_version": SCHEMA_VERSION, "seqzip_version": __version__,
            "machine": machine(), "load_average": load, "runs": runs,
            "legend": LEGEND.format(runs=runs), "missing_baselines": baselines.missing(),
            "rows": rows}


def format_markdown(rows: list[dict], runs: int = 1) -> str:
    """The table as Markdown (for papers and READMEs): one row per (file, method), the best
    bits per character of each file in bold, then the legend and the machine.

        >>> rows = [_row("f", b"abcd", "order2", 6, 3, (1.0, 1.0), (1.0, 1.0), True, None)]
        >>> print(format_markdown(rows).splitlines()[2])
        | f | 4 | order2 -6 | 3 | **6.000** | - | 0.0 | 0.0 | 1.00 |
    """
    best = best_rows(rows)
    lines = ["| file | size | method | bytes | bpc | regret (bits) | compress KB/s | "
             "decompress KB/s | CPU s |", "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for i, r in enumerate(rows):
        method = r["method"] + (f" -{r['level']}" if r["level"] is not None else "")
        bpc = f"{r['bits_per_character']:.3f}"
        if i in best:
            bpc = f"**{bpc}**"
        if not r["round_trip_ok"]:
            bpc += " (round trip FAILED)"
        regret = f"{r['regret_bits']:,.0f}" if r["regret_bits"] is not None else "-"
        comp = f"{r['compress_kb_s']:.1f}" if r["compress_kb_s"] else "-"
        dec = f"{r['decompress_kb_s']:.1f}" if r["decompress_kb_s"] else "-"
        cpu = f"{r['compress_cpu_s']:.2f}" if r.get("compress_cpu_s") is not None else "-"
        lines.append(f"| {r['file']} | {r['size']:,} | {method} | {r['compressed_bytes']:,} | "
                     f"{bpc} | {regret} | {comp} | {dec} | {cpu} |")
    m = machine()
    lines += ["", LEGEND.format(runs=runs).replace("*", "bold:"), "",
              f"seqzip {__version__}, Python {m['python']}, numpy {m['numpy']}, "
              f"{m['platform']}, {m['cpu_count']} CPUs."]
    truths = sorted({(r["file"], r["true_bits_per_character"]) for r in rows
                     if r["true_bits_per_character"] is not None})
    lines += [f"True model of {name}: {bpc:.3f} bits per character." for name, bpc in truths]
    return "\n".join(lines)


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
    """True when matplotlib is installed (``seqzip bench --plot``).

        >>> can_plot() in (True, False)
        True
    """
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


def regret_curve(data: bytes, corpus: str, model: str, level: int = DEFAULT_LEVEL,
                 seed: int = 0, points: int = 100) -> tuple[list[int], list[float]]:
    """Regret along generated ``data`` of corpus ``corpus`` (made with ``seed``): the model's
    cumulative bits minus the true model's at ``points`` positions (the true bits of each
    prefix, exact).

        >>> from seqzip import corpora
        >>> from seqzip.predictor import Predictor
        >>> s = corpora.generate("markov2", 3000, seed=0)
        >>> at, regret = regret_curve(s.data, "markov2", "order2", points=10)
        >>> bits = Predictor("order2", alphabet=bytes(sorted(set(s.data)))).feed(s.data).sum()
        >>> at[-1], bool(abs(regret[-1] - (bits - s.true_bits)) < 1e-6)
        (3000, True)
    """
    import numpy as np

    from . import corpora

    symbols, alphabet = api.symbols_of(data)
    if not len(symbols):
        return [], []
    bits = coder.log_loss_bits(create(model, make_config(model, level), alphabet=alphabet),
                               symbols) if len(alphabet) > 1 else np.zeros(len(symbols))
    cumulative = np.cumsum(bits)
    at = sorted({max(1, round(len(data) * k / points)) for k in range(1, points + 1)})
    return at, [float(cumulative[i - 1] - corpora.true_log2_loss(corpus, data[:i], seed))
                for i in at]


def plot(files: list[str] | None, path: str, *, models: list[str] | None = None,
         level: int = DEFAULT_LEVEL, sizes: dict[str, int] | None = None,
         rows: list[dict] | None = None) -> None:
    """Draw bits per character along every file (moving average over 1/50 of it) for every
    model, each baseline's average as a dashed line (from ``rows``, the bench's results; run
    again without them), and for generated corpora with a known model a second panel: the
    regret curve, each model's cumulative bits minus the true model's.  PNG at ``path``.

    Raises:
        ImportError: matplotlib is not installed (see :func:`can_plot`).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "curves.png")
        >>> if can_plot():
        ...     plot(None, path, models=["order2"], sizes={"markov2": 2000}, rows=[])
        ...     print(open(path, "rb").read(4))
        ... else:
        ...     print(b"\\x89PNG")
        b'\\x89PNG'
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sizes or DEFAULT_SIZES
    inputs = _inputs(files, sizes)
    generated = {} if files else {f"{name} (generated)": name for name in sizes}
    names = models if models else sorted(MODELS)
    if rows is None:
        rows = [measure_baseline(f, d, m, truth=t) for f, d, t in inputs
                for m in baselines.available()]
    panels = [(file_name, data, truth, False) for file_name, data, truth in inputs]
    panels += [(file_name, data, truth, True) for file_name, data, truth in inputs
               if truth is not None and file_name in generated]
    panels.sort(key=lambda p: [i[0] for i in inputs].index(p[0]))
    figure, axes = plt.subplots(len(panels), 1, figsize=(9, 3.2 * len(panels)), squeeze=False)
    for ax, (file_name, data, truth, regret) in zip(axes[:, 0], panels):
        if regret:
            for name in names:
                at, curve = regret_curve(data, generated[file_name], name, level)
                ax.plot(at, curve, label=f"{name} -{level}", linewidth=1)
            ax.axhline(0.0, color="black", linestyle=":", label="true model")
            ax.set_title(f"{file_name}: regret against the true model")
            ax.set_ylabel("regret (bits)")
        else:
            window = max(1, len(data) // 50)
            for name in names:
                curve = learning_curve(data, name, level)
                ax.plot(range(window, window + len(curve)), curve, label=f"{name} -{level}",
                        linewidth=1)
            for r in rows:
                if r["file"] == file_name and r["level"] is None:
                    ax.axhline(r["bits_per_character"], linestyle="--", linewidth=0.8,
                               color="grey")
                    ax.annotate(r["method"], (len(data), r["bits_per_character"]),
                                fontsize="x-small", color="grey", ha="right", va="bottom")
            if truth is not None and data:
                ax.axhline(truth / len(data), color="black", linestyle=":", label="true model")
            ax.set_title(f"{file_name} (dashed: baselines, whole file)")
            ax.set_ylabel("bits per character")
        ax.set_xlabel("position (bytes)")
        ax.legend(fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)
