"""Range coding of symbol sequences under an adaptive model.

This is the only module that imports ``constriction``.  Encoding, decoding and scoring run the
same step, :func:`seqzip._core.run`: ask the model's kernel for a distribution (or, for a
bit-mode kernel, for the probability of each of the symbol's bits), code the symbol (or bit),
let the model learn it.  There is no batched path on either side, so both sides see
bit-identical probabilities as long as the model is deterministic.

    >>> import numpy as np
    >>> from seqzip.models import create
    >>> symbols = np.array([0, 1, 2, 1, 0, 1, 2, 1], dtype=np.uint8)
    >>> payload = encode(create("order2", None, alphabet_size=3, seed=0), symbols)
    >>> decoded = decode(create("order2", None, alphabet_size=3, seed=0), payload, len(symbols))
    >>> assert np.array_equal(decoded, symbols)
"""
from __future__ import annotations

import functools

import constriction
import numpy as np

from ._core import BITS, DECODE, ENCODE, ONE, SCORE, BitDecoder, BitEncoder, run
from .errors import CorruptError

# constriction is a compiled module whose submodules are attributes, not importable modules.
RangeEncoder = constriction.stream.queue.RangeEncoder
RangeDecoder = constriction.stream.queue.RangeDecoder

# Symbol mode: constriction's Categorical quantises the float64 distribution to 24-bit
# probabilities, identically on both sides ("perfect=False": every symbol keeps some mass;
# "lazy=True" quantises only what coding the one symbol needs: the same stream, 1.5x faster).
_categorical = functools.partial(constriction.stream.model.Categorical, perfect=False, lazy=True)

# Bit mode: P(1) comes in units of 2^-16, so there are at most 65,535 distinct Bernoulli models.
# Building one costs ~0.6 us and coding with a built one ~0.15 us: each is built once per
# process, on first use, and kept here.
_BERNOULLI: list = [None] * (ONE + 1)


def _bernoulli(p: int):
    return constriction.stream.model.Bernoulli(p / ONE, perfect=False)


# A bit-mode kernel is coded by _core.BitEncoder and BitDecoder: constriction's range coder
# under these Bernoulli models, written in C (the same words; tests/test_coder.py checks them
# against constriction), so no bit crosses into Python.  _bernoulli and _BERNOULLI serve a
# caller that passes constriction's own coder to run().


def encode(model, symbols: np.ndarray, lean: bool = False) -> bytes:
    """Range-code ``symbols`` (alphabet indices, uint8) under ``model``; the model learns them.

    Returns the payload as little-endian 32-bit words, or with ``lean`` (a lean frame's,
    ``seqzip.container``) as big-endian words without the zero bytes that end the last one
    (at most three), the bit coder sealed with the fewest bytes (``BitEncoder``'s ``tight``).
    A one-symbol alphabet carries no information (and constriction cannot code it), so its
    payload is empty.

    Raises:
        MemoryError: the model ran out of memory.

        >>> from seqzip.models import create
        >>> len(encode(create("order2", None, alphabet_size=2), np.zeros(64, np.uint8))) % 4
        0
    """
    if model.alphabet_size == 1:
        return b""
    encoder = BitEncoder() if model.kernel.mode == BITS else RangeEncoder()
    run(model.kernel, ENCODE, np.ascontiguousarray(symbols, dtype=np.uint8), encoder,
        _categorical, _bernoulli, _BERNOULLI)
    if not lean:
        return encoder.get_compressed().astype("<u4", copy=False).tobytes()
    words = encoder.get_compressed(True) if model.kernel.mode == BITS else \
        encoder.get_compressed()
    payload = words.astype(">u4", copy=False).tobytes()
    keep = len(payload)
    while keep > len(payload) - 3 and keep and not payload[keep - 1]:
        keep -= 1
    return payload[:keep]


def _lean_words(payload: bytes) -> np.ndarray:
    """A lean payload's words (``encode``): its big-endian words, the last one's zero bytes
    put back."""
    padded = payload + bytes(-len(payload) % 4)
    return np.frombuffer(padded, dtype=">u4").astype(np.uint32)


def decode(model, payload: bytes, n_symbols: int, blocks=None, check=None,
           lean: bool = False) -> np.ndarray:
    """Decode ``n_symbols`` symbols from ``payload`` made by :func:`encode` with the same model
    (and the same ``lean``).

    With ``blocks`` ((start, end) pairs covering the symbols in order), ``check(i, symbols)``
    is called on block ``i``'s decoded symbols as soon as they are decoded, before the next
    block: it raises to stop decoding a payload that has gone wrong.

    Raises:
        CorruptError: the payload does not decode to exactly ``n_symbols`` symbols.
        MemoryError: the model ran out of memory (the data may be fine).

        >>> from seqzip.models import create
        >>> x = np.array([1, 0, 1, 1], np.uint8)
        >>> payload = encode(create("ctw", None, alphabet_size=2), x)
        >>> decode(create("ctw", None, alphabet_size=2), payload, 4).tolist()
        [1, 0, 1, 1]
    """
    if len(payload) % 4 and not lean:
        raise CorruptError("payload length is not a whole number of 32-bit words")
    if blocks is None:
        blocks = [(0, n_symbols)] if n_symbols else []
    if model.alphabet_size == 1:
        if payload:
            raise CorruptError("payload of a one-symbol alphabet must be empty")
        out = np.zeros(n_symbols, dtype=np.uint8)
        for i, (start, end) in enumerate(blocks if check is not None else ()):
            check(i, out[start:end])
        return out
    words = _lean_words(payload) if lean else np.frombuffer(payload, dtype="<u4").astype(np.uint32)
    tight = lean and model.kernel.mode == BITS  # encode's tight seal: BitDecoder alone reads it
    if tight:
        decoder = BitDecoder(words)
    else:
        try:
            decoder = RangeDecoder(words)
        except (ValueError, RuntimeError) as exc:  # impossible word sequences are refused
            raise CorruptError(f"range decoder rejected the payload: {exc}") from None
        if model.kernel.mode == BITS:  # constriction's decoder above only vetted the words
            decoder = BitDecoder(words)
    out = np.zeros(n_symbols, dtype=np.uint8)
    for i, (start, end) in enumerate(blocks):
        try:
            run(model.kernel, DECODE, out[start:end], decoder, _categorical, _bernoulli,
                _BERNOULLI)
        except (ValueError, RuntimeError, AssertionError) as exc:
            # constriction raises AssertionError ("compressed data that is invalid for the
            # employed entropy model") when the words run out in an impossible state; the
            # loop raises ValueError for a decoded symbol the model rules out
            raise CorruptError(f"payload does not decode: {exc}") from None
        if check is not None:
            check(i, out[start:end])
    if not (decoder.words_read() if tight else decoder.maybe_exhausted()):
        raise CorruptError("payload holds more data than its symbols use")
    return out


def log_loss_bits(model, symbols: np.ndarray) -> np.ndarray:
    """Feed ``symbols`` to ``model``; return -log2 p of each under the model (evaluation only).

    The probabilities are those the coder would use (the same step); numpy's log2 runs after
    the loop, never on the coding path.

        >>> from seqzip.models import create
        >>> log_loss_bits(create("order2", None, alphabet_size=4), np.array([3], np.uint8)).tolist()
        [2.0]
    """
    symbols = np.ascontiguousarray(symbols, dtype=np.uint8)
    picked = np.empty(len(symbols))
    run(model.kernel, SCORE, symbols, scores=picked)
    return -np.log2(picked)
