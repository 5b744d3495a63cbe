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
ROOT = pathlib.Path(__file__).resolve().parent.parent
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
@given(st.integers(0, 2**32 - 1), st.integers(0, 7))
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


def _temporaries_in(directory) -> list:
    return [name for name in os.listdir(directory) if name.endswith(cli_outputs.TMP_SUFFIX)]


@pytest.mark.parametrize("like_mode, umask", [(0o600, 0o022), (0o644, 0o022), (0o400, 0o022),
                                              (None, 0o022), (None, 0o077), (None, 0o002)],
                         ids=["0600", "0644", "0400", "umask022", "umask077", "umask002"])
def test_a_temporary_output_is_private_until_complete(tmp_path, like_mode, umask):
    """Issue 23: the temporary file was created 0644 and chmod'ed at the end, so another user
    could read a partial output of a 0600 input (the plaintext, with -d).  It is created with
    the final mode's restrictions and at most 0600, and given the final mode when complete:
    the input's, or the umask's."""
    like = None
    if like_mode is not None:
        like = tmp_path / "input"
        like.write_bytes(b"secret")
        os.chmod(like, like_mode)
    final = like_mode if like_mode is not None else 0o666 & ~umask
    out = tmp_path / "out"
    old = os.umask(umask)
    try:
        with cli_module.atomic_output(str(out), False, None if like is None else str(like)) as dst:
            dst.write(b"partial")
            dst.flush()
            [tmp] = _temporaries_in(tmp_path)
            assert os.stat(tmp_path / tmp).st_mode & 0o7777 == final & 0o600 & ~umask
    finally:
        os.umask(old)
    assert os.stat(out).st_mode & 0o7777 == final and not _temporaries_in(tmp_path)


def test_decompressing_a_private_file_never_shows_its_plaintext(tmp_path):
    """With -d the temporary file is the plaintext: while it is written its mode is 0600 (the
    0600 input's restricted), and the finished output has the input's mode."""
    packed = tmp_path / "secret.txt.sqz"
    packed.write_bytes(seqzip.compress(TEXT, model="order2"))
    os.chmod(packed, 0o600)
    script = ("import os, sys, seqzip.api, seqzip.cli\n"
              "real, d = seqzip.api.decompress_file, os.path.dirname(sys.argv[1])\n"
              "def spy(src, dst, *a, **k):\n"
              "    written = real(src, dst, *a, **k); dst.flush()\n"
              "    for n in os.listdir(d):\n"
              "        if n.endswith('.sqztmp'):\n"
              "            print(oct(os.stat(os.path.join(d, n)).st_mode & 0o7777))\n"
              "    return written\n"
              "seqzip.api.decompress_file = spy\n"
              "sys.argv = ['seqzip', '-d', '-q', sys.argv[1]]\n"
              "seqzip.cli.main()\n")
    result = subprocess.run([sys.executable, "-c", script, str(packed)], capture_output=True,
                            text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["0o600"]
    out = tmp_path / "secret.txt"
    assert out.read_bytes() == TEXT and os.stat(out).st_mode & 0o777 == 0o600


KILL_A_WORKER = """
import os, signal, sys, seqzip.api, seqzip.cli
name = sys.argv[1]
real = getattr(seqzip.api, name)
def dies(*args, **kwargs):  # in the worker (forked: it has this module): die as OOM kills
    os.kill(os.getpid(), signal.SIGKILL)
setattr(seqzip.api, name, dies)
sys.argv = ["seqzip", *sys.argv[2:]]
seqzip.cli.main()
"""


@pytest.mark.parametrize("direction", ["compress", "decompress"])
def test_a_killed_worker_ends_the_run_with_one_line(tmp_path, direction):
    """Issue 23: with -T 2, a worker killed by SIGKILL (the out-of-memory killer) made the run
    wait for ever, holding its temporary file.  Now: exit 1, one line naming the worker and the
    signal, nothing written, at once."""
    import time

    from seqzip import corpora

    data = corpora.generate("english", 400_000, seed=3).data
    source = tmp_path / "in.txt"
    packed = tmp_path / "in.txt.sqz"
    if direction == "compress":
        source.write_bytes(data)
        name, args, before = "compress_warm_piece", ["-q", "-T", "2", "--model", "order2",
                                                     str(source)], ["in.txt"]
    else:
        with open(packed, "wb") as dst:
            seqzip.compress_file(io.BytesIO(data), dst, model="order2", processes=2)
        name, args, before = "decompress_piece", ["-d", "-q", "-T", "2", str(packed)], [
            "in.txt.sqz"]
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-c", KILL_A_WORKER, name, *args],
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    seconds = time.monotonic() - start
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "worker process" in result.stderr and "SIGKILL" in result.stderr
    assert sorted(os.listdir(tmp_path)) == before
    assert seconds < 60, seconds  # a hang would hit the timeout; this run takes a few


def test_a_guardian_that_dies_fails_its_output_and_the_run_goes_on(tmp_path):
    """Issue 23: when the guardian of temporary files died, the run exited 1 with no message
    and skipped the remaining files.  Now the output being written fails with one line (its
    temporary file removed), and the next file is written under a new guardian."""
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_bytes(TEXT)
    script = ("import os, sys, seqzip.cli, seqzip.cli.outputs as o\n"
              "real, killed = o.Janitor.watch, []\n"
              "def watch(self, path):\n"
              "    real(self, path)\n"
              "    if not killed:  # the first output's guardian dies while it is written\n"
              "        killed.append(self.pid)\n"
              "        os.kill(self.pid, 9)\n"
              "        os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)\n"
              "o.Janitor.watch = watch\n"
              "sys.argv = ['seqzip', '-q', '--model', 'order2', *sys.argv[1:]]\n"
              "seqzip.cli.main()\n")
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path / "a.txt"),
                             str(tmp_path / "b.txt")], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "guardian" in result.stderr and "a.txt.sqz" in result.stderr
    assert sorted(os.listdir(tmp_path)) == ["a.txt", "b.txt", "b.txt.sqz"]
    assert seqzip.decompress((tmp_path / "b.txt.sqz").read_bytes()) == TEXT


def test_a_dead_guardian_between_outputs_is_replaced(tmp_path):
    with cli_outputs.OutputRun() as run:
        with cli_module.atomic_output(str(tmp_path / "a"), False, None, run) as dst:
            dst.write(b"a")
        first = run.janitor().pid
        os.kill(first, 9)
        os.waitid(os.P_PID, first, os.WEXITED | os.WNOWAIT)
        with cli_module.atomic_output(str(tmp_path / "b"), False, None, run) as dst:
            dst.write(b"b")
        assert run.janitor().pid != first
    assert sorted(os.listdir(tmp_path)) == ["a", "b"]


@pytest.mark.parametrize("stem", ["n" * 251, "é" * 125, "long name " * 24],
                         ids=["ascii251", "utf8-250", "spaces240"])
def test_long_names_work_and_their_stale_temporaries_are_found(tmp_path, stem):
    """Issue 23: names over ~225 bytes failed: the temporary name passed NAME_MAX (255).  A
    long name's temporary keeps its start and a hash of the whole, so a later run still finds
    a dead run's temporaries for it."""
    source = tmp_path / stem
    assert len(os.fsencode(stem + ".sqz")) <= 255
    source.write_bytes(TEXT)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True)
    name = stem + ".sqz"
    stale = cli_outputs._temporary_name(name, int(dead.stdout), "0" * 12)
    other = cli_outputs._temporary_name(stem[:-1] + "x.sqz", int(dead.stdout), "1" * 12)
    assert stale != other and max(len(os.fsencode(n)) for n in (stale, other)) <= 255
    (tmp_path / stale).write_bytes(b"partial")
    (tmp_path / other).write_bytes(b"partial")
    result = seqzip_cmd("-q", "--model", "order2", str(source))
    assert result.returncode == 0, result.stderr
    assert sorted(os.listdir(tmp_path)) == sorted([stem, name, other])
    source.unlink()
    result = seqzip_cmd("-d", "-q", str(tmp_path / name))
    assert result.returncode == 0, result.stderr
    assert source.read_bytes() == TEXT


@pytest.mark.parametrize("output", ["/dev/null", "fifo"])
def test_rm_needs_a_regular_output_file(tmp_path, output):
    """Issue 23: ``--rm -o /dev/null`` (or a FIFO) deleted the input, though ``--rm -c`` was
    refused.  Both are refused with one line, before anything is read; the input stays."""
    source = tmp_path / "in.txt"
    source.write_bytes(TEXT)
    if output == "fifo":
        output = str(tmp_path / "fifo")
        os.mkfifo(output)
    result = seqzip_cmd("-q", "--model", "order2", "--rm", "-f", "-o", output, str(source),
                        text=True, timeout=60)
    assert result.returncode == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "--rm" in result.stderr and source.read_bytes() == TEXT
    link = tmp_path / "to-null"
    os.symlink("/dev/null", link)
    result = seqzip_cmd("-q", "--model", "order2", "--rm", "-f", "-o", str(link), str(source))
    assert result.returncode == 1 and source.read_bytes() == TEXT


def test_rm_after_a_complete_regular_output(tmp_path):
    source = tmp_path / "in.txt"
    source.write_bytes(TEXT)
    result = seqzip_cmd("-q", "--model", "order2", "--rm", "-o", str(tmp_path / "o.sqz"),
                        str(source))
    assert result.returncode == 0 and sorted(os.listdir(tmp_path)) == ["o.sqz"]


def test_a_recursive_run_lists_each_directory_once(tmp_path, monkeypatch):
    """Issue 23: -r listed the whole directory again for each output (the sweep for a dead
    run's temporaries): quadratic, +117 s at 10,000 files.  Now one listing per directory and
    one guardian process per run, however many files."""
    from seqzip.cli.files import compress_files
    from seqzip.cli.options import Settings

    (tmp_path / "sub").mkdir()
    for i in range(40):
        (tmp_path / ("sub" if i % 4 == 0 else "") / f"f{i}.txt").write_bytes(TEXT[i:])
    listed, guardians = [], []
    real_listdir, real_init = os.listdir, cli_outputs.Janitor.__init__
    monkeypatch.setattr(os, "listdir", lambda d=".": listed.append(str(d)) or real_listdir(d))
    monkeypatch.setattr(cli_outputs.Janitor, "__init__",
                        lambda self: guardians.append(1) or real_init(self))
    assert compress_files((str(tmp_path),), Settings(model="order2", quiet=True,
                                                     recursive=True)) == 0
    assert sorted(listed) == sorted([str(tmp_path), str(tmp_path / "sub")])
    assert len(guardians) == 1
    assert len([n for n in real_listdir(tmp_path) if n.endswith(".sqz")]) == 30
    assert len(real_listdir(tmp_path / "sub")) == 20


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
