"""The ``seqzip`` command line (click): flags, streams, progress, signals and exit codes only.

The line works as gzip and zstd users expect (``seqzip f``, ``seqzip -d f.sqz``, ``-t``, ``-l``,
``-c``, ``-k``, ``-r``, ``-S``, ``-T``, ``unseqzip``, ``seqzipcat``) beside the subcommands
(``compress``, ``decompress``, ``info``, ``bench``, ``train``, ``sample``, ``corpora``).  It
reaches models only through the public API (:mod:`seqzip.api`), the bench through
:mod:`seqzip.bench` and the research trainers through :mod:`seqzip.research`.

One concern per module: :mod:`.app` (the group, exit paths, entry points), :mod:`.options`,
:mod:`.outputs` (atomic outputs and their guardian), :mod:`.progress`, :mod:`.files` (the
gzip-style front end), :mod:`.commands`, :mod:`.bench` and :mod:`.research`.

Nothing heavy is imported here: numpy, the models and the coder load when a command needs them,
so that ``seqzip --version`` and ``--help`` answer at once.

    >>> from click.testing import CliRunner
    >>> CliRunner().invoke(cli, ["--version"]).output.split()[0]
    'seqzip'
"""
from __future__ import annotations

from . import bench, commands, research  # noqa: F401  (they add their commands to the group)
from .app import cli, main, seqzipcat_main, unseqzip_main
from .failures import UserError
from .options import DEFAULT_LEVEL, DEFAULT_MODEL, MODEL_GUIDE, SizeType, typical_speed
from .outputs import atomic_output
from .progress import progress_line

__all__ = ["cli", "main", "unseqzip_main", "seqzipcat_main", "UserError", "DEFAULT_LEVEL",
           "DEFAULT_MODEL", "MODEL_GUIDE", "SizeType", "typical_speed", "atomic_output",
           "progress_line"]
