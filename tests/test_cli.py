"""The command line through click's CliRunner and through real subprocesses."""
import errno
import json
import os
import pty
import subprocess
import sys

import pytest
from click.testing import CliRunner

import seqzip
from seqzip import api, corpora
from seqzip.cli import cli
from seqzip.models import DEFAULT_MODEL

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
    rows = json.loads(result.output)
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
    bad.write_bytes(b"\xb7SQZ\x07" + b"\x00" * 80)
    result = seqzip_cmd("decompress", str(bad))
    assert result.returncode == 1
    err = result.stderr.decode()
    assert "version 7" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


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
