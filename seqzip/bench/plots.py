"""The bench's plots: bits per character along each input, for models and baselines computed
the same way (the cost of coding each prefix, per character), and regret curves against the
true model of generated corpora.

    >>> curve = cumulative_curve(b"abracadabra " * 100, "order2", points=4)
    >>> [p for p, _ in curve]
    [300, 600, 900, 1200]
"""
from __future__ import annotations

import importlib.util

from .. import api, baselines, coder
from ..models import DEFAULT_LEVEL, create, make_config
from .rows import inputs as bench_inputs
from .rows import parse_jobs

POINTS = 40  # positions along each file at which the curves are evaluated


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

    from .. import corpora

    symbols, alphabet = api.symbols_of(data)
    if not len(symbols):
        return [], []
    bits = coder.log_loss_bits(create(model, make_config(model, level), alphabet=alphabet),
                               symbols) if len(alphabet) > 1 else np.zeros(len(symbols))
    cumulative = np.cumsum(bits)
    at = sorted({max(1, round(len(data) * k / points)) for k in range(1, points + 1)})
    return at, [float(cumulative[i - 1] - corpora.true_log2_loss(corpus, data[:i], seed))
                for i in at]


def _positions(n: int, points: int) -> list[int]:
    return sorted({max(1, round(n * k / points)) for k in range(1, points + 1)}) if n else []


def cumulative_curve(data: bytes, model: str, level: int = DEFAULT_LEVEL,
                     points: int = POINTS, stream_bytes: int | None = None
                     ) -> list[tuple[int, float]]:
    """(position, bits per character of coding ``data[:position]``) at ``points`` positions:
    the model's cumulative -log2 p (what the coder spends) plus its stream's fixed cost (the
    header and frames: the whole stream's size, ``stream_bytes`` when the bench has measured
    it, minus the whole log-loss), per character.

        >>> [round(b, 3) for _, b in cumulative_curve(b"ab" * 500, "order2", points=2)][1] < 1
        True
    """
    import numpy as np

    symbols, alphabet = api.symbols_of(data)
    if not len(symbols):
        return []
    bits = coder.log_loss_bits(create(model, make_config(model, level), alphabet=alphabet),
                               symbols) if len(alphabet) > 1 else np.zeros(len(symbols))
    cumulative = np.cumsum(bits)
    if stream_bytes is None:
        stream_bytes = len(api.compress(data, level, model=model))
    overhead = 8.0 * stream_bytes - float(cumulative[-1])
    return [(p, (float(cumulative[p - 1]) + overhead) / p) for p in _positions(len(data), points)]


def baseline_curve(data: bytes, method: str, points: int = POINTS) -> list[tuple[int, float]]:
    """(position, bits per character of ``method``'s output for ``data[:position]``): the
    baseline compresses each prefix, so its curve is computed as the models' are.

        >>> baseline_curve(b"abc" * 100, "bzip2-9", points=1)[0][0]
        300
    """
    compress_function = baselines.available()[method][0]
    return [(p, 8.0 * len(compress_function(data[:p])) / p)
            for p in _positions(len(data), points)]


def plot(files: list[str] | None, path: str, *, models: list[str] | None = None,
         level: int = DEFAULT_LEVEL, sizes: dict[str, int] | None = None,
         rows: list[dict] | None = None, points: int = POINTS) -> None:
    """Draw, for every input, the bits per character of coding each prefix for every model
    (``"cm:1"`` names a level) and every baseline, computed the same way (each curve ends at
    the whole file's figure), and for generated corpora with a known model a second panel: the
    regret curve, each model's cumulative bits minus the true model's.  PNG at ``path``.
    ``rows``, the bench's results when it has run, give each stream's size (else each model
    compresses the file once more).

    Raises:
        ImportError: matplotlib is not installed (see :func:`can_plot`).

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "curves.png")
        >>> if can_plot():
        ...     plot(None, path, models=["order2"], sizes={"markov2": 2000}, points=4)
        ...     with open(path, "rb") as f:
        ...         print(f.read(4))
        ... else:
        ...     print(b"\\x89PNG")
        b'\\x89PNG'
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    jobs = parse_jobs(models, level)
    items = bench_inputs(files, sizes)
    sizes_of = {(r["file"], r["method"], r["level"]): r["compressed_bytes"] for r in rows or ()}
    panels = []
    for item in items:
        panels.append((item, False))
        if item.truth is not None and item.description.get("source") == "generated":
            panels.append((item, True))
    figure, axes = plt.subplots(len(panels), 1, figsize=(9, 3.4 * len(panels)), squeeze=False)
    for ax, (item, regret) in zip(axes[:, 0], panels):
        if regret:
            for name, job_level in jobs:
                at, curve = regret_curve(item.data, item.description["generator"], name,
                                         job_level)
                ax.plot(at, curve, label=f"{name} -{job_level}", linewidth=1)
            ax.axhline(0.0, color="black", linestyle=":", label="true model")
            ax.set_title(f"{item.name}: regret against the true model")
            ax.set_ylabel("regret (bits)")
        else:
            for name, job_level in jobs:
                size = sizes_of.get((item.name, name, job_level))
                curve = cumulative_curve(item.data, name, job_level, points, size)
                ax.plot([p for p, _ in curve], [b for _, b in curve],
                        label=f"{name} -{job_level}", linewidth=1.2)
            for method in baselines.available():
                curve = baseline_curve(item.data, method, points)
                ax.plot([p for p, _ in curve], [b for _, b in curve], label=method,
                        linestyle="--", linewidth=0.9)
            if item.truth is not None and item.data:
                ax.axhline(item.truth / len(item.data), color="black", linestyle=":",
                           label="true model")
            ax.set_title(f"{item.name}: bits per character of each prefix "
                         "(solid: seqzip, dashed: baselines)")
            ax.set_ylabel("bits per character")
        ax.set_xlabel("position (bytes)")
        # outside the axes, one entry per curve: labels never print over each other
        ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    figure.tight_layout()
    figure.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(figure)
