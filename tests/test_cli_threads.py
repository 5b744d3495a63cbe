"""Several inputs with -T N and no scheduler: those too small to cut are coded whole, N at a
time on threads (seqzip.cli.files.LocalThreads), giving the bytes of -T 1; a larger input is
still cut into pieces, a bad one is reported and the rest done, and no thread outlives its
input."""
import shutil
import threading
import time

import numpy as np
import pytest
from click.testing import CliRunner

from seqzip import corpora
from seqzip.cli import cli
from seqzip.cli import files as cli_files
from seqzip.api import PIECES_MAGIC


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture
def inputs(tmp_path):
    """Five inputs one stream each at -T 2 (texts of 3-40 KB, 20 KB of noise, an empty file)
    and one of 300 KB that -T 2 cuts into pieces."""
    folder = tmp_path / "in"
    folder.mkdir()
    for i, size in enumerate((3_000, 12_000, 40_000)):
        (folder / f"t{i}.txt").write_bytes(corpora.generate("text", size, seed=20 + i).data)
    (folder / "noise.bin").write_bytes(
        np.random.default_rng(5).integers(0, 256, 20_000, dtype=np.uint8).tobytes())
    (folder / "empty").write_bytes(b"")
    (folder / "big.txt").write_bytes(corpora.generate("text", 300_000, seed=30).data)
    return folder


@pytest.fixture
def counted(monkeypatch):
    """The inputs LocalThreads ran."""
    ran = []
    submit = cli_files.LocalThreads.submit

    def counting(self, fn, data, *args, **kwargs):
        ran.append(len(data))
        return submit(self, fn, data, *args, **kwargs)

    monkeypatch.setattr(cli_files.LocalThreads, "submit", counting)
    return ran


def _wait_for_threads(baseline: int) -> int:
    deadline = time.monotonic() + 10
    while threading.active_count() > baseline and time.monotonic() < deadline:
        time.sleep(0.01)
    return threading.active_count()


def test_small_inputs_on_threads_are_the_bytes_of_one_worker(inputs, tmp_path, counted):
    originals = {p.name: p.read_bytes() for p in inputs.iterdir()}
    alone = tmp_path / "alone"
    shutil.copytree(inputs, alone)
    baseline = threading.active_count()
    assert run("-q", "-1", "-r", "-T", "2", str(inputs)).exit_code == 0
    assert run("-q", "-1", "-r", "-T", "1", str(alone)).exit_code == 0
    assert sorted(counted) == sorted(len(v) for k, v in originals.items() if k != "big.txt")
    for name in originals:
        packed = (inputs / (name + ".sqz")).read_bytes()
        if name == "big.txt":
            assert packed.startswith(PIECES_MAGIC)  # cut into pieces, in processes
        else:
            assert packed == (alone / (name + ".sqz")).read_bytes(), name
    for name in originals:
        (inputs / name).unlink()
    counted.clear()
    assert run("-q", "-t", "-r", "-T", "2", str(inputs)).exit_code == 0
    assert run("-q", "-d", "-r", "-T", "2", str(inputs)).exit_code == 0
    assert {name: (inputs / name).read_bytes() for name in originals} == originals
    assert len(counted) == 2 * (len(originals) - 1)  # the piece set decodes in processes
    assert _wait_for_threads(baseline) == baseline


def test_a_bad_input_among_threads_is_reported_and_the_rest_done(inputs, counted):
    names = ["t0.txt", "t1.txt", "t2.txt", "noise.bin"]
    assert run("-q", "-1", "-T", "2", *(str(inputs / n) for n in names)).exit_code == 0
    damaged = bytearray((inputs / "t1.txt.sqz").read_bytes())
    damaged[len(damaged) // 2] ^= 0x40
    (inputs / "t1.txt.sqz").write_bytes(bytes(damaged))
    originals = {n: (inputs / n).read_bytes() for n in names}
    for n in names:
        (inputs / n).unlink()
    result = run("-q", "-d", "-T", "2", *(str(inputs / (n + ".sqz")) for n in names))
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line]
    assert len(lines) == 1 and "t1.txt.sqz" in lines[0], result.output
    assert not (inputs / "t1.txt").exists()
    for n in names:
        if n != "t1.txt":
            assert (inputs / n).read_bytes() == originals[n]
    assert len(counted) == 2 * len(names)


def test_one_input_or_one_worker_takes_no_thread(inputs, counted):
    assert run("-q", "-1", "-T", "2", str(inputs / "t0.txt")).exit_code == 0
    assert run("-q", "-1", "-f", "-r", "-T", "1", str(inputs)).exit_code == 0
    assert counted == []


def test_which_inputs_decode_on_threads(tmp_path):
    """Small streams; not piece sets (their pieces decode in processes), nor inputs over
    THREAD_MAX (a task holds its input and output in memory), nor what cannot be read."""
    small, pieces, large = tmp_path / "a.sqz", tmp_path / "b.sqz", tmp_path / "c.sqz"
    small.write_bytes(b"\xb7SQZ" + bytes(100))
    pieces.write_bytes(PIECES_MAGIC + bytes(100))
    with open(large, "wb") as f:
        f.truncate(cli_files.THREAD_MAX + 1)
    assert [cli_files._decoded_on_a_thread(str(p)) for p in (small, pieces, large)] == \
        [True, False, False]
    assert not cli_files._decoded_on_a_thread(str(tmp_path / "missing.sqz"))
    large.write_bytes(bytes(cli_files.THREAD_MAX))
    assert cli_files._decoded_on_a_thread(str(large))
