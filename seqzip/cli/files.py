"""The gzip-style front end: compress, decompress, test and list files (or standard input),
with outputs named by suffix, errors reported per file, and a progress line.
"""
from __future__ import annotations

import collections
import errno
import io
import json
import os
import sys
import threading
import time
from typing import IO, Callable, Iterator
import contextlib

import click

from ..errors import SeqzipError  # plain exceptions: imports nothing
from .failures import UserError, describe, ending_signals
from .options import DEFAULT_LEVEL, DEFAULT_MODEL, Settings, load_dictionary, typical_speed
from .outputs import OutputRun, atomic_output
from .progress import Progress, _size, coded_since_now


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


class RemoteFiles:
    """Whole inputs as Dask tasks (``-r`` or several inputs with ``--scheduler``), or on
    threads of this process (the same with ``-T N`` and no scheduler: :class:`LocalThreads`):
    each chosen input's bytes go to a worker as a task of its own and its output comes back, while
    the run takes the inputs in order and writes each output as it writes a local one
    (:func:`_run_file`: complete or absent).  At most the cluster's threads + 1 inputs, and
    about ``MAX_BYTES`` of them, are in flight; a task's result is read before its future is
    let go, and the futures of inputs that fail before their turn are cancelled.

    ``task(data, *args)`` codes one input; ``sizes(result, data, dst)`` writes the result to
    ``dst`` and returns (original, compressed).  Inputs not chosen (``None`` in ``chosen``)
    run locally as before.
    """

    MAX_BYTES = 256 << 20

    def __init__(self, client, chosen: list[str | None], task: Callable, args: tuple,
                 sizes: Callable) -> None:
        from ..cluster import RETRIES

        self.client, self.task, self.args, self.sizes = client, task, args, sizes
        self.retries = RETRIES
        self.todo = collections.deque((i, path) for i, path in enumerate(chosen) if path)
        self.running: dict[int, tuple] = {}  # input index -> (future, its input bytes)
        self.window = max(2, sum(client.nthreads().values()) + 1)

    def _fill(self) -> None:
        import warnings

        while self.todo and (not self.running or (
                len(self.running) < self.window
                and sum(len(d) for _, d in self.running.values()) < self.MAX_BYTES)):
            index, path = self.todo.popleft()
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError:
                continue  # its turn reports it, as a local run does
            with warnings.catch_warnings():  # the input travels inside its task (so that the
                # scheduler can run it again if its worker is lost): no "large graph" advice
                warnings.simplefilter("ignore", UserWarning)
                future = self.client.submit(self.task, data, *self.args, pure=False,
                                            retries=self.retries)
            self.running[index] = (future, data)

    def work(self, index: int) -> Work | None:
        """The work of input ``index`` if it runs on the cluster (else None)."""
        self._fill()
        if index not in self.running:
            return None

        def remote(src: IO[bytes], dst: IO[bytes], bar: Progress) -> "tuple[int, int]":
            future, data = self.running[index]
            result = future.result()
            sizes = self.sizes(result, data, dst)
            bar.update(sizes[0])
            return sizes

        return remote

    def done(self, index: int) -> None:
        """Input ``index`` has had its turn: let its task go (cancelled if not read)."""
        future, _ = self.running.pop(index, (None, None))
        if future is not None and not future.done():
            future.cancel()
        self._fill()

    def close(self) -> None:
        self.todo.clear()
        for future, _ in self.running.values():
            future.cancel()
        self.running.clear()


class LocalThreads:
    """What :class:`RemoteFiles` asks of a Dask client, on threads of this process: whole
    inputs coded side by side, at most ``threads`` at a time (cm codes without the
    interpreter lock, so they use the cores; other models take turns).  Each task has a daemon
    thread of its own that ends with it: a run ended by a signal does not wait for the inputs
    in flight, and an input cut into pieces after them still forks its workers from a process
    with one thread when none is left (``seqzip.pieces``)."""

    def __init__(self, threads: int) -> None:
        self.threads = threads
        self._slots = threading.BoundedSemaphore(threads)

    def nthreads(self) -> dict:
        return {"local": self.threads}

    def submit(self, fn: Callable, *args, pure: bool = False, retries: int = 0):
        """``fn(*args)`` on a thread of its own once a slot is free: its future (``pure``
        and ``retries`` are the cluster's: a thread is not lost)."""
        from concurrent.futures import Future

        future: Future = Future()

        def run() -> None:
            with self._slots:
                if not future.set_running_or_notify_cancel():
                    return  # cancelled while it waited for a slot
                try:
                    result = fn(*args)
                except BaseException as exc:
                    future.set_exception(exc)
                else:
                    future.set_result(result)

        threading.Thread(target=run, name="seqzip-input", daemon=True).start()
        return future


def _run_files(files: list[str], settings: Settings, binary_out: bool,
               name_output: Callable[[str], str], work: Work, verb: str,
               rate_of: Callable[[str, IO[bytes]], "tuple[float | None, float]"],
               discard: bool = False, remote: RemoteFiles | None = None) -> int:
    """Apply ``work(src, dst, progress) -> (original, compressed)`` to each input; report
    errors; return the exit code.  With ``discard`` the output is thrown away (test); with
    ``remote``, the inputs it takes are coded on a Dask cluster."""
    s = settings
    if s.output is not None and len(files) > 1:
        raise click.UsageError("-o/--output takes one input file")
    if s.remove and (s.to_stdout or s.output == "-"):
        raise click.UsageError("--rm cannot be used when writing to standard output")
    if s.remove and s.output is not None and not _regular_or_new(s.output):
        raise click.UsageError(f"--rm needs a regular file as output ({s.output} is not one)")
    failed = False
    done, original, compressed, seconds = 0, 0, 0, 0.0  # for -v's total line
    with OutputRun() as run, contextlib.ExitStack() as stack:  # one guardian, one scan per
        # directory, for all the outputs
        if remote is not None:
            stack.callback(remote.close)
        for index, path in enumerate(files):
            try:
                here = remote.work(index) if remote is not None else None
                out_path, sizes, took = _run_file(path, s, run, binary_out, name_output,
                                                  here or work, verb, rate_of, discard,
                                                  counted=here is None)
                done, original, compressed = done + 1, original + sizes[0], \
                    compressed + sizes[1]
                seconds += took
                if s.remove and path != "-" and out_path not in (None, "-"):
                    if not os.path.isfile(out_path):  # complete, and a regular file
                        raise UserError(f"{out_path} is not a regular file; the input was "
                                        "kept")
                    os.unlink(path)
            except BrokenPipeError:
                raise
            except (UserError, SeqzipError, ValueError, OSError, MemoryError) as exc:
                _report(path, exc)
                failed = True
            finally:
                if remote is not None:
                    remote.done(index)
    if s.verbose and done > 1:
        click.echo(_summary(f"total of {done} files", None, verb, original, compressed,
                            seconds), err=True)
    return 1 if failed else 0


def _regular_or_new(path: str) -> bool:
    """Whether ``path`` is a regular file or absent (an output that --rm may follow: not a
    device, FIFO or link to one, which are written into in place)."""
    import stat

    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return True


def _run_file(path: str, s: Settings, run: OutputRun, binary_out: bool,
              name_output: Callable[[str], str], work: Work, verb: str,
              rate_of: Callable[[str, IO[bytes]], "tuple[float | None, float]"],
              discard: bool, counted: bool = True) -> tuple[str | None, tuple[int, int], float]:
    """One input of :func:`_run_files`: where its output went (None: nowhere), its sizes
    (original, compressed) and its seconds.  ``counted``: the progress line reads the symbols
    this process codes (not for an input coded on a cluster, or on threads beside others)."""
    out_path = None if discard else s.output if s.output is not None else (
        "-" if s.to_stdout or path == "-" else name_output(path))
    if out_path == "-" and sys.stdout is None:
        raise UserError("standard output is closed")
    if out_path == "-" and binary_out and sys.stdout.isatty() and not s.force:
        raise UserError("refusing to write compressed data to a terminal "
                        "(use -o, redirect, or -f)")
    if path == "-" and not binary_out and sys.stdin is not None and sys.stdin.isatty() \
            and not s.force:
        raise UserError("refusing to read compressed data from a terminal (give a file, "
                        "redirect, or -f)")
    if path != "-" and not os.path.exists(path):
        raise UserError(f"{path}: no such file")
    if out_path not in (None, "-") and path != "-" and os.path.exists(out_path) \
            and os.path.samefile(path, out_path):
        raise UserError(f"{path}: input and output are the same file")
    start = time.perf_counter()
    label = os.path.basename(path) if path != "-" else "stdin"
    with _open_input(path) as src:
        total, rate = rate_of(path, src)
        with Progress(label, total, rate, s.quiet,
                      counter=coded_since_now() if counted else None) as bar:
            if out_path is None:
                with ending_signals(cleanup=False):  # nothing to clean up
                    sizes = work(src, _NullSink(), bar)
            elif out_path == "-":
                with ending_signals(cleanup=False):
                    sizes = work(src, sys.stdout.buffer, bar)
                sys.stdout.buffer.flush()
            else:
                with atomic_output(out_path, s.force, None if path == "-" else path,
                                   run) as dst:
                    sizes = work(src, dst, bar)
    seconds = time.perf_counter() - start
    if s.verbose:
        click.echo(_summary(path, out_path, verb, *sizes, seconds), err=True)
    return out_path, (sizes[0], sizes[1]), seconds


def _report(path: str, exc: BaseException) -> None:
    message = describe(exc)
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
    name = "stdin" if path == "-" else path  # or "total of N files"
    target = {None: "", "-": " -> stdout"}.get(out_path, f" -> {out_path}")
    ratio = original / compressed if compressed else 0.0
    bpc = 8 * compressed / original if original else 0.0
    speed = original / 1000 / seconds if seconds > 0 else 0.0
    sizes = (original, compressed) if verb == "compressed" else (compressed, original)
    return (f"{name}{target}: {verb} {sizes[0]:,} -> {sizes[1]:,} bytes, ratio {ratio:.3f}, "
            f"{bpc:.3f} bits per character, {speed:.1f} KB/s ({seconds:.2f} s)")


def compress_files(files: tuple[str, ...], s: Settings) -> int:
    """Compress each of ``files`` (``-``: stdin) as ``s`` says; return the exit status.

        >>> import pathlib, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "notes.txt")
        >>> pathlib.Path(path).write_bytes(b"abracadabra " * 40)
        480
        >>> compress_files((path,), Settings(model="order2", quiet=True))
        0
        >>> os.path.exists(path + ".sqz")
        True
    """
    from .. import api

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

        written = api.compress_file(src, dst, **chosen, config=config, progress=step,
                                    processes=s.processes, dictionary=dictionary,
                                    scheduler=s.cluster())
        return coded, written

    # With --dict the model file holds the model, level and seed: only those the user gave are
    # passed on, so that one contradicting the file is refused and the defaults are not.
    chosen = {"model": s.model, "level": s.level, "seed": s.seed}
    context = click.get_current_context(silent=True)
    if s.dictionary is not None and context is not None:
        chosen = {name: value for name, value in chosen.items()
                  if context.get_parameter_source(name) not in (
                      click.core.ParameterSource.DEFAULT, None)}

    config = s.config()  # a bad --optimizer fails before any file is touched
    if config is not None and s.dictionary is not None:
        raise UserError("--optimizer and --mixer do not go with --dict (the model file holds "
                        "its own settings)")
    dictionary = load_dictionary(s.dictionary)
    inputs = expand_files(files, s.recursive, lambda p: not p.endswith(s.suffix))

    def whole(path: str) -> bool:  # coded locally as one stream: one task (a piece set's
        # pieces are tasks of their own, file after file)
        size = _input_size(path)
        return size is not None and (s.processes == 1
                                     or len(api.warm_layout(size, s.processes)) == 1)

    remote = _remote_files(inputs, s, whole, _compress_task, ({**chosen, "config": config},),
                           _compressed_sizes)
    return _run_files(inputs, s, True, name_output, work, "compressed", rate_of,
                      remote=remote)


def _remote_files(inputs: list[str], s: Settings, wanted: Callable[[str], bool],
                  task: Callable, args: tuple, sizes: Callable) -> RemoteFiles | None:
    """With -r or several inputs (and no --dict), the :class:`RemoteFiles` of the inputs
    ``wanted`` (regular files): on the --scheduler cluster, or without one, with -T N (N > 1),
    on N threads of this process (:class:`LocalThreads`); else None."""
    if s.dictionary is not None or not (s.recursive or len(inputs) > 1) or (
            s.scheduler is None and s.processes < 2):
        return None
    chosen = [path if path != "-" and os.path.isfile(path) and wanted(path) else None
              for path in inputs]
    if not any(chosen):
        return None
    client = s.cluster() if s.scheduler is not None else LocalThreads(s.processes)
    return RemoteFiles(client, chosen, task, args, sizes)


THREAD_MAX = 4 << 20  # compressed bytes: a larger input decodes as before, a frame at a time


def _decoded_on_a_thread(path: str) -> bool:
    """Whether ``-d -T N`` decodes ``path`` whole on a thread: at most ``THREAD_MAX`` bytes (a
    task holds its input and output in memory) and not a piece set (whose pieces a local run
    decodes side by side in worker processes)."""
    from ..api import PIECES_MAGIC

    try:
        with open(path, "rb") as f:
            return os.fstat(f.fileno()).st_size <= THREAD_MAX and \
                f.read(len(PIECES_MAGIC)) != PIECES_MAGIC
    except OSError:
        return False  # its turn reports it


def _compress_task(data: bytes, options: dict) -> bytes:
    """One whole input compressed, as a Dask task: the bytes of a local run (one stream)."""
    from .. import api

    out = io.BytesIO()
    api.compress_file(io.BytesIO(data), out, **options)
    return out.getvalue()


def _compressed_sizes(packed: bytes, data: bytes, dst: IO[bytes]) -> "tuple[int, int]":
    return len(data), dst.write(packed) or 0


def _decompress_task(data: bytes, max_length: int | None, max_memory: int | None,
                     keep: bool) -> bytes | int:
    """One whole input decompressed, as a Dask task: its output (with ``keep``) or its
    length (a test)."""
    from .. import api

    out = io.BytesIO() if keep else _NullSink()
    written = api.decompress_file(io.BytesIO(data), out, max_length=max_length,
                                  max_memory=max_memory)
    return out.getvalue() if keep else written


def _decompressed_sizes(result: bytes | int, data: bytes, dst: IO[bytes]) -> "tuple[int, int]":
    return (result if isinstance(result, int) else dst.write(result) or 0), len(data)


def decompress_files(files: tuple[str, ...], s: Settings, test: bool = False) -> int:
    """Decompress (or with ``test``, check) each of ``files``; return the exit status.

        >>> import pathlib, tempfile, seqzip
        >>> path = os.path.join(tempfile.mkdtemp(), "notes.txt.sqz")
        >>> pathlib.Path(path).write_bytes(seqzip.compress(b"hello " * 50, model="order2")) > 0
        True
        >>> decompress_files((path,), Settings(quiet=True))
        0
        >>> pathlib.Path(path[:-4]).read_bytes()[:12]
        b'hello hello '
    """
    from .. import api

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

    dictionary = load_dictionary(s.dictionary, s.max_memory)
    inputs = expand_files(files, s.recursive, lambda p: p.endswith(s.suffix))
    remote = _remote_files(inputs, s, _decoded_on_a_thread if s.scheduler is None
                           else lambda path: True, _decompress_task,
                           (s.max_length, s.max_memory, not test), _decompressed_sizes)
    if test:
        s = Settings(**{**s.__dict__, "output": None, "to_stdout": False, "remove": False})
        code = _run_files(inputs, s, False, name_output, work, "tested", rate_of,
                          discard=True, remote=remote)
        if code == 0 and s.verbose:
            click.echo(f"{len(inputs)} file(s) OK", err=True)
        return code
    return _run_files(inputs, s, False, name_output, work, "decompressed", rate_of,
                      remote=remote)


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
    from .. import api
    from ..streaminfo import level_of

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


def describe_files(paths) -> tuple[list[dict], bool]:
    """The ``streaminfo`` report of each file that reads, and whether any failed (each failure
    is reported on stderr in one line)."""
    from ..streaminfo import describe_file

    failed, reports = False, []
    for path in paths:
        try:
            with _open_input(path) as src:
                reports.append(describe_file(src, path))
        except (UserError, SeqzipError, OSError, ValueError) as exc:
            click.echo(f"seqzip: {path}: {describe(exc)}", err=True)
            failed = True
    return reports, failed


def list_files(files: tuple[str, ...], recursive: bool, suffix: str, as_json: bool) -> int:
    """``-l``: one line per file, as zstd -l shows them, and a total.

        >>> import pathlib, tempfile, seqzip
        >>> path = os.path.join(tempfile.mkdtemp(), "a.sqz")
        >>> pathlib.Path(path).write_bytes(seqzip.compress(b"ab" * 500, model="order2")) > 0
        True
        >>> list_files((path,), False, ".sqz", as_json=False)  # doctest: +ELLIPSIS
        Streams...
        0
    """
    reports, failed = describe_files(expand_files(files, recursive,
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
                "streams": sum((r["streams"] for r in reports), []),
                "file": f"{len(reports)} files",
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

