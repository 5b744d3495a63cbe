"""The ``seqzip`` command line (click): flags, streams, progress, signals and exit codes only.

Format and model logic live in :mod:`seqzip.api`; the bench in :mod:`seqzip.bench`.  The line
works as gzip and zstd users expect (``seqzip f``, ``seqzip -d f.sqz``, ``-t``, ``-l``, ``-c``,
``-k``, ``-r``, ``-S``, ``-T``, ``unseqzip``, ``seqzipcat``) beside the subcommands
(``compress``, ``decompress``, ``info``, ``bench``, ``train``, ``corpora``).  Exit status: 0 on
success, 1 on any error (one line on stderr, no traceback); a run ended by SIGINT, SIGTERM or
SIGHUP ends by that signal and leaves no temporary or partial file.

Nothing heavy is imported here: numpy, the models and the coder load when a command needs them,
so that ``seqzip --version`` and ``--help`` answer at once.
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO, Callable, Iterator

import click

from . import __version__
from .errors import SeqzipError  # plain exceptions: imports nothing

SUFFIX = ".sqz"
# Mirrors seqzip.models.DEFAULT_MODEL and DEFAULT_LEVEL, which import numpy; tests tie them.
DEFAULT_MODEL = "cm"
DEFAULT_LEVEL = 6
# What --help says of each model, and its rough speed in KB/s (1 KB = 1000 bytes) at levels
# 1, 6 and 9 on English text, one core (measured on alice29.txt): the progress line's estimate
# until the first frame is done.  A test checks that every registered model is here.
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
PROGRESS_AFTER = 2.0  # seconds: show progress for jobs expected (or found) to take longer
PROGRESS_EVERY = 0.5  # seconds between redraws

EXAMPLES = """\b
Examples:
  seqzip book.txt                 compress to book.txt.sqz (book.txt is kept; --rm removes it)
  seqzip -d book.txt.sqz          decompress to book.txt (also: unseqzip book.txt.sqz)
  seqzip -9 --model ctw *.txt     level 9 of another model
  seqzip -T 2 big.txt             two processes, independent halves (costs some ratio)
  seqzip -r -S .sz notes/         every file under notes/, suffix .sz
  seqzip -t book.txt.sqz          test integrity; -l lists ratio, level and model
  tar c dir | seqzip > dir.tar.sqz   and   seqzipcat dir.tar.sqz | tar x
  seqzip bench                    models beside bzip2, xz, PPMd, zstd on built-in data
"""


def _models_help() -> str:
    lines = ["\b", "Models (--model; rough KB/s at -1 / -6 / -9 on one core):"]
    for name, (what, (fast, mid, strong)) in MODEL_GUIDE.items():
        default = " [default]" if name == DEFAULT_MODEL else ""
        lines.append(f"  {name:<7}{default:<10}{fast:>5g} /{mid:>5g} /{strong:>5g}  {what}")
    return "\n".join(lines)


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


class UserError(click.ClickException):
    """An error to report as one line, without a traceback; exit status 1.

        >>> UserError("book.txt.sqz already exists").message
        'book.txt.sqz already exists'
    """

    exit_code = 1

    def show(self, file=None) -> None:
        click.echo(f"seqzip: {self.message}", err=True)


class Interrupted(BaseException):
    """SIGINT, SIGTERM or SIGHUP arrived while something had to be cleaned up.

        >>> Interrupted(signal.SIGTERM).signum == signal.SIGTERM
        True
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                       if hasattr(signal, name))


def _raise_interrupted(signum, frame) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def ending_signals(cleanup: bool) -> Iterator[None]:
    """How SIGINT, SIGTERM and SIGHUP end a run while this block runs.

    With ``cleanup`` they raise :class:`Interrupted` so that ``finally`` blocks remove
    temporary files (the handler runs between Python steps, so a long frame of coding may delay
    it: the fallback where there is no :class:`Janitor`).  Without, they end the process at
    once (the kernel's default action): right when nothing needs cleaning up or a janitor
    does it; worker processes end with their parent.  Signals someone set to be ignored
    (``nohup``) stay ignored.

        >>> before = signal.getsignal(signal.SIGTERM)
        >>> with ending_signals(cleanup=True):
        ...     signal.getsignal(signal.SIGTERM) is _raise_interrupted or before is signal.SIG_IGN
        True
        >>> signal.getsignal(signal.SIGTERM) == before
        True
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in ENDING_SIGNALS}
    for sig, old in saved.items():
        if old is not signal.SIG_IGN:
            signal.signal(sig, _raise_interrupted if cleanup else signal.SIG_DFL)
    try:
        yield
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, click.ClickException):
        return exc.message
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc) or type(exc).__name__


MULTI_DIGIT_LEVEL = re.compile(r"^-[0-9]{2,}$")
COMMAND_NAMES = ("compress", "decompress", "info", "bench", "train", "sample", "corpora")


def _check_levels(args: list[str]) -> None:
    """Refuse ``-19`` (click would read it as ``-1 -9``): levels go from -1 to -9."""
    for arg in args:
        if arg == "--":
            return
        if MULTI_DIGIT_LEVEL.match(arg):
            raise UserError(f"no level {arg}: levels go from -1 (fastest) to -9 "
                                   "(strongest)")


class SeqzipGroup(click.Group):
    """The commands, the gzip-style main command, and one exit path for every failure: a
    one-line message and exit status 1, never a traceback.

        >>> from click.testing import CliRunner
        >>> CliRunner().invoke(cli, ["--version"]).output.startswith("seqzip")
        True
    """

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,
             **extra):
        args = list(sys.argv[1:] if args is None else args)
        try:
            _check_levels(args)
            rv = super().main(args=args, prog_name=prog_name or "seqzip",
                              complete_var=complete_var, standalone_mode=False, **extra)
        except click.UsageError as exc:
            # One line, as for every other error: what is wrong and where help is.
            command = exc.ctx.command_path if exc.ctx is not None else "seqzip"
            command = command.replace(f" {MAIN_NAME}", "")
            click.echo(f"seqzip: {exc.format_message()} (see '{command} --help')", err=True)
            sys.exit(1)
        except click.ClickException as exc:
            exc.show()
            sys.exit(1)
        except MemoryError:
            click.echo("seqzip: out of memory; nothing was written", err=True)
            sys.exit(1)
        except click.Abort:
            click.echo("seqzip: aborted", err=True)
            sys.exit(1)
        except BrokenPipeError:
            # The reader went away (e.g. `| head`): stop quietly, as other tools do.
            with contextlib.suppress(OSError):
                sys.stdout = open(os.devnull, "w")
            sys.exit(1)
        except (Interrupted, KeyboardInterrupt) as exc:
            # Clean-up has run: end by the signal itself, so the caller sees why we stopped.
            signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            sys.exit(128 + signum)
        sys.exit(rv if isinstance(rv, int) else 0)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # gzip habits: anything that does not start with a command (or --help / --version)
        # is the main command's line: `seqzip f`, `seqzip -d f.sqz`, `cat f | seqzip`.
        to_main = bool(args) and args[0] not in self.commands and \
            args[0] not in ("--help", "-h", "--version")
        if not args and not sys.stdin.isatty():
            to_main = True
        if to_main:
            args = [MAIN_NAME, *args]
        return super().parse_args(ctx, args)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[OPTIONS] [FILES]...")
        formatter.write_usage(ctx.command_path, "COMMAND [ARGS]...", prefix="   or: ")
        self.format_help_text(ctx, formatter)
        main_ctx = click.Context(main_command, info_name=ctx.info_name, parent=None)
        records = [param.get_help_record(main_ctx) for param in main_command.get_params(main_ctx)
                   if param.name != "help"]
        with formatter.section("Options"):
            formatter.write_dl([record for record in records if record])
        with formatter.section("Other options"):
            formatter.write_dl([("--version", "Show the version and exit."),
                                ("-h, --help", "Show this message and exit.")])
        self.format_commands(ctx, formatter)
        formatter.write_paragraph()
        formatter.write_text(_models_help())
        formatter.write_paragraph()
        formatter.write_text(EXAMPLES)


MAIN_NAME = "_main"


@click.group(cls=SeqzipGroup, context_settings={"help_option_names": ["-h", "--help"]},
             invoke_without_command=False, no_args_is_help=True)
@click.version_option(__version__, prog_name="seqzip", message="%(prog)s %(version)s")
def cli() -> None:
    """Lossless compression whose model is a sequence model trained while it codes.

    With no command, seqzip works as gzip does: it compresses FILES to FILE.sqz (keeping them),
    or with -d decompresses them; with no FILES (or '-') it reads standard input and writes
    standard output.  Settings travel in the file: decompression needs no flags.  Bits per
    character (bpc) = 8 x compressed / original size: lower is better.
    """


# --- options ----------------------------------------------------------------------------------


class _LevelsOption(click.Option):
    """-1 with a help line standing for all of -1 ... -9 (the others are hidden)."""

    def get_help_record(self, ctx):
        return ("-1 ... -9", f"Level: -1 fastest ... -9 strongest (default -{DEFAULT_LEVEL}); "
                             "levels above 9 do not exist.")


def level_options(func: Callable) -> Callable:
    """Add -1 .. -9 and --level, all setting `level`.

        >>> show = level_options(click.command()(lambda level: print(level)).callback)
        >>> click.command()(show).main(["-9"], standalone_mode=False)
        9
    """
    for n in range(9, 0, -1):
        func = click.option(f"-{n}", "level", flag_value=n, type=int, hidden=n != 1,
                            cls=_LevelsOption if n == 1 else click.Option)(func)
    return click.option("--level", "level", type=click.IntRange(1, 9), default=DEFAULT_LEVEL,
                        show_default=True, help="Compression level (same as -N).")(func)


def _check_suffix(ctx, param, value: str) -> str:
    if not value or "/" in value or os.sep in value:
        raise click.BadParameter(f"{value!r} is not a file name suffix")
    return value


SCHEDULER_OPTION = click.option(
    "--scheduler", metavar="ADDRESS", default=None,
    help="Run the pieces of -T (and each file of -r) as Dask tasks on the cluster whose "
         "scheduler is at ADDRESS (needs: pip install \"seqzip[cluster]\").")


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
                     help="Worker processes (0: one per core).  Compression cuts the input "
                          "into that many independent streams, which costs some ratio; "
                          "decompression decodes such streams side by side."),
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
    from .container import DEFAULT_MAX_LENGTH, DEFAULT_MAX_MEMORY

    func = click.option("--max-length", type=SizeType(), default=f"{DEFAULT_MAX_LENGTH >> 30}G",
                        show_default=True,
                        help="Refuse streams declaring more output than this (or 'none').")(func)
    return click.option("--max-memory", type=SizeType(), default=f"{DEFAULT_MAX_MEMORY >> 30}G",
                        show_default=True,
                        help="Refuse streams whose model may need more memory than this "
                             "(or 'none'); every level fits in the default.")(func)


def model_options(func: Callable) -> Callable:
    """--model, --optimizer and --seed.

        >>> command = click.command()(model_options(lambda **kw: print(sorted(kw.items()))))
        >>> command.main(["--model", "order2"], standalone_mode=False)
        [('model', 'order2'), ('optimizer', None), ('seed', 0)]
    """
    func = click.option("--optimizer", default=None,
                        help="Training of the online network: path-sgd or sgd (relu-rnn), adam "
                             "or riemannian (lstm, mlstm, mrnn); default: the level's.")(func)
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


def _load_dictionary(path: str | None):
    """The --dict model file, or a one-line error."""
    if path is None:
        return None
    from .predictor import Predictor

    try:
        return Predictor.load(path)
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: {_describe(exc)}") from None


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
    optimizer: str | None = None
    scheduler: str | None = None  # --scheduler: a Dask scheduler's address

    def cluster(self):
        """A client of the --scheduler cluster, connected once per run (None: local)."""
        if self.scheduler is None:
            return None
        if self._client is None:
            from .cluster import Cluster

            try:
                self._client = Cluster(self.scheduler).client
            except ValueError as exc:
                raise UserError(str(exc)) from None
            except OSError as exc:
                raise UserError(f"no Dask scheduler at {self.scheduler}: {exc}") from None
        return self._client

    _client = None

    def config(self):
        """The model config when a setting overrides the level's preset, else None."""
        if self.optimizer is None:
            return None
        from dataclasses import fields, replace

        from .models import make_config

        config = make_config(self.model, self.level)
        if "optimizer" not in {f.name for f in fields(config)}:
            raise UserError(f"model {self.model} has no --optimizer")
        try:
            return replace(config, optimizer=self.optimizer)
        except ValueError as exc:
            raise UserError(str(exc)) from None

    @property
    def processes(self) -> int:
        return self.threads if self.threads > 0 else (os.cpu_count() or 1)


# --- outputs ----------------------------------------------------------------------------------


class Janitor:
    """Removes a temporary file if this process dies before it is done with it.

    A small child process holds the file's name; if the pipe to it closes while the name is
    still registered (this process ended, by any signal, even SIGKILL), it unlinks the file.
    So SIGINT, SIGTERM and SIGHUP can keep their default action and end the run at once, even
    in the middle of a long frame of coding, and still leave nothing behind.  Where there is no
    ``fork``, ``active`` is false and the caller must clean up through signal handlers.

        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "partial")
        >>> janitor = Janitor()
        >>> janitor.watch(path); open(path, "w").close()
        >>> janitor.release(path); janitor.close()  # released: the file stays
        >>> os.path.exists(path)
        True
    """

    def __init__(self) -> None:
        self._child = _PipeChild(_sweep) if hasattr(os, "fork") else None

    @property
    def active(self) -> bool:
        return self._child is not None and self._child.fd is not None

    def _send(self, tag: bytes, path: str) -> None:
        if self._child is not None:
            self._child.write(tag + os.fsencode(path) + b"\0")

    def watch(self, path: str) -> None:
        self._send(b"+", path)

    def release(self, path: str) -> None:
        self._send(b"-", path)

    def close(self) -> None:
        if self._child is not None:
            self._child.close()


class _PipeChild:
    """A forked child process running ``body(read_fd)`` on the read end of a pipe that this
    process writes: the child sees the pipe close however this process ends (even SIGKILL)."""

    def __init__(self, body) -> None:
        read_end, write_end = os.pipe()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: run the body, never return
            try:
                _close_other_fds(read_end)
                body(read_end)
            finally:
                os._exit(0)
        os.close(read_end)
        self.fd: int | None = write_end
        self.pid = pid

    def write(self, data: bytes) -> None:
        if self.fd is not None:
            os.write(self.fd, data)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
            with contextlib.suppress(OSError):
                os.waitpid(self.pid, 0)


def _close_other_fds(keep: int) -> None:
    """In a helper child: hold no one else's pipe ends (stdio stays, for the progress line)."""
    os.closerange(3, keep)
    os.closerange(keep + 1, 65536)


def _parent_alive(parent: int, fd: int, timeout: float) -> tuple[bool, bytes | None]:
    """Wait up to ``timeout`` for data on ``fd``: (parent still alive, data or None; b"" is
    the end of the pipe)."""
    import select

    ready, _, _ = select.select([fd], [], [], timeout)
    data = os.read(fd, 65536) if ready else None
    return os.getppid() == parent, data


def _sweep(fd: int) -> None:
    for sig in ENDING_SIGNALS:  # outlive a signal sent to the whole process group
        signal.signal(sig, signal.SIG_IGN)
    parent = os.getppid()
    watched: set[bytes] = set()
    pending = b""
    while True:
        alive, chunk = _parent_alive(parent, fd, 1.0 if os.getppid() == parent else 0.0)
        if chunk == b"" or (chunk is None and not alive):
            break  # the end of the pipe, or a dead parent's last words are read
        if chunk is None:
            continue
        pending += chunk
        *messages, pending = pending.split(b"\0")
        for message in messages:
            (watched.add if message[:1] == b"+" else watched.discard)(message[1:])
    for path in watched:
        with contextlib.suppress(OSError):
            os.unlink(path)


TMP_SUFFIX = ".sqztmp"


def _temporary_name(name: str, pid: int, tag: str) -> str:
    """``.NAME.PID-TAG.sqztmp``: hidden, beside its output, and recognisable as seqzip's, with
    the process that made it (so that a later run can tell a stale one from a live one)."""
    return f".{name}.{pid}-{tag}{TMP_SUFFIX}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but is someone else's
        return True
    return True


def remove_stale_temporaries(directory: str, name: str) -> list[str]:
    """Remove the temporary files a killed seqzip run left for output ``name`` in
    ``directory`` (after SIGKILL of the whole process group, nothing else could); files of a
    process still running are left alone.  Returns the paths removed.

        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> mine = os.path.join(d, _temporary_name("a.sqz", os.getpid(), "0" * 12))
        >>> open(mine, "w").close()
        >>> remove_stale_temporaries(d, "a.sqz"), os.path.exists(mine)  # this process lives
        ([], True)
    """
    pattern = re.compile(rf"^\.{re.escape(name)}\.(\d+)-[0-9a-f]{{12}}{re.escape(TMP_SUFFIX)}$")
    removed = []
    try:
        entries = os.listdir(directory)
    except OSError:
        return removed
    for entry in entries:
        match = pattern.match(entry)
        if match and not _alive(int(match.group(1))):
            path = os.path.join(directory, entry)
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed.append(path)
    return removed


def _temporary_path(directory: str, name: str, janitor: Janitor) -> tuple[int, str]:
    """Create a new file beside ``name`` with mode 0666 & ~umask, watched by ``janitor``."""
    for _ in range(100):
        tmp = os.path.join(directory, _temporary_name(name, os.getpid(), os.urandom(6).hex()))
        janitor.watch(tmp)  # before the file exists: no instant in which it is unwatched
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                           0o666), tmp
        except FileExistsError:
            janitor.release(tmp)
    raise UserError(f"{name}: cannot find a free temporary name in {directory}")


def _special_output(path: str) -> bool:
    """True when ``path`` is a character device or a FIFO: written into in place (as gzip and
    zstd do with /dev/null), never replaced.  Other files that are not regular are refused."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return True
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise UserError(f"{path} is not a regular file, a character device or a FIFO")
    return False


def _as_output_error(exc: OSError, tmp: str, path: str) -> OSError:
    """The same error, naming the output the user asked for instead of its temporary file."""
    if exc.filename == tmp or exc.filename2 == tmp or (
            exc.filename is None and exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)):
        return type(exc)(exc.errno, exc.strerror, path)
    return exc


def _publish(tmp: str, path: str, force: bool) -> None:
    """Give the finished temporary file its name.  Without ``force`` the name is linked, so
    that an output another process made in the meantime is never replaced; with ``force`` only
    a regular file (or a link) is replaced."""
    if force:
        if os.path.lexists(path) and not os.path.islink(path) and not os.path.isfile(path):
            raise UserError(f"{path} is not a regular file; it was left as it is")
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise UserError(f"{path} appeared while it was being written (another run?); "
                        "it was left as it is and nothing was written") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV,
                             errno.EMLINK):
            raise
        # A file system without hard links: the check and the rename are two steps here.
        if os.path.lexists(path):
            raise UserError(f"{path} appeared while it was being written (another run?); "
                            "it was left as it is and nothing was written") from None
        os.rename(tmp, path)
        return
    os.unlink(tmp)


@contextlib.contextmanager
def atomic_output(path: str, force: bool, like: str | None) -> Iterator[IO[bytes]]:
    """Write to a temporary file beside ``path`` and give it the name on success.

    A failure (full disk, bad input) or a signal (SIGINT, SIGTERM, SIGHUP, even SIGKILL:
    see :class:`Janitor`) leaves no partial or temporary file, and the input is never touched.
    An existing output is replaced only with ``force``, and only if it is a regular file; an
    output that appears while this one is written is never replaced (the name is linked).  A
    character device or FIFO is written into in place.  The output's mode follows the umask
    (0644 under 022) or, with ``like``, copies that file's mode and times, as gzip does.
    Worker processes (``-T``) end with their parent.

        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "out.sqz")
        >>> with atomic_output(path, force=False, like=None) as out:
        ...     _ = out.write(b"complete")
        >>> open(path, "rb").read(), sorted(os.listdir(os.path.dirname(path)))
        (b'complete', ['out.sqz'])
    """
    if os.path.isdir(path):
        raise UserError(f"{path} is a directory")
    if _special_output(path):
        with ending_signals(cleanup=False), open(path, "wb") as out:
            yield out
        return
    if os.path.lexists(path) and not force:
        raise UserError(f"{path} already exists (use -f to overwrite)")
    directory = os.path.dirname(os.path.abspath(path))
    remove_stale_temporaries(directory, os.path.basename(path))
    janitor = Janitor()
    try:
        fd, tmp = _temporary_path(directory, os.path.basename(path), janitor)
        try:
            with ending_signals(cleanup=not janitor.active), \
                    os.fdopen(fd, "wb") as out:
                yield out
                out.flush()
                os.fsync(out.fileno())
                if like is not None:
                    stat = os.stat(like)
                    os.chmod(out.fileno(), stat.st_mode & 0o7777)
                    os.utime(out.fileno(), ns=(stat.st_atime_ns, stat.st_mtime_ns))
                _publish(tmp, path, force)
            janitor.release(tmp)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            janitor.release(tmp)
            if isinstance(exc, OSError):
                raise _as_output_error(exc, tmp, path) from None
            raise
    finally:
        janitor.close()


# --- progress ---------------------------------------------------------------------------------


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def progress_line(label: str, done: float, total: float | None, rate: float,
                  unit: str = "bytes") -> str:
    """One progress line: position, percentage, rate and time left.

        >>> progress_line("a.txt", 50_000, 200_000, 25_000)
        'a.txt   25%  48.8 KiB / 195.3 KiB  25.0 KB/s  ETA 0:06'
        >>> progress_line("train", 15, 60, 1, unit="seconds")
        'train   25%  0:15 / 1:00  ETA 0:45'
        >>> progress_line("train", 61, 60, 1, unit="seconds")
        'train  1:01  (budget of 1:00 spent, finishing)'
    """
    if unit == "seconds":
        if total and done >= total:  # a CPU budget: wall time may run past it
            return f"{label}  {_clock(done)}  (budget of {_clock(total)} spent, finishing)"
        where = f"{_clock(done)} / {_clock(total)}" if total else _clock(done)
        speed = ""
    else:
        where = f"{_size(done)} / {_size(total)}" if total else _size(done)
        speed = f"  {rate / 1000:.1f} KB/s" if rate > 0 else ""
    if total:
        percent = f"{min(100, int(100 * done / total)):>3d}%  "
        left = f"  ETA {_clock((total - done) / rate)}" if rate > 0 else ""
    else:
        percent, left = "", ""
    return f"{label}  {percent}{where}{speed}{left}"


class Progress:
    """A progress line on a terminal, redrawn every half second by a small child process.

    Coding runs in compiled loops that hold the interpreter for a whole frame (up to a minute
    with the slow models), so no thread of this process could redraw in the meantime.  The
    child gets the count after each frame through a pipe and, between counts, advances the line
    at the measured rate (before the first count, at the model's typical ``rate``).  The line
    appears when the job is expected to take more than two seconds, or once it has; it is
    erased at the end, and the child exits when the pipe closes, whatever ends this process.

        >>> with Progress("book.txt", 1000, 100.0, quiet=True) as bar:  # quiet: no child
        ...     bar.update(600)
        >>> bar.done
        600
    """

    def __init__(self, label: str, total: float | None, rate: float, quiet: bool,
                 unit: str = "bytes") -> None:
        self.done = 0
        self._child = None
        if quiet or not sys.stderr.isatty() or not hasattr(os, "fork"):
            return
        expected = total / rate if total and rate > 0 else None
        self._child = _PipeChild(
            lambda fd: _draw_progress(fd, label, total, rate, expected, unit))

    def update(self, n: float) -> None:
        self.done += n
        if self._child is not None:
            with contextlib.suppress(OSError):
                self._child.write(f"{self.done}\n".encode())

    def close(self) -> None:
        if self._child is not None:
            self._child.close()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _draw_progress(fd: int, label: str, total: float | None, prior_rate: float,
                   expected: float | None, unit: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's end closes the pipe
    parent = os.getppid()
    start = time.monotonic()
    done, done_at, shown, pending = 0.0, start, False, b""
    while True:
        alive, chunk = _parent_alive(parent, fd, PROGRESS_EVERY)
        if chunk == b"" or not alive:
            break
        if chunk:
            pending += chunk
            *counts, pending = pending.split(b"\n")
            if counts:
                done, done_at = float(counts[-1]), time.monotonic()
        now = time.monotonic()
        if unit == "seconds":
            position, rate = now - start, 1.0
        else:
            rate = done / (done_at - start) if done and done_at > start else prior_rate
            position = done + rate * (now - done_at)
            if total:
                position = min(position, max(done, total * 0.999))
        if not shown and (now - start < PROGRESS_AFTER and (expected or 0) <= PROGRESS_AFTER):
            continue
        line = progress_line(label, position, total, rate, unit)
        with contextlib.suppress(OSError):
            width = os.get_terminal_size(2).columns
            if width > 20:  # 0: the terminal does not say
                line = line[:width - 1]
        os.write(2, b"\r\x1b[K" + line.encode("utf-8", "replace"))
        shown = True
    if shown:
        os.write(2, b"\r\x1b[K")


# --- files ------------------------------------------------------------------------------------


def _input_size(path: str) -> int | None:
    try:
        return os.path.getsize(path) if path != "-" else None
    except OSError:
        return None


@contextlib.contextmanager
def _open_input(path: str) -> Iterator[IO[bytes]]:
    if path == "-":
        if sys.stdin is None:
            raise UserError("standard input is closed")
        yield sys.stdin.buffer
        return
    if os.path.isdir(path):
        raise UserError(f"{path} is a directory (use -r for the files under it)")
    with open(path, "rb") as f:
        yield f


def expand_files(files: tuple[str, ...], recursive: bool,
                 wanted: Callable[[str], bool]) -> list[str]:
    """The inputs: with ``recursive``, each directory becomes the files under it (sorted, links
    not followed) that ``wanted`` accepts; without, directories stay and fail later.

        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> for name in ("b.txt", "a.txt", "a.txt.sqz"):
        ...     open(os.path.join(d, name), "w").close()
        >>> [os.path.basename(p) for p in expand_files((d,), True, lambda p: p.endswith(".txt"))]
        ['a.txt', 'b.txt']
        >>> expand_files((), False, bool)  # no files: standard input
        ['-']
    """
    out: list[str] = []
    for path in files or ("-",):
        if path != "-" and recursive and os.path.isdir(path):
            for root, dirs, names in os.walk(path):
                dirs.sort()
                for name in sorted(names):
                    full = os.path.join(root, name)
                    if os.path.isfile(full) and not os.path.islink(full) and wanted(full):
                        out.append(full)
        else:
            out.append(path)
    return out


class _CountingReader:
    """Counts what is read from a stream (for the summary of a run on standard input)."""

    def __init__(self, src: IO[bytes]) -> None:
        self._src, self.count = src, 0

    def read(self, n: int = -1) -> bytes:
        data = self._src.read(n)
        self.count += len(data)
        return data


class _NullSink:
    def write(self, data: bytes) -> int:
        return len(data)


Work = Callable[[IO[bytes], IO[bytes], Progress], "tuple[int, int]"]


def _run_files(files: list[str], settings: Settings, binary_out: bool,
               name_output: Callable[[str], str], work: Work, verb: str,
               rate_of: Callable[[str, IO[bytes]], "tuple[float | None, float]"],
               discard: bool = False) -> int:
    """Apply ``work(src, dst, progress) -> (original, compressed)`` to each input; report
    errors; return the exit code.  With ``discard`` the output is thrown away (test)."""
    s = settings
    if s.output is not None and len(files) > 1:
        raise click.UsageError("-o/--output takes one input file")
    if s.remove and (s.to_stdout or s.output == "-"):
        raise click.UsageError("--rm cannot be used when writing to standard output")
    failed = False
    for path in files:
        try:
            out_path = None if discard else s.output if s.output is not None else (
                "-" if s.to_stdout or path == "-" else name_output(path))
            if out_path == "-" and sys.stdout is None:
                raise UserError("standard output is closed")
            if out_path == "-" and binary_out and sys.stdout.isatty() and not s.force:
                raise UserError("refusing to write compressed data to a terminal "
                                "(use -o, redirect, or -f)")
            if path != "-" and not os.path.exists(path):
                raise UserError(f"{path}: no such file")
            if out_path not in (None, "-") and path != "-" and os.path.exists(out_path) \
                    and os.path.samefile(path, out_path):
                raise UserError(f"{path}: input and output are the same file")
            start = time.perf_counter()
            label = os.path.basename(path) if path != "-" else "stdin"
            with _open_input(path) as src:
                total, rate = rate_of(path, src)
                with Progress(label, total, rate, s.quiet) as bar:
                    if out_path is None:
                        with ending_signals(cleanup=False):  # nothing to clean up
                            sizes = work(src, _NullSink(), bar)
                    elif out_path == "-":
                        with ending_signals(cleanup=False):
                            sizes = work(src, sys.stdout.buffer, bar)
                        sys.stdout.buffer.flush()
                    else:
                        with atomic_output(out_path, s.force,
                                           like=None if path == "-" else path) as dst:
                            sizes = work(src, dst, bar)
            seconds = time.perf_counter() - start
            if s.verbose:
                click.echo(_summary(path, out_path, verb, *sizes, seconds), err=True)
            if s.remove and path != "-" and out_path is not None:
                os.unlink(path)
        except BrokenPipeError:
            raise
        except (UserError, SeqzipError, ValueError, OSError, MemoryError) as exc:
            _report(path, exc)
            failed = True
    return 1 if failed else 0


def _report(path: str, exc: BaseException) -> None:
    message = _describe(exc)
    if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
        where = f"{exc.filename}: " if exc.filename and exc.filename != path else ""
        message = f"{where}no space left on device; nothing was written"
    elif isinstance(exc, MemoryError):
        message = "out of memory; nothing was written"
    prefix = "" if message.startswith(path) else f"{path}: "
    click.echo(f"seqzip: {prefix}{message}", err=True)


def _summary(path: str, out_path: str | None, verb: str, original: int, compressed: int,
             seconds: float) -> str:
    """The -v line: sizes, ratio as zstd shows it, bits per character, speed."""
    name = "stdin" if path == "-" else path
    target = {None: "", "-": " -> stdout"}.get(out_path, f" -> {out_path}")
    ratio = original / compressed if compressed else 0.0
    bpc = 8 * compressed / original if original else 0.0
    speed = original / 1000 / seconds if seconds > 0 else 0.0
    sizes = (original, compressed) if verb == "compressed" else (compressed, original)
    return (f"{name}{target}: {verb} {sizes[0]:,} -> {sizes[1]:,} bytes, ratio {ratio:.3f}, "
            f"{bpc:.3f} bits per character, {speed:.1f} KB/s ({seconds:.2f} s)")


def compress_files(files: tuple[str, ...], s: Settings) -> int:
    """Compress each of ``files`` (``-``: stdin) as ``s`` says; return the exit status.

        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "notes.txt")
        >>> open(path, "wb").write(b"abracadabra " * 40)
        480
        >>> compress_files((path,), Settings(model="order2", quiet=True))
        0
        >>> os.path.exists(path + ".sqz")
        True
    """
    from . import api

    def name_output(path: str) -> str:
        if path.endswith(s.suffix) and not s.force:
            raise UserError(f"{path} already has the {s.suffix} suffix (use -f to compress it "
                            "again)")
        return path + s.suffix

    def rate_of(path: str, src: IO[bytes]):
        size, rate = _input_size(path), typical_speed(s.model, s.level)
        if size and s.processes > 1:  # pieces coded side by side
            rate *= min(s.processes, -(-size // api.piece_size(size, s.processes)))
        return size, rate

    def work(src, dst, bar):
        coded = 0

        def step(n: int) -> None:
            nonlocal coded
            coded += n
            bar.update(n)

        written = api.compress_file(src, dst, model=s.model, level=s.level, seed=s.seed,
                                    config=config, progress=step, processes=s.processes,
                                    dictionary=dictionary, scheduler=s.cluster())
        return coded, written

    config = s.config()  # a bad --optimizer fails before any file is touched
    if config is not None and s.dictionary is not None:
        raise UserError("--optimizer and --dict do not go together (the model file holds its "
                        "own settings)")
    dictionary = _load_dictionary(s.dictionary)
    inputs = expand_files(files, s.recursive, lambda p: not p.endswith(s.suffix))
    return _run_files(inputs, s, True, name_output, work, "compressed", rate_of)


def decompress_files(files: tuple[str, ...], s: Settings, test: bool = False) -> int:
    """Decompress (or with ``test``, check) each of ``files``; return the exit status.

        >>> import tempfile, seqzip
        >>> path = os.path.join(tempfile.mkdtemp(), "notes.txt.sqz")
        >>> open(path, "wb").write(seqzip.compress(b"hello " * 50, model="order2")) > 0
        True
        >>> decompress_files((path,), Settings(quiet=True)), open(path[:-4], "rb").read(12)
        (0, b'hello hello ')
    """
    from . import api

    def name_output(path: str) -> str:
        if not path.endswith(s.suffix) or path == s.suffix \
                or os.path.basename(path) == s.suffix:
            raise UserError(f"{path} does not end in {s.suffix} (use -o, -c or -S)")
        return path[:-len(s.suffix)]

    def rate_of(path: str, src: IO[bytes]):
        return _decoded_size_and_rate(src, s.processes)

    def work(src, dst, bar):
        counted = None if _is_regular(src) else _CountingReader(src)
        written = api.decompress_file(counted or src, dst, progress=bar.update,
                                      processes=s.processes, dictionary=dictionary,
                                      max_length=s.max_length, max_memory=s.max_memory,
                                      scheduler=s.cluster())
        compressed = counted.count if counted else os.fstat(src.fileno()).st_size
        return written, compressed

    dictionary = _load_dictionary(s.dictionary)
    inputs = expand_files(files, s.recursive, lambda p: p.endswith(s.suffix))
    if test:
        s = Settings(**{**s.__dict__, "output": None, "to_stdout": False, "remove": False})
        code = _run_files(inputs, s, False, name_output, work, "tested", rate_of,
                          discard=True)
        if code == 0 and s.verbose:
            click.echo(f"{len(inputs)} file(s) OK", err=True)
        return code
    return _run_files(inputs, s, False, name_output, work, "decompressed", rate_of)


def _is_regular(src: IO[bytes]) -> bool:
    import stat

    try:
        return stat.S_ISREG(os.fstat(src.fileno()).st_mode) and src.seekable()
    except (OSError, AttributeError, ValueError):
        return False


def _decoded_size_and_rate(src: IO[bytes], processes: int = 1) -> tuple[float | None, float]:
    """Original size and typical speed of a seekable .sqz input, from its headers (cheap: the
    payloads are skipped), counting the streams that ``processes`` decode side by side;
    (None, a guess) for a pipe or a file that does not parse."""
    if not _is_regular(src):
        return None, typical_speed(DEFAULT_MODEL, DEFAULT_LEVEL)
    from . import api
    from .streaminfo import level_of

    start = src.tell()
    try:
        spans = api.stream_spans(src)
        first = spans[0].header
        model = api.spec_for_header(first).name
        level = level_of(first) or DEFAULT_LEVEL
        side_by_side = 1
        if processes > 1 and all(span.length <= api.MAX_PIECE for span in spans):
            side_by_side = min(processes, len(spans))
        return sum(span.length for span in spans), typical_speed(model, level) * side_by_side
    except Exception:  # bad input: decoding reports it properly
        return None, typical_speed(DEFAULT_MODEL, DEFAULT_LEVEL)
    finally:
        src.seek(start)


def _describe_files(paths) -> tuple[list[dict], bool]:
    """The ``streaminfo`` report of each file that reads, and whether any failed (each failure
    is reported on stderr in one line)."""
    from .streaminfo import describe_file

    failed, reports = False, []
    for path in paths:
        try:
            with _open_input(path) as src:
                reports.append(describe_file(src, path))
        except (UserError, SeqzipError, OSError, ValueError) as exc:
            click.echo(f"seqzip: {path}: {_describe(exc)}", err=True)
            failed = True
    return reports, failed


def list_files(files: tuple[str, ...], recursive: bool, suffix: str, as_json: bool) -> int:
    """``-l``: one line per file, as zstd -l shows them, and a total.

        >>> import tempfile, seqzip
        >>> path = os.path.join(tempfile.mkdtemp(), "a.sqz")
        >>> open(path, "wb").write(seqzip.compress(b"ab" * 500, model="order2")) > 0
        True
        >>> list_files((path,), False, ".sqz", as_json=False)  # doctest: +ELLIPSIS
        Streams...
        0
    """
    reports, failed = _describe_files(expand_files(files, recursive,
                                                   lambda p: p.endswith(suffix)))
    if as_json:
        click.echo(json.dumps(reports, indent=2))
        return 1 if failed else 0
    if reports:
        click.echo(f"{'Streams':>7} {'Frames':>6} {'Compressed':>11} {'Uncompressed':>12} "
                   f"{'Ratio':>6} {'bpc':>6}  {'Model':<7} {'Level':<6} Filename")
        for r in reports:
            click.echo(_list_line(r))
        if len(reports) > 1:
            compressed = sum(r["compressed_bytes"] for r in reports)
            original = sum(r["original_bytes"] for r in reports)
            click.echo(_list_line({
                "streams": sum((r["streams"] for r in reports), []), "file": f"{len(reports)} files",
                "frames": sum(r["frames"] for r in reports), "compressed_bytes": compressed,
                "original_bytes": original, "ratio": original / compressed if compressed else 0,
                "bits_per_character": 8 * compressed / original if original else 0.0,
                "models": sorted({m for r in reports for m in r["models"]}),
                "levels": sorted({v for r in reports for v in r["levels"]})}))
    return 1 if failed else 0


def _list_line(r: dict) -> str:
    levels = ",".join(r["levels"]) or "-"
    models = ",".join(r["models"]) or "-"
    return (f"{len(r['streams']):>7} {r['frames']:>6} {_size(r['compressed_bytes']):>11} "
            f"{_size(r['original_bytes']):>12} {r['ratio']:>6.3f} "
            f"{r['bits_per_character']:>6.3f}  {models:<7} {levels:<6} {r['file']}")


# --- commands ---------------------------------------------------------------------------------


@click.command(MAIN_NAME, hidden=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("files", nargs=-1, type=click.Path(allow_dash=True))
@click.option("-z", "--compress", "compress_flag", is_flag=True,
              help="Compress (the default).")
@click.option("-d", "--decompress", "--uncompress", "decompress_flag", is_flag=True,
              help="Decompress FILE.sqz to FILE.")
@click.option("-t", "--test", "test_flag", is_flag=True,
              help="Test integrity: decode and check, write nothing.")
@click.option("-l", "--list", "list_flag", is_flag=True,
              help="List streams, sizes, ratio, bits per character, model and level.")
@io_options
@level_options
@model_options
@limit_options
@click.option("--json", "as_json", is_flag=True, help="With -l: machine-readable output.")
@dict_option
def main_command(files, compress_flag, decompress_flag, test_flag, list_flag, output, to_stdout,
                 keep, remove, force, recursive, suffix, threads, scheduler, quiet, verbose,
                 level, model, seed, optimizer, max_memory, max_length, as_json,
                 dictionary) -> int:
    """Compress FILES to FILE.sqz (or, with -d, decompress); no FILES or '-': stdin."""
    if list_flag:
        return list_files(files, recursive, suffix, as_json)
    settings = Settings(output, to_stdout, remove, force, recursive, suffix, threads, quiet,
                        verbose, level, model, seed, max_length, max_memory,
                        dictionary=dictionary, optimizer=optimizer, scheduler=scheduler)
    if test_flag:
        return decompress_files(files, settings, test=True)
    if decompress_flag:
        return decompress_files(files, settings)
    return compress_files(files, settings)


cli.add_command(main_command)


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(allow_dash=True))
@io_options
@level_options
@model_options
@dict_option
def compress(files, output, to_stdout, keep, remove, force, recursive, suffix, threads,
             scheduler, quiet, verbose, level, model, seed, optimizer, dictionary) -> int:
    """Compress FILES (or stdin) to FILE.sqz; inputs are kept unless --rm."""
    return compress_files(files, Settings(output, to_stdout, remove, force, recursive, suffix,
                                          threads, quiet, verbose, level, model, seed,
                                          dictionary=dictionary, optimizer=optimizer,
                                          scheduler=scheduler))


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(allow_dash=True))
@io_options
@click.option("-t", "--test", is_flag=True, help="Check integrity; write nothing.")
@limit_options
@dict_option
def decompress(files, output, to_stdout, keep, remove, force, recursive, suffix, threads,
               scheduler, quiet, verbose, test, max_memory, max_length, dictionary) -> int:
    """Decompress FILE.sqz (or stdin) to FILE; settings come from the file itself (and from
    the model file given with --dict, for files compressed with one)."""
    settings = Settings(output, to_stdout, remove, force, recursive, suffix, threads, quiet,
                        verbose, max_length=max_length, max_memory=max_memory,
                        dictionary=dictionary, scheduler=scheduler)
    return decompress_files(files, settings, test=test)


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def info(files, as_json) -> int:
    """Show the header fields, ratio, level and bits per character of .sqz files."""
    reports, failed = _describe_files(files)
    if as_json:
        click.echo(json.dumps(reports, indent=2))
    else:
        for report in reports:
            click.echo(_format_info(report))
    return 1 if failed else 0


def _format_info(report: dict) -> str:
    lines = [f"{report['file']}: {report['compressed_bytes']:,} bytes, "
             f"{len(report['streams'])} stream(s), original {report['original_bytes']:,} bytes, "
             f"ratio {report['ratio']:.3f}, "
             f"{report['bits_per_character']:.4f} bits per character"]
    for i, s in enumerate(report["streams"]):
        lines.append(f"  stream {i}: model {s['model']} level {s['level_label']} "
                     f"{json.dumps(s['config'])}")
        lines.append(f"    seed {s['seed']}, length {s['length']:,}, alphabet {s['alphabet_size']}"
                     f" symbols, {s['frames']} frame(s) of up to {s['frame_size']:,}, "
                     f"crc32 {s['crc32']:08x}")
        lines.append(f"    {s['compressed_bytes']:,} bytes, ratio {s['ratio']:.3f}, "
                     f"{s['bits_per_character']:.4f} bits per character")
        if s.get("dictionary"):
            lines.append(f"    coded from model file {s['dictionary']} (sha256 prefix; "
                         "decompress with --dict)")
    return "\n".join(lines)


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--models", "model_names", default=None,
              help="Comma-separated models to run (default: all registered).")
@level_options
@click.option("--runs", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Time each coding this many times and keep the best (CPU and wall).")
@click.option("--json", "as_json", is_flag=True,
              help="Machine-readable output (its JSON Schema: seqzip/bench_schema.json).")
@click.option("--markdown", "as_markdown", is_flag=True, help="The table as Markdown.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False),
              help="Draw bits per character along each file (moving average), one curve per "
                   "model, to this PNG (needs matplotlib: pip install 'seqzip[plot]').")
@click.option("-q", "--quiet", is_flag=True, help="No progress line.")
@click.option("-v", "--verbose", is_flag=True,
              help="Also report the spectral radius of each model's recurrent matrices before "
                   "and after coding each file (one more pass of those models).")
@click.option("--train", "train_path", type=click.Path(exists=True, dir_okay=False),
              help="Score --validation after this training file: bits(train+valid) - "
                   "bits(train), for every model and baseline.")
@click.option("--validation", "validation_path", type=click.Path(exists=True, dir_okay=False))
@click.option("--table1", is_flag=True,
              help="Ollivier 000 Table 1: regret of each method on fresh synthetic problems.")
@click.option("--budget", type=click.FloatRange(0.1, 1e6), default=600.0, show_default=True,
              help="With --table1: CPU seconds per method and problem.")
@click.option("--methods", "method_names", default=None,
              help="With --table1: comma-separated training methods (default: all).")
@click.option("--problems", default="insertions,music,anbn", show_default=True,
              help="With --table1: comma-separated problems.")
@click.option("--scheduler", metavar="ADDRESS", default=None,
              help="Run the (file, model) jobs as Dask tasks on the cluster whose scheduler is "
                   "at ADDRESS (needs: pip install \"seqzip[cluster]\").")
def bench(files, model_names, level, runs, as_json, as_markdown, plot_path, quiet, verbose,
          train_path,
          validation_path, table1, budget, method_names, problems, scheduler) -> int:
    """Bits per character and speed of each model beside bzip2 -9, xz, PPMd and zstd.

    With no FILES, runs on built-in generated data: English-like prose, a structured binary
    table, and an order-2 Markov source whose true entropy is known.
    """
    from . import bench as bench_module

    names = [m.strip() for m in model_names.split(",")] if model_names else None
    if table1:
        from .research import table1 as table1_module

        methods = method_names.split(",") if method_names else list(table1_module.METHODS)
        wanted = problems.split(",")
        unknown = [m for m in methods if m not in table1_module.METHODS]
        bad_problems = [p for p in wanted if p not in table1_module.PROBLEMS + ("xor",)]
        if unknown or bad_problems:
            raise UserError(f"unknown methods {unknown} or problems {bad_problems}")
        rows = table1_module.run_table([p for p in wanted if p != "xor"], methods,
                                       budget=budget, progress=None if as_json else
                                       lambda msg: click.echo(msg, err=True))
        xor = table1_module.xor_run(budget) if "xor" in wanted else None
        if as_json:
            click.echo(json.dumps({"rows": rows, "xor": xor}, indent=2, default=float))
        else:
            click.echo(table1_module.format_table(rows))
            if xor:
                click.echo(table1_module.format_xor(xor))
        return 0
    if (train_path is None) != (validation_path is None):
        raise click.UsageError("--train and --validation go together")
    if train_path is not None:
        from .research import protocol

        if files:
            raise click.UsageError("FILES cannot be combined with --train/--validation")
        with open(train_path, "rb") as f:
            train = f.read()
        with open(validation_path, "rb") as f:
            validation = f.read()
        try:
            rows = protocol.run_validation(train, validation, models=names, level=level)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        click.echo(json.dumps(rows, indent=2) if as_json else
                   protocol.format_validation_table(rows))
        return 0
    if plot_path is not None and not bench_module.can_plot():
        raise UserError("--plot needs matplotlib: pip install 'seqzip[plot]'")
    if as_json and as_markdown:
        raise click.UsageError("--json and --markdown are alternatives")
    progress = _BenchProgress(quiet or as_json, level)
    try:
        rows = bench_module.run(list(files) or None, models=names, level=level, runs=runs,
                                progress=progress, verbose=verbose, scheduler=scheduler)
        if plot_path is not None:
            bench_module.plot(list(files) or None, plot_path, models=names, level=level,
                              rows=rows)
    except (ValueError, OSError) as exc:
        raise UserError(_describe(exc)) from None
    finally:
        progress.close()
    if as_json:
        click.echo(json.dumps(bench_module.report(rows, runs=runs), indent=2))
    elif as_markdown:
        click.echo(bench_module.format_markdown(rows, runs=runs))
    else:
        click.echo(bench_module.format_table(rows, runs=runs))
    if plot_path is not None:
        click.echo(f"bits per character along each file: {plot_path}", err=True)
    return 0


class _BenchProgress:
    """bench's progress: one line per (file, model) job, with rate and ETA on a terminal."""

    def __init__(self, quiet: bool, level: int) -> None:
        self.quiet, self.level, self.bar = quiet, level, None

    def __call__(self, file_name: str, method: str, size: int) -> None:
        self.close()
        # compress, decompress and check: about twice the coding time
        rate = typical_speed(method, self.level) / 2 if method in MODEL_GUIDE else 20e6
        self.bar = Progress(f"{file_name}: {method}", size, rate, self.quiet)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Model file to write (.sqm).")
@click.option("--model", "model", type=click.Choice(list(MODEL_GUIDE)), default=None,
              help=f"Model family of the dictionary [default: {DEFAULT_MODEL}].")
@click.option("--level", type=click.IntRange(1, 9), default=DEFAULT_LEVEL, show_default=True,
              help="The family's level (its size).")
@click.option("--validation", "validation_path", type=click.Path(exists=True, dir_okay=False),
              help="Validation file: early stopping of the offline fits, and scored at the "
              "end (default: the fits hold out the last 10% of the input).")
@click.option("--budget", type=click.FloatRange(0.1, 1e6), default=60.0, show_default=True,
              help="CPU seconds of the offline fit (glnn, lstm, mlstm, mrnn); for the other "
              "families, of the pass over the files.")
@click.option("--optimizer", default="adam", show_default=True,
              help="lstm, mlstm, mrnn: the optimiser of the offline fit, adam (BPTT epochs) or "
                   "hf (Hessian-free); also for --method rnn|lstm|mrnn|mlstm.")
@click.option("--method", default=None,
              help="glnn: the batch method [default: glnn-qdh-rbpm].  Without --model, any "
              "method of the paper (e.g. gnn-qdh-ruop, rnn-dh-fb, hmm-em) or of the other seeds "
              "(relu-rnn-path-sgd, relu-rnn-sgd, lstm-adam, lstm-adam-oinit; rnn, lstm, mrnn, "
              "mlstm with --optimizer adam or hf) fitted alone and saved as a research network "
              "file, not usable with --dict.")
@click.option("--units", type=click.IntRange(1, 4096), default=None,
              help="Research network file: network size (default: scan 4, 6, 8, 11, ...).")
@click.option("--connectivity", type=click.IntRange(1, 4096), default=None,
              help="Research network file: incoming edges per unit, self-loop included.")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True)
@click.option("--optimizer", type=click.Choice(["adam", "hf"]), default=None,
              help="For --method rnn, lstm, mrnn or mlstm: BPTT + Adam (default) or "
                   "Hessian-free (001 Sect. 3.3).")
@click.option("-f", "--force", is_flag=True, help="Overwrite the output.")
@click.option("-q", "--quiet", is_flag=True, help="No progress line.")
def train(files, output, model, level, validation_path, budget, optimizer, method, units,
          connectivity, seed, force, quiet) -> int:
    """Train a model file on FILES: a dictionary for 'seqzip --dict' and 'seqzip sample'.

    Every family learns the files in one online pass, as it would while coding them; glnn
    first fits its network with Ollivier's batch Riemannian training, lstm / mlstm / mrnn
    first run BPTT epochs (Adam by default).  Coding from the file starts from that state and
    keeps adapting.
    """
    import pathlib

    if os.path.exists(output) and not force:
        raise UserError(f"{output} already exists (use -f to overwrite)")
    if model is None and method is not None:
        return _train_research_network(files, output, validation_path, method, budget, units,
                                       connectivity, seed, force, quiet, optimizer)
    model = model or DEFAULT_MODEL
    from .research import dictionary

    contents = [pathlib.Path(path).read_bytes() for path in files]
    validation = pathlib.Path(validation_path).read_bytes() if validation_path else None
    offline = model in dictionary.CELLS or model == "glnn"
    total = sum(map(len, contents))
    label = f"train {model} -{level}"
    try:
        if offline:  # the fit stops at its CPU budget: the line shows the budget spent
            with Progress(label + " (fit, then a pass)", budget, 1.0, quiet, unit="seconds"):
                predictor, summary = dictionary.train_dictionary(
                    contents, model, level, validation=validation, budget=budget,
                    optimizer=optimizer, method=method or "glnn-qdh-rbpm", seed=seed)
        else:
            with Progress(label, total, typical_speed(model, level), quiet) as bar:
                predictor, summary = dictionary.train_dictionary(
                    contents, model, level, validation=validation, budget=budget,
                    seed=seed, progress=bar.update)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    data = predictor.to_bytes()
    with atomic_output(output, force, like=None) as dst:
        dst.write(data)
    from .predictor import file_hash

    extra = f", validation {summary['validation_bpc']:.4f} bits/byte" \
        if "validation_bpc" in summary else ""
    click.echo(f"{output}: {model} -{level} over {summary['pass_symbols']:,} bytes "
               f"({summary['pass_bpc']:.4f} bits/byte in the pass){extra}, "
               f"{len(data):,} bytes, sha256 {file_hash(data).hex()}", err=True)
    return 0


def _train_research_network(files, output, validation_path, method, budget, units,
                            connectivity, seed, force, quiet, optimizer=None) -> int:
    """Fit a GLNN, GNN or RNN alone with Ollivier's training (000 Sect. 2), as the paper
    does, and save the network (a research file, read by seqzip.research.training)."""
    import pathlib

    from .research import training

    data = b"".join(pathlib.Path(path).read_bytes() for path in files)
    validation = pathlib.Path(validation_path).read_bytes() if validation_path else None
    from .research import hf, recurrent

    if method in hf.KINDS:  # plain RNN, LSTM, mRNN, mLSTM by Adam or Hessian-free (NumPy)
        return _train_recurrent(data, validation, output, method, optimizer or "adam", budget,
                                units, seed, force, quiet)
    if optimizer not in (None, "adam"):
        raise UserError(f"--optimizer {optimizer} applies to --model {', '.join(hf.KINDS[1:])} "
                        f"or --method {', '.join(hf.KINDS)}")
    if method not in training.METHODS and method not in recurrent.METHODS:
        raise UserError(f"unknown method {method!r}; choose from "
                        f"{', '.join([*training.METHODS, *recurrent.METHODS, *hf.KINDS])}")
    if method in recurrent.METHODS:  # ReLU RNN (path-SGD, SGD), LSTM (+ OINIT): NumPy batch
        with Progress(f"train {method}", budget, 1.0, quiet, unit="seconds"):
            try:
                result, alphabet, n_validation = recurrent.train_bytes(
                    data, validation, method=method, budget=budget, units=units, seed=seed)
            except ValueError as exc:
                raise UserError(str(exc)) from None
        summary = result.summary()
        summary.pop("settings")
        with atomic_output(output, force, like=None) as dst:
            digest = recurrent.save_model(dst, result, alphabet, {"method": method, **summary})
        click.echo(f"{output}: {method}, {result.n_units} units, validation "
                   f"{result.validation_bits:.1f} bits "
                   f"({result.validation_bits / n_validation:.4f} per byte), "
                   f"{result.seconds:.1f} CPU s, sha256 {digest[:16]}", err=True)
        return 0
    # The scan stops at its CPU budget: the line shows the budget spent.
    with Progress(f"train {method}", budget, 1.0, quiet, unit="seconds"):
        try:
            result, alphabet, n_validation = training.train_bytes(
                data, validation, method=method, budget=budget, units=units,
                connectivity=connectivity, seed=seed)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    summary = result.summary()
    summary.pop("settings")
    with atomic_output(output, force, like=None) as dst:
        digest = training.save_model(dst, result.network, alphabet,
                                     {"method": method, **summary})
    click.echo(f"{output}: {method}, {summary['n_units']} units, d={summary['d']}, "
               f"validation {result.validation_bits:.1f} bits "
               f"({result.validation_bits / n_validation:.4f} per byte), "
               f"{summary['seconds']:.1f} CPU s, sha256 {digest[:16]} (a research network "
               "file, not a dictionary)", err=True)
    return 0


@cli.command()
@click.option("--dict", "dictionary", required=True, type=click.Path(dir_okay=False),
              help="Model file (.sqm) to generate from.")
@click.option("-n", "count", type=click.IntRange(0, 10**7), default=2000, show_default=True,
              help="Bytes to generate.")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True)
@click.option("--temperature", type=click.FloatRange(0.0, 100.0), default=1.0,
              show_default=True, help="Below 1 sharper, above 1 flatter; 0 always picks the "
              "most likely symbol.")
def sample(dictionary, count, seed, temperature) -> int:
    """Print text generated by a model file: each byte drawn from the model's prediction,
    then learnt, as a decoder would (a way to see what a trained model has learnt)."""
    predictor = _load_dictionary(dictionary)
    text = predictor.sample(count, seed=seed, temperature=temperature)
    sys.stdout.buffer.write(text)
    if sys.stdout.isatty() and not text.endswith(b"\n"):
        sys.stdout.buffer.write(b"\n")
    sys.stdout.buffer.flush()
    return 0


def _train_recurrent(data, validation, output, kind, optimizer, budget, units, seed, force,
                     quiet) -> int:
    from .research import hf, training

    with Progress(f"train {kind} ({optimizer})", budget, 1.0, quiet, unit="seconds"):
        try:
            result, alphabet, n_validation = hf.fit_bytes(
                data, validation, kind=kind, optimizer=optimizer, budget=budget, units=units,
                seed=seed)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    summary = result.summary()
    with atomic_output(output, force, like=None) as dst:
        digest = training.save_model(dst, result.network, alphabet, {"method": kind, **summary})
    click.echo(f"{output}: {kind} ({optimizer}), {result.n_units} units, validation "
               f"{result.validation_bpc * n_validation:.1f} bits ({result.validation_bpc:.4f} "
               f"per byte), {result.seconds:.1f} CPU s, sha256 {digest[:16]}", err=True)
    return 0


@cli.group()
def corpora() -> None:
    """Generated corpora (English-like text, binary tables, synthetic problems with exact
    true log-probability)."""


@corpora.command("list")
def corpora_list() -> int:
    """List the generators, their unit and the size the papers use."""
    from . import corpora as corpora_module

    for name, gen in sorted(corpora_module.GENERATORS.items()):
        truth = "exact truth" if gen.true_bits else "no truth"
        click.echo(f"{name:<19} {gen.default_n:>8,} {gen.unit:<7} {truth:<12} {gen.summary}")
    return 0


@corpora.command("generate")
@click.argument("name")
@click.option("-n", "count", type=click.IntRange(0, 10**8), default=None,
              help="Size in the generator's unit (default: the papers' size).")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True)
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
              help="Output path (default: stdout).")
@click.option("-f", "--force", is_flag=True, help="Overwrite the output.")
@click.option("-q", "--quiet", is_flag=True, help="Do not print the true bits.")
def corpora_generate(name, count, seed, output, force, quiet) -> int:
    """Write corpus NAME; print its exact -log2 P under the true model to stderr."""
    from . import corpora as corpora_module

    try:
        sample = corpora_module.generate(name, count, seed=seed)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if output == "-":
        sys.stdout.buffer.write(sample.data)
        sys.stdout.buffer.flush()
    else:
        with atomic_output(output, force, like=None) as dst:
            dst.write(sample.data)
    if not quiet:
        truth = (f"{sample.true_bits:.3f} true bits "
                 f"({sample.true_bits / max(len(sample.data), 1):.4f} per byte)"
                 if sample.true_bits is not None else "no known true model")
        click.echo(f"{name} seed {seed}: {len(sample.data):,} bytes, {truth}", err=True)
    return 0


def main() -> None:
    """Console entry point ``seqzip``.

        >>> import subprocess
        >>> run = subprocess.run([sys.executable, "-m", "seqzip.cli", "--version"],
        ...                      capture_output=True, text=True)
        >>> run.returncode, run.stdout.split()[0]
        (0, 'seqzip')
    """
    cli()


def unseqzip_main() -> None:
    """Console entry point ``unseqzip``: ``seqzip -d``.

        >>> import subprocess, tempfile, seqzip
        >>> path = os.path.join(tempfile.mkdtemp(), "x.sqz")
        >>> open(path, "wb").write(seqzip.compress(b"xyz" * 9, model="order2")) > 0
        True
        >>> subprocess.run([sys.executable, "-c", "from seqzip.cli import unseqzip_main; "
        ...                 "unseqzip_main()", path]).returncode, open(path[:-4]).read(6)
        (0, 'xyzxyz')
    """
    cli(args=["-d", *sys.argv[1:]], prog_name="unseqzip")


def seqzipcat_main() -> None:
    """Console entry point ``seqzipcat``: ``seqzip -dc``.

        >>> import subprocess, seqzip
        >>> run = subprocess.run([sys.executable, "-c", "from seqzip.cli import seqzipcat_main; "
        ...                       "seqzipcat_main()"], input=seqzip.compress(b"cat " * 3),
        ...                      capture_output=True)
        >>> run.stdout
        b'cat cat cat '
    """
    cli(args=["-d", "-c", *sys.argv[1:]], prog_name="seqzipcat")


if __name__ == "__main__":
    main()
