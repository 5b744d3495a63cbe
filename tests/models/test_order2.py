"""The order-2 context model: its kernel against the slow reference, and its purpose."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from seqzip import coder, corpora
from seqzip.models import create, make_config
from seqzip.models.order2 import Order2Config
from seqzip.reference.context import Order2Reference

from tests.helpers import symbols_of


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12).flatmap(
    lambda a: st.tuples(st.just(a), st.lists(st.integers(0, a - 1), max_size=400))),
    st.integers(0, 2), st.integers(2, 9), st.floats(0.1, 4.0))
def test_kernel_matches_reference(alphabet_and_symbols, order, limit, escape):
    size, symbols = alphabet_and_symbols
    config = Order2Config(order=order, count_limit=limit, escape_weight=escape)
    model = create("order2", config, alphabet_size=size, seed=0)
    ref = Order2Reference(size, order, limit, escape)
    for s in symbols + [0]:
        p = model.predict()
        np.testing.assert_allclose(p, ref.predict(), rtol=1e-12, atol=0)
        assert p.dtype == np.float64 and p.flags.c_contiguous and p.shape == (size,)
        assert abs(p.sum() - 1.0) < 1e-12 and (p > 0).all()
        model.update(s)
        ref.update(s)


def test_rejects_symbols_outside_alphabet():
    model = create("order2", None, alphabet_size=5, seed=0)
    with pytest.raises(ValueError):
        model.update(5)
    with pytest.raises(ValueError):
        model.update(-1)


@pytest.mark.parametrize("bad", [dict(order=3), dict(count_limit=1), dict(count_limit=70000),
                                 dict(escape_weight=0.0)])
def test_config_validation(bad):
    with pytest.raises(ValueError):
        Order2Config(**bad)


def bits_per_char(data: bytes, config) -> float:
    symbols, size = symbols_of(data)
    model = create("order2", config, alphabet_size=size, seed=0)
    return coder.log_loss_bits(model, symbols).mean()


def test_beats_order0_on_generated_text():
    data = corpora.generate("text", 100_000).data
    order0 = bits_per_char(data, Order2Config(order=0))
    order2 = bits_per_char(data, make_config("order2", 6))
    assert order2 < order0 - 1.0, (order2, order0)


def test_beats_order0_on_english(alice):
    order0 = bits_per_char(alice, Order2Config(order=0))
    order1 = bits_per_char(alice, Order2Config(order=1))
    order2 = bits_per_char(alice, make_config("order2", 6))
    assert order2 < order1 < order0
    assert order2 < 2.8 and order0 > 4.4  # measured: 2.70 and 4.58 bits per character


def test_approaches_true_entropy_of_a_markov2_source():
    sample = corpora.generate("markov2", 200_000, seed=2)
    bpc = bits_per_char(sample.data, make_config("order2", 9))
    true = sample.true_bits / len(sample.data)
    assert true < bpc < true + 0.1, (bpc, true)
