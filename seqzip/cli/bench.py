"""``seqzip bench``: the models beside bzip2, xz, PPMd and zstd (and the research tables)."""
from __future__ import annotations

import json

import click

from .app import cli
from .failures import UserError, describe
from .options import MODEL_GUIDE, level_options, typical_speed
from .progress import Progress, coded_since_now


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option("--models", "model_names", default=None,
              help="Comma-separated models to run, each at --level or at its own level "
                   "(MODEL:LEVEL, e.g. cm:1,cm:6,ctw:8; default: all registered).")
@level_options
@click.option("--runs", type=click.IntRange(1, 100), default=1, show_default=True,
              help="Time each coding this many times: median, min and max of CPU and wall "
                   "seconds (--json); the table shows the medians.")
@click.option("--json", "as_json", is_flag=True,
              help="Machine-readable output, in every mode (its JSON Schema: "
                   "seqzip/bench/schema.json).")
@click.option("--markdown", "as_markdown", is_flag=True, help="The table as Markdown.")
@click.option("--plot", "plot_path", type=click.Path(dir_okay=False),
              help="Draw the bits per character of coding each prefix of each file, one curve "
                   "per model and per baseline, to this PNG (needs matplotlib: pip install "
                   "'seqzip[plot]').")
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
@click.option("--budget", type=click.FloatRange(0.1, 1e6), default=10.0, show_default=True,
              help="With --table1: CPU seconds per method and problem (the paper's figures "
                   "need about 600: hours in all; the estimate is printed first).")
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
    from .. import bench as bench_module

    names = [m.strip() for m in model_names.split(",")] if model_names else None
    if table1:
        from ..research import table1 as table1_module

        methods = method_names.split(",") if method_names else list(table1_module.METHODS)
        wanted = problems.split(",")
        unknown = [m for m in methods if m not in table1_module.METHODS]
        bad_problems = [p for p in wanted if p not in table1_module.PROBLEMS + ("xor",)]
        if unknown or bad_problems:
            raise UserError(f"unknown methods {unknown} or problems {bad_problems}")
        fits = len(methods) * len([p for p in wanted if p != "xor"]) + ("xor" in wanted)
        if not quiet:
            click.echo(f"table 1: {fits} fits of {budget:g} CPU s each: about "
                       f"{fits * budget / 60:.1f} CPU minutes in all", err=True)
        rows = table1_module.run_table([p for p in wanted if p != "xor"], methods,
                                       budget=budget, progress=None if as_json or quiet else
                                       lambda msg: click.echo(msg, err=True))
        xor = table1_module.xor_run(budget) if "xor" in wanted else None
        if as_json:
            doc = bench_module.table1_report(rows, xor, budget=budget)
            click.echo(json.dumps(doc, indent=2, default=float))
        else:
            click.echo(table1_module.format_table(rows))
            if xor:
                click.echo(table1_module.format_xor(xor))
        return 0
    if (train_path is None) != (validation_path is None):
        raise click.UsageError("--train and --validation go together")
    if train_path is not None:
        from ..research import protocol

        if files:
            raise click.UsageError("FILES cannot be combined with --train/--validation")
        (train_input,), (validation_input,) = (bench_module.inputs([train_path]),
                                               bench_module.inputs([validation_path]))
        try:
            rows = protocol.run_validation(train_input.data, validation_input.data,
                                           models=names, level=level)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        if as_json:
            doc = bench_module.validation_report(rows, train=train_input.description,
                                                 validation=validation_input.description)
            click.echo(json.dumps(doc, indent=2))
        else:
            click.echo(protocol.format_validation_table(rows))
        return 0
    if plot_path is not None and not bench_module.can_plot():
        raise UserError("--plot needs matplotlib: pip install 'seqzip[plot]'")
    if as_json and as_markdown:
        raise click.UsageError("--json and --markdown are alternatives")
    progress = _BenchProgress(quiet or as_json, level, runs)
    try:
        described = [i.description for i in bench_module.inputs(list(files) or None)]
        rows = bench_module.run(list(files) or None, models=names, level=level, runs=runs,
                                progress=progress, verbose=verbose, scheduler=scheduler)
        if plot_path is not None:
            bench_module.plot(list(files) or None, plot_path, models=names, level=level,
                              rows=rows)
    except (ValueError, OSError) as exc:
        raise UserError(describe(exc)) from None
    finally:
        progress.close()
    if as_json:
        click.echo(json.dumps(bench_module.report(rows, runs=runs, inputs=described), indent=2))
    elif as_markdown:
        click.echo(bench_module.format_markdown(rows, runs=runs, inputs=described))
    else:
        click.echo(bench_module.format_table(rows, runs=runs, inputs=described))
    if plot_path is not None:
        click.echo(f"bits per character along each file: {plot_path}", err=True)
    return 0


class _BenchProgress:
    """bench's progress: one line per (file, model) job, with rate and ETA on a terminal.  A
    model's job codes the file ``runs`` times and decodes it as often: the line counts those
    symbols as the coding loop reports them."""

    def __init__(self, quiet: bool, level: int, runs: int = 1) -> None:
        self.quiet, self.level, self.runs, self.bar = quiet, level, runs, None

    def __call__(self, file_name: str, method: str, size: int) -> None:
        self.close()
        model, _, level = method.partition(" -")  # models come as "cm -6"
        if model in MODEL_GUIDE:
            self.bar = Progress(f"{file_name}: {method}", 2 * self.runs * size,
                                typical_speed(model, int(level or self.level)), self.quiet,
                                counter=coded_since_now())
        else:  # a baseline: its library reports nothing on the way
            self.bar = Progress(f"{file_name}: {method}", 2 * self.runs * size, 20e6, self.quiet)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
