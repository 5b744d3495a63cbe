"""The train + validation protocol of Ollivier's Table 1 (000 Sect. 4), for models and baselines.

Every method is scored on the same validation symbols after seeing the training sequence: a
seqzip model by its exact log-loss over the validation symbols (alphabet of both parts), a
baseline compressor by 8 x (size(train + validation) - size(train)).

    >>> t, v = b"abcab" * 200, b"abcab" * 20
    >>> validation_bits("ctw", t, v) < validation_bits("bzip2-9", t, v)
    True
"""
from __future__ import annotations

from .. import baselines, coder
from ..api import symbols_of
from ..models import DEFAULT_LEVEL, MODELS, create, make_config


def validation_bits(method: str, train: bytes, validation: bytes, *,
                    level: int = DEFAULT_LEVEL) -> float:
    """Bits spent on ``validation`` after ``train``: cost(train + validation) - cost(train).

        >>> bits = validation_bits("order2", b"ab" * 200, b"ab" * 10, level=1)
        >>> 0 < bits < 20
        True
    """
    codecs = baselines.available()
    if method in codecs:
        compress = codecs[method][0]
        return 8.0 * (len(compress(train + validation)) - len(compress(train)))
    symbols, alphabet = symbols_of(train + validation)
    model = create(method, make_config(method, level), alphabet=alphabet, seed=0)
    return float(coder.log_loss_bits(model, symbols)[len(train):].sum())


def run_validation(train: bytes, validation: bytes, *, models: list[str] | None = None,
                   level: int = DEFAULT_LEVEL, true_bits: float | None = None) -> list[dict]:
    """``validation_bits`` for every baseline and model, with regret when the truth is known.

        >>> rows = run_validation(b"ab" * 200, b"ab" * 10, models=["order2"], level=1)
        >>> [r["method"] for r in rows][-1], rows[-1]["validation_bytes"]
        ('order2', 20)
    """
    names = models if models else sorted(MODELS)
    codecs = baselines.available()
    rows = []
    for method in list(codecs) + names:
        bits = validation_bits(method, train, validation, level=level)
        rows.append({"method": method, "level": None if method in codecs else level,
                     "train_bytes": len(train), "validation_bytes": len(validation),
                     "validation_bits": bits,
                     "bits_per_character": bits / len(validation) if validation else 0.0,
                     "regret_bits": bits - true_bits if true_bits is not None else None})
    return rows


def format_validation_table(rows: list[dict]) -> str:
    """The rows of :func:`run_validation` as a plain-text table.

        >>> print(format_validation_table([]).split()[0])
        method
    """
    head = f"{'method':<14} {'train':>10} {'valid':>9} {'valid bits':>12} {'bpc':>7} {'regret':>10}"
    lines = [head, "-" * len(head)]
    for r in rows:
        method = r["method"] + (f" -{r['level']}" if r["level"] is not None else "")
        regret = f"{r['regret_bits']:.1f}" if r["regret_bits"] is not None else "-"
        lines.append(f"{method:<14} {r['train_bytes']:>10,} {r['validation_bytes']:>9,} "
                     f"{r['validation_bits']:>12.1f} {r['bits_per_character']:>7.3f} "
                     f"{regret:>10}")
    return "\n".join(lines)
