"""The ``seqzip`` command group: gzip habits (``seqzip f`` is ``seqzip compress f``), the help
page, one exit path for every failure, and the console entry points.

Exit status: 0 on success, 1 on any error (one line on stderr, no traceback); a run ended by
SIGINT, SIGTERM or SIGHUP ends by that signal and leaves no temporary or partial file.
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import sys

import click

from .. import __version__
from .failures import Interrupted, UserError
from .options import DEFAULT_MODEL, MODEL_GUIDE


EXAMPLES = """\b
Examples:
  seqzip book.txt                 compress to book.txt.sqz (book.txt is kept; --rm removes it)
  seqzip -d book.txt.sqz          decompress to book.txt (also: unseqzip book.txt.sqz)
  seqzip -9 --model ctw *.txt     level 9 of another model
  seqzip -T 2 big.txt             two processes, pieces after a shared prefix (costs some ratio)
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
            args[0] not in ("--help", "-h", "--version", "-V")
        if not args and not sys.stdin.isatty():
            to_main = True
        elif not args:  # a terminal and nothing to do: one line, as gzip says it
            raise click.UsageError("no FILES, and standard input is a terminal: give files to "
                                   "compress, or pipe data in", ctx)
        if to_main:
            args = [MAIN_NAME, *args]
        return super().parse_args(ctx, args)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        formatter.write_usage(ctx.command_path, "[OPTIONS] [FILES]...")
        formatter.write_usage(ctx.command_path, "COMMAND [ARGS]...", prefix="   or: ")
        self.format_help_text(ctx, formatter)
        main_command = self.commands[MAIN_NAME]
        main_ctx = click.Context(main_command, info_name=ctx.info_name, parent=None)
        records = [param.get_help_record(main_ctx) for param in main_command.get_params(main_ctx)
                   if param.name != "help"]
        with formatter.section("Options"):
            formatter.write_dl([record for record in records if record])
        with formatter.section("Other options"):
            formatter.write_dl([("-V, --version", "Show the version and exit."),
                                ("-h, --help", "Show this message and exit.")])
        self.format_commands(ctx, formatter)
        formatter.write_paragraph()
        formatter.write_text(_models_help())
        formatter.write_paragraph()
        formatter.write_text(EXAMPLES)


MAIN_NAME = "_main"


@click.group(cls=SeqzipGroup, context_settings={"help_option_names": ["-h", "--help"]},
             invoke_without_command=False, no_args_is_help=True)
@click.version_option(__version__, "-V", "--version", prog_name="seqzip",
                      message="%(prog)s %(version)s")
def cli() -> None:
    """Lossless compression whose model is a sequence model trained while it codes.

    With no command, seqzip works as gzip does: it compresses FILES to FILE.sqz (keeping them),
    or with -d decompresses them; with no FILES (or '-') it reads standard input and writes
    standard output.  Settings travel in the file: decompression needs no flags.  Bits per
    character (bpc) = 8 x compressed / original size: lower is better.
    """


# --- options ----------------------------------------------------------------------------------

def _one_blas_thread() -> None:
    """Ask numpy's OpenBLAS for one thread (unless the environment says otherwise), before
    numpy loads: at its import OpenBLAS starts a thread per core that spins for about 0.13 s of
    CPU (numpy's import: 0.23 s of CPU with two threads, 0.10 s with one, on the project's
    2-core machine); the coding loop uses no BLAS (SPEC section 2), and ``seqzip train``'s
    unrolled trainer (research/unrolled.py) runs its matrix products on the one thread."""
    if "numpy" not in sys.modules:
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def main() -> None:
    """Console entry point ``seqzip``.

        >>> import subprocess
        >>> run = subprocess.run([sys.executable, "-m", "seqzip.cli", "--version"],
        ...                      capture_output=True, text=True)
        >>> run.returncode, run.stdout.split()[0]
        (0, 'seqzip')
    """
    _one_blas_thread()
    cli()


def unseqzip_main() -> None:
    """Console entry point ``unseqzip``: ``seqzip -d``.

        >>> import pathlib, subprocess, tempfile, seqzip
        >>> path = os.path.join(tempfile.mkdtemp(), "x.sqz")
        >>> pathlib.Path(path).write_bytes(seqzip.compress(b"xyz" * 9, model="order2")) > 0
        True
        >>> subprocess.run([sys.executable, "-c", "from seqzip.cli import unseqzip_main; "
        ...                 "unseqzip_main()", path]).returncode
        0
        >>> pathlib.Path(path[:-4]).read_text()[:6]
        'xyzxyz'
    """
    _one_blas_thread()
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
    _one_blas_thread()
    cli(args=["-d", "-c", *sys.argv[1:]], prog_name="seqzipcat")


if __name__ == "__main__":
    main()
