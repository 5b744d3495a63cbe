"""Reading .sqz headers and frame sizes without decoding (``seqzip info``).

    >>> import io, seqzip
    >>> report = describe_file(io.BytesIO(seqzip.compress(b"abcabcabc")), "x.sqz")
    >>> report["original_bytes"], report["streams"][0]["alphabet_size"]
    (9, 3)
    >>> report["streams"][0]["level"], report["streams"][0]["model"] == seqzip.DEFAULT_MODEL
    (6, True)
    >>> describe_file(io.BytesIO(seqzip.compress(b"abc", 2, model="order2")), "x")["levels"]
    ['1-3']

Ratios are shown as zstd shows them: original size / compressed size (3.5 means the file
shrank to 1/3.5 of its size).  The level is found by comparing the stream's config with the
config of each level of the model, which reads version-2 headers (config only) and version-3
ones (a preset is stored as the lowest level that gives it) alike: None when no level matches,
e.g. a config set through the library; several levels may share a config, shown as a range
such as "1-3".
"""
from __future__ import annotations

import dataclasses
from typing import IO, Any

from .api import config_for_header, spec_for_header
from .container import (NeedMoreData, StreamHeader, next_frame_symbols, parse_frame,
                        parse_header)
from .errors import TruncatedError
from .models import DEFAULT_LEVEL, levels_of_config
from .pieceset import check_piece, parse_piece_set, starts_piece_set

_READ = 1 << 16


class _Buffer:
    """Reads from ``src`` on demand so that a header or frame can be parsed whole."""

    def __init__(self, src: IO[bytes]) -> None:
        self.src, self.data, self.eof = src, bytearray(), False

    def more(self) -> None:
        chunk = self.src.read(_READ)
        if not chunk:
            self.eof = True
        self.data += chunk


def describe_file(src: IO[bytes], name: str) -> dict[str, Any]:
    """Header fields and sizes of every stream in ``src``, checking frame checksums.

    Raises:
        TruncatedError, NotSeqzipError, UnsupportedVersionError, CorruptError.

        >>> import io, seqzip
        >>> info = describe_file(io.BytesIO(seqzip.compress(b"abc" * 100, 3, model="order2")), "x")
        >>> info["original_bytes"], info["models"], info["levels"], info["streams"][0]["dictionary"]
        (300, ['order2'], ['1-3'], None)
        >>> info["streams"][0]["version"], info["streams"][0]["header_bytes"]  # 3 values: a list
        (72, 18)
        >>> info["streams"][0]["lean"]  # one frame of 300 symbols: lean (seqzip.container)
        True
    """
    buf = _Buffer(src)
    streams = []
    buf.more()
    if not buf.data:
        raise TruncatedError("empty input: not a seqzip stream")
    while buf.data:
        if _parse(buf, lambda data, _: starts_piece_set(data)):
            streams += _describe_piece_set(buf)
        else:
            streams.append(_describe_stream(buf))
        if not buf.data:
            buf.more()
    original = sum(s["length"] for s in streams)
    compressed = sum(s["compressed_bytes"] for s in streams)
    return {"file": name, "compressed_bytes": compressed, "original_bytes": original,
            "ratio": original / compressed if compressed else 0.0,
            "bits_per_character": 8 * compressed / original if original else 0.0,
            "frames": sum(s["frames"] for s in streams),
            "models": sorted({s["model"] for s in streams}),
            "levels": sorted({s["level_label"] for s in streams}),
            "streams": streams}


def levels_of(header: StreamHeader) -> list[int]:
    """Every level whose config is the one the stream's header holds (often one).

        >>> from seqzip.container import parse_header
        >>> import seqzip
        >>> levels_of(parse_header(seqzip.compress(b"ab", 6, model="order2"))[0])
        [5, 6]
    """
    spec, config = spec_for_header(header), config_for_header(header)
    return levels_of_config(spec.config_class, config)


def level_of(header: StreamHeader) -> int | None:
    """The level the stream was coded at (the default level, else the lowest, when several
    levels share its config), or None for a config no level gives.

        >>> from seqzip.container import parse_header
        >>> import seqzip
        >>> level_of(parse_header(seqzip.compress(b"ab", 2, model="ctw"))[0])
        2
    """
    matches = levels_of(header)
    if not matches:
        return None
    return DEFAULT_LEVEL if DEFAULT_LEVEL in matches else matches[0]


def level_label(levels: list[int]) -> str:
    """ "6", "1-3", or "custom" when no level gives the config.

        >>> level_label([6]), level_label([1, 2, 3]), level_label([])
        ('6', '1-3', 'custom')
    """
    if not levels:
        return "custom"
    return str(levels[0]) if len(levels) == 1 else f"{levels[0]}-{levels[-1]}"


def _parse(buf: _Buffer, parse, *args):
    while True:
        try:
            return parse(buf.data, 0, *args)
        except NeedMoreData:
            if buf.eof:
                raise TruncatedError("compressed data ended before the end of the stream")
            buf.more()


def _config_dict(header) -> dict[str, Any]:
    return dataclasses.asdict(config_for_header(header))


def _describe_piece_set(buf: _Buffer) -> list[dict[str, Any]]:
    """The pieces of a piece set (each with ``piece``: its index; piece 0's compressed bytes
    include the set's index)."""
    pieces, used = _parse(buf, parse_piece_set)
    del buf.data[:used]
    described, first = [], None
    for index in range(len(pieces.lengths)):
        if not buf.data:
            buf.more()
        if not buf.data:
            raise TruncatedError(f"piece set ended after {index} of its "
                                 f"{len(pieces.lengths)} pieces")
        header = _parse(buf, parse_header)[0]
        check_piece(pieces, index, header, first)
        first = first or header
        described.append(dict(_describe_stream(buf), piece=index))
    described[0]["compressed_bytes"] += used
    return described


def _describe_stream(buf: _Buffer) -> dict[str, Any]:
    header, used = _parse(buf, parse_header)
    del buf.data[:used]
    size, done, frames, header_bytes = used, 0, 0, used
    while done < header.coded:
        expected = next_frame_symbols(header, done)
        payload, _, used = _parse(buf, parse_frame, expected, frames, header.version)
        del buf.data[:used]
        size += used
        done += expected
        frames += 1
    levels = levels_of(header)
    return {"version": header.version, "header_bytes": header_bytes,
            "model": spec_for_header(header).name, "level": level_of(header),
            "level_label": level_label(levels),
            "config": _config_dict(header), "seed": header.seed,
            "length": header.length, "escapes": header.escapes, "lean": header.lean,
            "alphabet_size": len(header.alphabet),
            "frame_size": header.frame_size, "frames": frames, "crc32": header.crc32,
            "dictionary": header.dictionary.hex() or None,
            "compressed_bytes": size,
            "ratio": header.length / size,
            "bits_per_character": 8 * size / header.length if header.length else 0.0}
