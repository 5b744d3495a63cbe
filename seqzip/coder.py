"""Range coding of symbol sequences under an adaptive model.

This is the only module that imports ``constriction``.  Encoding and decoding run the same
step, :func:`_run`: ask the model for a distribution, code one symbol with it, let the model
learn that symbol.  There is no batched path on either side, so both sides see bit-identical
probabilities as long as the model is deterministic.

    >>> import numpy as np
    >>> from seqzip.models import create
    >>> symbols = np.array([0, 1, 2, 1, 0, 1, 2, 1], dtype=np.uint8)
    >>> payload = encode(create("order2", None, alphabet_size=3, seed=0), symbols)
    >>> decoded = decode(create("order2", None, alphabet_size=3, seed=0), payload, len(symbols))
    >>> assert np.array_equal(decoded, symbols)
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import constriction

from .errors import CorruptError
from .models.base import Model

# constriction is a compiled module whose submodules are attributes, not importable modules.
Categorical = constriction.stream.model.Categorical
RangeEncoder = constriction.stream.queue.RangeEncoder
RangeDecoder = constriction.stream.queue.RangeDecoder

# constriction's Categorical quantises to 24-bit probabilities, so one symbol never costs more
# than 24 bits; a frame of n symbols fits in n * 24 bits plus the coder's final flush.
PRECISION_BITS = 24
FLUSH_WORDS = 2


def max_payload_bytes(n_symbols: int) -> int:
    """Upper bound on the payload of a frame of ``n_symbols`` symbols (a header sanity check)."""
    return 4 * ((n_symbols * PRECISION_BITS + 31) // 32 + FLUSH_WORDS)


def _run(model: Model, n_symbols: int, code_one: Callable[[np.ndarray, int], int]) -> None:
    """The step shared by encoder and decoder: predict, code one symbol, update."""
    predict = model.predict
    update = model.update
    for i in range(n_symbols):
        update(code_one(predict(), i))


def encode(model: Model, symbols: np.ndarray) -> bytes:
    """Range-code ``symbols`` (alphabet indices, uint8) under ``model``; the model learns them.

    Returns the payload as little-endian 32-bit words.  A one-symbol alphabet carries no
    information (and constriction cannot code it), so its payload is empty.
    """
    if model.alphabet_size == 1:
        return b""
    encoder = RangeEncoder()
    values = symbols.tolist()  # Python ints: faster to index than numpy scalars

    def code_one(probs: np.ndarray, i: int) -> int:
        symbol = values[i]
        encoder.encode(symbol, Categorical(probs, perfect=False))
        return symbol

    _run(model, len(values), code_one)
    return encoder.get_compressed().astype("<u4", copy=False).tobytes()


def decode(model: Model, payload: bytes, n_symbols: int) -> np.ndarray:
    """Decode ``n_symbols`` symbols from ``payload`` made by :func:`encode` with the same model.

    Raises:
        CorruptError: the payload does not decode to exactly ``n_symbols`` symbols.
    """
    if len(payload) % 4:
        raise CorruptError("payload length is not a whole number of 32-bit words")
    if model.alphabet_size == 1:
        if payload:
            raise CorruptError("payload of a one-symbol alphabet must be empty")
        return np.zeros(n_symbols, dtype=np.uint8)
    words = np.frombuffer(payload, dtype="<u4").astype(np.uint32)
    try:
        decoder = RangeDecoder(words)
    except Exception as exc:  # constriction rejects some impossible word sequences up front
        raise CorruptError(f"range decoder rejected the payload: {exc}") from None
    out = bytearray(n_symbols)

    def code_one(probs: np.ndarray, i: int) -> int:
        symbol = decoder.decode(Categorical(probs, perfect=False))
        out[i] = symbol
        return symbol

    try:
        _run(model, n_symbols, code_one)
    except CorruptError:
        raise
    except Exception as exc:
        raise CorruptError(f"payload does not decode: {exc}") from None
    if not decoder.maybe_exhausted():
        raise CorruptError("payload holds more data than its symbols use")
    return np.frombuffer(bytes(out), dtype=np.uint8)


def log_loss_bits(model: Model, symbols: np.ndarray) -> np.ndarray:
    """Feed ``symbols`` to ``model``; return -log2 p of each under the model (evaluation only).

    Uses numpy's log2 after the loop: this never runs on the coding path.
    """
    n = len(symbols)
    picked = np.empty(n, dtype=np.float64)
    values = symbols.tolist()

    def code_one(probs: np.ndarray, i: int) -> int:
        symbol = values[i]
        picked[i] = probs[symbol] / probs.sum()
        return symbol

    _run(model, n, code_one)
    return -np.log2(picked)
