"""The ``seqzip`` command line (click): flags, streams, progress and exit codes only.

Format and model logic live in :mod:`seqzip.api`; the bench in :mod:`seqzip.bench`.
Exit status: 0 on success, 1 on any error (one line on stderr, no traceback).
"""
from __future__ import annotations

import contextlib
import errno
import json
import os
import pathlib
import sys
import tempfile
from typing import IO, Callable, Iterator

import click

from . import api
from .errors import SeqzipError
from .models import DEFAULT_LEVEL, DEFAULT_MODEL, MODELS

SUFFIX = ".sqz"
PROGRESS_MIN_BYTES = 4 << 20  # show a progress bar for inputs larger than this


class UserError(click.ClickException):
    """An error to report as one line, without a traceback; exit status 1."""

    exit_code = 1

    def show(self, file=None) -> None:
        click.echo(f"seqzip: {self.message}", err=True)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, click.ClickException):
        return exc.message
    if isinstance(exc, OSError) and exc.strerror:
        where = f": {exc.filename}" if exc.filename else ""
        return f"{exc.strerror}{where}"
    return str(exc) or type(exc).__name__


class SeqzipGroup(click.Group):
    """Maps every failure, usage errors included, to exit status 1 with a one-line message."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,
             **extra):
        try:
            rv = super().main(args=args, prog_name=prog_name or "seqzip",
                              complete_var=complete_var, standalone_mode=False, **extra)
        except click.ClickException as exc:
            exc.show()
            sys.exit(1)
        except click.Abort:
            click.echo("seqzip: aborted", err=True)
            sys.exit(1)
        except BrokenPipeError:
            # The reader went away (e.g. `| head`): stop quietly, as other tools do.
            with contextlib.suppress(OSError):
                sys.stdout = open(os.devnull, "w")
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=SeqzipGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="seqzip", prog_name="seqzip")
def cli() -> None:
    """Lossless compression with learned sequence models and a range coder."""


def level_options(func: Callable) -> Callable:
    """Add -1 .. -9 and --level, all setting `level`."""
    for n in range(9, 0, -1):
        func = click.option(f"-{n}", "level", flag_value=n, type=int,
                            help="Level: -1 fast ... -9 strong." if n == 1 else None,
                            hidden=n not in (1, 9))(func)
    return click.option("--level", "level", type=click.IntRange(1, 9), default=DEFAULT_LEVEL,
                        show_default=True, help="Compression level (same as -N).")(func)


def io_options(func: Callable) -> Callable:
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
        click.option("-q", "--quiet", is_flag=True, help="No progress bar or summary."),
        click.option("-v", "--verbose", is_flag=True, help="Print a summary per file."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@contextlib.contextmanager
def atomic_output(path: str, force: bool, like: str | None) -> Iterator[IO[bytes]]:
    """Write to a temporary file beside ``path`` and rename it into place on success.

    A failure (full disk, bad input, Ctrl-C) leaves no partial output behind.
    """
    if os.path.lexists(path) and not force:
        raise UserError(f"{path} already exists (use -f to overwrite)")
    if os.path.isdir(path):
        raise UserError(f"{path} is a directory")
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
            out.flush()
            os.fsync(out.fileno())
        if like is not None:
            stat = os.stat(like)
            os.chmod(tmp, stat.st_mode & 0o7777)
            os.utime(tmp, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _progress(total: int | None, label: str, quiet: bool):
    """A click progress bar on stderr for large inputs on a terminal, else a no-op."""
    if quiet or total is None or total < PROGRESS_MIN_BYTES or not sys.stderr.isatty():
        return contextlib.nullcontext(None)
    return click.progressbar(length=total, label=label, file=sys.stderr, show_eta=True,
                             show_percent=True)


def _input_size(path: str) -> int | None:
    try:
        return os.path.getsize(path) if path != "-" else None
    except OSError:
        return None


@contextlib.contextmanager
def _open_input(path: str) -> Iterator[IO[bytes]]:
    if path == "-":
        yield sys.stdin.buffer
        return
    if os.path.isdir(path):
        raise UserError(f"{path} is a directory")
    with open(path, "rb") as f:
        yield f


def _run_files(files: tuple[str, ...], output: str | None, to_stdout: bool, remove: bool,
               force: bool, quiet: bool, verbose: bool, binary_out: bool,
               name_output: Callable[[str], str],
               work: Callable[[IO[bytes], IO[bytes], Callable | None], None],
               discard: bool = False) -> int:
    """Apply ``work(src, dst, progress)`` to each input; report errors; return the exit code.

    With ``discard`` the output is thrown away (integrity test).
    """
    if not files:
        files = ("-",)
    if output is not None and len(files) > 1:
        raise click.UsageError("-o/--output takes one input file")
    if remove and (to_stdout or output == "-"):
        raise click.UsageError("--rm cannot be used when writing to standard output")
    failed = False
    for path in files:
        try:
            out_path = None if discard else output if output is not None else (
                "-" if to_stdout or path == "-" else name_output(path))
            if out_path == "-" and binary_out and sys.stdout.isatty() and not force:
                raise UserError("refusing to write compressed data to a terminal "
                                "(use -o, redirect, or -f)")
            if path != "-" and not os.path.exists(path):
                raise UserError(f"{path}: no such file")
            if out_path not in (None, "-") and path != "-" and os.path.exists(out_path) \
                    and os.path.samefile(path, out_path):
                raise UserError(f"{path}: input and output are the same file")
            total = _input_size(path)
            with _open_input(path) as src, _progress(total, os.path.basename(path),
                                                     quiet) as bar:
                step = bar.update if bar is not None else None
                if out_path is None:
                    work(src, _NullSink(), step)
                elif out_path == "-":
                    work(src, sys.stdout.buffer, step)
                    sys.stdout.buffer.flush()
                else:
                    with atomic_output(out_path, force, like=None if path == "-" else path) \
                            as dst:
                        work(src, dst, step)
            if verbose and out_path not in (None, "-") and path != "-":
                before, after = os.path.getsize(path), os.path.getsize(out_path)
                click.echo(f"{path} -> {out_path}: {before:,} -> {after:,} bytes", err=True)
            if remove and path != "-" and out_path is not None:
                os.unlink(path)
        except BrokenPipeError:
            raise
        except (UserError, SeqzipError, ValueError, OSError) as exc:
            message = _describe(exc)
            if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
                message = "no space left on device; nothing was written"
            prefix = "" if message.startswith(path) else f"{path}: "
            click.echo(f"seqzip: {prefix}{message}", err=True)
            failed = True
    return 1 if failed else 0


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(allow_dash=True))
@io_options
@level_options
@click.option("--model", "model", type=click.Choice(sorted(MODELS)), default=DEFAULT_MODEL,
              show_default=True, help="Model family.")
@click.option("--seed", type=click.IntRange(0, 2**64 - 1), default=0, show_default=True,
              help="Seed of the model's PRNG (stored in the file).")
def compress(files, output, to_stdout, keep, remove, force, quiet, verbose, level, model,
             seed) -> int:
    """Compress FILES (or stdin) to FILE.sqz; inputs are kept unless --rm."""

    def name_output(path: str) -> str:
        if path.endswith(SUFFIX) and not force:
            raise UserError(f"{path} already has the {SUFFIX} suffix (use -f to compress it "
                            "again)")
        return path + SUFFIX

    def work(src, dst, progress):
        api.compress_file(src, dst, model=model, level=level, seed=seed, progress=progress)

    return _run_files(files, output, to_stdout, remove, force, quiet, verbose, True,
                      name_output, work)


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(allow_dash=True))
@io_options
@click.option("-t", "--test", is_flag=True, help="Check integrity; write nothing.")
def decompress(files, output, to_stdout, keep, remove, force, quiet, verbose, test) -> int:
    """Decompress FILE.sqz (or stdin) to FILE; settings come from the file itself."""

    def name_output(path: str) -> str:
        if not path.endswith(SUFFIX) or path == SUFFIX:
            raise UserError(f"{path} does not end in {SUFFIX} (use -o or -c)")
        return path[:-len(SUFFIX)]

    def work(src, dst, progress):
        api.decompress_file(src, dst, progress=progress)

    if test:
        code = _run_files(files, None, False, False, force, quiet, False, False, name_output,
                          work, discard=True)
        if verbose and code == 0:
            click.echo(f"{len(files) or 1} file(s) OK", err=True)
        return code
    return _run_files(files, output, to_stdout, remove, force, quiet, verbose, False,
                      name_output, work)


class _NullSink:
    def write(self, data: bytes) -> int:
        return len(data)


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def info(files, as_json) -> int:
    """Show the header fields, ratio and bits per character of .sqz files."""
    from .streaminfo import describe_file

    failed, reports = False, []
    for path in files:
        try:
            with _open_input(path) as src:
                reports.append(describe_file(src, path))
        except (UserError, SeqzipError, OSError, ValueError) as exc:
            message = _describe(exc)
            click.echo(f"seqzip: {path}: {message}", err=True)
            failed = True
    if as_json:
        click.echo(json.dumps(reports, indent=2))
    else:
        for report in reports:
            click.echo(_format_info(report))
    return 1 if failed else 0


def _format_info(report: dict) -> str:
    lines = [f"{report['file']}: {report['compressed_bytes']:,} bytes, "
             f"{len(report['streams'])} stream(s), original {report['original_bytes']:,} bytes, "
             f"{report['bits_per_character']:.4f} bits per character"]
    for i, s in enumerate(report["streams"]):
        lines.append(f"  stream {i}: model {s['model']} {json.dumps(s['config'])}")
        lines.append(f"    seed {s['seed']}, length {s['length']:,}, alphabet {s['alphabet_size']}"
                     f" symbols, {s['frames']} frame(s) of up to {s['frame_size']:,}, "
                     f"crc32 {s['crc32']:08x}")
        lines.append(f"    {s['compressed_bytes']:,} bytes, ratio {s['ratio']:.3f}, "
                     f"{s['bits_per_character']:.4f} bits per character")
    return "\n".join(lines)


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--models", "model_names", default=None,
              help="Comma-separated models to run (default: all registered).")
@level_options
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
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
def bench(files, model_names, level, as_json, train_path, validation_path, table1, budget,
          method_names, problems) -> int:
    """Bits per character and speed of each model and of bzip2 -9, side by side.

    With no FILES, runs on built-in generated data.
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
    try:
        rows = bench_module.run(list(files) or None, models=names, level=level,
                                progress=None if as_json else
                                lambda msg: click.echo(msg, err=True))
    except (ValueError, OSError) as exc:
        raise UserError(_describe(exc)) from None
    click.echo(json.dumps(rows, indent=2) if as_json else bench_module.format_table(rows))
    return 0


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Model file to write (.sqm).")
@click.option("--validation", "validation_path", type=click.Path(exists=True, dir_okay=False),
              help="Validation file for early stopping (default: the last 10% of the input).")
@click.option("--method", default="glnn-qdh-rbpm", show_default=True,
              help="Model and training method, e.g. glnn-qdh-rbpm, gnn-qdh-ruop, rnn-dh-fb.")
@click.option("--budget", type=click.FloatRange(0.1, 1e6), default=60.0, show_default=True,
              help="CPU seconds for the whole scan.")
@click.option("--units", type=click.IntRange(1, 4096), default=None,
              help="Network size (default: scan 4, 6, 8, 11, 16, ... by factors of sqrt 2).")
@click.option("--connectivity", type=click.IntRange(1, 4096), default=None,
              help="Incoming edges per unit, self-loop included (default: 3 and semi-sparse).")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True)
@click.option("-f", "--force", is_flag=True, help="Overwrite the output.")
def train(files, output, validation_path, method, budget, units, connectivity, seed,
          force) -> int:
    """Fit a GLNN, GNN or RNN to FILES with Ollivier's training (000 Sect. 2) and save it."""
    from .research import training

    if os.path.exists(output) and not force:
        raise UserError(f"{output} already exists (use -f to overwrite)")
    data = b"".join(pathlib.Path(path).read_bytes() for path in files)
    validation = pathlib.Path(validation_path).read_bytes() if validation_path else None
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
               f"{summary['seconds']:.1f} CPU s, sha256 {digest[:16]}", err=True)
    return 0


@cli.group()
def corpora() -> None:
    """Generated corpora with exact true log-probability."""


@corpora.command("list")
def corpora_list() -> int:
    """List the generators, their unit and the size the papers use."""
    from . import corpora as corpora_module

    for name, gen in sorted(corpora_module.GENERATORS.items()):
        truth = "exact truth" if gen.true_bits else "no truth"
        click.echo(f"{name:<11} {gen.default_n:>8,} {gen.unit:<7} {truth:<12} {gen.summary}")
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
    """Console entry point."""
    cli()


if __name__ == "__main__":
    main()
