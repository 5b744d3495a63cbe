"""The fuzz target shared by the test suite (a short seeded run) and ``benchmarks/fuzz.py`` (long
runs under atheris, or under this module's own mutator where atheris is missing).

``check(data)`` feeds one input to every decoding entry point: ``decompress()``, a
``SeqzipDecompressor`` fed in pieces, ``open().read()`` and the header parser.  Each must give
the same bytes or a ``SeqzipError``; any other exception is a defect, and so is a decoded output
that is neither a seed's data nor what seqzip itself writes for that output (a "silent wrong
output": a damaged stream accepted as something else).

``mutate(data, rng)`` makes the inputs: byte and bit flips, insertions, deletions, cuts,
duplicated and spliced pieces, changed header fields; half of the time it then repairs the
header and frame CRCs, so that the mutation reaches the model and the block checks instead of
stopping at a checksum.

    >>> seeds = seed_streams(small=True)
    >>> check(seeds[0][0]) == seeds[0][1]
    True
"""
from __future__ import annotations

import io
import random
import struct
import zlib

import seqzip
from seqzip import container
from seqzip.api import config_for_header, config_with, spec_for_header
from seqzip.errors import SeqzipError
from seqzip.models.base import read_varint

# Small limits keep one execution cheap; they are limits a user could set, so hitting one is a
# correct outcome (a LimitError), not a finding.
LIMITS = dict(max_length=1 << 20, max_memory=1 << 30)

_SEED_DATA = [
    b"",
    b"a",
    b"abracadabra " * 30,
    bytes(range(256)),
    b"The quick brown fox jumps over the lazy dog. " * 12,
    bytes([0, 1, 0, 1, 1, 0, 0, 0, 1, 1] * 40),
]


def seed_streams(small: bool = False) -> list[tuple[bytes, bytes]]:
    """(stream, data) pairs: every model at a fast level, frames of 100 symbols (several
    frames and blocks per stream), a concatenation, and the old formats' golden streams."""
    models = [("order2", 1), ("ctw", 1), ("cm", 1)] if small else \
        [("order2", 1), ("ctw", 1), ("cm", 1), ("glnn", 1), ("mlstm", 1), ("cm", 6)]
    out = []
    for i, data in enumerate(_SEED_DATA):
        model, level = models[i % len(models)]
        stream = io.BytesIO()
        seqzip.compress_file(io.BytesIO(data), stream, model=model, level=level,
                             frame_size=100 if i % 2 else container.DEFAULT_FRAME)
        out.append((stream.getvalue(), data))
    out.append((out[2][0] + out[3][0], _SEED_DATA[2] + _SEED_DATA[3]))
    # a case-folded text (seqzip.textcase): escapes in the frames, their count in the header
    folded = b"The BBC said: OK. Then NASA and the Quick Fox ran. " * 6
    stream = io.BytesIO()
    seqzip.compress_file(io.BytesIO(folded), stream, frame_size=100,
                         config=config_with("cm", 1, fold_case=1))
    out.append((stream.getvalue(), folded))
    return out


def _fix_crcs(data: bytes) -> bytes:
    """Recompute the header CRC and every frame CRC that can be found (best effort)."""
    buf = bytearray(data)
    if len(buf) < 8 or bytes(buf[:4]) != container.MAGIC:
        return data
    if buf[4] >= container.COMPACT:
        return _fix_compact_checks(buf)
    config_len = struct.unpack_from("<H", buf, 6)[0]
    end = 8 + config_len + 56
    if len(buf) < end + 4:
        return data
    struct.pack_into("<I", buf, end, zlib.crc32(bytes(buf[:end])))
    try:
        header, offset = container.parse_header(bytes(buf))
    except (SeqzipError, container.NeedMoreData):
        return bytes(buf)
    done = 0
    while done < header.length and offset + 12 <= len(buf):
        n, payload_len = struct.unpack_from("<II", buf, offset)
        size = container.check_bytes(header.version, n) + payload_len
        body = bytes(buf[offset + 12:offset + 12 + size])
        struct.pack_into("<I", buf, offset + 8, zlib.crc32(body, zlib.crc32(buf[offset:offset + 8])))
        offset += 12 + size
        done += max(n, 1)
    return bytes(buf)


def _fix_compact_checks(buf: bytearray) -> bytes:
    """_fix_crcs for formats 6 and 7: the header check at the first end that makes the header
    parse, then each frame's check."""
    for end in range(8, min(len(buf) - 1, 200)):
        trial = bytearray(buf)
        struct.pack_into("<H", trial, end, zlib.crc32(bytes(trial[:end])) & 0xFFFF)
        try:
            header, offset = container.parse_header(bytes(trial))
        except (SeqzipError, container.NeedMoreData):
            continue
        if offset == end + 2:
            buf = trial
            break
    else:
        return bytes(buf)
    done = 0
    while done < header.length:
        n = container.next_frame_symbols(header, done)
        try:
            words, at = read_varint(buf, offset)
        except ValueError:
            break
        end = at + 2 + container.check_bytes(header.version, n) + 4 * words
        if end > len(buf):
            break
        body = bytes(buf[at + 2:end])
        struct.pack_into("<H", buf, at, zlib.crc32(body, zlib.crc32(bytes(buf[offset:at])))
                         & 0xFFFF)
        offset, done = end, done + n
    return bytes(buf)


def mutate(data: bytes, rng: random.Random, others: list[bytes] = ()) -> bytes:
    """One to four random edits of ``data`` (see the module docstring)."""
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(9)
        at = rng.randrange(len(buf) + 1)
        if kind == 0 and buf:  # flip a bit
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        elif kind == 1 and buf:  # replace a byte
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        elif kind == 2:  # insert bytes
            buf[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif kind == 3 and buf:  # delete a run
            del buf[at:at + rng.randint(1, 16)]
        elif kind == 4:  # cut the end
            del buf[at:]
        elif kind == 5 and buf:  # duplicate a piece
            j = rng.randrange(len(buf))
            buf[at:at] = buf[j:j + rng.randint(1, 64)]
        elif kind == 6 and others:  # splice another stream in
            other = rng.choice(others)
            j = rng.randrange(len(other) + 1)
            buf[at:] = other[j:]
        elif kind == 7 and len(buf) > 16:  # an interesting integer in a header field
            value = rng.choice([0, 1, 2, 255, 256, 1023, 1024, 1025, 2**16, 2**24, 2**31,
                                2**32 - 1])
            width = rng.choice([1, 2, 4, 8])
            i = rng.randrange(4, max(5, min(len(buf), 120) - width))
            buf[i:i + width] = value.to_bytes(8, "little")[:width]
        elif kind == 8 and buf:  # a config byte: another level or family
            i = rng.choice([5, 8]) if len(buf) > 8 else 0
            buf[i] = rng.randrange(12)
    out = bytes(buf)
    return _fix_crcs(out) if rng.random() < 0.5 else out


def _canonical(stream: bytes, output: bytes) -> bool:
    """True when ``stream`` is exactly what seqzip writes for ``output`` with the settings of
    its header (so decoding it to ``output`` is right, not a damaged stream accepted)."""
    header, _ = container.parse_header(stream)
    if header.version < container.TERSE or header.version in container.WITH_DICTIONARY:
        # not what it writes (a terse header of any band without a dictionary)
        return False
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(output), out, model=spec_for_header(header).name,
                         config=config_for_header(header), seed=header.seed,
                         frame_size=header.frame_size)
    return out.getvalue() == stream


class Finding(AssertionError):
    """An input that broke a promise: its kind and the input, to keep as a regression."""

    def __init__(self, kind: str, data: bytes, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail} (input {data[:64].hex()}...)")
        self.kind, self.data = kind, data


def _decode_all_ways(data: bytes) -> list:
    results = []
    for way in ("decompress", "pieces", "open"):
        try:
            if way == "decompress":
                out = seqzip.decompress(data, **LIMITS)
            elif way == "pieces":
                d = seqzip.SeqzipDecompressor(limits=seqzip.Limits(**LIMITS))
                out, i = b"", 0
                while i < len(data) and not d.eof:
                    out += d.decompress(data[i:i + 37])
                    i += 37
                if not d.eof:
                    raise seqzip.TruncatedError("ended inside the stream")
                rest = d.unused_data + data[i:]
                if rest:  # a decompressor decodes one stream: the rest as decompress() does
                    out += seqzip.decompress(rest, max_length=LIMITS["max_length"] - len(out),
                                             max_memory=LIMITS["max_memory"])
            else:
                with seqzip.open(io.BytesIO(data), **LIMITS) as f:
                    out = f.read()
                if not data:
                    raise seqzip.TruncatedError("empty")
            results.append(out)
        except SeqzipError as exc:
            results.append(type(exc))
        except MemoryError:
            results.append(MemoryError)
        except Exception as exc:  # noqa: BLE001 - the point: anything else is a finding
            raise Finding("untyped exception", data, f"{way}: {type(exc).__name__}: {exc}")
    return results


def check(data: bytes, known: dict[bytes, bytes] | None = None) -> bytes | type:
    """Decode ``data`` every way; raise :class:`Finding` on a broken promise; return the output
    (or the error class)."""
    try:
        container.parse_header(data)
    except (SeqzipError, container.NeedMoreData):
        pass
    except Exception as exc:  # noqa: BLE001
        raise Finding("untyped exception", data, f"parse_header: {type(exc).__name__}: {exc}")
    results = _decode_all_ways(data)
    outputs = [r for r in results if isinstance(r, bytes)]
    if outputs and any(o != outputs[0] for o in outputs):
        raise Finding("entry points disagree", data, repr([type(r) for r in results]))
    if outputs and len(outputs) != len(results) and not data == b"":
        # One entry point decoded it and another refused it.
        raise Finding("entry points disagree", data, repr(results[:3]))
    if not outputs:
        return results[0]
    output = outputs[0]
    if known is not None and known.get(data, output) != output:
        raise Finding("silent wrong output", data, "a seed decoded to other data")
    if known is not None and data not in known and output not in known.values():
        if not _single_stream_canonical(data, output):
            raise Finding("silent wrong output", data, "accepted a stream seqzip would not write")
    return output


def _single_stream_canonical(data: bytes, output: bytes) -> bool:
    try:
        header, _ = container.parse_header(data)
    except (SeqzipError, container.NeedMoreData):
        return False
    if len(output) != header.length:  # several streams: check each
        spans = seqzip.api.stream_spans(io.BytesIO(data))
        return all(_canonical(data[s.start:s.end], seqzip.decompress(data[s.start:s.end]))
                   for s in spans)
    return _canonical(data, output)


def run(executions: int, seed: int = 0, small: bool = True) -> dict:
    """``executions`` mutated inputs through :func:`check`; returns the counts by outcome."""
    seeds = seed_streams(small)
    known = {stream: data for stream, data in seeds}
    streams = [stream for stream, _ in seeds]
    rng = random.Random(seed)
    counts: dict[str, int] = {}
    for _ in range(executions):
        result = check(mutate(rng.choice(streams), rng, streams), known)
        name = "decoded" if isinstance(result, bytes) else result.__name__
        counts[name] = counts.get(name, 0) + 1
    return counts
