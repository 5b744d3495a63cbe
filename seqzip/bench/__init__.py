"""Bits per character and speed of seqzip's models beside real baselines, in one run.

Each model compresses each input through the public API (container and coder included) and the
result is decoded and compared byte for byte.  bzip2 -9 (stdlib ``bz2``) is the baseline row of
every report; lzma (xz -9e) always, and PPMd order 6 and zstd -19 when their packages are
installed, are extra rows (the table says how to get the missing ones).  Regret (model bits -
true bits) is shown for generated corpora whose true model is known.  Each job is timed
``runs`` times (median, min and max of CPU and wall seconds, through pyperf).

One module per concern: :mod:`~seqzip.bench.rows` (inputs, jobs, rows),
:mod:`~seqzip.bench.timing` (repeats and spread), :mod:`~seqzip.bench.report` (JSON, tables,
machine, schema), :mod:`~seqzip.bench.plots` (curves).

    >>> rows = run(None, models=["order2"], sizes={"markov2": 3000, "english": 3000})
    >>> sorted({r["method"] for r in rows}) >= ["bzip2-9", "order2"]
    True
    >>> report(rows)["seqzip_version"] == __version__
    True
"""
from __future__ import annotations

from .. import __version__
from .rows import (DEFAULT_SIZES, Input, inputs, measure, measure_baseline, parse_jobs,
                      recurrent_spectra, run, spectral_radius)
from .plots import (baseline_curve, can_plot, cumulative_curve, learning_curve, plot,
                    regret_curve)
from .report import (LEGEND, SCHEMA_VERSION, best_rows, describe_inputs, format_markdown,
                     format_table, machine, report, schema, table1_report, validation_report,
                     versions)
from .timing import Timing, timed

__all__ = ["DEFAULT_SIZES", "Input", "inputs", "measure", "measure_baseline", "parse_jobs",
           "recurrent_spectra", "run", "spectral_radius", "baseline_curve", "can_plot",
           "cumulative_curve", "learning_curve", "plot", "regret_curve", "LEGEND",
           "SCHEMA_VERSION", "best_rows", "describe_inputs", "format_markdown", "format_table",
           "machine", "report", "schema", "table1_report", "validation_report", "versions",
           "Timing", "timed", "__version__"]
