"""Streaming prediction: any seqzip model as a next-symbol predictor, and model files.

A :class:`Predictor` wraps one model of any family and level over an alphabet fixed up front
(all 256 byte values by default), so it runs on an endless stream in bounded memory:

    >>> p = Predictor(model="order2", level=6, alphabet=b"ab")
    >>> bits = p.feed(b"abababababababab")       # -log2 P(symbol) of each, as coded
    >>> bool(bits[-1] < bits[0]), round(float(p.bits_per_symbol), 3) == round(
    ...     float(bits.mean()), 3)
    (True, True)
    >>> probs = p.probs()                          # P(next = a), P(next = b)
    >>> bool(probs[0] > 0.8)
    True

Every probability comes from the coding loop's own step (:func:`seqzip._core.run` in SCORE
mode, the kernel's ``predict`` / ``predict_bit``): what :meth:`Predictor.probs` returns and
:meth:`Predictor.feed` charges is exactly what the range coder codes with.

A *model file* (``.sqm``) holds a model's full state: its family, config, alphabet and seed,
then every array of its kernel (weights, optimiser and metric state, recurrent state, the
experts' tables), each zlib-compressed, and a SHA-256 of all of it.  ``seqzip compress --dict``
starts coding from such a state; the stream's header names the file by its hash.

Model files are untrusted input, like compressed streams: :meth:`Predictor.from_bytes`
checks the checksum, the metadata, each array's size before inflating it, and every index,
count and link of the kernel's state, and raises :class:`~seqzip.errors.ModelFileError` (a
``DictionaryError``) for anything a model could not have written.  A model file holds numbers
only: loading one runs no code from it.  What it can do is cost time and memory up to what
its config declares (the same bounds as a stream header's config), and predict badly.
"""
from __future__ import annotations

import hashlib
import io
import json
import math
import os
import struct
import zlib
from typing import Any

import numpy as np

from ._core import BITS, SCORE, distribution, run
from .errors import ModelFileError
from .models import (DEFAULT_LEVEL, DEFAULT_MODEL, check_level, config_from_bytes,
                     config_to_bytes, create, spec_by_name)

MODEL_MAGIC = b"\xb7SQM"
MODEL_VERSION = 1
ALL_BYTES = bytes(range(256))
MAX_META = 1 << 20
_ENTRY = struct.Struct("<BBQQ")  # dtype length, ndim, raw bytes, stored bytes
DICTIONARY_HASH_BYTES = 16  # the stream header keeps the first 16 bytes of the SHA-256


def file_hash(data: bytes) -> bytes:
    """The identity of a model file: the first 16 bytes of the SHA-256 of its bytes (what
    ``sha256sum`` prints, cut to 32 hex digits).

        >>> file_hash(b"").hex()
        'e3b0c44298fc1c149afbf4c8996fb924'
    """
    return hashlib.sha256(data).digest()[:DICTIONARY_HASH_BYTES]


def _check_alphabet(alphabet: Any) -> bytes:
    if alphabet is None:
        return ALL_BYTES
    if isinstance(alphabet, str):
        raise TypeError("the alphabet is bytes (the byte values, e.g. b'ACGT'), not str")
    values = bytes(alphabet)
    if not values or len(set(values)) != len(values):
        raise ValueError("the alphabet must hold 1 to 256 distinct byte values")
    return bytes(sorted(values))


class Predictor:
    """A model of any family and level, fed a stream one symbol (or chunk) at a time.

    Args:
        model: family name (``seqzip.models.MODELS``: cm, ctw, order2, glnn, lstm, ...).
        level: 1 (fast) ... 9 (strong); ignored when ``config`` is given.
        alphabet: the byte values the stream may hold (default: all 256).  Symbol ``i`` of
            :meth:`probs` is ``alphabet[i]`` (sorted).
        seed: seed of the model's initial weights (as in a stream header).
        config: a config dataclass of the family, overriding ``level``.

    Raises:
        ValueError: unknown model, bad level, empty or repeated alphabet.

        >>> p = Predictor("ctw", 3, alphabet=b"01")
        >>> _ = p.feed(b"0110" * 20)
        >>> q = p.copy()
        >>> p.update(ord("0")) == q.update(ord("0"))    # a copy predicts identically
        True
        >>> p.symbols, round(p.bits, 6) == round(q.bits, 6)
        (81, True)
    """

    def __init__(self, model: str = DEFAULT_MODEL, level: int = DEFAULT_LEVEL,
                 alphabet: bytes | None = None, *, seed: int = 0, config: Any = None) -> None:
        spec = spec_by_name(model)
        if config is None:
            config = spec.config_class.for_level(check_level(level))
        elif not isinstance(config, spec.config_class):
            raise ValueError(f"config must be a {spec.config_class.__name__}")
        self.model_name = model
        self.config = config
        self.alphabet = _check_alphabet(alphabet)
        self.seed = seed
        self._lut = np.full(256, -1, dtype=np.int16)
        self._lut[np.frombuffer(self.alphabet, dtype=np.uint8)] = np.arange(len(self.alphabet))
        self.info: dict = {}  # what a model file says about its training
        self._file_hash: bytes | None = None  # hash of the model file this state is in
        self.reset()

    # ------------------------------------------------------------ prediction

    @property
    def alphabet_size(self) -> int:
        return len(self.alphabet)

    @property
    def kernel(self):
        """The model's kernel (``seqzip._core.Kernel``)."""
        return self._model.kernel

    @property
    def bits_per_symbol(self) -> float:
        """Running bits per character: :attr:`bits` / :attr:`symbols` (0 before any).

            >>> Predictor("order2", 1, alphabet=b"ab").bits_per_symbol
            0.0
        """
        return self.bits / self.symbols if self.symbols else 0.0

    def probs(self) -> np.ndarray:
        """The next symbol's distribution: float64, shape (alphabet size,), a fresh array.

        For a symbol-mode model it is the array the coder quantises (divided by its sum, as
        the coder's model and :meth:`feed` divide it); for a bit-mode model
        (cm) each entry is the product of the probabilities of the symbol's bits exactly as
        the coder uses them (each bit predicted after learning the earlier ones), computed by
        walking the bit tree from save points (``seqzip._core.bit_distribution``; about 0.3
        CPU s at cm -6 over 256 symbols: use :meth:`feed` to score a stream).

            >>> p = Predictor("order2", 6, alphabet=b"xyz")
            >>> p.probs().round(3).tolist()
            [0.333, 0.333, 0.333]
        """
        return distribution(self.kernel)

    def _symbols(self, data: bytes) -> np.ndarray:
        values = np.frombuffer(data, dtype=np.uint8)
        symbols = self._lut[values]
        if (symbols < 0).any():
            bad = int(values[np.flatnonzero(symbols < 0)[0]])
            raise ValueError(f"byte {bad} is outside the predictor's alphabet")
        return symbols.astype(np.uint8)

    def feed(self, data: bytes) -> np.ndarray:
        """Learn ``data`` symbol by symbol; return the bits each cost (-log2 of its
        probability under the model just before it, as the coder charges it).

        Raises:
            ValueError: a byte outside the alphabet (nothing of ``data`` is learnt).

            >>> p = Predictor("order2", 6, alphabet=b"ab")
            >>> p.feed(b"a").tolist()
            [1.0]
        """
        symbols = self._symbols(memoryview(data).tobytes())
        scores = np.empty(len(symbols))
        if len(symbols):
            run(self.kernel, SCORE, np.ascontiguousarray(symbols), scores=scores)
        bits = -np.log2(scores)
        self._file_hash = None
        self.bits += float(bits.sum())
        self.symbols += len(symbols)
        return bits

    def update(self, symbol: int | bytes) -> float:
        """Learn one symbol (a byte value, or a one-byte ``bytes``); return its bits.

            >>> Predictor("order2", 6, alphabet=b"ab").update(ord("b"))
            1.0
        """
        if isinstance(symbol, (bytes, bytearray)):
            if len(symbol) != 1:
                raise ValueError("update takes one symbol")
            data = bytes(symbol)
        else:
            if not 0 <= int(symbol) <= 255:
                raise ValueError(f"symbol {symbol!r} is not a byte value")
            data = bytes([int(symbol)])
        return float(self.feed(data)[0])

    def sample(self, n: int, seed: int = 0, temperature: float = 1.0) -> bytes:
        """``n`` symbols generated by the model from its current state (the predictor itself
        is left unchanged: a copy learns what it generates, as a decoder would).

        Each symbol is drawn from :meth:`probs` raised to ``1 / temperature`` (0: the most
        likely symbol); a bit-mode model draws each bit so, from its bit probability.  The
        same state, ``seed`` and ``temperature`` give the same text.

            >>> p = Predictor("order2", 6, alphabet=b"ab")
            >>> _ = p.feed(b"ab" * 50)
            >>> p.sample(8, seed=1, temperature=0)
            b'abababab'
            >>> p.sample(20, seed=3) == p.sample(20, seed=3)
            True
        """
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be a non-negative integer, got {n!r}")
        if not temperature >= 0.0 or temperature > 1e6:
            raise ValueError(f"temperature must be in [0, 1e6], got {temperature!r}")
        rng = np.random.default_rng(seed)
        model = self.copy()
        kernel, A = model.kernel, self.alphabet_size
        out = np.empty(n, dtype=np.uint8)
        one = np.zeros(1, dtype=np.uint8)
        scores = np.empty(1)
        for i in range(n):
            if kernel.mode == BITS:
                symbol = 0
                for j in range(kernel.bits - 1, -1, -1):
                    p1 = kernel.predict_bit() / 65536.0
                    if (symbol | (1 << j)) >= A:
                        p1 = 0.0  # every symbol with this bit set is outside the alphabet
                    bit = int(_draw(np.array([1.0 - p1, p1]), rng, temperature))
                    kernel.update_bit(bit)
                    symbol |= bit << j
            else:
                symbol = int(_draw(kernel.predict(), rng, temperature))
                one[0] = symbol
                run(kernel, SCORE, one, scores=scores)
            out[i] = symbol
        return np.frombuffer(self.alphabet, dtype=np.uint8)[out].tobytes()

    def reset(self) -> None:
        """Forget everything: a fresh model (as built from the config, alphabet and seed) and
        zero counters.

            >>> p = Predictor("order2", 6, alphabet=b"ab")
            >>> _ = p.feed(b"aaaa"); p.reset(); p.symbols, p.probs().tolist()
            (0, [0.5, 0.5])
        """
        self._model = create(self.model_name, self.config, alphabet=self.alphabet,
                             seed=self.seed)
        self.bits = 0.0
        self.symbols = 0

    # ------------------------------------------------------------ state

    def copy(self) -> "Predictor":
        """An independent predictor in the same state (it predicts exactly as this one)."""
        other = Predictor(self.model_name, alphabet=self.alphabet, seed=self.seed,
                          config=self.config)
        other.kernel.set_state(self.kernel.get_state())
        other.bits, other.symbols, other.info = self.bits, self.symbols, dict(self.info)
        other._file_hash = self._file_hash
        return other

    def to_bytes(self) -> bytes:
        """The model file's bytes (see :meth:`save`)."""
        meta = {"model": self.model_name,
                "config": config_to_bytes(self.config).decode("ascii"),
                "alphabet": list(self.alphabet), "seed": self.seed, "symbols": self.symbols,
                "bits": self.bits, "info": self.info}
        meta_bytes = json.dumps(meta, sort_keys=True).encode("utf-8")
        state = self.kernel.get_state()
        out = io.BytesIO()
        out.write(MODEL_MAGIC + bytes([MODEL_VERSION]))
        out.write(struct.pack("<I", len(meta_bytes)) + meta_bytes)
        out.write(struct.pack("<I", len(state)))
        for name in sorted(state):
            array = np.asarray(state[name], order="C")
            dtype = array.dtype.str.encode("ascii")
            raw = array.tobytes()
            stored = zlib.compress(raw, 1)
            key = name.encode("utf-8")
            out.write(struct.pack("<H", len(key)) + key)
            out.write(_ENTRY.pack(len(dtype), array.ndim, len(raw), len(stored)) + dtype)
            out.write(struct.pack(f"<{array.ndim}Q", *array.shape) + stored)
        body = out.getvalue()
        return body + hashlib.sha256(body).digest()

    def save(self, path: str | os.PathLike) -> bytes:
        """Write the full state to a model file (``.sqm``); return its :func:`file_hash`.

            >>> import tempfile, os
            >>> p = Predictor("order2", 6, alphabet=b"ab"); _ = p.feed(b"abba")
            >>> path = os.path.join(tempfile.mkdtemp(), "m.sqm")
            >>> digest = p.save(path)
            >>> q = Predictor.load(path)
            >>> bool((q.probs() == p.probs()).all()), q.symbols, len(digest)
            (True, 4, 16)
        """
        data = self.to_bytes()
        with open(path, "wb") as f:
            f.write(data)
        self._file_hash = file_hash(data)
        return self._file_hash

    @property
    def file_hash(self) -> bytes:
        """The :func:`file_hash` of the model file holding this exact state (the file it was
        loaded from or last saved to; otherwise of :meth:`to_bytes`, computed now).  A
        stream coded from this state (``dictionary=``) names the file by it."""
        if self._file_hash is None:
            self._file_hash = file_hash(self.to_bytes())
        return self._file_hash

    @classmethod
    def from_bytes(cls, data: bytes) -> "Predictor":
        """Rebuild a predictor from :meth:`to_bytes` output.

        A model file is untrusted input: the metadata's types and ranges, each array's
        declared size against its shape and against the memory its config declares (before
        inflating it, and no array is inflated past its declared size), then the kernel's
        whole state (indices, counts, links: each kernel's ``set_state``) are checked before
        the predictor is returned.

        Raises:
            ModelFileError: (a ``DictionaryError`` and a ``ValueError``) not a model file, a
                checksum mismatch, an unknown family or version, malformed metadata, an array
                of the wrong size, or a state that does not fit the model or that no model
                could reach.
        """
        data = memoryview(data).tobytes()
        if len(data) < 5 + 32 or data[:4] != MODEL_MAGIC:
            raise ModelFileError("not a seqzip model file")
        if data[4] != MODEL_VERSION:
            raise ModelFileError(f"model file version {data[4]} is not readable by this "
                                 f"seqzip (reads {MODEL_VERSION})")
        body = data[:-32]
        if hashlib.sha256(body).digest() != data[-32:]:
            raise ModelFileError("model file checksum mismatch (corrupt file)")
        try:
            (meta_len,) = struct.unpack_from("<I", body, 5)
            if meta_len > MAX_META:
                raise ValueError("model file metadata too large")
            meta = _read_meta(body[9:9 + meta_len])
            config = config_from_bytes(spec_by_name(meta["model"]).config_class,
                                       meta["config"].encode("ascii"))
            budget = 2 * config.memory_bytes(len(meta["alphabet"])) + STATE_SLACK
            state = _read_arrays(body, 9 + meta_len, budget)
            predictor = cls(meta["model"], alphabet=meta["alphabet"], seed=meta["seed"],
                            config=config)
            predictor.kernel.set_state(state)
        except ModelFileError:
            raise
        except (ValueError, struct.error, KeyError, TypeError, UnicodeError, zlib.error,
                OverflowError, RecursionError) as exc:
            raise ModelFileError(f"not a valid seqzip model file: {exc}") from None
        predictor.symbols, predictor.bits = meta["symbols"], meta["bits"]
        predictor.info = meta["info"]
        return predictor

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Predictor":
        """Read a model file written by :meth:`save` (or ``seqzip train``); see
        :meth:`from_bytes` for the errors, plus ``OSError`` from reading."""
        with open(path, "rb") as f:
            data = f.read()
        predictor = cls.from_bytes(data)
        predictor._file_hash = file_hash(data)
        return predictor

    def __repr__(self) -> str:
        return (f"Predictor({self.model_name!r}, alphabet of {self.alphabet_size}, "
                f"{self.symbols} symbols, {self.bits_per_symbol:.4f} bits/symbol)")


def _draw(p: np.ndarray, rng: np.random.Generator, temperature: float) -> int:
    """Index drawn from ``p`` sharpened by ``1 / temperature`` (0: argmax)."""
    p = np.asarray(p, dtype=np.float64)
    if temperature == 0.0:
        return int(np.argmax(p))
    with np.errstate(divide="ignore", under="ignore"):
        logp = np.log(np.maximum(p, 0.0)) / temperature
    logp -= logp.max()
    q = np.exp(logp)
    q /= q.sum()
    return int(min(np.searchsorted(np.cumsum(q), rng.random(), side="right"), len(q) - 1))


STATE_SLACK = 4 << 20  # bytes of state arrays allowed beyond twice the config's memory bound


def _read_meta(raw: bytes) -> dict:
    """A model file's metadata, each field of its type and range (ValueError otherwise)."""
    meta = json.loads(raw.decode("utf-8"))
    if not isinstance(meta, dict):
        raise ValueError("model file metadata is not an object")
    alphabet = meta.get("alphabet")
    if not (isinstance(alphabet, list) and 1 <= len(alphabet) <= 256 and
            all(type(v) is int and 0 <= v <= 255 for v in alphabet)):
        raise ValueError("model file metadata holds an invalid alphabet")
    seed, symbols, bits = meta.get("seed"), meta.get("symbols", 0), meta.get("bits", 0.0)
    if not (type(seed) is int and 0 <= seed < 1 << 64 and type(symbols) is int and
            0 <= symbols < 1 << 64 and type(bits) in (int, float) and 0 <= bits < 1e300):
        raise ValueError("model file metadata holds an invalid seed or counter")
    info = meta.get("info") or {}
    if not (isinstance(meta.get("model"), str) and isinstance(meta.get("config"), str) and
            isinstance(info, dict)):
        raise ValueError("model file metadata lacks its model, config or info")
    return {"model": meta["model"], "config": meta["config"], "alphabet": bytes(alphabet),
            "seed": seed, "symbols": symbols, "bits": float(bits), "info": dict(info)}


def _read_arrays(body: bytes, at: int, budget: int) -> dict:
    """The state arrays stored from ``at`` to the end of ``body``: each one's declared size
    must match its shape and dtype (plain numbers only) and all of them fit ``budget`` bytes,
    checked before inflating; an entry is never inflated past its declared size."""
    (count,) = struct.unpack_from("<I", body, at)
    at += 4
    state, total = {}, 0
    for _ in range(count):
        (key_len,) = struct.unpack_from("<H", body, at)
        name = body[at + 2:at + 2 + key_len].decode("utf-8")
        at += 2 + key_len
        dtype_len, ndim, raw_len, stored_len = _ENTRY.unpack_from(body, at)
        at += _ENTRY.size
        dtype = np.dtype(body[at:at + dtype_len].decode("ascii"))
        at += dtype_len
        if dtype.kind not in "biuf" or dtype.itemsize > 8 or ndim > 8:
            raise ValueError("model file holds an unsupported array")
        shape = struct.unpack_from(f"<{ndim}Q", body, at)
        at += 8 * ndim
        total += raw_len
        if raw_len != math.prod(shape) * dtype.itemsize or total > budget:
            raise ValueError(f"model file entry {name!r} declares a size its model cannot "
                             "have")
        if stored_len > len(body) - at:
            raise ValueError(f"model file entry {name!r} is cut short")
        inflate = zlib.decompressobj()
        raw = inflate.decompress(body[at:at + stored_len], raw_len)
        if len(raw) != raw_len or not inflate.eof or inflate.unconsumed_tail or \
                inflate.unused_data:
            raise ValueError(f"model file entry {name!r} does not inflate to its declared "
                             "size")
        at += stored_len
        state[name] = np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
    if at != len(body):
        raise ValueError("model file has trailing bytes")
    return state
