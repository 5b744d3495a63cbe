"""The library interface, shaped like ``bz2`` / ``lzma``.

    >>> import seqzip
    >>> data = b"abracadabra " * 50
    >>> packed = seqzip.compress(data, model="order2", level=6)
    >>> assert seqzip.decompress(packed) == data
    >>> assert seqzip.decompress(packed + packed) == data + data  # concatenated streams

:func:`compress` and :func:`decompress` are built from the incremental objects
(:mod:`seqzip.incremental`), as ``bz2``'s are; the files are in :mod:`seqzip.files`.  A
stream's header holds the alphabet, the length and a checksum of the whole input, so
:func:`compress_file` reads its input twice: a seekable input is scanned and rewound, anything
else is first spooled to a temporary file (memory stays bounded; disk holds the copy).

Every entry point that writes a stream takes ``level`` (or ``bz2``'s ``compresslevel``),
``model``, ``seed`` and ``dictionary`` (a model file to start from); with a dictionary the
model, config and seed are the file's, and any of them given with another value is refused
(``ValueError``; see :func:`seqzip.session.stream_settings`).  Every entry point that reads
one takes ``dictionary`` too.  Data errors are ``OSError`` subclasses (:mod:`seqzip.errors`).
"""
from __future__ import annotations

import dataclasses
import io
import os
from typing import IO, Any

from .container import (DEFAULT_FRAME, DEFAULT_MAX_LENGTH, DEFAULT_MAX_MEMORY,
                        check_one_symbol_length)
from .errors import CorruptError, NotSeqzipError, TruncatedError
from .files import SeqzipFile, _DecompressReader, open
from .incremental import SeqzipCompressor, SeqzipDecompressor
from .decoder import decompress_cold, decompress_first, decompress_piece
from .models import DEFAULT_LEVEL
from .pieces import (MAX_PIECE, MIN_PIECE, LocalEngine, StreamSpan, compress_first,
                     compress_warm, compress_warm_piece, compress_whole, decompress_spans,
                     piece_size, stream_spans, warm_layout)
from .pieceset import PIECES_MAGIC
from .predictor import Predictor
from .session import (CHUNK, Limits, Progress, _check_frame_size, _check_processes,
                      _scan_profile, _seekable, coding_config, config_for_header,
                      load_dictionary, model_for_header, spec_for_header, spooled,
                      stream_settings, symbols_of)

__all__ = ["compress", "decompress", "open", "compress_file", "decompress_file",
           "SeqzipCompressor", "SeqzipDecompressor", "SeqzipFile", "Limits", "StreamSpan",
           "stream_spans", "piece_size", "symbols_of", "spec_for_header", "config_for_header",
           "model_for_header", "load_dictionary", "MIN_PIECE", "MAX_PIECE", "PIECES_MAGIC"]

Dictionary = Predictor | str | os.PathLike | None


def compress_file(src: IO[bytes], dst: IO[bytes], *, model: str | None = None,
                  level: int | None = None, seed: int | None = None,
                  frame_size: int = DEFAULT_FRAME, config: Any = None,
                  progress: Progress | None = None, processes: int = 1,
                  dictionary: Dictionary = None, compresslevel: int | None = None,
                  scheduler: Any = None) -> int:
    """Compress everything ``src`` yields into one stream written to ``dst``.

    Memory holds one frame of input and its payload.  A non-seekable ``src`` is spooled to a
    temporary file first.  ``config`` (a config dataclass of ``model``) overrides ``level``
    (``compresslevel``: ``bz2``'s name for it).  ``progress(n)`` is called with the number of
    input bytes coded after each frame.

    With ``processes`` > 1 the input is written as a piece set: a prefix (1/8 of it, at most
    1 MiB) coded here, then pieces of 64 KiB to 8 MiB coded by that many worker processes,
    each starting from the model's state after the prefix (see README, ``-T``).  With
    ``scheduler`` (a Dask scheduler's address or a ``distributed.Client``) the pieces are
    Dask tasks on that cluster (``processes``: pieces side by side; 1: one per worker
    thread), and an input too small to cut is one task.  The output is the same whatever
    ran it.

    With ``dictionary`` (a model file's path, or a :class:`~seqzip.predictor.Predictor`), the
    model is that file's, and coding starts from its trained state and keeps adapting;
    ``model``, ``level``, ``config`` and ``seed`` are the file's (leave them unset, or give
    the file's: another value is a ``ValueError``), and the input is one stream
    (``processes`` is not used).  The header names the file by its hash: decoding needs the
    same file.

    Returns:
        The number of bytes written.
    Raises:
        ValueError: unknown model, bad level, seed, frame size or process count; settings
            contradicting the dictionary; a model file that cannot be read or an input byte
            outside its alphabet.
        SeqzipError: the input changed while it was being compressed.

        >>> src, dst = io.BytesIO(b"to be or not to be " * 20), io.BytesIO()
        >>> written = compress_file(src, dst, model="ctw", level=2)
        >>> written == len(dst.getvalue()), decompress(dst.getvalue())[:9]
        (True, b'to be or ')
    """
    settings = stream_settings(model, level, seed, config=config, compresslevel=compresslevel,
                               dictionary=dictionary)
    _check_frame_size(frame_size)
    _check_processes(processes)
    if not _seekable(src):
        with spooled(src) as spool:
            return compress_file(spool, dst, model=settings.model, seed=settings.seed,
                                 frame_size=frame_size, config=settings.config,
                                 progress=progress, processes=processes,
                                 dictionary=settings.dictionary, scheduler=scheduler)
    if (processes > 1 or scheduler is not None) and settings.dictionary is None:
        start = src.tell()
        length, profile, _ = _scan_profile(src)
        alphabet = profile.alphabet
        src.seek(start)
        # the variant for this data chosen once, from the whole input, for every piece
        config = coding_config(settings.config, alphabet, profile)
        with _engine(processes, scheduler) as engine:
            lengths = warm_layout(length, engine.processes)
            args = (settings.model, config, settings.seed, frame_size)
            if len(lengths) > 1:
                return compress_warm(src, dst, lengths, engine,
                                     lambda d: compress_first(d, *args, alphabet),
                                     compress_warm_piece, (*args, alphabet), progress)
            if scheduler is not None:  # a small input: one stream, as one task
                return dst.write(next(engine.map(compress_whole, [(src.read(), *args)]))) or 0
    return settings.write(src, dst, frame_size, progress)


def _engine(processes: int, scheduler: Any) -> Any:
    """Where pieces run: a Dask cluster (``scheduler``: its address or a Client) or local
    worker processes."""
    if scheduler is not None:
        from .cluster import DaskEngine
        return DaskEngine(scheduler, processes)
    return LocalEngine(processes)


def compress(data: bytes, level: int | None = None, *, model: str | None = None,
             seed: int | None = None, dictionary: Dictionary = None,
             compresslevel: int | None = None) -> bytes:
    """Compress ``data`` into one seqzip stream (the level may be given by position, as with
    ``bz2.compress(data, 9)``, or as ``compresslevel=``).

    Built from a :class:`~seqzip.incremental.SeqzipCompressor` whose one block is the whole
    input (one stream: the best ratio).

    Args:
        data: bytes-like input.
        level, compresslevel: 1 (fast) ... 9 (strong); default 6.
        model: model family (``seqzip.models.MODELS``); default cm.
        seed: seed of the model's PRNG, stored in the header; default 0.
        dictionary: a model file (path or :class:`~seqzip.predictor.Predictor`) to start from
            (see :func:`compress_file`); decompress with the same one.
    Raises:
        ValueError: unknown model, bad level or seed, settings contradicting the dictionary
            (``compress(data, model="ctw", dictionary=a_cm_file)``).

        >>> from seqzip.predictor import Predictor
        >>> import random
        >>> words, r = b"the cat sat on a mat".split(), random.Random(1)
        >>> d = Predictor("order2", 6); _ = d.feed(b" ".join(r.choice(words) for _ in range(2000)))
        >>> text = b" ".join(r.choice(words) for _ in range(1000))
        >>> packed = compress(text, dictionary=d)
        >>> decompress(packed, dictionary=d) == text
        True
    """
    data = memoryview(data).cast("B")
    c = SeqzipCompressor(level, model=model, seed=seed, dictionary=dictionary,
                         compresslevel=compresslevel, block_size=max(len(data), 1))
    return c.compress(data) + c.flush()


def decompress(data: bytes, *, dictionary: Dictionary = None,
               max_length: int | None = DEFAULT_MAX_LENGTH,
               max_memory: int | None = DEFAULT_MAX_MEMORY) -> bytes:
    """Decompress ``data``: one or more concatenated seqzip streams (``dictionary``: the
    model file streams coded from one need; other streams ignore it).  Built from one
    :class:`~seqzip.incremental.SeqzipDecompressor` going from stream to stream.

    ``max_length`` bounds the decoded bytes and ``max_memory`` the memory of a stream's model
    (see :class:`Limits`; ``None``: no limit); streams asking for more are refused before
    anything is decoded.

    Raises:
        TruncatedError (also an EOFError and a ValueError): the data ends inside a stream.
        NotSeqzipError: not a seqzip stream.
        CorruptError: a damaged stream, or data that is not a stream after the last one.
        UnsupportedVersionError: see :mod:`seqzip.errors`.
        LimitError: a stream asks for more than the limits.
        DictionaryError: a stream needs a model file (``dictionary``) not given, or another.

        >>> decompress(compress(b"one ") + compress(b"two", model="order2"))
        b'one two'
    """
    d = SeqzipDecompressor(dictionary, Limits(max_length, max_memory))
    results, more = [], memoryview(data).cast("B")
    while True:
        try:
            results.append(d.decompress(more))
        except NotSeqzipError:
            if results:
                raise CorruptError("data after the end of the last stream is not a seqzip "
                                   "stream") from None
            raise
        if not d.eof:
            raise TruncatedError("compressed data ended before the end of the stream")
        more = b""
        if not d.next_stream():
            return b"".join(results)


def decompress_file(src: IO[bytes], dst: IO[bytes], progress: Progress | None = None, *,
                    processes: int = 1, scheduler: Any = None,
                    dictionary: Predictor | str | os.PathLike | None = None,
                    max_length: int | None = DEFAULT_MAX_LENGTH,
                    max_memory: int | None = DEFAULT_MAX_MEMORY) -> int:
    """Decompress all streams in ``src`` into ``dst``, a frame at a time; return bytes written.

    ``progress(n)`` is called with the number of bytes decoded.  With ``processes`` > 1 and a
    seekable ``src`` holding several streams or a piece set (as ``compress_file(...,
    processes=N)`` writes), they are decoded by that many worker processes (or, with
    ``scheduler``, as Dask tasks).  ``max_length`` and ``max_memory``: see :class:`Limits`.

    Raises:
        TruncatedError: ``src`` is empty or ends inside a stream.
        NotSeqzipError, UnsupportedVersionError, CorruptError: bad input.
        LimitError: a stream asks for more than the limits.
        DictionaryError: a stream needs a model file (``dictionary``) not given.

        >>> out = io.BytesIO()
        >>> decompress_file(io.BytesIO(compress(b"abc" * 50, model="order2")), out)
        150
    """
    _check_processes(processes)
    limits = Limits(max_length, max_memory)
    dictionary = load_dictionary(dictionary, max_memory)
    if (processes > 1 or scheduler is not None) and _seekable(src) and dictionary is None:
        start = src.tell()
        spans = stream_spans(src)
        src.seek(start)
        if (len(spans) > 1 or scheduler is not None) and all(s.length <= MAX_PIECE
                                                             for s in spans):
            before = 0
            for span in spans:
                limits.check_length(before, span.header)
                check_one_symbol_length(span.header, before, limits.max_length)
                before += span.length
            with _engine(processes, scheduler) as engine:
                return decompress_spans(src, dst, spans, engine, decompress_first,
                                        (decompress_piece, decompress_cold),
                                        (limits.max_memory,), progress)
    reader = _DecompressReader(src, dictionary, limits)
    written = 0
    while chunk := reader.read(CHUNK * 16):
        written += dst.write(chunk) or 0
        if progress:
            progress(len(chunk))
    if not reader.started:
        raise TruncatedError("empty input: not a seqzip stream")
    return written


def config_with(model: str, level: int = DEFAULT_LEVEL, **settings: Any) -> Any:
    """The config of ``model`` at ``level`` with some of its fields set (for ``config=`` of
    :func:`compress` and :func:`compress_file`), checked by the config itself.

        >>> config_with("lstm", 1, optimizer="riemannian").optimizer
        'riemannian'

    Raises:
        ValueError: an unknown model or level, a field the model's config does not have, or a
            value it refuses.
    """
    from .models import make_config

    config = make_config(model, level)
    unknown = sorted(set(settings) - {field.name for field in dataclasses.fields(config)})
    if unknown:
        raise ValueError(f"model {model} has no setting {', '.join(unknown)}")
    return dataclasses.replace(config, **settings)


def symbols_coded() -> int:
    """Symbols coded, decoded or scored by the models in this process so far: a counter that
    only grows, read while another thread codes to measure its progress and rate (the coding
    loop lets the interpreter go every few milliseconds).  Worker processes (``processes=``)
    count in their own.

        >>> before = symbols_coded()
        >>> _ = compress(b"abc" * 100, model="order2")
        >>> symbols_coded() - before
        300
    """
    from ._core import symbols_done

    return symbols_done()
