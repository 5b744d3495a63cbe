"""The kernel base (``seqzip._core``): the C-level model interface and the one coding step
shared by encoding, decoding and scoring, in symbol mode and in bit mode."""
import numpy as np
import pytest

from seqzip import coder
from seqzip._core import BITS, DECODE, ENCODE, SCORE, SYMBOLS, Kernel, run
from seqzip._kernels.order2 import Order2Kernel
from seqzip._kernels.testing import BitFrequencies, Misbehaving
from seqzip.errors import CorruptError
from tests.helpers import run_python


class Wrapped:
    """The minimum the coder needs of a model: its kernel and alphabet size."""

    def __init__(self, kernel):
        self.kernel, self.alphabet_size = kernel, kernel.alphabet_size


def test_every_kernel_exposes_the_interface():
    k = Order2Kernel(5, 2, 255, 1.0)
    assert isinstance(k, Kernel) and k.mode == SYMBOLS and k.alphabet_size == 5 and k.bits == 0
    capsule = k.interface()
    assert type(capsule).__name__ == "PyCapsule"
    assert k.features() is None
    b = BitFrequencies(5)
    assert b.mode == BITS and b.bits == 3
    with pytest.raises(NotImplementedError):
        b.predict()  # a bit-mode kernel without a full distribution says so


@pytest.mark.parametrize("size", [2, 3, 5, 8, 90, 256])
def test_bit_mode_round_trip_and_forced_bits(size):
    rng = np.random.default_rng(size)
    symbols = rng.integers(0, size, 3000).astype(np.uint8)
    payload = coder.encode(Wrapped(BitFrequencies(size)), symbols)
    decoded = coder.decode(Wrapped(BitFrequencies(size)), payload, len(symbols))
    assert np.array_equal(decoded, symbols)
    bits = coder.log_loss_bits(Wrapped(BitFrequencies(size)), symbols)
    # the coder spends what the scores say (16-bit probabilities, 24-bit coder)
    assert abs(8 * len(payload) - bits.sum()) < 0.002 * len(symbols) + 64
    if size in (3, 5, 90):  # forced bits cost nothing: near log2 A, below the padded B bits
        assert bits.mean() < np.log2(size) + 0.25 < BitFrequencies(size).bits


def test_scores_in_symbol_mode_are_the_predicted_probabilities():
    symbols = np.array([0, 1, 2, 1, 0, 1, 2, 1, 1, 1], dtype=np.uint8)
    scores = np.empty(len(symbols))
    k = Order2Kernel(3, 2, 255, 1.0)
    run(k, SCORE, symbols, scores=scores)
    ref = Order2Kernel(3, 2, 255, 1.0)
    for s, got in zip(symbols, scores):
        assert got == pytest.approx(ref.predict()[s], rel=1e-15)
        ref.update(int(s))


@pytest.mark.parametrize("negative", [False, True])
def test_non_finite_predictions_fall_back_to_uniform_on_both_sides(negative):
    symbols = np.arange(200, dtype=np.uint8) % 7
    encoder = Misbehaving(7, nan_at=50, negative=negative)
    payload = coder.encode(Wrapped(encoder), symbols)
    assert encoder.fallbacks == 150
    decoder = Misbehaving(7, nan_at=50, negative=negative)
    assert np.array_equal(coder.decode(Wrapped(decoder), payload, 200), symbols)
    assert decoder.fallbacks == 150


@pytest.mark.parametrize("fault, error", [(dict(oom_at=40), MemoryError),
                                          (dict(raise_at=40), KeyboardInterrupt)])
def test_a_failing_step_stops_the_coding_with_its_own_error(fault, error):
    """An allocation failure is a MemoryError, never read as corruption; Python code a kernel
    runs from a C-level function (a GLNN training window calls numpy) cannot pass an
    exception on: it is kept and re-raised by the loop, never swallowed with the model left
    halfway through a step.  Both directions."""
    symbols = np.zeros(100, dtype=np.uint8)
    with pytest.raises(error):
        coder.encode(Wrapped(Misbehaving(3, **fault)), symbols)
    payload = coder.encode(Wrapped(Misbehaving(3)), symbols)
    with pytest.raises(error):
        coder.decode(Wrapped(Misbehaving(3, **fault)), payload, 100)


def test_symbols_outside_the_alphabet_are_refused():
    with pytest.raises(ValueError):
        run(Order2Kernel(3, 2, 255, 1.0), SCORE, np.array([0, 3], dtype=np.uint8),
            scores=np.empty(2))
    with pytest.raises(ValueError):
        run(BitFrequencies(5), SCORE, np.array([6], dtype=np.uint8), scores=np.empty(1))
    with pytest.raises(ValueError):
        Order2Kernel(3, 2, 255, 1.0).update(3)


def test_a_corrupt_bit_mode_payload_is_a_corrupt_error_or_other_symbols():
    rng = np.random.default_rng(5)
    symbols = rng.integers(0, 5, 500).astype(np.uint8)
    payload = bytearray(coder.encode(Wrapped(BitFrequencies(5)), symbols))
    payload[len(payload) // 2] ^= 0x40
    try:
        out = coder.decode(Wrapped(BitFrequencies(5)), bytes(payload), 500)
    except CorruptError:
        return
    assert not np.array_equal(out, symbols) and out.max() < 5


def test_directions_are_checked():
    with pytest.raises(ValueError):
        run(BitFrequencies(4), 7, np.zeros(3, dtype=np.uint8))
    with pytest.raises(ValueError):
        run(BitFrequencies(4), SCORE, np.zeros(3, dtype=np.uint8), scores=np.empty(2))
    assert (ENCODE, DECODE, SCORE) == (0, 1, 2)


def test_a_signal_during_glnn_training_is_raised_not_swallowed(tmp_path):
    """End to end: SIGINT arrives while the GLNN trains (its window step runs numpy code)."""
    script = (
        "import signal, seqzip\n"
        "from seqzip import corpora\n"
        "data = corpora.generate('markov2', 400_000, seed=1).data\n"
        "signal.setitimer(signal.ITIMER_REAL, 0.5)\n"
        "signal.signal(signal.SIGALRM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt))\n"
        "try:\n"
        "    seqzip.compress(data, model='glnn', level=1)\n"
        "    print('finished')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted')\n")
    done = run_python(script)
    assert "Exception ignored" not in done.stderr, done.stderr[-2000:]
    assert done.stdout.strip() == "interrupted"  # 400 KB at level 1 take seconds, not 0.5 s
