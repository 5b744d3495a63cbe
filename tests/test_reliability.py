"""Issue 15: hostile streams, resource limits, faults, and fuzzing kept in the suite.

The long fuzz runs are ``benchmarks/fuzz.py``; the costs of forged headers are
``benchmarks/hostile.py``; signals at random points and a large input are
``benchmarks/faults.py``.  Here: a short seeded run of the same fuzz target, the regression
inputs, each limit, each output rule, and memory under a limit.
"""
import gc
import io
import os
import pathlib
import random
import subprocess
import sys
import weakref

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import seqzip
from seqzip.cli import outputs as cli_outputs
from seqzip import cli as cli_module
from seqzip import coder, container
from seqzip.errors import CorruptError, LimitError, SeqzipError, TruncatedError
from seqzip.models import MODELS, create, make_config

from . import fuzzing
from .test_container import GOLDEN_HEX_V3

REGRESSIONS = pathlib.Path(__file__).parent / "fuzz_regressions"
TEXT = b"All work and no play makes Jack a dull boy. " * 40


def seqzip_cmd(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "seqzip.cli", *args], capture_output=True,
                          **kwargs)


# --- fuzzing ---------------------------------------------------------------------------------

def test_seeded_fuzz_run_finds_nothing():
    """1,500 mutated streams (a quarter of them with repaired checksums, so they reach the
    models and the block checks) through every entry point: each gives the same output or a
    SeqzipError, and nothing decodes to data seqzip would not have written that way."""
    counts = fuzzing.run(1500, seed=20261124)
    assert sum(counts.values()) == 1500
    assert counts.get("CorruptError", 0) > 100 and counts.get("TruncatedError", 0) > 10


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.integers(0, 6))
def test_mutated_streams_property(seed, which):
    seeds = fuzzing.seed_streams(small=True)
    known = dict(seeds)
    rng = random.Random(seed)
    fuzzing.check(fuzzing.mutate(seeds[which][0], rng, [s for s, _ in seeds]), known)


def test_the_fuzz_oracle_catches_a_wrong_output():
    """The target is able to fail: a stream whose decoded data is not a seed's and that seqzip
    would not write (a v3 stream is never canonical) counts as a silent wrong output."""
    stream = seqzip.compress(b"different data")
    old = bytes.fromhex(GOLDEN_HEX_V3)
    assert fuzzing.check(stream, {b"x": b"y"}) == b"different data"  # canonical: fine
    with pytest.raises(fuzzing.Finding, match="silent wrong output"):
        fuzzing.check(old, {b"x": b"y"})


def test_the_regression_inputs_are_there():
    """They are data files: a packaging or ignore rule must not drop them silently."""
    assert len(list(REGRESSIONS.glob("*.sqz"))) >= 8


@pytest.mark.parametrize("path", sorted(REGRESSIONS.glob("*.sqz")), ids=lambda p: p.name)
def test_regression_inputs(path):
    """Inputs kept from fuzzing and from the issue's report: each fails with a SeqzipError
    (the name says which), never decodes, never raises anything else."""
    data = path.read_bytes()
    expected = {"corrupt": CorruptError, "limit": LimitError,
                "truncated": TruncatedError}.get(path.name.split("-")[0], SeqzipError)
    with pytest.raises(expected):
        seqzip.decompress(data)
    fuzzing.check(data)


# --- limits --------------------------------------------------------------------------------

def test_default_limits_admit_every_level_of_every_model():
    for name in MODELS:
        for level in range(1, 10):
            need = make_config(name, level).memory_bytes(256)
            assert need <= container.DEFAULT_MAX_MEMORY, (name, level, need)


def test_max_length_refuses_before_decoding():
    packed = seqzip.compress(TEXT, 1, model="order2")
    with pytest.raises(LimitError, match="1,760 bytes of output, over the limit of 1,000"):
        seqzip.decompress(packed, max_length=1000)
    assert seqzip.decompress(packed, max_length=len(TEXT)) == TEXT
    with pytest.raises(LimitError):  # the limit covers all the streams of a call
        seqzip.decompress(packed + packed, max_length=len(TEXT) + 1)
    with pytest.raises(LimitError):
        seqzip.open(io.BytesIO(packed), max_length=10).read()
    with pytest.raises(LimitError):
        seqzip.decompress_file(io.BytesIO(packed), io.BytesIO(), max_length=10)
    assert seqzip.decompress(packed, max_length=None) == TEXT


def test_max_memory_refuses_before_allocating():
    packed = seqzip.compress(TEXT, 9, model="glnn")
    need = make_config("glnn", 9).memory_bytes(len(set(TEXT)))
    with pytest.raises(LimitError, match="max-memory"):
        seqzip.decompress(packed, max_memory=need - 1)
    assert seqzip.decompress(packed, max_memory=need) == TEXT
    with pytest.raises(LimitError):
        seqzip.SeqzipDecompressor(limits=seqzip.Limits(max_memory=1 << 20)).decompress(packed)


@pytest.mark.parametrize("bad", [-1, 1.5, "1G", True])
def test_limits_are_checked(bad):
    with pytest.raises(ValueError):
        seqzip.Limits(max_length=bad)
    with pytest.raises(ValueError):
        seqzip.decompress(b"", max_memory=bad)


def test_cli_limits(tmp_path):
    path = tmp_path / "f.sqz"
    path.write_bytes(seqzip.compress(TEXT, 1, model="order2"))
    result = seqzip_cmd("-d", "-c", "--max-length", "1K", str(path), text=True)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip().count("\n") == 0 and "over the limit of 1,024" in result.stderr
    ok = seqzip_cmd("-d", "-c", "--max-length", "none", "--max-memory", "64M", str(path))
    assert ok.returncode == 0 and ok.stdout == TEXT
    bad = seqzip_cmd("-d", "-c", "--max-memory", "lots", str(path), text=True)
    assert bad.returncode == 1 and "is not a size" in bad.stderr and bad.stderr.count("\n") == 1


@pytest.mark.parametrize("text, value", [("0", 0), ("512", 512), ("2K", 2048), ("1.5M", 3 << 19),
                                         ("2g", 2 << 30), ("1GiB", 1 << 30), ("none", None)])
def test_sizes(text, value):
    assert cli_module.SizeType().convert(text, None, None) == value


@pytest.mark.parametrize("config", [
    b"\x00" + b"[" * 2040 + b"]" * 2040,  # the nested config of the report
    b"\x00[" + b"1," * 1500 + b"1]",  # long, flat, wrong length
])
def test_hostile_configs_are_corrupt(config):
    header = container.StreamHeader(MODELS["mlstm"].model_id, config[:4096], 0, 10, 16,
                                    b"ab", 0).pack()
    with pytest.raises(CorruptError, match="config"):
        seqzip.decompress(header)


def test_a_2048_unit_mlstm_header_is_refused():
    """The report's memory bomb: an mLSTM of 2,048 units (668 MB) in a 995-byte stream."""
    import dataclasses
    from seqzip.models.base import config_to_header
    config = dataclasses.replace(make_config("mlstm", 1), hidden=320)
    spec = MODELS["mlstm"]
    big = config_to_header(spec.config_class, config, 4).replace(b"320", b"2048")
    header = container.StreamHeader(spec.model_id, big, 0, 10, 16, b"ab", 0, 4).pack()
    with pytest.raises(CorruptError, match="hidden"):
        seqzip.decompress(header)
    # format 6: the typed field hidden, its zigzag varint 640 made 4,096
    typed = config_to_header(spec.config_class, config)
    big = typed.replace(b"\x06hidden\x02\x80\x05", b"\x06hidden\x02\x80\x20")
    assert big != typed
    header = container.StreamHeader(spec.model_id, big, 0, 10, 16, b"ab", 0).pack()
    with pytest.raises(CorruptError, match="hidden"):
        seqzip.decompress(header)


# --- memory and time over many streams -----------------------------------------------------

@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_are_freed_without_the_cycle_collector(name):
    gc.disable()
    try:
        model = create(name, make_config(name, 1), alphabet=b"abc", seed=0)
        coder.encode(model, np.array([0, 1, 2, 1] * 50, dtype=np.uint8))
        ref = weakref.ref(model)
        del model
        assert ref() is None
    finally:
        gc.enable()


def test_concatenated_streams_decode_in_constant_memory():
    """100 concatenated glnn -9 and mlstm -9 streams: the peak memory of decoding them is
    that of decoding 5 (within 10 MB), in a fresh interpreter."""
    script = """
import resource, sys, seqzip
data = b"hello world, " * 30
streams = seqzip.compress(data, 9, model="glnn") + seqzip.compress(data, 9, model="mlstm")
seqzip.decompress(streams * 5)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert seqzip.decompress(streams * 50) == data * 100
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert int(result.stdout) < 10_000, f"grew {result.stdout} KiB"


def test_many_empty_streams():
    empty = seqzip.compress(b"", model="order2")
    assert seqzip.decompress(empty * 20_000) == b""
    assert seqzip.open(io.BytesIO(empty * 20_000)).read() == b""


# --- outputs ---------------------------------------------------------------------------------

def test_an_output_that_appears_meanwhile_is_not_replaced(tmp_path):
    out = tmp_path / "o.sqz"
    with pytest.raises(cli_module.UserError, match="appeared while it was being written"):
        with cli_module.atomic_output(str(out), False, None) as dst:
            dst.write(b"ours")
            out.write_bytes(b"theirs")
    assert out.read_bytes() == b"theirs" and sorted(os.listdir(tmp_path)) == ["o.sqz"]


def test_force_replaces_regular_files_only(tmp_path):
    out = tmp_path / "o.sqz"
    out.write_bytes(b"old")
    with cli_module.atomic_output(str(out), True, None) as dst:
        dst.write(b"new")
    assert out.read_bytes() == b"new"
    sock = tmp_path / "s"
    import socket
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock))
        with pytest.raises(cli_module.UserError, match="not a regular file"):
            with cli_module.atomic_output(str(sock), True, None):
                pass


def test_a_fifo_output_is_written_into_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    source = tmp_path / "in.txt"
    source.write_bytes(TEXT)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    try:
        result = seqzip_cmd("compress", "-q", "-f", "--model", "order2", "-o", str(fifo),
                            str(source))
        got = reader.communicate(timeout=60)[0]
    finally:  # a failed run never opens the FIFO: the reader would wait for ever
        reader.kill()
        reader.wait()
    assert result.returncode == 0, result.stderr
    assert stat_is_fifo(fifo) and seqzip.decompress(got) == TEXT


def stat_is_fifo(path) -> bool:
    import stat
    return stat.S_ISFIFO(os.stat(path).st_mode)


def test_dev_null_stays_a_device(tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes(TEXT)
    before = os.stat("/dev/null")
    result = seqzip_cmd("compress", "-q", "-f", "--model", "order2", "-o", "/dev/null",
                        str(source))
    after = os.stat("/dev/null")
    assert result.returncode == 0 and (after.st_mode, after.st_rdev) == (before.st_mode,
                                                                        before.st_rdev)


def test_stale_temporaries_of_dead_runs_are_removed(tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes(TEXT)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True)
    stale = tmp_path / cli_outputs._temporary_name("in.txt.sqz", int(dead.stdout), "0" * 12)
    live = tmp_path / cli_outputs._temporary_name("in.txt.sqz", os.getpid(), "1" * 12)
    other = tmp_path / cli_outputs._temporary_name("other.sqz", int(dead.stdout), "2" * 12)
    for path in (stale, live, other):
        path.write_bytes(b"partial")
    assert seqzip_cmd("-q", "--model", "order2", str(source)).returncode == 0
    assert not stale.exists() and live.exists() and other.exists()


@pytest.mark.parametrize("redirect", ["<&-", ">&-"])
def test_closed_standard_streams_give_one_line(tmp_path, redirect):
    source = tmp_path / "in.txt"
    source.write_bytes(TEXT)
    args = "- " if redirect == "<&-" else f"-c {source} "
    result = subprocess.run(f"{sys.executable} -m seqzip.cli compress {args}{redirect}",
                            shell=True, capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "is closed" in result.stderr


@pytest.mark.parametrize("args", [["compress", "--levl", "3", "x"], ["--bogus"],
                                  ["compress", "-T", "-3", "x"], ["info", "/no/such.sqz"],
                                  ["-d", "--max-memory", "x", "f.sqz"]])
def test_usage_errors_are_one_line(args):
    result = seqzip_cmd(*args, text=True)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("seqzip: ") and "Traceback" not in result.stderr


def test_a_multi_file_run_goes_on_after_a_bad_file(tmp_path):
    (tmp_path / "a.txt").write_bytes(TEXT)
    (tmp_path / "c.txt").write_bytes(TEXT[::-1])
    (tmp_path / "b_dir").mkdir()
    result = seqzip_cmd("-q", "--model", "order2", str(tmp_path / "a.txt"),
                        str(tmp_path / "b_dir"), str(tmp_path / "missing.txt"),
                        str(tmp_path / "c.txt"), text=True)
    assert result.returncode == 1 and result.stderr.count("\n") == 2
    assert (tmp_path / "a.txt.sqz").exists() and (tmp_path / "c.txt.sqz").exists()


def test_memory_error_reaches_the_user_as_one_line(tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes(TEXT)
    script = ("import sys, seqzip.api, seqzip.cli\n"
              "def boom(*a, **k): raise MemoryError()\n"
              "seqzip.api.compress_file = boom\n"
              "seqzip.cli.main()\n")
    result = subprocess.run([sys.executable, "-c", script, str(source)], capture_output=True,
                            text=True)
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "out of memory" in result.stderr and sorted(os.listdir(tmp_path)) == ["in.txt"]


def test_a_full_file_size_limit_names_the_output(tmp_path):
    """RLIMIT_FSIZE (a full disk, as a process sees it): one line naming the output, not its
    temporary file, and nothing left."""
    source = tmp_path / "in.txt"
    source.write_bytes(os.urandom(200_000))
    script = ("import resource, signal, sys, seqzip.cli\n"
              "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
              "resource.setrlimit(resource.RLIMIT_FSIZE, (10000, 10000))\n"
              "sys.argv = ['seqzip', '-q', '--model', 'order2', sys.argv[1]]\n"
              "seqzip.cli.main()\n")
    result = subprocess.run([sys.executable, "-c", script, str(source)], capture_output=True,
                            text=True)
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "in.txt.sqz" in result.stderr and "sqztmp" not in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["in.txt"]


# --- memory limits (ulimit -v) --------------------------------------------------------------

LIMITED = """
import resource, sys, seqzip
limit = int(sys.argv[1])
data = open(sys.argv[2], "rb").read()
packed = open(sys.argv[3], "rb").read()
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
for way in ("compress", "decompress"):
    try:
        out = (seqzip.compress(data, 6, model=sys.argv[4]) if way == "compress"
               else seqzip.decompress(packed))
        print(way, "same" if out == (packed if way == "compress" else data) else "DIFFERENT")
    except MemoryError:
        print(way, "MemoryError")
    except seqzip.SeqzipError as exc:
        print(way, type(exc).__name__)
"""


@pytest.mark.parametrize("model", ["ctw", "cm"])
def test_under_an_address_space_limit_the_result_is_exact_or_a_memory_error(tmp_path, model):
    """The report's silent data loss: under ``ulimit -v`` the CTW kernel took a refused
    allocation for "budget full" and wrote a different, undecodable stream.  At every limit
    the stream must be the unlimited run's or a MemoryError; a valid stream decodes exactly or
    gives a MemoryError, never a CorruptError."""
    data = (pathlib.Path(__file__).parent.parent / "seqzip" / "api.py").read_bytes() * 3
    packed = seqzip.compress(data, 6, model=model)
    (tmp_path / "d").write_bytes(data)
    (tmp_path / "p").write_bytes(packed)
    outcomes = set()
    for mib in (200, 300, 450, 700, 1200):
        result = subprocess.run([sys.executable, "-c", LIMITED, str(mib << 20),
                                 str(tmp_path / "d"), str(tmp_path / "p"), model],
                                capture_output=True, text=True)
        lines = result.stdout.split("\n")[:2]
        for line in lines:
            if line:
                assert line.split()[1] in ("same", "MemoryError"), (mib, line)
                outcomes.add(line.split()[1])
        if result.returncode != 0:  # the interpreter itself could not start under the limit
            assert "MemoryError" in result.stderr or not result.stdout, result.stderr
    assert "same" in outcomes
