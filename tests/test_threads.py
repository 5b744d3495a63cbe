"""cm codes without the interpreter lock (``_core.run``): streams coded on several threads at
once are the bytes each gives alone, both ways, and a model's error still reaches its caller."""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import seqzip
from seqzip import corpora
from seqzip._core import BitEncoder, ENCODE, SCORE, run
from seqzip.models import create, make_config


def _inputs() -> list[tuple[bytes, int, str]]:
    """Text, a Markov source and noise by cm at levels 1, 6 (its symbol experts, CTW and order
    2, step without the lock too) and 7 (its network too, taking it only to train), and by
    ctw, order2, the LSTM, the ReLU RNN and the GLNN alone (which hold the lock but for the
    LSTM's and the RNN's training)."""
    text = corpora.generate("text", 60_000, seed=11).data
    other = corpora.generate("markov2", 40_000, seed=12).data
    noise = np.random.default_rng(13).integers(0, 256, 20_000, dtype=np.uint8).tobytes()
    return [(text, 1, "cm"), (other, 1, "cm"), (noise, 1, "cm"), (text[:20_000], 6, "cm"),
            (other[:12_000], 6, "cm"), (text[:6_000], 7, "cm"), (text[:30_000], 6, "ctw"),
            (other, 6, "order2"), (text[:3_000], 1, "lstm"), (text[:3_000], 1, "relu-rnn"),
            (text[:2_000], 1, "glnn")]


def test_streams_coded_side_by_side_are_the_streams_coded_alone():
    jobs = _inputs()
    alone = [seqzip.compress(data, level, model=model) for data, level, model in jobs]
    with ThreadPoolExecutor(len(jobs)) as pool:
        together = list(pool.map(lambda job: seqzip.compress(job[0], job[1], model=job[2]),
                                 jobs))
        assert together == alone
        back = list(pool.map(seqzip.decompress, together))
    assert back == [data for data, _, _ in jobs]


def test_scores_side_by_side_are_the_scores_alone():
    data = np.frombuffer(corpora.generate("text", 8_000, seed=14).data, np.uint8).copy()

    def score(_) -> np.ndarray:
        model = create("cm", make_config("cm", 1), alphabet_size=256)
        out = np.empty(len(data))
        run(model.kernel, SCORE, data, scores=out)
        return out

    alone = score(0)
    with ThreadPoolExecutor(3) as pool:
        for got in pool.map(score, range(3)):
            np.testing.assert_array_equal(got, alone)
    assert float(-np.log2(alone).sum()) / len(data) < 8


def test_an_error_in_the_free_loop_is_the_callers_error():
    """A symbol outside a model's alphabet stops the loop where it stands, as before."""
    model = create("cm", make_config("cm", 1), alphabet_size=5)
    with pytest.raises(ValueError, match="outside the model's alphabet of 5"):
        run(model.kernel, ENCODE, np.array([1, 2, 9], np.uint8), BitEncoder())
    before = seqzip.api.symbols_coded()
    with pytest.raises(ValueError, match="symbol 7 outside"):
        run(create("cm", make_config("cm", 1), alphabet_size=5).kernel, ENCODE, np.array([1, 7], np.uint8),
            BitEncoder())
    assert seqzip.api.symbols_coded() - before == 1  # the symbol before it was coded
