"""The compressor's commands: the gzip-style main command, compress, decompress and info."""
from __future__ import annotations

import json

import click

from .app import MAIN_NAME, cli
from .files import compress_files, decompress_files, describe_files, list_files
from .options import Settings, dict_option, io_options, level_options, limit_options, \
    model_options


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
                 level, model, seed, optimizer, mixer, max_memory, max_length, as_json,
                 dictionary) -> int:
    """Compress FILES to FILE.sqz (or, with -d, decompress); no FILES or '-': stdin."""
    if list_flag:
        return list_files(files, recursive, suffix, as_json)
    settings = Settings(output, to_stdout, remove, force, recursive, suffix, threads, quiet,
                        verbose, level, model, seed, max_length, max_memory,
                        dictionary=dictionary, optimizer=optimizer, mixer=mixer,
                        scheduler=scheduler)
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
             scheduler, quiet, verbose, level, model, seed, optimizer, mixer, dictionary) -> int:
    """Compress FILES (or stdin) to FILE.sqz; inputs are kept unless --rm."""
    return compress_files(files, Settings(output, to_stdout, remove, force, recursive, suffix,
                                          threads, quiet, verbose, level, model, seed,
                                          dictionary=dictionary, optimizer=optimizer,
                                          mixer=mixer, scheduler=scheduler))


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
    reports, failed = describe_files(files)
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
        if s.get("lean"):
            lines.append(f"    lean (format {s['version']}): one frame without checks, the "
                         "data's CRC-32 checked before any output")
        if s.get("escapes"):
            lines.append(f"    coded case-folded: {s['escapes']:,} escapes for capitals "
                         "(seqzip.textcase)")
        if s.get("dictionary"):
            lines.append(f"    coded from model file {s['dictionary']} (sha256 prefix; "
                         "decompress with --dict)")
    return "\n".join(lines)

