"""Piece sets: one input coded as several streams that know their whole (what ``-T N``
writes).

An index (little-endian), then its pieces, each a stream (:mod:`seqzip.container`)::

    magic        4  b"\\xb7SQP"
    version      1  PIECES_VERSION
    relation     1  WARM: piece 0 starts from a fresh model; every later piece starts from
                    the model's state after piece 0 (the shared prefix), so its header names
                    the same model, config, seed, frame size and alphabet as piece 0's
    n_pieces     4  pieces that follow, 2 ... MAX_PIECES
    total        8  bytes of original data, the sum of the pieces' lengths
    lengths    8*n  original bytes of each piece, in order (each stream's header repeats it)
    index_crc    4  CRC-32 of every index byte before it

A decoder reads all n pieces: a set cut at a piece boundary, or missing a piece, is
truncated, never a shorter output.  Sets and plain streams concatenate.

    >>> s = PieceSet(WARM, (5, 3))
    >>> parse_piece_set(s.pack()) == (s, len(s.pack()))
    True
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

from .container import MAGIC, MAX_LENGTH, NeedMoreData, StreamHeader, checked_version
from .errors import CorruptError, NotSeqzipError, UnsupportedVersionError

_CRC = struct.Struct("<I")

PIECES_MAGIC = b"\xb7SQP"
PIECES_VERSION = 1
WARM = 1  # the only relation of version 1
MAX_PIECES = 1 << 20
_SET_FIXED = struct.Struct("<4sBBIQ")  # magic, version, relation, n_pieces, total


@dataclass(frozen=True)
class PieceSet:
    """The index of a piece set: how its pieces relate and their original lengths.

        >>> s = PieceSet(WARM, (5, 3))
        >>> parse_piece_set(s.pack()) == (s, len(s.pack())), s.total
        (True, 8)
    """
    relation: int
    lengths: tuple[int, ...]

    @property
    def total(self) -> int:
        return sum(self.lengths)

    def pack(self) -> bytes:
        body = _SET_FIXED.pack(PIECES_MAGIC, PIECES_VERSION, self.relation, len(self.lengths),
                               self.total) + struct.pack(f"<{len(self.lengths)}Q", *self.lengths)
        return body + _CRC.pack(zlib.crc32(body))


def starts_piece_set(buf: bytes | bytearray, offset: int = 0) -> bool:
    """Whether ``buf[offset:]`` starts with a piece set's magic.

    Raises:
        NeedMoreData: too few bytes to tell (a prefix of both magics).

        >>> starts_piece_set(PieceSet(WARM, (1, 2)).pack()), starts_piece_set(MAGIC + b"...")
        (True, False)
    """
    start = bytes(buf[offset:offset + len(PIECES_MAGIC)])
    if len(start) < len(PIECES_MAGIC) and PIECES_MAGIC.startswith(start) \
            and MAGIC.startswith(start):
        raise NeedMoreData
    return start == PIECES_MAGIC


def parse_piece_set(buf: bytes | bytearray, offset: int = 0) -> tuple[PieceSet, int]:
    """Parse a piece set's index at ``buf[offset:]``; return it and the offset just past it.

    Raises:
        NeedMoreData: ``buf`` ends inside the index.
        NotSeqzipError: not a piece set.
        UnsupportedVersionError: an index version or relation this build does not read.
        CorruptError: index checksum mismatch or an impossible field.

        >>> packed = PieceSet(WARM, (7, 5)).pack()
        >>> parse_piece_set(b"xx" + packed, 2)[0].lengths
        (7, 5)
    """
    if not starts_piece_set(buf, offset):
        raise NotSeqzipError("not a seqzip piece set (bad magic bytes)")
    if len(buf) - offset < _SET_FIXED.size:
        raise NeedMoreData
    _, version, relation, count, total = _SET_FIXED.unpack_from(buf, offset)
    if version != PIECES_VERSION or relation != WARM:
        raise UnsupportedVersionError(f"piece set has version {version}, relation {relation};"
                                      f" this seqzip reads version {PIECES_VERSION}")
    if not 2 <= count <= MAX_PIECES or total > MAX_LENGTH:
        raise CorruptError(f"piece set declares {count} pieces, {total} bytes (corrupt index)")
    end = offset + _SET_FIXED.size + 8 * count
    if len(buf) < end + _CRC.size:
        raise NeedMoreData
    (crc,) = _CRC.unpack_from(buf, end)
    if zlib.crc32(bytes(buf[offset:end])) != crc:
        raise CorruptError("piece set index checksum mismatch (corrupt index)")
    lengths = struct.unpack_from(f"<{count}Q", buf, offset + _SET_FIXED.size)
    if sum(lengths) != total:
        raise CorruptError("piece set lengths do not add up to its total (corrupt index)")
    return PieceSet(relation, lengths), end + _CRC.size


def check_piece(pieces: PieceSet, index: int, header: StreamHeader,
                first: StreamHeader | None) -> None:
    """Check that ``header`` can be piece ``index`` of ``pieces`` (``first``: piece 0's).

    Raises:
        CorruptError: it cannot.

        >>> first = StreamHeader(1, b"\\x05", seed=0, length=7, frame_size=8, alphabet=b"ab",
        ...                      crc32=0)
        >>> check_piece(PieceSet(WARM, (7, 7)), 1, first, first)  # same model: fine
        >>> check_piece(PieceSet(WARM, (7, 5)), 1, first, first)
        Traceback (most recent call last):
        ...
        seqzip.errors.CorruptError: piece 1 holds 7 bytes, its index says 5 (corrupt piece set)
    """
    if header.length != pieces.lengths[index]:
        raise CorruptError(f"piece {index} holds {header.length} bytes, its index says "
                           f"{pieces.lengths[index]} (corrupt piece set)")
    if index and (first is None or header.dictionary or first.dictionary or
                  (header.model_id, header.config, header.seed, header.frame_size,
                   header.alphabet, checked_version(header.version)) !=
                  (first.model_id, first.config, first.seed, first.frame_size,
                   first.alphabet, checked_version(first.version))):
        raise CorruptError(f"piece {index} names another model than piece 0 (corrupt piece "
                           "set)")
