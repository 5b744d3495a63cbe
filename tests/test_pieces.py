"""Piece sets (``-T N``): pieces that start from the model's state after a shared prefix, and
an index that makes a missing or cut piece an error."""
import io
import subprocess
import sys
import threading

import pytest

import seqzip
from seqzip import corpora
from seqzip.pieceset import PIECES_MAGIC, PieceSet, parse_piece_set
from seqzip.pieces import MIN_PIECE, warm_layout

DATA = corpora.generate("text", 300_000, seed=11).data


def _packed(processes=2, model="order2", level=6):
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(DATA), out, model=model, level=level, processes=processes)
    return out.getvalue()


@pytest.fixture(scope="module")
def packed():
    return _packed()


def test_layout_shares_a_prefix_and_pieces_of_at_least_min_piece():
    assert warm_layout(300_000, 2) == [37_500, 131_250, 131_250]
    assert warm_layout(2 * MIN_PIECE, 2) == [2 * MIN_PIECE]  # too little: one stream
    lengths = warm_layout(100 << 20, 4)
    assert lengths[0] == 1 << 20 and sum(lengths) == 100 << 20
    assert max(lengths[1:]) <= 8 << 20 and min(lengths[1:]) >= MIN_PIECE


def test_piece_set_round_trips_serially_and_side_by_side(packed):
    pieces, used = parse_piece_set(packed)
    assert packed.startswith(PIECES_MAGIC) and pieces.lengths == tuple(warm_layout(len(DATA), 2))
    assert seqzip.decompress(packed) == DATA
    assert seqzip.decompress(packed + packed) == DATA + DATA  # sets concatenate
    restored, seen = io.BytesIO(), []
    seqzip.decompress_file(io.BytesIO(packed), restored, seen.append, processes=2)
    assert restored.getvalue() == DATA and sum(seen) == len(DATA)
    with seqzip.open(io.BytesIO(packed)) as f:
        assert f.read() == DATA
    spans = seqzip.api.stream_spans(io.BytesIO(packed))
    assert [(s.length, s.piece[0]) for s in spans] == [(n, i) for i, n in
                                                          enumerate(pieces.lengths)]


def test_warm_pieces_cost_less_than_independent_ones(packed):
    cold = b"".join(seqzip.compress(DATA[i:i + 150_000], model="order2")
                    for i in range(0, len(DATA), 150_000))
    serial = seqzip.compress(DATA, model="order2")
    assert len(serial) < len(packed) < len(cold)


def test_output_is_the_same_whether_workers_inherit_the_state_or_receive_it(packed):
    result = {}
    # a process with threads takes its workers from a fork server: the state travels as bytes
    thread = threading.Thread(target=lambda: result.setdefault("packed", _packed()))
    thread.start()
    thread.join()
    assert result["packed"] == packed


def _piece_or_error(data: bytes, start, *args) -> bytes:
    if data == b"bad":
        raise ValueError("a piece failed")
    from seqzip.pieces import compress_warm_piece

    return compress_warm_piece(data, start, *args)


def test_forked_workers_code_in_place_without_changing_the_model_they_hold():
    """A forked worker codes each piece with the inherited model in place, in a process forked
    for the piece: a worker's later pieces start from the prefix's state as its first did, and
    a piece's error comes back as itself."""
    from seqzip.models import make_config
    from seqzip.pieces import LocalEngine, _forks, compress_first, compress_warm_piece
    from seqzip.session import state_bytes

    args = ("order2", make_config("order2", 6), 0, 1 << 20, bytes(sorted(set(DATA))))
    _, model = compress_first(DATA[:50_000], *args)
    chunk = DATA[50_000:80_000]
    expected = compress_warm_piece(chunk, state_bytes(model), *args)
    with LocalEngine(2) as engine:
        start = engine.warm(model)
        # with one thread (a lone run of this file) the workers are forked and hold the model;
        # in a process with threads (the whole suite: the cluster tests' threads) they come
        # from a fork server and take the state's bytes: the same streams either way
        assert (start is None) == _forks()
        streams = list(engine.map(_piece_or_error, [(chunk, start, *args)] * 5))
    assert streams == [expected] * 5
    with LocalEngine(2) as engine:
        start = engine.warm(model)
        with pytest.raises(ValueError, match="a piece failed"):
            list(engine.map(_piece_or_error, [(chunk, start, *args), (b"bad", start, *args)]))
    model.close()


def test_a_later_piece_alone_does_not_decode(packed):
    spans = seqzip.api.stream_spans(io.BytesIO(packed))
    with pytest.raises(seqzip.CorruptError):
        seqzip.decompress(packed[spans[1].start:spans[1].end])


@pytest.mark.parametrize("cut", ["last piece", "mid piece", "index"])
def test_a_set_cut_short_is_an_error_everywhere(packed, cut):
    spans = seqzip.api.stream_spans(io.BytesIO(packed))
    damaged = {"last piece": packed[:spans[-1].start],  # cut at a piece boundary
               "mid piece": packed[:spans[1].start] + packed[spans[2].start:],  # one missing
               "index": packed[:20]}[cut]
    with pytest.raises(seqzip.SeqzipError):
        seqzip.decompress(damaged)
    with pytest.raises(seqzip.SeqzipError):
        seqzip.decompress_file(io.BytesIO(damaged), io.BytesIO(), processes=2)
    with pytest.raises(seqzip.SeqzipError):
        seqzip.api.stream_spans(io.BytesIO(damaged))


def test_a_damaged_index_is_corrupt(packed):
    damaged = bytearray(packed)
    damaged[12] ^= 1  # inside the first piece length
    with pytest.raises(seqzip.CorruptError, match="index"):
        seqzip.decompress(bytes(damaged))
    forged = PieceSet(1, (5, 3)).pack() + seqzip.compress(b"abcde", model="order2") \
        + seqzip.compress(b"xyz", model="order2")
    with pytest.raises(seqzip.CorruptError, match="another model"):
        seqzip.decompress(forged)


def test_cli_test_and_decompress_refuse_a_set_cut_at_a_piece_boundary(packed, tmp_path):
    spans = seqzip.api.stream_spans(io.BytesIO(packed))
    path = tmp_path / "cut.sqz"
    path.write_bytes(packed[:spans[-1].start])
    for flags in (["-t"], ["-dc"], ["-d", "-T", "2", "-c"]):
        result = subprocess.run([sys.executable, "-m", "seqzip.cli", *flags, str(path)],
                                capture_output=True, text=True)
        assert result.returncode == 1, flags
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and ("piece set ended" in lines[0] or "ended before" in lines[0])


def test_info_lists_the_pieces_and_refuses_a_cut_set(packed):
    from seqzip.streaminfo import describe_file

    info = describe_file(io.BytesIO(packed), "x")
    assert [s["piece"] for s in info["streams"]] == [0, 1, 2]
    assert info["compressed_bytes"] == len(packed) and info["original_bytes"] == len(DATA)
    spans = seqzip.api.stream_spans(io.BytesIO(packed))
    with pytest.raises(seqzip.TruncatedError, match="2 of its 3 pieces"):
        describe_file(io.BytesIO(packed[:spans[-1].start]), "x")


def test_damaged_sets_raise_seqzip_errors_only():
    import random

    data = DATA[:160_000]
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="order2", level=1, processes=2)
    packed = out.getvalue()
    spans = seqzip.api.stream_spans(io.BytesIO(packed))
    # the index, the head of every piece, and bytes anywhere
    r = random.Random(3)
    places = list(range(0, spans[0].start)) + [s.start + i for s in spans for i in range(80)]
    places += [r.randrange(len(packed)) for _ in range(40)]
    for at in places:
        damaged = bytearray(packed)
        damaged[at] ^= 1 << r.randrange(8)
        try:
            restored = seqzip.decompress(bytes(damaged))
        except seqzip.SeqzipError:
            continue
        assert restored == data, at  # a flip that changes nothing decoded (e.g. a padding bit)


class _FailingSink:
    """Takes piece 0's stream and the index, then fails (a full disk, a dead guardian)."""

    def __init__(self, writes: int) -> None:
        self.writes = writes

    def write(self, data: bytes) -> int:
        self.writes -= 1
        if self.writes < 0:
            raise OSError(28, "No space left on device")
        return len(data)


@pytest.mark.parametrize("direction", ["compress", "decompress"])
def test_a_failed_output_collects_the_workers(packed, direction):
    """Issue 23: an output that fails while workers code later pieces cancels the pieces not
    started and collects the workers before the error reaches the caller (nothing is left
    running for the interpreter's exit to wait for; no worker is killed mid-result)."""
    import multiprocessing

    with pytest.raises(OSError, match="No space"):
        if direction == "compress":
            seqzip.compress_file(io.BytesIO(DATA), _FailingSink(2), model="order2",
                                 processes=2)
        else:
            seqzip.decompress_file(io.BytesIO(packed), _FailingSink(1), processes=2)
    assert multiprocessing.active_children() == []


def _piece_or_death(n: int) -> int:
    import os
    import signal

    if n < 0:  # as the out-of-memory killer ends a worker
        os.kill(os.getpid(), signal.SIGKILL)
    return n


def test_a_killed_worker_is_a_worker_error():
    """A worker killed by SIGKILL (the out-of-memory killer) breaks the pool: WorkerError (an
    OSError) naming it and the signal, not a wait for ever."""
    from seqzip.errors import WorkerError
    from seqzip.pieces import LocalEngine

    got = []
    with LocalEngine(2) as engine:
        with pytest.raises(WorkerError, match=r"worker process \(pid \d+\) was killed by "
                                              r"SIGKILL"):
            for result in engine.map(_piece_or_death, [(1,), (2,), (-1,), (4,), (5,)]):
                got.append(result)
    # the results before the death come in order, unless the broken pool failed them first
    # (it fails every future whose result has not reached the parent yet)
    assert got in ([], [1], [1, 2])
