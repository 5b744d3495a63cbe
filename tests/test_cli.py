"""The command line through click's CliRunner and through real subprocesses."""
import dataclasses
import errno
import io
import json
import os
import pathlib
import pty
import re
import select
import signal
import stat
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

import seqzip
from seqzip import api, corpora
from seqzip import cli as cli_module
from seqzip.cli import cli
from seqzip.models import DEFAULT_LEVEL, DEFAULT_MODEL, MODELS, make_config

DATA = corpora.generate("text", 30_000, seed=1).data


def run(*args, input=None):
    return CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)


def seqzip_cmd(*args, **kwargs):
    return subprocess.run([sys.executable, "-m", "seqzip.cli", *args], capture_output=True,
                          **kwargs)


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "sample.txt"
    path.write_bytes(DATA)
    return path


def test_compress_then_decompress_file(sample, tmp_path):
    assert run("compress", str(sample)).exit_code == 0
    packed = tmp_path / "sample.txt.sqz"
    assert packed.exists() and sample.exists()  # inputs are kept by default
    sample.unlink()
    result = run("decompress", str(packed))
    assert result.exit_code == 0, result.output
    assert sample.read_bytes() == DATA and packed.exists()


def test_rm_removes_input_only_after_success(sample, tmp_path):
    assert run("compress", "--rm", str(sample)).exit_code == 0
    assert not sample.exists()
    assert run("decompress", "--rm", str(tmp_path / "sample.txt.sqz")).exit_code == 0
    assert sample.read_bytes() == DATA and not (tmp_path / "sample.txt.sqz").exists()


def test_refuses_to_overwrite_without_force(sample, tmp_path):
    out = tmp_path / "sample.txt.sqz"
    out.write_bytes(b"precious")
    result = run("compress", str(sample))
    assert result.exit_code == 1
    assert "already exists" in result.output and "Traceback" not in result.output
    assert out.read_bytes() == b"precious"
    assert run("compress", "-f", str(sample)).exit_code == 0
    assert seqzip.decompress(out.read_bytes()) == DATA


def test_levels_and_model_flags(sample, tmp_path):
    for flag in ("-1", "-9", "--level=4"):
        out = tmp_path / f"o{flag}.sqz"
        assert run("compress", flag, "--model", "order2", "-o", str(out), str(sample)
                   ).exit_code == 0
        assert seqzip.decompress(out.read_bytes()) == DATA
    info = json.loads(run("info", "--json", str(tmp_path / "o-1.sqz")).output)
    assert info[0]["streams"][0]["config"]["order"] == 1
    info = json.loads(run("info", "--json", str(tmp_path / "o-9.sqz")).output)
    assert info[0]["streams"][0]["config"]["count_limit"] == 1023


def test_stdin_to_stdout():
    packed = run("compress", "-", input=DATA).stdout_bytes
    assert seqzip.decompress(packed) == DATA
    assert run("decompress", "-c", "-", input=packed).stdout_bytes == DATA


def test_info_reports_ratio(sample, tmp_path):
    run("compress", "--model", "order2", str(sample))
    result = run("info", str(tmp_path / "sample.txt.sqz"))
    assert result.exit_code == 0
    assert "bits per character" in result.output
    assert "model order2 " in result.output  # the stream's model, not a word of another's config
    report = json.loads(run("info", "--json", str(tmp_path / "sample.txt.sqz")).output)[0]
    size = (tmp_path / "sample.txt.sqz").stat().st_size
    assert report["compressed_bytes"] == size and report["original_bytes"] == len(DATA)
    assert report["bits_per_character"] == pytest.approx(8 * size / len(DATA))
    assert report["ratio"] == pytest.approx(len(DATA) / size)  # as zstd: 2.39, not 0.418
    assert report["streams"][0]["level"] == 6 and "level 5-6" in result.output  # one config


def test_test_flag(sample, tmp_path):
    run("compress", str(sample))
    assert run("decompress", "-t", str(tmp_path / "sample.txt.sqz")).exit_code == 0
    bad = tmp_path / "bad.sqz"
    packed = bytearray((tmp_path / "sample.txt.sqz").read_bytes())
    packed[-3] ^= 1
    bad.write_bytes(bytes(packed))
    result = run("decompress", "-t", str(bad))
    assert result.exit_code == 1 and "checksum" in result.output
    assert not (tmp_path / "bad").exists()


@pytest.mark.parametrize("content, message", [
    (b"", "empty"), (b"not a seqzip file", "magic"), (None, "ended before"),
])
def test_bad_input_leaves_no_output(tmp_path, content, message):
    bad = tmp_path / "bad.sqz"
    bad.write_bytes(content if content is not None else seqzip.compress(DATA)[:-7])
    before = bad.read_bytes()
    result = run("decompress", str(bad))
    assert result.exit_code == 1 and message in result.output
    assert "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.sqz"]
    assert bad.read_bytes() == before


def test_usage_errors_exit_1(sample, tmp_path):
    assert run("compress", "--level", "12", str(sample)).exit_code == 1
    assert run("compress", "--model", "nope", str(sample)).exit_code == 1
    assert run("nonsense").exit_code == 1
    result = run("compress", "-o", str(tmp_path / "x"), str(sample), str(sample))
    assert result.exit_code == 1 and "one input" in result.output
    assert run("decompress", str(sample)).exit_code == 1  # no .sqz suffix
    assert run("compress", str(tmp_path / "missing")).exit_code == 1
    assert run("compress", str(tmp_path)).exit_code == 1  # a directory


def test_compressing_a_sqz_again_needs_force(sample, tmp_path):
    run("compress", str(sample))
    result = run("compress", str(tmp_path / "sample.txt.sqz"))
    assert result.exit_code == 1 and "suffix" in result.output


def test_one_bad_file_does_not_stop_the_others(sample, tmp_path):
    result = run("compress", str(tmp_path / "missing"), str(sample))
    assert result.exit_code == 1
    assert (tmp_path / "sample.txt.sqz").exists()


def test_full_disk_leaves_no_partial_output(sample, tmp_path, monkeypatch):
    real = api.compress_file

    def failing(src, dst, **kw):
        dst.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(api, "compress_file", failing)
    result = run("compress", str(sample))
    assert result.exit_code == 1 and "no space left" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sample.txt"]
    assert sample.read_bytes() == DATA
    monkeypatch.setattr(api, "compress_file", real)


def test_bench_json_runs_on_generated_data():
    result = run("bench", "--json", "--models", "order2")
    assert result.exit_code == 0
    rows = json.loads(result.output)["rows"]
    methods = {r["method"] for r in rows}
    assert {"bzip2-9", "order2"} <= methods
    assert all(r["round_trip_ok"] for r in rows)
    markov = [r for r in rows if r["file"].startswith("markov2") and r["method"] == "order2"]
    assert markov[0]["regret_bits"] > 0


def test_bench_table_on_files(sample):
    result = run("bench", "--models", "order2", "-1", str(sample))
    assert result.exit_code == 0 and "bzip2-9" in result.output and "order2 -1" in result.output


# --- real processes -----------------------------------------------------------------------


def test_subprocess_pipeline_round_trip(sample):
    packed = seqzip_cmd("compress", "-c", str(sample)).stdout
    restored = seqzip_cmd("decompress", "-", input=packed)
    assert restored.returncode == 0 and restored.stdout == DATA


def test_subprocess_error_is_one_line_without_traceback(tmp_path):
    bad = tmp_path / "bad.sqz"
    bad.write_bytes(b"\xb7SQZ\x63" + b"\x00" * 80)
    result = seqzip_cmd("decompress", str(bad))
    assert result.returncode == 1
    err = result.stderr.decode()
    assert "version 99" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_subprocess_refuses_compressed_data_on_a_terminal(sample):
    controller, terminal = pty.openpty()
    try:
        result = subprocess.run([sys.executable, "-m", "seqzip.cli", "compress", "-c",
                                 str(sample)], stdout=terminal, stderr=subprocess.PIPE)
    finally:
        os.close(terminal)
        os.close(controller)
    assert result.returncode == 1 and b"terminal" in result.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_subprocess_full_stdout(sample):
    with open("/dev/full", "wb") as full:
        result = subprocess.run([sys.executable, "-m", "seqzip.cli", "compress", "-c",
                                 str(sample)], stdout=full, stderr=subprocess.PIPE)
    assert result.returncode == 1 and b"Traceback" not in result.stderr


def test_subprocess_help_and_version():
    assert seqzip_cmd("--help").returncode == 0
    version = seqzip_cmd("--version")
    assert version.returncode == 0 and seqzip.__version__.encode() in version.stdout


def test_corpora_generate_and_list(tmp_path):
    result = run("corpora", "list")
    assert result.exit_code == 0 and "insertions" in result.output and "anbn" in result.output
    out = tmp_path / "anbn.txt"
    result = CliRunner().invoke(cli, ["corpora", "generate", "anbn", "-n", "3", "--seed", "2",
                                      "-o", str(out)])
    assert result.exit_code == 0 and "30.000 true bits" in result.stderr
    assert out.read_bytes() == corpora.generate("anbn", 3, seed=2).data
    assert run("corpora", "generate", "anbn", "-o", str(out)).exit_code == 1  # exists
    assert run("corpora", "generate", "nope").exit_code == 1
    assert run("corpora", "generate", "music", "-n", "4", "-q").stdout_bytes == \
        corpora.generate("music", 4).data


def test_concatenated_files_decompress_through_the_cli(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"first " * 100)
    b.write_bytes(DATA)
    run("compress", str(a))
    run("compress", "--model", "ctw", str(b))
    both = tmp_path / "both.sqz"
    both.write_bytes((tmp_path / "a.sqz").read_bytes() + (tmp_path / "b.sqz").read_bytes())
    assert run("decompress", "-c", str(both)).stdout_bytes == b"first " * 100 + DATA
    info = json.loads(run("info", "--json", str(both)).output)[0]
    assert [s["model"] for s in info["streams"]] == [DEFAULT_MODEL, "ctw"]


# --- gzip / zstd habits on the main command ----------------------------------------------------


def fast(*args):
    """A command line on the fast model (the habits, not a model, are tested)."""
    return run(*args, "--model", "order2")


def test_main_command_compresses_and_d_decompresses(sample, tmp_path):
    assert fast(str(sample)).exit_code == 0  # `seqzip FILE`, as `gzip FILE`
    packed = tmp_path / "sample.txt.sqz"
    assert seqzip.decompress(packed.read_bytes()) == DATA and sample.exists()
    sample.unlink()
    assert run("-d", str(packed)).exit_code == 0
    assert sample.read_bytes() == DATA
    sample.unlink()
    assert run("--decompress", "--rm", str(packed)).exit_code == 0
    assert sample.read_bytes() == DATA and not packed.exists()
    assert fast("-z", "-c", str(sample)).stdout_bytes[:4] == b"\xb7SQZ"


def test_main_command_test_and_stdin(sample, tmp_path):
    fast(str(sample))
    packed = tmp_path / "sample.txt.sqz"
    result = run("-t", "-v", str(packed))
    assert result.exit_code == 0 and "1 file(s) OK" in result.output
    damaged = bytearray(packed.read_bytes())
    damaged[-2] ^= 4
    packed.write_bytes(bytes(damaged))
    result = run("-t", str(packed))
    assert result.exit_code == 1 and "Traceback" not in result.output
    piped = run("--model", "order2", input=DATA).stdout_bytes  # no FILES: stdin to stdout
    assert run("-dc", input=piped).stdout_bytes == DATA
    assert run("-d", "-", input=piped).stdout_bytes == DATA


def test_unseqzip_and_seqzipcat(sample, tmp_path):
    packed = tmp_path / "sample.txt.sqz"
    packed.write_bytes(seqzip.compress(DATA, model="order2"))
    cat = subprocess.run([sys.executable, "-c", "from seqzip.cli import seqzipcat_main; "
                          "seqzipcat_main()", str(packed)], capture_output=True)
    assert cat.returncode == 0 and cat.stdout == DATA and packed.exists()
    sample.unlink()
    un = subprocess.run([sys.executable, "-c", "from seqzip.cli import unseqzip_main; "
                         "unseqzip_main()", str(packed)], capture_output=True)
    assert un.returncode == 0 and sample.read_bytes() == DATA
    tomllib = pytest.importorskip("tomllib")
    with open(pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml", "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    assert scripts == {"seqzip": "seqzip.cli:main", "unseqzip": "seqzip.cli:unseqzip_main",
                       "seqzipcat": "seqzip.cli:seqzipcat_main"}


def test_list_shows_ratio_level_and_model_as_zstd_does(sample, tmp_path):
    fast("-3", str(sample))
    packed = tmp_path / "sample.txt.sqz"
    custom = tmp_path / "custom.sqz"
    config = dataclasses.replace(make_config("order2", 6), count_limit=100)
    with open(custom, "wb") as out:
        api.compress_file(io.BytesIO(DATA), out, model="order2", config=config)
    result = run("-l", str(packed), str(custom))
    assert result.exit_code == 0, result.output
    head, first, second, total = result.output.splitlines()
    assert head.split() == ["Streams", "Frames", "Compressed", "Uncompressed", "Ratio", "bpc",
                            "Model", "Level", "Filename"]
    ratio = len(DATA) / packed.stat().st_size
    # levels 1 to 3 of order2 share one config: the header cannot tell them apart
    assert first.split()[6:] == [f"{ratio:.3f}", f"{8 / ratio:.3f}", "order2", "1-3",
                                 str(packed)]
    assert second.split()[-3:] == ["order2", "custom", str(custom)]
    assert total.split()[-2:] == ["2", "files"]
    report = json.loads(run("-l", "--json", str(packed)).output)[0]
    assert report["streams"][0]["level"] == 1 and report["ratio"] == pytest.approx(ratio)
    assert json.loads(run("-l", "--json", str(custom)).output)[0]["streams"][0]["level"] is None


def test_recursive_and_suffix(tmp_path):
    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    files = {tree / "a.txt": DATA[:5000], tree / "sub" / "b.txt": DATA[5000:9000],
             tree / "sub" / "c": b"c" * 100}
    for path, content in files.items():
        path.write_bytes(content)
    result = run("compress", str(tree))  # a directory without -r: an error, no output
    assert result.exit_code == 1 and "-r" in result.output
    assert fast("-r", "--rm", "-S", ".sz", str(tree)).exit_code == 0
    assert sorted(p.relative_to(tree).as_posix() for p in tree.rglob("*") if p.is_file()) == \
        ["a.txt.sz", "sub/b.txt.sz", "sub/c.sz"]
    assert fast("-r", "-S", ".sz", str(tree)).exit_code == 0  # already compressed: skipped
    assert not list(tree.rglob("*.sz.sz"))
    assert run("-d", "-r", "-S", ".sz", "--rm", str(tree)).exit_code == 0
    for path, content in files.items():
        assert path.read_bytes() == content
    result = run("-d", "-S", ".sz", str(tree / "a.txt"))
    assert result.exit_code == 1 and "does not end in .sz" in result.output
    assert run("-S", "", str(tree / "a.txt")).exit_code == 1
    assert run("-S", "a/b", str(tree / "a.txt")).exit_code == 1


def test_threads_write_a_piece_set(tmp_path):
    data = corpora.generate("text", 200_000, seed=3).data
    path = tmp_path / "big.txt"
    path.write_bytes(data)
    assert fast("-T", "2", str(path)).exit_code == 0
    packed = tmp_path / "big.txt.sqz"
    report = json.loads(run("-l", "--json", str(packed)).output)[0]
    # a shared prefix, then two pieces that start from the model's state after it
    assert [s["piece"] for s in report["streams"]] == [0, 1, 2]
    assert report["levels"] == ["5-6"]
    path.unlink()
    result = run("-d", "-T", "2", "-v", str(packed))
    assert result.exit_code == 0 and path.read_bytes() == data
    assert run("-d", "-c", str(packed)).stdout_bytes == data  # any seqzip decodes it
    assert fast("-T", "0", "-c", str(path)).exit_code == 0  # 0: one per core


@pytest.mark.parametrize("line", [["-19"], ["compress", "-12"], ["-d", "-10"]])
def test_multi_digit_levels_are_refused(sample, line):
    result = run(*line, str(sample))
    assert result.exit_code == 1
    assert f"no level {line[-1]}: levels go from -1 (fastest) to -9 (strongest)" in result.output
    assert not pathlib.Path(str(sample) + ".sqz").exists()


def test_verbose_prints_ratio_bpc_and_speed(sample, tmp_path):
    result = fast("-v", str(sample))
    packed = tmp_path / "sample.txt.sqz"
    ratio = len(DATA) / packed.stat().st_size
    assert result.exit_code == 0
    line = result.output.strip()
    assert line.startswith(f"{sample} -> {packed}: compressed {len(DATA):,} -> ")
    assert f"ratio {ratio:.3f}" in line and f"{8 / ratio:.3f} bits per character" in line
    assert " KB/s (" in line
    result = run("-dcv", str(packed))
    assert "decompressed" in result.stderr and "bits per character" in result.stderr


def test_help_has_examples_models_speeds_and_every_level():
    result = run("--help")
    assert result.exit_code == 0
    text = result.output
    assert "Examples:" in text and "seqzip -d book.txt.sqz" in text and "-1 ... -9" in text
    for name in MODELS:
        line = next(line for line in text.splitlines() if line.strip().startswith(name + " "))
        assert re.search(r"\d+ / +[\d.]+ / +[\d.]+", line), line
    assert "compress" in text and "bench" in text  # the commands are listed
    assert set(cli_module.MODEL_GUIDE) == set(MODELS)
    assert (cli_module.DEFAULT_MODEL, cli_module.DEFAULT_LEVEL) == (DEFAULT_MODEL, DEFAULT_LEVEL)
    assert run("-d", "--help").exit_code == 0  # the main command's own help


def test_version_and_help_import_no_model():
    """`seqzip --version` and `--help` answer without numpy, the models or the coder."""
    script = ("import sys, seqzip.cli\n"
              "try:\n    seqzip.cli.cli([sys.argv[1]])\nexcept SystemExit as e:\n"
              "    assert e.code == 0, e.code\n"
              "heavy = sorted(m for m in sys.modules if m == 'numpy' or m.startswith("
              "('seqzip.models', 'seqzip.api', 'seqzip.coder', 'seqzip._', 'constriction')))\n"
              "print(heavy, file=sys.stderr)\n")
    for flag in ("--version", "--help"):
        result = subprocess.run([sys.executable, "-c", script, flag], capture_output=True,
                                text=True)
        assert result.returncode == 0, result.stderr
        assert result.stderr.strip() == "[]"
    assert seqzip_cmd("--version").stdout.decode().strip() == f"seqzip {seqzip.__version__}"


def test_progress_line_format():
    assert cli_module.progress_line("f", 1000, 4000, 500) == \
        "f   25%  1000 B / 3.9 KiB  0.5 KB/s  ETA 0:06"
    assert cli_module.progress_line("stdin", 2048, None, 1000) == "stdin  2.0 KiB  1.0 KB/s"
    assert cli_module.typical_speed("cm", 1) > cli_module.typical_speed("cm", 6) > \
        cli_module.typical_speed("cm", 9)


# --- progress on a terminal, signals, modes -----------------------------------------------------


def slow_job(tmp_path, size=30_000):
    """A job that takes several seconds (a slow model at its strongest level)."""
    path = tmp_path / "slow.txt"
    path.write_bytes(corpora.generate("text", size, seed=1).data)
    return path, ["--model", "mlstm", "-9"]


def test_progress_on_a_terminal_shows_rate_and_eta(tmp_path):
    path, flags = slow_job(tmp_path)
    for quiet in (False, True):
        controller, terminal = pty.openpty()
        try:
            process = subprocess.Popen([sys.executable, "-m", "seqzip.cli", *flags,
                                        *(["-q"] if quiet else []), "-c", str(path)],
                                       stdout=subprocess.DEVNULL, stderr=terminal)
            os.close(terminal)
            seen = b""
            deadline = time.monotonic() + 15
            done = re.compile(rb"ETA \d+:\d\d")
            while time.monotonic() < deadline and (quiet or not done.search(seen)):
                ready, _, _ = select.select([controller], [], [], 0.2)
                if ready:
                    seen += os.read(controller, 4096)
                elif quiet and time.monotonic() > deadline - 12:
                    break  # three seconds of silence
        finally:
            process.kill()
            process.wait()
            os.close(controller)
        if quiet:
            assert seen == b""
        else:
            line = seen.decode().split("\r")[-1]
            assert re.search(r"slow\.txt +\d+%  .* KiB  [\d.]+ KB/s  ETA \d+:\d\d", line), seen


def stray_files(directory, keep):
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


def wait_for_temporary(directory, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(p.name.endswith(".sqztmp") for p in directory.iterdir()):
            return
        time.sleep(0.02)
    raise AssertionError("no temporary output appeared")


def _default_signals():
    """The signals' default actions in the child, whatever the test run inherited: a suite
    started under nohup, or as a background job of a shell without job control, ignores
    SIGHUP or SIGINT, and seqzip (as gzip does) leaves an ignored signal ignored."""
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, signal.SIG_DFL)


@pytest.mark.parametrize("signum, threads", [
    (signal.SIGTERM, "1"), (signal.SIGHUP, "1"), (signal.SIGINT, "1"), (signal.SIGKILL, "1"),
    (signal.SIGTERM, "2"), (signal.SIGHUP, "2"),
])
def test_signals_leave_no_temporary_or_partial_file(tmp_path, signum, threads):
    path, flags = slow_job(tmp_path, size=150_000)  # -T 2: two pieces on two workers
    original = path.read_bytes()
    process = subprocess.Popen([sys.executable, "-m", "seqzip.cli", *flags, "-T", threads,
                                str(path)], stderr=subprocess.PIPE, preexec_fn=_default_signals)
    wait_for_temporary(tmp_path)
    time.sleep(0.3)  # into the coding
    process.send_signal(signum)
    _, err = process.communicate(timeout=30)
    assert process.returncode == -signum, err
    time.sleep(0.2)  # the janitor process runs once its parent is gone
    assert stray_files(tmp_path, {"slow.txt"}) == []
    assert path.read_bytes() == original
    if threads == "2":  # the workers ended with their parent
        busy = subprocess.run(["pgrep", "-f", f"seqzip.cli.*{path}"], capture_output=True)
        assert busy.stdout == b"", busy.stdout


def test_signal_during_decompression_leaves_nothing(tmp_path):
    packed = tmp_path / "slow.txt.sqz"
    with open(packed, "wb") as out:  # ~0.4 s to make at level 1, as long to decode
        api.compress_file(io.BytesIO(DATA), out, model="mlstm", level=1)
    process = subprocess.Popen([sys.executable, "-m", "seqzip.cli", "-d", str(packed)],
                               stderr=subprocess.PIPE)
    wait_for_temporary(tmp_path)
    process.send_signal(signal.SIGTERM)
    process.communicate(timeout=30)
    time.sleep(0.2)
    assert process.returncode == -signal.SIGTERM
    assert stray_files(tmp_path, {"slow.txt.sqz"}) == []


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_output_modes_follow_the_umask(tmp_path, umask, mode):
    def child():
        os.umask(umask)

    made = subprocess.run([sys.executable, "-m", "seqzip.cli", "--model", "order2", "-o",
                           str(tmp_path / "stdin.sqz")], input=DATA[:2000],
                          preexec_fn=child, capture_output=True)
    assert made.returncode == 0, made.stderr
    made = subprocess.run([sys.executable, "-m", "seqzip.cli", "corpora", "generate", "anbn",
                           "-n", "1", "-o", str(tmp_path / "anbn.txt")], preexec_fn=child,
                          capture_output=True)
    assert made.returncode == 0, made.stderr
    for name in ("stdin.sqz", "anbn.txt"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode, name


def test_output_of_a_file_copies_its_mode(sample, tmp_path):
    os.chmod(sample, 0o640)
    assert fast(str(sample)).exit_code == 0
    assert stat.S_IMODE((tmp_path / "sample.txt.sqz").stat().st_mode) == 0o640


def test_optimizer_option_sets_the_config(tmp_path):
    data = DATA[:3000]
    src = tmp_path / "in.txt"
    src.write_bytes(data)
    for optimizer in ("path-sgd", "sgd"):
        out = tmp_path / f"{optimizer}.sqz"
        result = run("--model", "relu-rnn", "-1", "--optimizer", optimizer, "-o", str(out),
                     str(src))
        assert result.exit_code == 0, result.output
        want = dataclasses.replace(make_config("relu-rnn", 1), optimizer=optimizer)
        packed = out.read_bytes()
        if optimizer == "sgd":  # not the preset: the config travels in the header
            direct = io.BytesIO()
            api.compress_file(io.BytesIO(data), direct, model="relu-rnn", config=want)
            assert packed == direct.getvalue()
        else:
            assert packed == seqzip.compress(data, 1, model="relu-rnn")
        assert seqzip.decompress(packed) == data
    for bad in (["--model", "relu-rnn", "--optimizer", "adam"], ["--model", "ctw", "--optimizer",
                                                                  "sgd"]):
        result = run(*bad, "-o", str(tmp_path / "x.sqz"), str(src))
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert not (tmp_path / "x.sqz").exists()


def test_train_recurrent_methods(tmp_path):
    from seqzip.research import recurrent

    src = tmp_path / "in.txt"
    src.write_bytes(DATA[:4000])
    out = tmp_path / "m.sqm"
    result = run("train", "--method", "relu-rnn-sgd", "--budget", "0.5", "--units", "4", "-q",
                 "-o", str(out), str(src))
    assert result.exit_code == 0, result.output
    method, params, alphabet, info = recurrent.load_model(str(out))
    assert method == "relu-rnn-sgd" and params["R"].shape == (4, 4)
    assert alphabet == sorted(set(DATA[:4000])) and info["n_units"] == 4
    bad = run("train", "--method", "nope", "-o", str(tmp_path / "x.sqm"), str(src))
    assert bad.exit_code == 1 and "relu-rnn-path-sgd" in bad.output


@pytest.mark.parametrize("given, numpy_first, expected", [
    (None, False, "1"),      # the command line asks OpenBLAS for one thread
    ("3", False, "3"),       # unless the environment says otherwise
    (None, True, "unset"),   # and too late to matter once numpy is loaded: left alone
])
def test_entry_points_ask_for_one_blas_thread(given, numpy_first, expected):
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    code = ("import os, sys\n" + ("import numpy\n" if numpy_first else "") +
            "from seqzip.cli import app\n"
            "sys.argv = ['seqzip', '--version']\n"
            "try:\n    app.main()\nexcept SystemExit:\n    pass\n"
            "print(os.environ.get('OPENBLAS_NUM_THREADS', 'unset'))\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         check=True)
    assert run.stdout.split()[-1] == expected
