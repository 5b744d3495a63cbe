"""The coder spends what the model's log-loss says, and both directions agree."""
import numpy as np
import pytest

from seqzip import coder, container, corpora
from seqzip.errors import CorruptError

from tests.helpers import symbols_of
from seqzip.models import create, make_config




@pytest.mark.parametrize("name", ["text", "markov2"])
def test_payload_bits_match_log_loss_on_1mb(name):
    """Payload bits are within 0.01 bits/symbol of sum(-log2 p) over a 1 MB input."""
    data = corpora.generate(name, 1 << 20, seed=4).data
    symbols, size = symbols_of(data)
    config = make_config("order2", 6)
    payload = coder.encode(create("order2", config, alphabet_size=size, seed=0), symbols)
    ideal = coder.log_loss_bits(create("order2", config, alphabet_size=size, seed=0),
                                symbols).sum()
    overhead = (8 * len(payload) - ideal) / len(symbols)
    assert abs(overhead) < 0.01, overhead  # quantisation rounds both ways per symbol
    decoded = coder.decode(create("order2", config, alphabet_size=size, seed=0), payload,
                           len(symbols))
    assert np.array_equal(decoded, symbols)


def test_decoding_with_a_different_model_does_not_restore():
    symbols, size = symbols_of(corpora.generate("text", 5000).data)
    payload = coder.encode(create("order2", make_config("order2", 6), alphabet_size=size,
                                  seed=0), symbols)
    try:
        wrong = coder.decode(create("order2", make_config("order2", 1), alphabet_size=size,
                                    seed=0), payload, len(symbols))
    except CorruptError:
        return
    assert not np.array_equal(wrong, symbols)


def test_extra_payload_words_are_detected():
    symbols, size = symbols_of(b"abcabcabcabd" * 20)
    model = lambda: create("order2", None, alphabet_size=size, seed=0)  # noqa: E731
    payload = coder.encode(model(), symbols)
    with pytest.raises(CorruptError):
        coder.decode(model(), payload + b"\x12\x34\x56\x78" * 3, len(symbols))


def test_max_payload_bound_holds_for_adversarial_data():
    """Symbols the model rates least likely still fit the header check's bound."""
    rng = np.random.default_rng(0)
    symbols = rng.integers(0, 256, 20000).astype(np.uint8)
    payload = coder.encode(create("order2", None, alphabet_size=256, seed=0), symbols)
    assert len(payload) <= container.max_payload_bytes(len(symbols))


def _constriction_words(bits, p):
    import constriction
    encoder = constriction.stream.queue.RangeEncoder()
    if len(bits):
        encoder.encode(np.asarray(bits, np.int32),
                       constriction.stream.model.Bernoulli(perfect=False), np.asarray(p) / 65536)
    return encoder.get_compressed()


@pytest.mark.parametrize("kind", ["uniform", "extreme", "unlikely", "straddling"])
def test_bit_mode_range_coder_writes_constrictions_words(kind):
    """_core's BitEncoder and BitDecoder are constriction's range coder under Bernoulli(p,
    perfect=False): the same words, sealed at any point, and back.  "straddling" keeps the
    interval across the carry point so that many words wait for their carry."""
    from seqzip._core import BitDecoder, BitEncoder
    rng = np.random.default_rng(len(kind))
    n = 30000
    if kind == "extreme":
        p = rng.choice([1, 2, 3, 16, 32768, 65520, 65534, 65535], n)
    else:
        p = rng.integers(1, 65536, n)
    bits = (rng.random(n) < p / 65536).astype(np.int32)
    if kind == "unlikely":
        bits = 1 - bits
    if kind == "straddling":  # the interval's arithmetic, to choose bits (not the coder's code)
        top, lower, span = (1 << 64) - 1, 0, (1 << 64) - 1
        for i in range(n):
            c, scale = ((65536 - int(p[i])) * 16777214 >> 16) + 1, span >> 24
            if lower + span > top and rng.random() < 0.97:
                bits[i] = lower + scale * c <= top
            if bits[i]:
                lower, span = (lower + scale * c) & top, scale * ((1 << 24) - c)
            else:
                span = scale * c
            if span < 1 << 32:
                lower, span = (lower << 32) & top, span << 32
    encoder = BitEncoder()
    for start in range(0, n, 7001):
        encoder.encode_bits(bits[start:start + 7001], p[start:start + 7001])
        assert np.array_equal(encoder.get_compressed(),
                              _constriction_words(bits[:start + 7001], p[:start + 7001]))
    words = encoder.get_compressed()
    decoder = BitDecoder(words)
    assert np.array_equal(decoder.decode_bits(p), bits) and decoder.maybe_exhausted()
    assert not BitDecoder(np.append(words, np.uint32(7))).maybe_exhausted()
