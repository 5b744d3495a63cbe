"""One stream's session: from a header to the model that codes it, and the frames of one
stream written from an input.

The bz2-shaped faces (:mod:`seqzip.api`) and the pieces of parallel coding
(:mod:`seqzip.pieces`) are built on these: a header names the model family, its config, seed and
alphabet; :func:`model_for_header` builds that model (or takes a model file's state);
:func:`compress_stream` scans an input for its length, alphabet and checksum and writes one
stream frame by frame.

    >>> import io
    >>> from seqzip.models import make_config, spec_by_name
    >>> out = io.BytesIO()
    >>> n = compress_stream(io.BytesIO(b"abcabc"), out, spec_by_name("order2"),
    ...                     make_config("order2", 1), 0, DEFAULT_FRAME)
    >>> header, used = parse_header(out.getvalue())
    >>> header.length, header.alphabet, model_for_header(header).alphabet
    (6, b'abc', b'abc')
"""
from __future__ import annotations

import dataclasses
import io
import os
import pickle
import tempfile
import zlib
from typing import IO, Any, Callable, Iterator

import numpy as np

from . import coder
from .container import (DEFAULT_FRAME, DEFAULT_MAX_LENGTH, DEFAULT_MAX_MEMORY,
                        DICTIONARY_VERSION, MAX_FRAME, StreamHeader, frame_checks,
                        next_frame_symbols, pack_frame, parse_header)
from .errors import CorruptError, DictionaryError, LimitError, SeqzipError
from .models import (DEFAULT_LEVEL, DEFAULT_MODEL, LEVELS, Model, ModelSpec, check_level,
                     config_from_header, config_to_header, create, make_config, spec_by_id,
                     spec_by_name)
from .predictor import Predictor
from .textcase import ESCAPES, MAX_FOLDED, SAMPLE, Folder, coded_values, fold, foldable

CHUNK = 1 << 16
SPOOL_MEMORY = 8 << 20  # spooled input stays in memory up to this size, then goes to disk
Progress = Callable[[int], None]


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise ValueError(f"seed must be an integer in [0, 2**64), got {seed!r}")
    return seed


def _check_frame_size(frame_size: int) -> int:
    if isinstance(frame_size, bool) or not isinstance(frame_size, int) \
            or not 1 <= frame_size <= MAX_FRAME:
        raise ValueError(f"frame_size must be an integer in [1, {MAX_FRAME}], got {frame_size!r}")
    return frame_size


def spec_for_header(header: StreamHeader) -> ModelSpec:
    """The model family a stream header names.

    Raises:
        CorruptError: the header names no model this build knows.

        >>> from seqzip.api import compress
        >>> header, _ = parse_header(compress(b"hi", model="ctw"))
        >>> spec_for_header(header).name
        'ctw'
    """
    spec = spec_by_id(header.model_id)
    if spec is None:
        raise CorruptError(f"unknown model id {header.model_id} in header")
    return spec


def config_for_header(header: StreamHeader) -> Any:
    """The model config stored in a stream header.

    Raises:
        CorruptError: the stored config does not describe a valid model.

        >>> from seqzip.api import compress
        >>> header, _ = parse_header(compress(b"hi", 2, model="order2"))
        >>> config_for_header(header) == make_config("order2", 2)
        True
    """
    spec = spec_for_header(header)
    try:
        return config_from_header(spec.config_class, header.config, header.version)
    except (ValueError, TypeError) as exc:
        raise CorruptError(f"header holds an invalid {spec.name} config: {exc}") from None


def model_for_header(header: StreamHeader, dictionary: Predictor | None = None,
                     config: Any = None, sized: bool = True) -> Model | None:
    """Build the model a stream was coded with, from its header alone (None for empty data),
    or, for a stream coded from a model file, from that file's state (``dictionary``);
    ``config``, when given, is the header's already parsed.  ``sized``: the model is told the
    header's length (a cm config with ``fit`` sizes its table by it); False for every piece of
    a warm piece set, whose models take one another's state and so must have one shape
    whatever each piece's length.

    Raises:
        CorruptError: the stored config does not describe a valid model.
        DictionaryError: the stream needs a model file and ``dictionary`` is not that one.

        >>> from seqzip.api import compress
        >>> header, _ = parse_header(compress(b"hi", model="order2"))
        >>> model_for_header(header).alphabet
        b'hi'
    """
    if header.dictionary:
        return _dictionary_model(header, dictionary)
    if config is None:
        config = config_for_header(header)
    if not header.alphabet:
        return None
    return create(spec_for_header(header).name, config, alphabet=header.alphabet,
                  seed=header.seed, size_hint=header.coded if sized else 0)


def load_dictionary(dictionary: Predictor | str | os.PathLike | None,
                    max_memory: int | None = None) -> Predictor | None:
    """A model file (path) as a :class:`~seqzip.predictor.Predictor`; a Predictor or None as
    given.

    A Predictor loaded here from a path is the session's own: the first stream coded from it
    takes its model as it is (no copy: coding with a dictionary holds one model, not two) and
    later streams read the file again (:func:`dictionary_model`).

    ``max_memory``: a file whose model may need more is refused before it is built.

    Raises:
        ValueError: not a readable model file.
        LimitError: the file's model may need more than ``max_memory``.
        OSError: the file cannot be read.

        >>> d = Predictor("order2", 1)
        >>> load_dictionary(d) is d, load_dictionary(None)
        (True, None)
    """
    if dictionary is None or isinstance(dictionary, Predictor):
        return dictionary
    predictor = Predictor.load(dictionary, max_memory)
    predictor._session_path = os.fspath(dictionary)  # the session may take its model once
    return predictor


def dictionary_model(dictionary: Predictor) -> Model:
    """A model in the dictionary's state for one stream to code with (and change): a copy of
    a Predictor the caller gave; for one :func:`load_dictionary` read from a file, its own
    model the first time, then the file read again (same hash) each later time.

    Raises:
        DictionaryError: the file changed since it was first read.

        >>> d = Predictor("order2", 1, alphabet=b"ab")
        >>> dictionary_model(d) is not d._model
        True
    """
    path = getattr(dictionary, "_session_path", None)
    if path is None:
        return dictionary.copy()._model
    if not getattr(dictionary, "_session_taken", False):
        dictionary._session_taken = True
        return dictionary._model
    again = Predictor.load(path)
    if again.file_hash != dictionary.file_hash:
        raise DictionaryError(f"model file {path} changed while it was in use")
    return again._model


def _dictionary_model(header: StreamHeader, dictionary: Predictor | None) -> Model | None:
    wanted = header.dictionary.hex()
    if dictionary is None:
        raise DictionaryError(f"stream was coded with model file {wanted} (sha256 prefix): "
                              "give that file as the dictionary (--dict)")
    if dictionary.file_hash != header.dictionary:
        raise DictionaryError(f"stream was coded with model file {wanted}, not with the "
                              f"given one ({dictionary.file_hash.hex()})")
    spec = spec_by_name(dictionary.model_name)
    if spec.model_id != header.model_id or \
            config_for_header(header) != dictionary.config or header.seed != dictionary.seed:
        raise CorruptError("stream header disagrees with its model file")
    if not header.alphabet:
        return None
    if header.alphabet.translate(None, dictionary.alphabet):
        raise CorruptError("stream holds bytes outside its model file's alphabet")
    return dictionary_model(dictionary)


def _model_alphabet(header: StreamHeader, dictionary: Predictor | None) -> bytes:
    """The alphabet the stream's model codes over: the data's, or its model file's."""
    return dictionary.alphabet if header.dictionary else header.alphabet


class _SymbolMap:
    """Bytes <-> alphabet indices for one stream."""

    def __init__(self, alphabet: bytes) -> None:
        self.to_symbol = np.zeros(256, dtype=np.uint8)
        self.to_symbol[np.frombuffer(alphabet, dtype=np.uint8)] = np.arange(len(alphabet))
        self.to_byte = np.frombuffer(alphabet, dtype=np.uint8).copy()

    def symbols(self, data: bytes) -> np.ndarray:
        return self.to_symbol[np.frombuffer(data, dtype=np.uint8)]

    def data(self, symbols: np.ndarray) -> bytes:
        return self.to_byte[symbols].tobytes()


def symbols_of(data: bytes) -> tuple[np.ndarray, bytes]:
    """The alphabet indices (uint8) of ``data`` and its alphabet (the byte values present).

        >>> symbols, alphabet = symbols_of(b"abca")
        >>> symbols.tolist(), alphabet
        ([0, 1, 2, 0], b'abc')
    """
    alphabet = bytes(sorted(set(data)))
    return _SymbolMap(alphabet).symbols(data), alphabet


def _read_exact(src: IO[bytes], n: int) -> bytes:
    parts, got = [], 0
    while got < n:
        part = src.read(n - got)
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def coding_alphabet(model: str, alphabet: bytes) -> bytes:
    """The values a stream of ``model`` codes over, given those its data holds
    (``alphabet``, sorted): 0 to the highest for a family whose config says ``CODES_BYTES``
    (it learns the bits of the byte itself better than an index's) when that costs
    at most one more binary decision per symbol than the values present, else ``alphabet``
    (one value: its frames are empty; a few scattered ones: 0..top would slow the coding).

        >>> text = b"The quick brown fox jumps over the lazy dog 1,234,567,890 times.\\n"
        >>> coding_alphabet("cm", bytes(sorted(set(text)))) == bytes(range(max(text) + 1))
        True
        >>> [coding_alphabet(m, a) for m, a in (("cm", b"ACGT"), ("order2", b"abc"), ("cm", b"a"))]
        [b'ACGT', b'abc', b'a']
    """
    if not getattr(spec_by_name(model).config_class, "CODES_BYTES", False) or \
            len(alphabet) < 2:
        return alphabet
    top = alphabet[-1]
    if top.bit_length() > (len(alphabet) - 1).bit_length() + 1:
        return alphabet
    return bytes(range(top + 1))


def stream_alphabet(model: str, config: Any, alphabet: bytes) -> bytes:
    """The header's alphabet of data holding ``alphabet`` coded with ``config``: the coding
    alphabet (``coding_alphabet``) of the values its coded form may hold (a folded text's:
    ``textcase.coded_values``; its capitals stay, so a text coded over 0 to its top value
    still is).

        >>> from seqzip.api import config_with
        >>> stream_alphabet("cm", config_with("cm", 1, fold_case=1), b" Aab")
        b'\\x01\\x02 Aab'
    """
    if getattr(config, "fold_case", 0):
        alphabet = coded_values(alphabet)
    return coding_alphabet(model, alphabet)


# Streams of at most LEAN_MAX symbols in one frame are written lean (``seqzip.container``: no
# frame or block checks, the payload to the byte); False writes them checked, as builds before
# format 72 did (the tests pin those streams too: their payloads are the same).
LEAN = True

HEAD = 64  # DataProfile.head: the bytes of a file format's header it keeps


@dataclasses.dataclass(frozen=True)
class DataProfile:
    """What a model family may choose a variant by (``coding_config``): how often each byte
    value occurs and how often each big-endian 16-bit word occurs at an even offset, counted
    over the whole input as it is scanned (integers: the same choice on every machine), and
    its first ``HEAD`` bytes (a file format's header: an ELF file's machine), and how often
    each byte value occurs at the offsets 4k + j (32-bit samples' lanes: models.detect)."""
    counts: np.ndarray  # (256,) int64
    words: np.ndarray  # (65536,) int64
    head: bytes = b""
    lanes: np.ndarray | None = None  # (4, 256) int64
    sample: bytes = b""  # the first ``textcase.SAMPLE`` bytes (``fold_pays``)

    @property
    def alphabet(self) -> bytes:
        return bytes(np.flatnonzero(self.counts).astype(np.uint8))


def coding_config(config: Any, present: bytes, profile: DataProfile | None = None) -> Any:
    """The config a stream of data holding the byte values ``present`` (``profile``: its
    statistics, when known) is coded with: a family may turn a level preset into a variant
    for such data (``CMConfig.for_data``: binary data, 1-bit images, 68000 code) and a text
    preset into its case-folded twin (``CMConfig.folded``) where ``fold_pays`` on the
    profile's sample; written in the header, so the decoder follows.  A config that folds is
    kept only for data it can fold (neither escape byte in it)."""
    for_data = getattr(config, "for_data", None)
    if for_data is None:
        return config
    config = for_data(present) if profile is None else for_data(present, profile)
    if getattr(config, "fold_case", 0):
        return config.unfolded() if any(b in present for b in ESCAPES) else config
    twin = config.folded()
    if twin is not None and profile is not None and foldable(present) and \
            int(profile.counts.sum()) <= MAX_FOLDED and fold_pays(profile.sample):
        return twin
    return config


def fold_pays(sample: bytes) -> bool:
    """Whether cm's level 1 codes ``sample`` (a stream's first bytes) in fewer bytes folded
    (``textcase.fold``) than as it is: the encoder's choice of a case-folded preset, in exact
    coded bytes (the same on every machine), about 7 ms of CPU per KB of sample.

        >>> from seqzip import corpora
        >>> fold_pays(corpora.generate("text", 4000, seed=3).data), fold_pays(b"x=Y;" * 200)
        (True, False)
    """
    if not sample:
        return False
    config = make_config("cm", 1)

    def size(data: bytes) -> int:
        symbols, alphabet = symbols_of(data)
        # its length as the hint: plain pages for a short sample (level 1 does not fit its
        # table to it, so the sizes are the same), 0.09 s against 0.11 for 4 KB
        return len(coder.encode(create("cm", config, alphabet=alphabet, seed=0,
                                       size_hint=len(data)), symbols))

    return size(fold(sample)) < size(sample)


def _scan_profile(src: IO[bytes]) -> tuple[int, DataProfile, int]:
    """Length, :class:`DataProfile` and CRC-32 of everything ``src`` yields."""
    counts = np.zeros(256, dtype=np.int64)
    words = np.zeros(1 << 16, dtype=np.int64)
    lanes = np.zeros((4, 256), dtype=np.int64)
    length, crc, odd, sample = 0, 0, b"", b""
    while chunk := src.read(CHUNK * 16):
        if len(sample) < SAMPLE:
            sample += chunk[:SAMPLE - len(sample)]
        counts += np.bincount(np.frombuffer(chunk, dtype=np.uint8), minlength=256)
        for j in range(4):
            lanes[(length + j) % 4] += np.bincount(np.frombuffer(chunk, dtype=np.uint8)[j::4],
                                                   minlength=256)
        length += len(chunk)
        crc = zlib.crc32(chunk, crc)
        even = odd + chunk  # a read may end at an odd offset: its last byte starts a word
        odd = even[len(even) & ~1:]
        words += np.bincount(np.frombuffer(even[:len(even) & ~1], dtype=">u2"),
                             minlength=1 << 16)
    return length, DataProfile(counts, words, sample[:HEAD], lanes, sample), crc


def _scan(src: IO[bytes]) -> tuple[int, bytes, int]:
    """Length, alphabet and CRC-32 of everything ``src`` yields."""
    length, profile, crc = _scan_profile(src)
    return length, profile.alphabet, crc


def _seekable(src: IO[bytes]) -> bool:
    try:
        return src.seekable()
    except (AttributeError, ValueError, OSError):
        return False



def _check_positive(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def _check_processes(processes: int) -> int:
    return _check_positive("processes", processes)



def compress_with_dictionary(src: IO[bytes], dst: IO[bytes], dictionary: Predictor,
                              frame_size: int, progress: Progress | None) -> int:
    _check_frame_size(frame_size)
    if not _seekable(src):
        with spooled(src) as spool:
            return compress_with_dictionary(spool, dst, dictionary, frame_size, progress)
    spec = spec_by_name(dictionary.model_name)
    start = src.tell()
    length, alphabet, crc = _scan(src)
    src.seek(start)
    outside = alphabet.translate(None, dictionary.alphabet)
    if outside:
        raise ValueError(f"the input holds byte {outside[0]}, outside the model file's "
                         "alphabet")
    # the model codes over the model file's alphabet: the header names it (all 256 values in
    # no byte), not the values present
    header = StreamHeader(spec.model_id, config_to_header(spec.config_class, dictionary.config),
                          dictionary.seed, length, frame_size,
                          dictionary.alphabet if length else b"", crc,
                          DICTIONARY_VERSION, dictionary.file_hash, lean=LEAN)
    written = dst.write(header.pack()) or 0
    written += sum(dst.write(frame) or 0
                   for frame in _encode_frames(header, src, progress, dictionary))
    return written


def _encode_frames(header: StreamHeader, src: IO[bytes],
                   progress: Progress | None, dictionary: Predictor | None = None,
                   model: Model | None = None) -> Iterator[bytes]:
    if model is None:
        model = model_for_header(header, dictionary)
    symbol_map = _SymbolMap(_model_alphabet(header, dictionary))
    # a folded text (``header.escapes``; folding a text without capitals changes nothing)
    folded = _Folded(src) if header.escapes else None
    reader = src if folded is None else folded
    done, crc, reported = 0, 0, 0
    while done < header.coded:
        chunk = _read_exact(reader, next_frame_symbols(header, done))
        if len(chunk) < next_frame_symbols(header, done) or \
                chunk.translate(None, header.alphabet):
            raise SeqzipError("input changed while it was being compressed")
        crc = zlib.crc32(chunk, crc)
        symbols = symbol_map.symbols(chunk)
        # a lean stream's one frame holds no checks, its payload to the byte (container)
        yield pack_frame(len(chunk), coder.encode(model, symbols, header.lean),
                         b"" if header.lean else frame_checks(symbols), header.version)
        done += len(chunk)
        if progress:  # the input's bytes read (a folded stream codes more symbols)
            read = done if folded is None else folded.raw
            progress(read - reported)
            reported = read
    if folded is not None:
        crc = folded.crc
    if crc != header.crc32 or reader.read(1):
        raise SeqzipError("input changed while it was being compressed")


class _Folded:
    """A source read in its case-folded form (``textcase.fold``); ``crc`` and ``raw``: the
    CRC-32 and count of the source's bytes read so far."""

    def __init__(self, src: IO[bytes]) -> None:
        self._src, self._folder, self._out = src, Folder(), bytearray()
        self.crc = self.raw = 0
        self._end = False

    def read(self, n: int) -> bytes:
        while len(self._out) < n and not self._end:
            chunk = self._src.read(CHUNK * 16)
            self.crc, self.raw = zlib.crc32(chunk, self.crc), self.raw + len(chunk)
            self._out += self._folder.feed(chunk) if chunk else self._folder.close()
            self._end = not chunk
        out = bytes(self._out[:n])
        del self._out[:n]
        return out


def folded_escapes(config: Any, src: IO[bytes]) -> int:
    """The escapes a stream of everything ``src`` yields codes with ``config``: none unless
    it folds, else its folded form's length less the source's."""
    if not getattr(config, "fold_case", 0):
        return 0
    folded, coded = _Folded(src), 0
    while chunk := folded.read(CHUNK * 16):
        coded += len(chunk)
    return coded - folded.raw



@dataclasses.dataclass(frozen=True)
class Limits:
    """What a decoder may spend on a stream, checked from its header before anything is
    allocated or decoded (``None``: no limit).

    ``max_length`` bounds the decoded bytes of a call (all its concatenated streams together):
    a header declaring more is refused.  ``max_memory`` bounds the memory a stream's model
    may allocate, as its config's ``memory_bytes`` computes it (a bound: models that grow, as
    CTW does, start far smaller).  The defaults admit every level of every model on any
    alphabet, piece sets included (whose decoder holds two models: the largest, ``glnn -9``,
    needs up to 2 x 1,062 MiB) and refuse forged headers asking for more.

        >>> Limits().max_memory // 2**20, Limits().max_length // 2**30
        (3072, 256)
    """
    max_length: int | None = DEFAULT_MAX_LENGTH
    max_memory: int | None = DEFAULT_MAX_MEMORY

    def __post_init__(self) -> None:
        for name in ("max_length", "max_memory"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or value < 0):
                raise ValueError(f"{name} must be a non-negative integer or None, "
                                 f"got {value!r}")

    def check_length(self, done: int, header: StreamHeader) -> None:
        if self.max_length is not None and done + header.length > self.max_length:
            raise LimitError(
                f"stream declares {header.length:,} bytes of output, over the limit of "
                f"{self.max_length:,} (max_length, --max-length)")

    def check_memory(self, header: StreamHeader, config: Any, alphabet: bytes | None = None,
                     models: int = 1) -> None:
        """Refuse a stream whose model may need more than ``max_memory`` (``alphabet``: the
        model's, a dictionary's for a stream coded from one; default the header's).
        ``models``: how many such models the decoder holds at once (2 in a warm piece set:
        the prefix's, kept, and a piece's, started from it).

            >>> from seqzip.container import parse_header
            >>> from seqzip.api import compress, config_for_header
            >>> header = parse_header(compress(b"abc", model="order2", level=1))[0]
            >>> need = config_for_header(header).memory_bytes(3)
            >>> Limits(max_memory=need).check_memory(header, config_for_header(header))
            >>> Limits(max_memory=need).check_memory(header, config_for_header(header), models=2)
            Traceback (most recent call last):
            ...
            seqzip.errors.LimitError: piece set's two models (the prefix's and a piece's) may need ...
        """
        need = models * config.memory_bytes(max(len(header.alphabet if alphabet is None
                                                    else alphabet), 1))
        if self.max_memory is not None and need > self.max_memory:
            what = "stream's model" if models == 1 else \
                "piece set's two models (the prefix's and a piece's)"
            raise LimitError(
                f"{what} may need {need / 2**20:,.1f} MiB of memory, over the limit of "
                f"{self.max_memory / 2**20:,.1f} MiB (max_memory, --max-memory)")




def spooled(src: IO[bytes]) -> IO[bytes]:
    """A seekable copy of a non-seekable input, in a temporary file at position 0 (the caller
    closes it)."""
    spool = tempfile.TemporaryFile()
    try:
        while chunk := src.read(CHUNK * 16):
            spool.write(chunk)
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    return spool


def compress_stream(src: IO[bytes], dst: IO[bytes], spec: ModelSpec, config: Any, seed: int,
                    frame_size: int, progress: Progress | None = None) -> int:
    """Write one stream of everything a seekable ``src`` yields from its position on to
    ``dst`` (the input is read twice: scanned, then coded frame by frame); return the bytes
    written.

    Raises:
        SeqzipError: the input changed while it was being compressed.
    """
    start = src.tell()
    length, profile, crc = _scan_profile(src)
    alphabet = profile.alphabet
    src.seek(start)
    config = coding_config(config, alphabet, profile)
    escapes = folded_escapes(config, src)
    src.seek(start)
    header = StreamHeader(spec.model_id, config_to_header(spec.config_class, config), seed,
                          length, frame_size, stream_alphabet(spec.name, config, alphabet), crc,
                          escapes=escapes, lean=LEAN)
    written = dst.write(header.pack()) or 0
    written += sum(dst.write(frame) or 0 for frame in _encode_frames(header, src, progress))
    return written


@dataclasses.dataclass(frozen=True)
class StreamSettings:
    """What one stream is coded with: the model family, its config, the seed and, for a
    stream coded from a model file, that file's :class:`~seqzip.predictor.Predictor`."""
    model: str
    config: Any
    seed: int
    dictionary: Predictor | None = None

    def write(self, src: IO[bytes], dst: IO[bytes], frame_size: int = DEFAULT_FRAME,
              progress: Progress | None = None) -> int:
        """Code everything a seekable ``src`` yields as one stream into ``dst``; return the
        bytes written."""
        if self.dictionary is not None:
            return compress_with_dictionary(src, dst, self.dictionary, frame_size, progress)
        return compress_stream(src, dst, spec_by_name(self.model), self.config, self.seed,
                               frame_size, progress)


def _level_of(model: str, config: Any) -> str:
    spec = spec_by_name(model)
    for level in LEVELS:
        if spec.config_class.for_level(level) == config:
            return f"{model} at level {level}"
    return f"{model} with a config of no level"


def stream_settings(model: str | None = None, level: int | None = None, seed: int | None = None,
                    *, config: Any = None, compresslevel: int | None = None,
                    dictionary: Predictor | str | os.PathLike | None = None) -> StreamSettings:
    """The settings of the streams a compressor writes, checked now (``ValueError``).

    Without ``dictionary``: ``model`` (default cm), ``level`` (default 6; ``compresslevel``
    is ``bz2``'s name for it, and both may be given only if equal) or a ``config`` of the
    model, which overrides the level, and ``seed`` (default 0).

    With ``dictionary`` (a model file or a Predictor), the model, config and seed are the
    file's: each setting may be left unset (None) or equal to the file's; any other value is
    a contradiction, refused with one ``ValueError`` naming both (``model="ctw"`` with a cm
    file, ``level=1`` with a level-6 file; the command line passes only the flags given).

        >>> stream_settings("order2", 2).config == make_config("order2", 2)
        True
        >>> d = Predictor("ctw", 6, alphabet=b"ab")
        >>> stream_settings(dictionary=d, level=6).model
        'ctw'
        >>> stream_settings(model="order2", dictionary=d)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: model='order2' contradicts the model file given as dictionary (ctw at level 6)...
    """
    if compresslevel is not None:
        check_level(compresslevel)
        if level is not None and check_level(level) != compresslevel:
            raise ValueError(f"level={level!r} and compresslevel={compresslevel!r} disagree: "
                             "give one of them")
        level = compresslevel
    if level is not None:
        check_level(level)
    if seed is not None:
        _check_seed(seed)
    dictionary = load_dictionary(dictionary)
    if dictionary is None:
        model = DEFAULT_MODEL if model is None else model
        spec = spec_by_name(model)
        if config is None:
            config = make_config(model, DEFAULT_LEVEL if level is None else level)
        elif not isinstance(config, spec.config_class):
            raise ValueError(f"config must be a {spec.config_class.__name__} for model "
                             f"{model!r}")
        return StreamSettings(model, config, 0 if seed is None else seed)
    own = _level_of(dictionary.model_name, dictionary.config)
    given = {"model": model is not None and model != dictionary.model_name,
             "level": level is not None and (
                 dictionary.model_name != (model or dictionary.model_name)
                 or make_config(dictionary.model_name, level) != dictionary.config),
             "config": config is not None and config != dictionary.config,
             "seed": seed is not None and seed != dictionary.seed}
    for name, differs in given.items():
        if differs:
            value = {"model": model, "level": level, "config": config, "seed": seed}[name]
            extra = f", seed {dictionary.seed}" if name == "seed" else ""
            raise ValueError(f"{name}={value!r} contradicts the model file given as dictionary "
                             f"({own}{extra}): leave {name} unset or give the file's")
    return StreamSettings(dictionary.model_name, dictionary.config, dictionary.seed,
                          dictionary)


def piece_header(spec: ModelSpec, config: Any, seed: int, frame_size: int, alphabet: bytes,
                 data: bytes) -> StreamHeader:
    """The header of one piece of a piece set: ``data`` coded over the whole input's
    ``alphabet`` (which every piece of a warm set shares)."""
    config = coding_config(config, alphabet)
    return StreamHeader(spec.model_id, config_to_header(spec.config_class, config), seed,
                        len(data), frame_size, stream_alphabet(spec.name, config, alphabet),
                        zlib.crc32(data), escapes=folded_escapes(config, io.BytesIO(data)),
                        lean=LEAN)


def encode_piece(header: StreamHeader, data: bytes, model: Model | None) -> bytes:
    """One stream (header and frames) of ``data`` coded by ``model`` (in whatever state it
    is: fresh, or after a shared prefix), which it leaves in its state after ``data``."""
    frames = _encode_frames(header, io.BytesIO(data), None, model=model) if data else ()
    return header.pack() + b"".join(frames)


def state_bytes(model: Model) -> bytes:
    """A model's full state as bytes, for the caller's own workers (never written to a
    file: a decoder rebuilds the state by decoding): the kernel's ``get_state`` arrays,
    pickled and deflated."""
    return zlib.compress(pickle.dumps(model.kernel.get_state(), protocol=5), 1)


def model_from_state(header: StreamHeader, state: bytes | Model) -> Model:
    """The model ``header`` names, in the state of ``state`` (a model, or the bytes
    :func:`state_bytes` took of one)."""
    model = model_for_header(header, sized=False)
    if isinstance(state, Model):
        model.kernel.set_state(state.kernel.get_state())
    else:
        model.kernel.set_state(pickle.loads(zlib.decompress(state)))
    return model
