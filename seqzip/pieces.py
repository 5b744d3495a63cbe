"""Parallel coding in pieces: a pool of worker processes that end with their parent, the size
of the pieces an input is cut into, and where the streams of a multi-stream file lie.

The work a piece does (compress or decompress one stream) is given by the caller
(:mod:`seqzip.api`) as a module-level function, so that this module knows nothing of the
faces above it.

    >>> piece_size(200_000, 2)
    100000
"""
from __future__ import annotations

import collections
import contextlib
import io
import os
import signal
import sys
from typing import IO, Any, Callable

from .container import (FRAME_HEAD, NeedMoreData, frame_size_on_disk, next_frame_symbols,
                        parse_frame_head, parse_header)
from .errors import SeqzipError, TruncatedError, WorkerError
from .models import Model, spec_by_name
from .pieceset import WARM, PieceSet, check_piece, parse_piece_set, starts_piece_set
from .session import (CHUNK, Progress, _read_exact, compress_stream, encode_piece,
                      model_for_header, model_from_state, piece_header, state_bytes)

# Pieces (``processes`` > 1): at least MIN_PIECE bytes, so that starting a piece is
# paid on enough data, and at most MAX_PIECE, which bounds the memory of the pieces in flight.
MIN_PIECE = 64 << 10
MAX_PIECE = 8 << 20


def piece_size(length: int, processes: int) -> int:
    """Bytes per independent piece when ``length`` bytes are coded on ``processes`` processes.

        >>> piece_size(152_089, 2), piece_size(10_000, 4), piece_size(10**9, 2) == MAX_PIECE
        (76045, 65536, True)
    """
    return max(MIN_PIECE, min(MAX_PIECE, -(-length // processes)))


def _pool(processes: int):
    """A pool of worker processes that end with their parent, and whose death ends the run.

    A process with one thread (the command line) forks its workers: each asks the kernel to
    kill it when its parent dies (Linux), so nothing runs on after a signal.  A process with
    threads takes its workers from a fork server instead (a fresh interpreter that imported
    this module), since forking a process with threads risks deadlocks.  It is a
    ``ProcessPoolExecutor``: a worker that dies (SIGKILL from the out-of-memory killer) breaks
    the pool and fails the results still to come, where ``multiprocessing.Pool`` would replace
    the worker, lose its task and wait for it for ever.
    """
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    if "fork" in methods and threading.active_count() == 1:
        context = multiprocessing.get_context("fork")
        parent = os.getpid()
    elif "forkserver" in methods:
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["seqzip.api"])
        parent = None
    else:
        context = multiprocessing.get_context("spawn")
        parent = None
    return ProcessPoolExecutor(processes, mp_context=context, initializer=_worker_init,
                               initargs=(parent,))


def _forks() -> bool:
    """Whether :func:`_pool` forks its workers from this process."""
    import multiprocessing
    import threading

    return "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1


def _worker_init(parent: int | None) -> None:
    # Ctrl-C reaches the whole process group: the parent decides, and its end ends the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:  # Linux: be killed when the parent ends, even by SIGKILL
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # the parent ended before the line above took effect


def _wait(future) -> Any:
    """``future.result()`` in short waits, so that signal handlers, where installed, run
    promptly."""
    from concurrent.futures import wait

    while not wait([future], 0.2).done:
        pass
    return future.result()


def _worker_death(workers: dict) -> str:
    """The one line that says which worker died and how (the others, ended by the broken
    pool with SIGTERM, are not the cause)."""
    ended = sorted((pid, process.exitcode) for pid, process in workers.items()
                   if process.exitcode is not None)
    first = [(pid, code) for pid, code in ended if code != -signal.SIGTERM] or ended
    if not first:
        return "a worker process ended before its piece was done"
    pid, code = first[0]
    if code < 0:
        try:
            how = f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"was killed by signal {-code}"
        if -code == signal.SIGKILL:
            how += " (out of memory?)"
    else:
        how = f"ended with status {code}"
    return f"a worker process (pid {pid}) {how} before its piece was done"


def _end_pool(pool, workers: dict, wait: bool, kill: bool = False) -> None:
    """Shut ``pool`` down and collect its workers; with ``wait`` false (the run failed or
    stopped early) the pieces not started are cancelled and the workers finish the ones they
    hold; with ``kill`` (a signal ends the run) they are ended first.  Killing a worker may
    cut its result half-sent, on which the executor's reader can block for ever: only a
    signal, which ends the process anyway, takes that risk."""
    if kill:
        for process in workers.values():
            if process.exitcode is None:
                process.kill()
    pool.shutdown(wait=True, cancel_futures=not wait)


class StreamSpan(collections.namedtuple("StreamSpan", "start end header piece",
                                        defaults=(None,))):
    """Where one stream lies in a file (``start``, ``end``: byte offsets) and its header;
    ``piece``: (index, :class:`~seqzip.pieceset.PieceSet`) for a piece of a piece set.

        >>> import io
        >>> from seqzip.api import compress
        >>> span = stream_spans(io.BytesIO(compress(b"abc", model="order2")))[0]
        >>> span.start, span.length
        (0, 3)
    """

    @property
    def length(self) -> int:
        return self.header.length


def stream_spans(src: IO[bytes]) -> list[StreamSpan]:
    """The streams of a seekable ``src`` from its position on, found by reading headers and
    frame heads only (payloads are skipped by seeking, not read or checked).

    Raises:
        TruncatedError, NotSeqzipError, UnsupportedVersionError, CorruptError: bad input.

        >>> import io
        >>> from seqzip.api import compress
        >>> spans = stream_spans(io.BytesIO(compress(b"ab" * 50) + compress(b"")))
        >>> [(s.length, s.start) for s in spans][1][0], spans[0].end == spans[1].start
        (0, True)
    """
    spans = []
    origin = src.tell()
    size = src.seek(0, os.SEEK_END)
    src.seek(origin)
    pieces, index, first = None, 0, None  # the piece set being read, the next piece's index
    while True:
        start = src.tell()
        head = src.read(CHUNK)
        if not head:
            if pieces is not None:
                raise TruncatedError(f"piece set ended after {index} of its "
                                     f"{len(pieces.lengths)} pieces")
            break
        if pieces is None and _parse(src, head, starts_piece_set):
            pieces, used = _parse(src, head, parse_piece_set)
            src.seek(start + used)
            index, first = 0, None
            continue
        header, used = _parse(src, head, parse_header)
        if pieces is not None:
            check_piece(pieces, index, header, first)
            first = first or header
        position, done, frames = start + used, 0, 0
        while done < header.coded:
            src.seek(position)
            expected = next_frame_symbols(header, done)
            try:
                payload_len, _ = parse_frame_head(src.read(FRAME_HEAD.size), 0, expected,
                                                  frames, header.version)
            except NeedMoreData:
                raise TruncatedError("compressed data ended before the end of the stream"
                                     ) from None
            position += frame_size_on_disk(header.version, expected, payload_len)
            done += expected
            frames += 1
        if position > size:
            raise TruncatedError("compressed data ended before the end of the stream")
        src.seek(position)
        spans.append(StreamSpan(start, position, header,
                                None if pieces is None else (index, pieces)))
        if pieces is not None:
            index += 1
            if index == len(pieces.lengths):
                pieces = None
    if not spans:
        raise TruncatedError("empty input: not a seqzip stream")
    return spans


def _parse(src: IO[bytes], head: bytes, parse: Callable) -> Any:
    """``parse(buffer)`` of what ``src`` yields from ``head`` on, reading more as needed
    (``head`` grows in place only through the returned result's offsets)."""
    buffer = bytearray(head)
    while True:
        try:
            return parse(buffer)
        except NeedMoreData:
            more = src.read(CHUNK)
            if not more:
                raise TruncatedError("compressed data ended before the end of the stream"
                                     ) from None
            buffer += more


# ---------------------------------------------------------------- warm pieces
#
# ``-T N`` writes a piece set: piece 0, the shared prefix, is coded first in this process;
# every later piece starts from the model's state after it and is coded by a worker.  Decoding
# does the same: piece 0 here, then the others side by side from the state it leaves.

PREFIX_SHARE = 8  # the prefix is 1/PREFIX_SHARE of the input ...
MAX_PREFIX = 1 << 20  # ... and at most this many bytes (it is coded serially)


def warm_layout(length: int, processes: int) -> list[int]:
    """The original lengths of the pieces of a warm piece set for ``length`` bytes coded on
    ``processes`` processes: the prefix, then pieces of at least ``MIN_PIECE`` and at most
    ``MAX_PIECE`` bytes; ``[length]`` when one stream is better (too little to share out).

        >>> warm_layout(400_000, 2), warm_layout(100_000, 2)
        ([50000, 175000, 175000], [100000])
    """
    prefix = min(MAX_PREFIX, length // PREFIX_SHARE)
    rest = length - prefix
    if processes < 2 or rest < 2 * MIN_PIECE:
        return [length]
    count = max(processes, -(-rest // MAX_PIECE))
    count = min(count, rest // MIN_PIECE)
    size = -(-rest // count)
    return [prefix] + [min(size, rest - i * size) for i in range(-(-rest // size))]


_INHERITED: dict[str, Model] = {}  # the warm model forked workers hold


def warm_model(header, start: bytes | None) -> Model:
    """In a worker: the model of piece ``header`` in the prefix's state: the parent's model
    itself in a process forked for this one piece (:func:`_forked_job`), a copy of it
    (``start`` None: this process was forked holding it), or rebuilt from
    :func:`~seqzip.session.state_bytes`.  (A piece's header names piece 0's model, config,
    seed and alphabet, which is all a model is built from.)"""
    if start is None and _INHERITED.get("in_place"):
        return _INHERITED.pop("model")
    return model_from_state(header, _INHERITED["model"] if start is None else start)


def _forked_job(work: Callable, *job: Any) -> Any:
    """In a forked worker holding the parent's model: ``work(*job)`` in a process forked for
    it, which codes with that model in place (its pages copied as they are written: ~0.2 s of
    CPU at ``cm -6``, where copying the whole state costs ~1 s a piece); the result, or the
    error, comes back pickled through a pipe.  A signal that ends that process ends this
    worker too, so that the pool reports it as any worker's death."""
    import pickle

    worker = os.getpid()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover (a child; its result is what the tests check)
        code = 1
        try:
            os.close(read)
            _worker_init(worker)
            _INHERITED["in_place"] = True
            try:
                result = (True, work(*job))
            except Exception as error:
                result = (False, error)
            try:
                data = pickle.dumps(result, protocol=5)
            except Exception:
                data = pickle.dumps((False, SeqzipError(str(result[1]))), protocol=5)
            with os.fdopen(write, "wb") as out:
                out.write(data)
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as source:
        data = source.read()
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        os.kill(worker, os.WTERMSIG(status))
    if not data:
        raise WorkerError(f"a process coding a piece ended with status {status} before its "
                          "piece was done")
    ok, value = pickle.loads(data)
    if ok:
        return value
    raise value


class LocalEngine:
    """Worker processes on this machine (:func:`_pool`).  Pieces that start warm take the
    prefix's model by inheritance when the workers are forked (each worker holds the parent's
    model, shared until written, and codes each piece with it in place in a process forked
    for that piece: :func:`_forked_job`) and as bytes otherwise."""

    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._inherit = False

    def __enter__(self) -> "LocalEngine":
        return self

    def __exit__(self, *exc: Any) -> None:
        _INHERITED.clear()

    def warm(self, model: Model) -> bytes | None:
        """What a piece needs to start from ``model``'s state (see :func:`warm_model`)."""
        self._inherit = _forks()
        if self._inherit:
            _INHERITED["model"] = model
            return None
        return state_bytes(model)

    def map(self, work: Callable, jobs: Any) -> Any:
        """``work(*job)`` for each job, at most ``processes`` + 1 in flight; yields the
        results in order.  Closing the generator (or a failure) cancels the pieces not
        started and collects the workers once they finish the ones they hold; a signal ends
        them at once.

        Raises:
            WorkerError: a worker died (the others are ended; nothing waits for ever).
        """
        from concurrent.futures.process import BrokenProcessPool

        pending: collections.deque = collections.deque()
        jobs = iter(jobs)
        pool = _pool(self.processes)
        workers: dict = {}  # pid -> process; a broken pool forgets its dead
        finished = False
        try:
            try:
                while True:
                    for job in jobs:  # (a submit to a pool broken since raises too)
                        pending.append(pool.submit(_forked_job, work, *job) if self._inherit
                                       else pool.submit(work, *job))
                        workers.update(getattr(pool, "_processes", None) or {})
                        if len(pending) > self.processes:
                            break
                    if not pending:
                        break
                    yield _wait(pending.popleft())
            except BrokenProcessPool:  # a worker died: the pool ended the others
                pool.shutdown(wait=True)  # ... and collects them: their exit codes
                raise WorkerError(_worker_death(workers)) from None
            finished = True
        finally:
            ending = sys.exc_info()[1]  # a signal (KeyboardInterrupt, the CLI's Interrupted)?
            _end_pool(pool, workers, wait=finished,
                      kill=ending is not None and not isinstance(ending, (Exception,
                                                                          GeneratorExit)))
            _INHERITED.clear()
            self._inherit = False


def compress_warm(src: IO[bytes], dst: IO[bytes], lengths: list[int], engine: Any,
                  first: Callable[[bytes], tuple[bytes, Model]], work: Callable[..., bytes],
                  args: tuple, progress: Progress | None) -> int:
    """Write a warm piece set of the next ``sum(lengths)`` bytes of ``src``: the index, piece
    0 coded here by ``first(data) -> (stream, model after it)``, then the other pieces coded
    by ``work(data, start, *args)`` on ``engine``, ``start`` being what
    ``engine.warm(model)`` gives; return the bytes written.

    Raises:
        SeqzipError: the input changed while it was being compressed.
    """
    written = dst.write(PieceSet(WARM, tuple(lengths)).pack()) or 0
    prefix = _read_exact(src, lengths[0])
    stream, model = first(prefix)
    written += dst.write(stream) or 0
    if progress:
        progress(len(prefix))
    start = engine.warm(model)

    def jobs():
        for n in lengths[1:]:
            chunk = _read_exact(src, n)
            if len(chunk) < n:
                raise SeqzipError("input changed while it was being compressed")
            yield (chunk, start, *args)

    with contextlib.closing(engine.map(work, jobs())) as streams:  # a failure ends the pool
        for n, stream in zip(lengths[1:], streams):
            written += dst.write(stream) or 0
            if progress:
                progress(n)
    model.close()
    if src.read(1):
        raise SeqzipError("input changed while it was being compressed")
    return written


def decompress_warm(src: IO[bytes], dst: IO[bytes], spans: list[StreamSpan], engine: Any,
                    first: Callable[[bytes], tuple[bytes, Model]], work: Callable[..., bytes],
                    args: tuple, progress: Progress | None) -> int:
    """Decode the pieces ``spans`` of one warm piece set: piece 0 here by ``first(data) ->
    (output, model after it)``, the others by ``work(data, start, *args)`` on ``engine``;
    write the outputs to ``dst`` in order and return the bytes written."""
    src.seek(spans[0].start)
    output, model = first(_read_exact(src, spans[0].end - spans[0].start), *args)
    written = dst.write(output) or 0
    if progress:
        progress(len(output))
    start = engine.warm(model) if model is not None else b""

    with contextlib.closing(engine.map(work, _span_jobs(src, spans[1:], (start, *args)))
                            ) as outputs:
        for output in outputs:
            written += dst.write(output) or 0
            if progress:
                progress(len(output))
    if model is not None:
        model.close()
    return written


def compress_first(data: bytes, name: str, config: Any, seed: int, frame_size: int,
                   alphabet: bytes) -> tuple[bytes, Model]:
    """Piece 0 of a warm piece set: its stream, and the model in its state after it."""
    header = piece_header(spec_by_name(name), config, seed, frame_size, alphabet, data)
    model = model_for_header(header, sized=False)  # the later pieces take its state
    return encode_piece(header, data, model), model


def compress_warm_piece(data: bytes, start: bytes | None, name: str, config: Any, seed: int,
                        frame_size: int, alphabet: bytes) -> bytes:
    """A later piece of a warm piece set, coded from the prefix's state (``start``: see
    :func:`warm_model`)."""
    header = piece_header(spec_by_name(name), config, seed, frame_size, alphabet, data)
    model = warm_model(header, start)
    try:
        return encode_piece(header, data, model)
    finally:
        model.close()


def decompress_spans(src: IO[bytes], dst: IO[bytes], spans: list[StreamSpan], engine: Any,
                     first: Callable, works: tuple[Callable, Callable], args: tuple,
                     progress: Progress | None) -> int:
    """Decode the streams ``spans`` of ``src`` on ``engine``, writing their outputs to
    ``dst`` in order; return the bytes written.  A piece set's pieces go through
    :func:`decompress_warm` (``first``, ``works[0]``), plain streams through
    ``works[1](data, *args)`` side by side."""
    written, i = 0, 0
    while i < len(spans):
        if spans[i].piece is not None:
            j = i + len(spans[i].piece[1].lengths)
            written += decompress_warm(src, dst, spans[i:j], engine, first, works[0], args,
                                       progress)
        else:
            j = i
            while j < len(spans) and spans[j].piece is None:
                j += 1
            with contextlib.closing(engine.map(works[1], _span_jobs(src, spans[i:j], args))
                                    ) as outputs:
                for output in outputs:
                    written += dst.write(output) or 0
                    if progress:
                        progress(len(output))
        i = j
    return written


def _span_jobs(src: IO[bytes], spans: list[StreamSpan], args: tuple) -> Any:
    for span in spans:
        src.seek(span.start)
        yield (_read_exact(src, span.end - span.start), *args)


def compress_whole(data: bytes, name: str, config: Any, seed: int, frame_size: int) -> bytes:
    """One stream of all of ``data`` (a whole input as one task)."""
    out = io.BytesIO()
    compress_stream(io.BytesIO(data), out, spec_by_name(name), config, seed, frame_size)
    return out.getvalue()
