"""The research commands: ``train`` (model files and research networks), ``sample`` and
``corpora``."""
from __future__ import annotations

import os
import sys

import click

from .app import cli
from .failures import UserError
from ..levels import MAX_LEVEL, MIN_LEVEL
from .options import (DEFAULT_LEVEL, DEFAULT_MODEL, MODEL_GUIDE, Settings, load_dictionary,
                      typical_speed)
from .outputs import atomic_output
from .progress import Progress, coded_since_now


@cli.command()
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Model file to write (.sqm).")
@click.option("--model", "model", type=click.Choice(list(MODEL_GUIDE)), default=None,
              help=f"Model family of the dictionary [default: {DEFAULT_MODEL}].")
@click.option("--level", type=click.IntRange(MIN_LEVEL, MAX_LEVEL), default=DEFAULT_LEVEL, show_default=True,
              help="The family's level (its size).")
@click.option("--validation", "validation_path", type=click.Path(exists=True, dir_okay=False),
              help="Validation file: early stopping of the offline fits, and scored at the "
              "end (default: the fits hold out the last 10% of the input).")
@click.option("--budget", type=click.FloatRange(0.1, 1e6), default=60.0, show_default=True,
              help="CPU seconds of the offline fit (glnn, lstm, mlstm, mrnn); for the other "
              "families, of the pass over the files.")
@click.option("--epochs", "max_epochs", type=click.IntRange(1, 100000), default=1000,
              show_default=True,
              help="lstm, mlstm, mrnn: at most this many epochs of the offline fit.  A fit that "
                   "ends by epochs (not by --budget) gives the same file every time.")
@click.option("--compact/--full-state", default=None,
              help="The file as a recipe (the training text, LZMA-compressed: small, and "
                   "loading repeats the pass) or as the model's full state (large, loads at "
                   "once); default: a recipe when the full state would exceed 4 MiB.")
@click.option("--optimizer", type=click.Choice(["adam", "hf"]), default="adam",
              show_default=True,
              help="The offline fit's optimiser: adam (BPTT epochs + Adam) or hf (Hessian-free, "
                   "001 Sect. 3.3); for --model lstm, mlstm, mrnn and --method rnn, lstm, mrnn, "
                   "mlstm.")
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
@click.option("--steps", "max_steps", type=click.IntRange(1, 10**7), default=None,
              help="Research network file (the size scan): each setting trains at most this "
                   "many steps.  A scan that ends by steps (not by --budget) gives the same "
                   "file every time, locally or with --scheduler.")
@click.option("--scheduler", metavar="ADDRESS", default=None,
              help="Research network file: each setting of the size scan trains as Dask tasks "
                   "on the cluster whose scheduler is at ADDRESS (--budget then counts the CPU "
                   "seconds of all the workers; needs: pip install \"seqzip[cluster]\").")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True)
@click.option("-f", "--force", is_flag=True, help="Overwrite the output.")
@click.option("-q", "--quiet", is_flag=True, help="No progress line.")
def train(files, output, model, level, validation_path, budget, max_epochs, compact, optimizer,
          method, units, connectivity, max_steps, scheduler, seed, force, quiet) -> int:
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
                                       connectivity, seed, force, quiet, optimizer, max_steps,
                                       scheduler)
    _scan_only(max_steps, scheduler, f"--model {model or DEFAULT_MODEL}")
    model = model or DEFAULT_MODEL
    from ..research import dictionary

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
                    optimizer=optimizer, method=method or "glnn-qdh-rbpm", seed=seed,
                    max_epochs=max_epochs, compact=compact)
        else:
            with Progress(label, total, typical_speed(model, level), quiet,
                          counter=coded_since_now()) as bar:
                predictor, summary = dictionary.train_dictionary(
                    contents, model, level, validation=validation, budget=budget,
                    seed=seed, progress=bar.update, max_epochs=max_epochs, compact=compact)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    data = predictor.to_bytes()
    with atomic_output(output, force, like=None) as dst:
        dst.write(data)
    from ..predictor import file_hash

    extra = f", validation {summary['validation_bpc']:.4f} bits/byte" \
        if "validation_bpc" in summary else ""
    click.echo(f"{output}: {model} -{level} over {summary['pass_symbols']:,} bytes "
               f"({summary['pass_bpc']:.4f} bits/byte in the pass){extra}, "
               f"{len(data):,} bytes, sha256 {file_hash(data).hex()}", err=True)
    return 0


def _scan_only(max_steps, scheduler, what: str) -> None:
    """--steps and --scheduler belong to the size scan of Ollivier's methods: refused, in one
    line, with anything else."""
    from ..research import training

    for flag, value in (("--steps", max_steps), ("--scheduler", scheduler)):
        if value is not None:
            raise UserError(f"{flag} applies to the size scan of a research network "
                            f"(--method {', '.join(training.METHODS)} without --model), "
                            f"not to {what}")


def _train_research_network(files, output, validation_path, method, budget, units,
                            connectivity, seed, force, quiet, optimizer=None, max_steps=None,
                            scheduler=None) -> int:
    """Fit a GLNN, GNN or RNN alone with Ollivier's training (000 Sect. 2), as the paper
    does, and save the network (a research file, read by seqzip.research.training).  With
    ``scheduler`` the size scan's settings train as Dask tasks; the file holds no timing, so
    a scan that ends by ``max_steps`` writes the same bytes wherever it ran."""
    import pathlib

    from ..research import training

    data = b"".join(pathlib.Path(path).read_bytes() for path in files)
    validation = pathlib.Path(validation_path).read_bytes() if validation_path else None
    from ..research import hf, recurrent

    if method in hf.KINDS or method in recurrent.METHODS:  # one size: no scan
        _scan_only(max_steps, scheduler, f"--method {method}")
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
    # a client before the progress line (a missing dask or scheduler fails in one line)
    client = Settings(scheduler=scheduler).cluster()
    # The scan stops at its CPU budget: the line shows the budget spent (on a cluster, the
    # workers' CPU seconds come faster than the clock's).
    with Progress(f"train {method}", budget, 1.0, quiet, unit="seconds"):
        try:
            result, alphabet, n_validation = training.train_bytes(
                data, validation, method=method, budget=budget, units=units,
                connectivity=connectivity, seed=seed, max_steps=max_steps, scheduler=client)
        except ValueError as exc:
            raise UserError(str(exc)) from None
    summary = result.summary()
    summary.pop("settings")
    summary.pop("seconds")  # not in the file: the same fit gives the same bytes
    with atomic_output(output, force, like=None) as dst:
        digest = training.save_model(dst, result.network, alphabet,
                                     {"method": method, **summary})
    click.echo(f"{output}: {method}, {summary['n_units']} units, d={summary['d']}, "
               f"validation {result.validation_bits:.1f} bits "
               f"({result.validation_bits / n_validation:.4f} per byte), "
               f"{result.seconds:.1f} CPU s, sha256 {digest[:16]} (a research network "
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
    predictor = load_dictionary(dictionary)
    text = predictor.sample(count, seed=seed, temperature=temperature)
    sys.stdout.buffer.write(text)
    if sys.stdout.isatty() and not text.endswith(b"\n"):
        sys.stdout.buffer.write(b"\n")
    sys.stdout.buffer.flush()
    return 0


def _train_recurrent(data, validation, output, kind, optimizer, budget, units, seed, force,
                     quiet) -> int:
    from ..research import hf, training

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
    from .. import corpora as corpora_module

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
    from .. import corpora as corpora_module

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

