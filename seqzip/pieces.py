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
import io
import os
import signal
from typing import IO, Any, Callable

from .container import (FRAME_HEAD, NeedMoreData, frame_size_on_disk, next_frame_symbols,
                        parse_frame_head, parse_header)
from .errors import SeqzipError, TruncatedError
from .session import CHUNK, Progress, _read_exact

# Independent pieces (``processes`` > 1): at least MIN_PIECE bytes, so that a model restart is
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
    """A pool of worker processes that end with their parent.

    A process with one thread (the command line) forks its workers: each asks the kernel to
    kill it when its parent dies (Linux), so nothing runs on after a signal.  A process with
    threads takes its workers from a fork server instead (a fresh interpreter that imported
    this module), since forking a process with threads risks deadlocks.
    """
    import multiprocessing
    import threading

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
    return context.Pool(processes, initializer=_worker_init, initargs=(parent,))


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


def _wait(result) -> Any:
    """``result.get()`` in short waits, so that signal handlers, where installed, run promptly."""
    while not result.ready():
        result.wait(0.2)
    return result.get()



class StreamSpan(collections.namedtuple("StreamSpan", "start end header")):
    """Where one stream lies in a file (``start``, ``end``: byte offsets) and its header.

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

        >>> from seqzip.api import compress
        >>> spans = stream_spans(io.BytesIO(compress(b"ab" * 50) + compress(b"")))
        >>> [(s.length, s.start) for s in spans][1][0], spans[0].end == spans[1].start
        (0, True)
    """
    spans = []
    origin = src.tell()
    size = src.seek(0, os.SEEK_END)
    src.seek(origin)
    while True:
        start = src.tell()
        head = src.read(CHUNK)
        if not head:
            break
        while True:
            try:
                header, used = parse_header(head)
                break
            except NeedMoreData:
                more = src.read(CHUNK)
                if not more:
                    raise TruncatedError("compressed data ended before the end of the stream"
                                         ) from None
                head += more
        position, done, frames = start + used, 0, 0
        while done < header.length:
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
        spans.append(StreamSpan(start, position, header))
    if not spans:
        raise TruncatedError("empty input: not a seqzip stream")
    return spans




def compress_pieces(src: IO[bytes], dst: IO[bytes], length: int, piece: int, processes: int,
                    work: Callable[..., bytes], args: tuple, progress: Progress | None) -> int:
    """Cut the next ``length`` bytes of ``src`` into pieces of ``piece`` bytes, code each by
    ``work(chunk, *args)`` on a pool of ``processes`` workers, and write the results to
    ``dst`` in order; return the bytes written.

    Raises:
        SeqzipError: the input changed while it was being compressed.
    """
    written, offset = 0, 0
    pending: collections.deque = collections.deque()
    with _pool(processes) as pool:  # leaving the block terminates the workers
        while offset < length or pending:
            while offset < length and len(pending) <= processes:
                chunk = _read_exact(src, min(piece, length - offset))
                if not chunk:
                    raise SeqzipError("input changed while it was being compressed")
                offset += len(chunk)
                pending.append((len(chunk), pool.apply_async(work, (chunk, *args))))
            n, result = pending.popleft()
            written += dst.write(_wait(result)) or 0
            if progress:
                progress(n)
    if src.read(1):
        raise SeqzipError("input changed while it was being compressed")
    return written


def decompress_pieces(src: IO[bytes], dst: IO[bytes], spans: list[StreamSpan], processes: int,
                      progress: Progress | None, work: Callable[..., bytes],
                      kwargs: dict[str, Any]) -> int:
    """Decode the streams ``spans`` of ``src`` by ``work(data, **kwargs)`` on a pool of
    ``processes`` workers, writing their outputs to ``dst`` in order; return bytes written."""
    written = 0
    queue = collections.deque(spans)
    pending: collections.deque = collections.deque()
    with _pool(processes) as pool:  # leaving the block terminates the workers
        while queue or pending:
            while queue and len(pending) <= processes:
                span = queue.popleft()
                src.seek(span.start)
                data = _read_exact(src, span.end - span.start)
                pending.append(pool.apply_async(work, (data,), kwargs))
            data = _wait(pending.popleft())
            written += dst.write(data) or 0
            if progress:
                progress(len(data))
    return written
