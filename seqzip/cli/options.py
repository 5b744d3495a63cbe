"""The options the commands share (levels, gzip-style I/O, limits, model, --dict) and the
:class:`Settings` a compress or decompress run carries.

Nothing heavy is imported here: the model defaults are written down (a test ties them to
seqzip.models) so that ``seqzip --help`` answers without numpy.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable

import click

from ..levels import DEFAULT_LEVEL, DEFAULT_MODEL, MAX_LEVEL, MIN_LEVEL
from .failures import UserError, describe

SUFFIX = ".sqz"
# Mirror seqzip.Limits()'s defaults (a test ties them): what a stream may ask of the decoder.
DEFAULT_MAX_LENGTH = "256G"
DEFAULT_MAX_MEMORY = "3G"
# The families whose online network has an optimiser (their config's ``optimizer``); cm's
# ``optimizer`` is its mixer's rule, set by --mixer.  A test ties both to the configs.
NETWORK_MODELS = ("lstm", "mlstm", "mrnn", "relu-rnn")
MIXER_MODELS = ("cm",)
# What --help says of each model, and its rough speed in KB/s (1 KB = 1000 bytes) at levels
# 1, 6 and 9 on English text, one core (measured on alice29.txt): the progress line's guess
# until the coding loop's first count arrives.  A test checks that every registered model is here.
MODEL_GUIDE: dict[str, tuple[str, tuple[float, float, float]]] = {
    "cm": ("context mixing of many experts and an online network: best ratio", (350, 45, 6)),
    "glnn": ("Ollivier's gated leaky network + context experts", (180, 50, 10)),
    "mlstm": ("Krause's multiplicative LSTM + context experts", (75, 9, 3)),
    "lstm": ("LSTM trained online + context experts", (70, 9, 3)),
    "mrnn": ("multiplicative RNN + context experts", (65, 8, 2.5)),
    "ctw": ("context-tree weighting over bytes", (700, 350, 200)),
    "order2": ("order-2 context model, PPM-like blending", (1200, 1400, 1400)),
    "relu-rnn": ("ReLU RNN by path-SGD (--optimizer sgd) + context experts", (75, 10, 3)),
}
def typical_speed(model: str, level: int) -> float:
    """Rough coding speed of ``model`` at ``level`` in bytes per second (for estimates only):
    measured at levels 1, 6 and 9, geometric in between.

        >>> round(typical_speed("order2", 6))
        1400000
    """
    fast, mid, strong = MODEL_GUIDE.get(model, ("", (100, 20, 5)))[1]
    if level <= 6:
        kb = fast * (mid / fast) ** ((level - 1) / 5)
    else:
        kb = mid * (strong / mid) ** ((level - 6) / 3)
    return kb * 1000

class _LevelsOption(click.Option):
    """-1 with a help line standing for all of -1 ... -9 (the others are hidden)."""

    def get_help_record(self, ctx):
        return ("-1 ... -9", f"Level: -1 fastest ... -9 strongest (default -{DEFAULT_LEVEL}); "
                             "levels above 9 do not exist.")


def level_options(func: Callable) -> Callable:
    """Add -1 .. -9, --fast (-1), --best (-9) and --level, all setting `level`.

        >>> show = level_options(click.command()(lambda level: print(level)).callback)
        >>> command = click.command()(show)
        >>> command.main(["-9"], standalone_mode=False)
        9
        >>> command.main(["--fast"], standalone_mode=False)
        1
    """
    func = click.option("--best", "level", flag_value=MAX_LEVEL, type=int,
                        help="The strongest level (-9), as gzip's --best.")(func)
    func = click.option("--fast", "level", flag_value=MIN_LEVEL, type=int,
                        help="The fastest level (-1), as gzip's --fast.")(func)
    for n in range(MAX_LEVEL, MIN_LEVEL - 1, -1):
        func = click.option(f"-{n}", "level", flag_value=n, type=int, hidden=n != 1,
                            cls=_LevelsOption if n == 1 else click.Option)(func)
    return click.option("--level", "level", type=click.IntRange(MIN_LEVEL, MAX_LEVEL), default=DEFAULT_LEVEL,
                        show_default=True, help="Compression level (same as -N).")(func)


def _check_suffix(ctx, param, value: str) -> str:
    if not value or "/" in value or os.sep in value:
        raise click.BadParameter(f"{value!r} is not a file name suffix")
    return value


SCHEDULER_OPTION = click.option(
    "--scheduler", metavar="ADDRESS", default=None,
    help="Run the pieces of -T (and each small file) as Dask tasks on the cluster whose "
         "scheduler is at ADDRESS; with -r or several inputs, each file is a task, coded "
         "as a local run codes it (needs: pip install \"seqzip[cluster]\").")


def io_options(func: Callable) -> Callable:
    """The gzip/zstd options of compress and decompress (-o, -c, -k, --rm, -f, -r, -S, -T, -q,
    -v) and --scheduler.

        >>> names = [p.name for p in click.command()(io_options(lambda **kw: 0)).params]
        >>> names[:3], len(names)
        (['output', 'to_stdout', 'keep'], 11)
    """
    options = [
        click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True),
                     help="Write to this path ('-' for stdout); one input only."),
        click.option("-c", "--stdout", "to_stdout", is_flag=True,
                     help="Write to standard output, keep inputs."),
        click.option("-k", "--keep", is_flag=True, help="Keep input files (the default)."),
        click.option("--rm", "remove", is_flag=True,
                     help="Remove input files after success."),
        click.option("-f", "--force", is_flag=True,
                     help="Overwrite outputs; allow compressed data on a terminal."),
        click.option("-r", "--recursive", is_flag=True,
                     help="Operate on the files under directories (links not followed)."),
        click.option("-S", "--suffix", default=SUFFIX, show_default=True,
                     callback=_check_suffix, help="Suffix of compressed files."),
        click.option("-T", "--threads", type=click.IntRange(0, 256), default=1,
                     show_default=True,
                     help="Workers (0: one per core).  Compression codes a shared prefix, "
                          "then that many pieces side by side in worker processes, each "
                          "starting from the model's state after the prefix (costs some "
                          "ratio); decompression decodes them side by side.  With several "
                          "inputs, those too small to cut are coded whole, that many at a "
                          "time on threads (no cost in ratio)."),
        SCHEDULER_OPTION,
        click.option("-q", "--quiet", is_flag=True, help="No progress line or summary."),
        click.option("-v", "--verbose", is_flag=True,
                     help="Print ratio, bits per character and speed per file."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


class SizeType(click.ParamType):
    """A size in bytes: a number with an optional K, M, G or T suffix (powers of 1024), or
    ``none`` for no limit.

        >>> [SizeType().convert(v, None, None) for v in ("512", "1.5K", "2G", "none")]
        [512, 1536, 2147483648, None]
    """

    name = "SIZE"
    UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}

    def convert(self, value, param, ctx):
        if value is None or isinstance(value, int):
            return value
        text = str(value).strip().upper().removesuffix("B").removesuffix("I")
        if text == "NONE":
            return None
        match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([KMGT]?)", text)
        if not match:
            self.fail(f"{value!r} is not a size (e.g. 512M, 2G, or none)", param, ctx)
        return int(float(match.group(1)) * self.UNITS[match.group(2)])


def limit_options(func: Callable) -> Callable:
    """--max-memory and --max-length: what a stream may ask of the decoder (seqzip.Limits).

        >>> command = click.command()(limit_options(lambda max_memory, max_length: print(
        ...     max_memory, max_length)))
        >>> command.main(["--max-memory", "512M", "--max-length", "none"], standalone_mode=False)
        536870912 None
    """
    func = click.option("--max-length", type=SizeType(), default=DEFAULT_MAX_LENGTH,
                        show_default=True,
                        help="Refuse streams declaring more output than this (or 'none').")(func)
    return click.option("--max-memory", type=SizeType(), default=DEFAULT_MAX_MEMORY,
                        show_default=True,
                        help="Refuse streams whose model may need more memory than this "
                             "(or 'none'); every level fits in the default.")(func)


def model_options(func: Callable) -> Callable:
    """--model, --optimizer, --mixer and --seed.

        >>> command = click.command()(model_options(lambda **kw: print(sorted(kw.items()))))
        >>> command.main(["--model", "order2"], standalone_mode=False)
        [('mixer', None), ('model', 'order2'), ('optimizer', None), ('seed', 0)]
    """
    func = click.option("--mixer", default=None, metavar="qdh|sgd|adam",
                        help="cm only: the mixer's learning rule (Ollivier's QDH, SGD or Adam); "
                             "default: the level's.")(func)
    func = click.option("--optimizer", default=None,
                        help="The online network's optimiser, for lstm, mlstm, mrnn (adam or "
                             "riemannian) and relu-rnn (path-sgd or sgd) only; default: the "
                             "level's.")(func)
    func = click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=0,
                        show_default=True,
                        help="Seed of the model's PRNG (stored in the file).")(func)
    return click.option("--model", "model", type=click.Choice(list(MODEL_GUIDE)),
                        default=DEFAULT_MODEL, show_default=True,
                        help="Model family (see Models below).")(func)


def dict_option(func: Callable) -> Callable:
    """--dict MODEL_FILE (stored as ``dictionary``).

        >>> command = click.command()(dict_option(lambda dictionary: print(dictionary)))
        >>> command.main(["--dict", "english.sqm"], standalone_mode=False)
        english.sqm
    """
    return click.option("--dict", "dictionary", type=click.Path(dir_okay=False), default=None,
                        help="Model file (.sqm, from 'seqzip train') to start coding from; "
                        "decompressing needs the same file.")(func)


def load_dictionary(path: str | None, max_memory: int | None = None):
    """The --dict model file, or a one-line error (also for one whose model may need more
    than ``max_memory``: refused before it is built)."""
    if path is None:
        return None
    from ..predictor import Predictor

    try:
        return Predictor.load(path, max_memory)
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: {describe(exc)}") from None


_CLIENTS: dict = {}  # --scheduler address -> its distributed.Client, for the run


@dataclass
class Settings:
    """What the compress / decompress runs share.

        >>> Settings(level=9, threads=0).processes == (os.cpu_count() or 1)
        True
    """

    output: str | None = None
    to_stdout: bool = False
    remove: bool = False
    force: bool = False
    recursive: bool = False
    suffix: str = SUFFIX
    threads: int = 1
    quiet: bool = False
    verbose: bool = False
    level: int = DEFAULT_LEVEL
    model: str = DEFAULT_MODEL
    seed: int = 0
    max_length: int | None = None
    max_memory: int | None = None
    dictionary: str | None = None  # --dict: a model file (.sqm) coding starts from
    optimizer: str | None = None  # the online network's (NETWORK_MODELS)
    mixer: str | None = None  # cm's mixer rule (--mixer)
    scheduler: str | None = None  # --scheduler: a Dask scheduler's address

    def cluster(self):
        """A client of the --scheduler cluster, connected once per address and run (None:
        local processes).

            >>> Settings().cluster() is None
            True
        """
        if self.scheduler is None:
            return None
        if self.scheduler not in _CLIENTS:
            from ..cluster import Cluster

            try:
                _CLIENTS[self.scheduler] = Cluster(self.scheduler).client
            except ValueError as exc:
                raise UserError(str(exc)) from None
            except OSError as exc:
                raise UserError(f"no Dask scheduler at {self.scheduler}: {exc}") from None
        return _CLIENTS[self.scheduler]

    def config(self):
        """The model config when --optimizer or --mixer overrides the level's preset, else
        None; a setting the model does not have is refused in one line.

            >>> Settings(model="lstm", level=1, optimizer="riemannian").config().optimizer
            'riemannian'
            >>> try:
            ...     Settings(model="cm", optimizer="adam").config()
            ... except UserError as exc:
            ...     print(exc.message.split("; ")[1])
            model cm has none (--mixer sets its mixer's rule)
        """
        if self.mixer is not None and self.model not in MIXER_MODELS:
            raise UserError(f"--mixer sets the mixer's rule of {', '.join(MIXER_MODELS)}; "
                            f"model {self.model} has none")
        if self.optimizer is not None and self.model not in NETWORK_MODELS:
            hint = " (--mixer sets its mixer's rule)" if self.model in MIXER_MODELS else ""
            raise UserError(f"--optimizer sets the online network's optimiser of "
                            f"{', '.join(NETWORK_MODELS)}; model {self.model} has none{hint}")
        choice = self.optimizer if self.optimizer is not None else self.mixer
        if choice is None:
            return None
        from .. import api

        try:
            return api.config_with(self.model, self.level, optimizer=choice)
        except ValueError as exc:
            flag = "--optimizer" if self.optimizer is not None else "--mixer"
            raise UserError(f"{flag} {choice}: {exc}") from None

    @property
    def processes(self) -> int:
        return self.threads if self.threads > 0 else (os.cpu_count() or 1)


# --- outputs ----------------------------------------------------------------------------------
