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

from ._core import BITS, SCORE, distribution, distributions, run
from .errors import LimitError, ModelFileError
from .models import (DEFAULT_LEVEL, DEFAULT_MODEL, check_level, config_from_bytes,
                     config_to_bytes, create, spec_by_name)

MODEL_MAGIC = b"\xb7SQM"
MODEL_VERSION = 1
RECIPE_MAGIC = b"\xb7SQR"  # a model file that says how to rebuild the state (see Recipe)
RECIPE_VERSION = 1
MAX_REPLAY = 1 << 30  # bytes of text a recipe model file may hold
REPLAY_RATIO = 16  # ... and at most this many times its compressed size (plus 1 MiB)
ALL_BYTES = bytes(range(256))
MAX_META = 1 << 20
# A research network file (seqzip train --method, seqzip.research.training) is a NumPy .npz
# archive, that is a zip file: its first four bytes, to say what such a file is when it is
# given as a dictionary.
RESEARCH_FILE_MAGIC = b"PK\x03\x04"
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
        self._recipe: bytes | None = None  # a recipe file that rebuilds this state (to_bytes)
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
        CPU s at cm -6 over 256 symbols: use :meth:`score` to score a stream and
        :meth:`distributions` for the distribution before every position).

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

    def score(self, data: bytes, learn: bool = True) -> np.ndarray:
        """The bits (-log2 p, float64) of every byte of ``data``, at coding speed.

        With ``learn`` (the default), each byte is scored under the model just before it and
        then learnt, exactly as the coder charges it (this is :meth:`feed`).  Without
        ``learn``, every byte is scored under the current state and nothing is learnt (the
        predictor is left as it was): position i costs -log2 of :meth:`probs` at byte i.

        Raises:
            ValueError: a byte outside the alphabet (nothing is learnt).

            >>> p = Predictor("order2", 6, alphabet=b"ab")
            >>> p.score(b"aab", learn=False).tolist(), p.symbols
            ([1.0, 1.0, 1.0], 0)
            >>> bits = p.score(b"aaaa"); bool(bits[3] < bits[0]), p.symbols
            (True, 4)
        """
        if learn:
            return self.feed(data)
        symbols = self._symbols(memoryview(data).tobytes())
        with np.errstate(divide="ignore"):
            return -np.log2(self.probs()[symbols])

    def distributions(self, data: bytes, learn: bool = True) -> np.ndarray:
        """The distribution before every byte of ``data``: float64, shape (len(data), A),
        row i over :attr:`alphabet`, each row summing to 1; with ``learn`` (the default) each
        byte is learnt after its row (as :meth:`feed` learns it, counting its bits), without
        it every row is the current one and nothing is learnt.

        One C-level loop (``seqzip._core.distributions``).  For a symbol-mode model row i is
        the very distribution the coder codes byte i with: ``-log2 rows[i, x_i]`` equals
        :meth:`score` exactly.  For the bit-mode ``cm`` it is the full distribution of the
        model before the byte (every bit decision evaluated as it would be, learning
        nothing: about A bit predictions per row, ~0.5 ms at cm -6 over 256 symbols); the
        coder's charge for the byte differs slightly, since its later bits are predicted
        after the mixer has learnt the earlier ones (:meth:`score` gives that charge).

        Raises:
            ValueError: a byte outside the alphabet (nothing is learnt).

            >>> p = Predictor("order2", 6, alphabet=b"ab")
            >>> rows = p.distributions(b"aaa")
            >>> rows.shape, rows[0].tolist(), bool(rows[2, 0] > rows[1, 0] > 0.5)
            ((3, 2), [0.5, 0.5], True)
        """
        symbols = np.ascontiguousarray(self._symbols(memoryview(data).tobytes()))
        out = np.empty((len(symbols), self.alphabet_size))
        if not learn:
            distributions(self.kernel, symbols, out, False)
            return out
        scores = np.empty(len(symbols))
        distributions(self.kernel, symbols, out, True, scores)
        self._file_hash = None
        self.bits += float(-np.log2(scores).sum())
        self.symbols += len(symbols)
        return out

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

    def rescale_counts(self, cap: int) -> None:
        """Halve the counts of a count-based model (ctw, order2) until each context's total
        is at most ``cap``: the statistics stay, but new data outweighs them quickly (what a
        dictionary made for data of another style needs; ``seqzip train`` does it).

        Raises:
            ValueError: a model without counts to rescale, or a cap below the model's minimum.

            >>> p = Predictor("order2", 6, alphabet=b"ab"); _ = p.feed(b"a" * 50)
            >>> before = p.probs()[1]; p.rescale_counts(2); bool(p.probs()[1] > before)
            True
        """
        rescale = getattr(self.kernel, "rescale", None)
        if rescale is None:
            raise ValueError(f"a {self.model_name} model has no counts to rescale")
        if isinstance(cap, bool) or not isinstance(cap, int) or not 1 <= cap <= 65535:
            raise ValueError(f"cap must be an integer in [1, 65535], got {cap!r}")
        rescale(cap)
        self._file_hash = None

    def reset(self) -> None:
        """Forget everything: a fresh model (as built from the config, alphabet and seed) and
        zero counters.

            >>> p = Predictor("order2", 6, alphabet=b"ab")
            >>> _ = p.feed(b"aaaa"); p.reset(); p.symbols, p.probs().tolist()
            (0, [0.5, 0.5])
        """
        self._model = create(self.model_name, self.config, alphabet=self.alphabet,
                             seed=self.seed)
        self._file_hash = None
        self.bits = 0.0
        self.symbols = 0

    # ------------------------------------------------------------ state

    def copy(self) -> "Predictor":
        """An independent predictor in the same state (it predicts exactly as this one)."""
        other = Predictor(self.model_name, alphabet=self.alphabet, seed=self.seed,
                          config=self.config)
        other.kernel.set_state(self.kernel.get_state())
        other.bits, other.symbols, other.info = self.bits, self.symbols, dict(self.info)
        other._file_hash, other._recipe = self._file_hash, self._recipe
        return other

    def __copy__(self) -> "Predictor":
        return self.copy()

    def __deepcopy__(self, memo: dict) -> "Predictor":
        return self.copy()

    def __reduce__(self) -> tuple:
        """Pickling: the settings and the kernel's full state (``get_state``), so that a
        pickled and unpickled predictor predicts exactly as this one.

            >>> import pickle, copy
            >>> p = Predictor("ctw", 2, alphabet=b"ab"); _ = p.feed(b"abba")
            >>> q, r = pickle.loads(pickle.dumps(p)), copy.deepcopy(p)
            >>> q.update(ord("a")) == r.update(ord("a")) == p.update(ord("a"))
            True
        """
        return (_rebuild, (self.model_name, self.config, self.alphabet, self.seed,
                           self.kernel.get_state(), self.bits, self.symbols, dict(self.info),
                           self._file_hash))

    def to_bytes(self) -> bytes:
        """The model file's bytes (see :meth:`save`): the recipe this state was rebuilt from
        or made with (:func:`recipe_bytes`) while the state is unchanged, else the full
        state."""
        if self._recipe is not None and self._file_hash == file_hash(self._recipe):
            return self._recipe
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
    def from_bytes(cls, data: bytes, max_memory: int | None = None) -> "Predictor":
        """Rebuild a predictor from :meth:`to_bytes` output.

        A model file is untrusted input: the metadata's types and ranges, each array's
        declared size against its shape and against the memory its config declares (before
        inflating it, and no array is inflated past its declared size), then the kernel's
        whole state (indices, counts, links: each kernel's ``set_state``) are checked before
        the predictor is returned.

        ``max_memory``: the memory the file's model may allocate (its config's bound), checked
        from the metadata before anything is inflated or built.

        Raises:
            ModelFileError: (a ``DictionaryError`` and a ``ValueError``) not a model file, a
                checksum mismatch, an unknown family or version, malformed metadata, an array
                of the wrong size, or a state that does not fit the model or that no model
                could reach.
            LimitError: the file's model may need more than ``max_memory``.
        """
        data = memoryview(data).tobytes()
        if data[:4] == RECIPE_MAGIC:
            return _from_recipe(cls, data, max_memory)
        if data[:4] == RESEARCH_FILE_MAGIC:
            raise ModelFileError("not a seqzip model file but a research network file "
                                 "(seqzip train --method): make a dictionary with seqzip "
                                 "train --model FAMILY")
        if len(data) < 5 + 32 or data[:4] != MODEL_MAGIC:
            raise ModelFileError("not a seqzip model file")
        if data[4] != MODEL_VERSION:
            raise ModelFileError(f"model file version {data[4]} is not readable by this "
                                 f"seqzip (reads {MODEL_VERSION})")
        body = _verified_body(data)
        try:
            _, meta, config, at = _read_head(body, max_memory)
            budget = 2 * config.memory_bytes(len(meta["alphabet"])) + STATE_SLACK
            state = _read_arrays(body, at, budget)
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
    def load(cls, path: str | os.PathLike, max_memory: int | None = None) -> "Predictor":
        """Read a model file written by :meth:`save` (or ``seqzip train``); see
        :meth:`from_bytes` for the errors and ``max_memory``, plus ``OSError`` from reading."""
        with open(path, "rb") as f:
            data = f.read()
        predictor = cls.from_bytes(data, max_memory)
        predictor._file_hash = file_hash(data)
        return predictor

    def __repr__(self) -> str:
        return (f"Predictor({self.model_name!r}, alphabet of {self.alphabet_size}, "
                f"{self.symbols} symbols, {self.bits_per_symbol:.4f} bits/symbol)")


def recipe_bytes(base: Predictor, replay: bytes, rescale: int | None = None,
                 info: dict | None = None, fresh: bool = False) -> bytes:
    """A *recipe* model file: the state ``base`` reaches by learning ``replay`` (then, with
    ``rescale``, :meth:`Predictor.rescale_counts`), stored as ``base`` and the bytes, not as
    the state.  ``base`` is left as it is; with ``fresh`` it is the model as built (nothing
    of it is stored), else its full model file is embedded.

    A recipe is as small as its text (LZMA-compressed) where the state is as large as the
    model's tables (a cm -6 state trained on 300 KB: 32 MB; its recipe: about 90 KB), and
    loading it holds one model, not the model and a copy of its state; but loading it costs
    the pass (the model learning the text again, at coding speed).  The state it rebuilds is
    exact: learning is deterministic (SPEC section 2), as decoding is.

        >>> p = Predictor("order2", 6, alphabet=b"ab")
        >>> data = recipe_bytes(p, b"abba" * 100, rescale=2, fresh=True)
        >>> q = Predictor.from_bytes(data)
        >>> p.feed(b"abba" * 100).size; p.rescale_counts(2)
        400
        >>> bool((q.probs() == p.probs()).all()), q.to_bytes() == data
        (True, True)
    """
    import lzma

    base_file = b"" if fresh else base.to_bytes()
    meta = {"model": base.model_name, "config": config_to_bytes(base.config).decode("ascii"),
            "alphabet": list(base.alphabet), "seed": base.seed, "info": info or {},
            "rescale": rescale, "replay": len(replay), "base": len(base_file)}
    meta_bytes = json.dumps(meta, sort_keys=True).encode("utf-8")
    body = (RECIPE_MAGIC + bytes([RECIPE_VERSION]) + struct.pack("<I", len(meta_bytes)) +
            meta_bytes + base_file + lzma.compress(bytes(replay), preset=6))
    return body + hashlib.sha256(body).digest()


def _check_model_memory(config: Any, alphabet: bytes, max_memory: int | None) -> None:
    need = config.memory_bytes(max(len(alphabet), 1))
    if max_memory is not None and need > max_memory:
        raise LimitError(f"model file's model may need {need / 2**20:,.1f} MiB of memory, over "
                         f"the limit of {max_memory / 2**20:,.1f} MiB (max_memory, "
                         "--max-memory)")


def _verified_body(data: bytes) -> bytes:
    """A model file (full-state or recipe) without its trailing SHA-256, once that matches."""
    body = data[:-32]
    if hashlib.sha256(body).digest() != data[-32:]:
        raise ModelFileError("model file checksum mismatch (corrupt file)")
    return body


def _read_head(body: bytes, max_memory: int | None, recipe: bool = False
               ) -> tuple[dict, dict, Any, int]:
    """The metadata after a model file's magic and version: the raw JSON object, the checked
    metadata (a recipe's has no symbols or bits of its own), the config, and the offset just
    past the metadata; the config's memory bound checked against ``max_memory``.

    Raises:
        ValueError: malformed metadata (the caller names the kind of file).
        LimitError: the model may need more than ``max_memory``.
    """
    (meta_len,) = struct.unpack_from("<I", body, 5)
    if meta_len > MAX_META:
        raise ValueError("model file metadata too large")
    raw = json.loads(body[9:9 + meta_len].decode("utf-8"))
    if not isinstance(raw, dict):
        raise ValueError("model file metadata is not an object")
    meta = _read_meta({**raw, "symbols": 0, "bits": 0.0} if recipe else raw)
    config = config_from_bytes(spec_by_name(meta["model"]).config_class,
                               meta["config"].encode("ascii"))
    _check_model_memory(config, meta["alphabet"], max_memory)
    return raw, meta, config, 9 + meta_len


def _from_recipe(cls: type, data: bytes, max_memory: int | None = None) -> Predictor:
    """The predictor a :func:`recipe_bytes` file rebuilds.  Untrusted input as any model
    file: its metadata is checked as a full-state file's is, its text is inflated and learnt
    in pieces (never held whole), and the text may be at most ``REPLAY_RATIO`` times its
    compressed size (plus 1 MiB) and ``MAX_REPLAY`` in all, so that a small file cannot ask
    for hours of learning or gigabytes of memory (an LZMA bomb of zeros is refused before
    anything is learnt).

    Raises:
        ModelFileError: a bad recipe file.
    """
    import lzma

    if len(data) < 9 + 32 or data[4] != RECIPE_VERSION:
        raise ModelFileError("not a readable seqzip recipe model file")
    body = _verified_body(data)
    try:
        raw, meta, config, at = _read_head(body, max_memory, recipe=True)
        base_len, replay_len, rescale = raw.get("base"), raw.get("replay"), raw.get("rescale")
        if not (type(base_len) is int and type(replay_len) is int and
                (rescale is None or type(rescale) is int and 2 <= rescale < 1 << 32)):
            raise ValueError("recipe model file holds invalid sizes")
        packed = len(body) - at - base_len
        if not (0 <= base_len <= len(body) - at and 0 <= replay_len <= MAX_REPLAY and
                replay_len <= REPLAY_RATIO * packed + (1 << 20)):
            raise ValueError("recipe model file declares impossible sizes (more text than "
                             "its compressed size can hold)")
        if base_len:
            predictor = cls.from_bytes(body[at:at + base_len], max_memory)
        else:
            predictor = cls(meta["model"], alphabet=meta["alphabet"], seed=meta["seed"],
                            config=config)
        inflate, rest, learnt = lzma.LZMADecompressor(), body[at + base_len:], 0
        while not inflate.eof:
            piece = inflate.decompress(rest, 1 << 16)
            rest = b""
            learnt += len(piece)
            if learnt > replay_len:
                raise ValueError("recipe model file's text is longer than it declares")
            if piece:
                predictor.feed(piece)
            elif inflate.needs_input:
                raise ValueError("recipe model file's text is cut short")
        if learnt != replay_len:
            raise ValueError("recipe model file's text has the wrong length")
        if rescale is not None:
            predictor.rescale_counts(rescale)
    except ModelFileError:
        raise
    except (ValueError, struct.error, KeyError, TypeError, UnicodeError, lzma.LZMAError,
            OverflowError, RecursionError) as exc:
        raise ModelFileError(f"not a valid seqzip recipe model file: {exc}") from None
    predictor.info = meta["info"]
    predictor._recipe, predictor._file_hash = data, file_hash(data)
    return predictor


def _rebuild(model: str, config: Any, alphabet: bytes, seed: int, state: dict, bits: float,
             symbols: int, info: dict, hash_: bytes | None) -> Predictor:
    """A predictor from what :meth:`Predictor.__reduce__` keeps."""
    p = Predictor(model, alphabet=alphabet, seed=seed, config=config)
    p.kernel.set_state(state)
    p.bits, p.symbols, p.info, p._file_hash = bits, symbols, info, hash_
    return p


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


def _read_meta(meta: dict) -> dict:
    """A model file's metadata, each field of its type and range (ValueError otherwise)."""
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
