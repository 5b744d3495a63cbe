"""One meaning per option name: --optimizer is the online network's optimiser in compress and
the offline fit's in train, --mixer is cm's mixer rule; `seqzip train` works for every family
with its defaults; the command line's written-down defaults match the package's."""
import dataclasses
import io

import pytest
from click.testing import CliRunner

import seqzip
from seqzip import api, corpora
from seqzip.cli import cli, options
from seqzip.models import MODELS, make_config

DATA = corpora.generate("text", 3000, seed=2).data


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_the_written_defaults_are_the_packages():
    size = options.SizeType()
    assert size.convert(options.DEFAULT_MAX_LENGTH, None, None) == api.Limits().max_length
    assert size.convert(options.DEFAULT_MAX_MEMORY, None, None) == api.Limits().max_memory


def test_the_option_tables_match_the_configs():
    """--optimizer reaches exactly the families whose online network has one; --mixer cm's."""
    with_field = {name for name in MODELS
                  if "optimizer" in {f.name for f in dataclasses.fields(make_config(name, 1))}}
    assert with_field == set(options.NETWORK_MODELS) | set(options.MIXER_MODELS)
    assert not set(options.NETWORK_MODELS) & set(options.MIXER_MODELS)


def test_mixer_sets_cms_mixer_rule(tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(DATA)
    out = tmp_path / "in.txt.sqz"
    result = run("-1", "--mixer", "adam", str(src))
    assert result.exit_code == 0, result.output
    direct = io.BytesIO()
    api.compress_file(io.BytesIO(DATA), direct, model="cm",
                      config=api.config_with("cm", 1, optimizer="adam"))
    assert out.read_bytes() == direct.getvalue() != seqzip.compress(DATA, 1)
    assert seqzip.decompress(out.read_bytes()) == DATA


@pytest.mark.parametrize("args, says", [
    (["--optimizer", "adam"], "model cm has none (--mixer sets its mixer's rule)"),
    (["--model", "ctw", "--optimizer", "adam"], "model ctw has none"),
    (["--model", "lstm", "--mixer", "adam"], "--mixer sets the mixer's rule of cm; model lstm"),
    (["--model", "order2", "--mixer", "sgd"], "model order2 has none"),
    (["--mixer", "riemannian"], "--mixer riemannian: optimizer must be one of"),
    (["--model", "lstm", "--optimizer", "qdh"], "--optimizer qdh: optimizer must be one of"),
])
def test_a_setting_the_model_lacks_is_refused_in_one_line(tmp_path, args, says):
    src = tmp_path / "in.txt"
    src.write_bytes(DATA)
    for command in ([], ["compress"]):
        result = run(*command, *args, str(src))
        assert result.exit_code == 1
        assert says in result.output and len(result.output.strip().splitlines()) == 1, \
            result.output
        assert not (tmp_path / "in.txt.sqz").exists()


def test_help_says_what_each_option_means():
    text = " ".join(run("compress", "--help").output.split())
    assert "--mixer qdh|sgd|adam cm only: the mixer's learning rule" in text
    assert "--optimizer TEXT The online network's optimiser, for lstm, mlstm, mrnn" in text
    train = " ".join(run("train", "--help").output.split())
    assert train.count("--optimizer [adam|hf]") == 1 and "The offline fit's optimiser" in train


@pytest.mark.parametrize("family", sorted(MODELS))
def test_train_works_with_default_options_for_every_family(tmp_path, family):
    src = tmp_path / "in.txt"
    src.write_bytes(DATA[:1500])
    out = tmp_path / "m.sqm"
    result = run("train", str(src), "-o", str(out), "--model", family, "--budget", "0.3", "-q")
    assert result.exit_code == 0, result.output
    predictor = seqzip.Predictor.load(str(out))
    assert predictor.model_name == family
    packed = tmp_path / "x.sqz"
    assert run("--dict", str(out), "-o", str(packed), str(src)).exit_code == 0
    assert seqzip.decompress(packed.read_bytes(), dictionary=str(out)) == DATA[:1500]


def test_train_with_its_documented_default():
    """`seqzip train FILE --model lstm -o m.sqm` is README's example: one --optimizer."""
    names = [opt for param in cli.commands["train"].params for opt in param.opts]
    assert len(names) == len(set(names))


def test_dictionary_error_is_exported():
    assert seqzip.DictionaryError is seqzip.errors.DictionaryError
    assert issubclass(seqzip.DictionaryError, seqzip.SeqzipError)


def test_dict_refuses_flags_that_contradict_the_model_file_and_only_those(tmp_path):
    from seqzip.predictor import Predictor

    d = Predictor("ctw", 2)
    d.feed(b"hello world " * 50)
    d.save(str(tmp_path / "d.sqm"))
    src = tmp_path / "f.txt"
    src.write_bytes(b"hello there world " * 20)
    for flags in (["--model", "cm"], ["-1"], ["--seed", "3"]):
        result = run("--dict", str(tmp_path / "d.sqm"), "-f", *flags, str(src))
        assert result.exit_code == 1 and "contradicts the model file" in result.output
        assert len(result.output.strip().splitlines()) == 1
    for flags in ([], ["-2"], ["--model", "ctw", "--level", "2"]):
        result = run("--dict", str(tmp_path / "d.sqm"), "-f", *flags, str(src))
        assert result.exit_code == 0, result.output


def _on_a_terminal(*args: str) -> tuple[int, str]:
    """Run the command line with its standard input on a pseudo-terminal."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "seqzip.cli", *args], stdin=follower,
                              capture_output=True, text=True, timeout=120)
    finally:
        os.close(leader)
        os.close(follower)
    return done.returncode, done.stderr


def test_no_arguments_on_a_terminal_is_one_line_not_the_help():
    code, err = _on_a_terminal()
    assert code == 1 and len(err.strip().splitlines()) == 1
    assert "standard input is a terminal" in err and "--help" in err


def test_decompressing_from_a_terminal_is_refused():
    code, err = _on_a_terminal("-d")
    assert code == 1 and "refusing to read compressed data from a terminal" in err


def test_fast_best_and_capital_v_as_gzip_has_them(tmp_path):
    src = tmp_path / "f.txt"
    src.write_bytes(b"the cat sat on the mat " * 40)
    fast = run("--fast", "-c", "--model", "order2", str(src)).stdout_bytes
    assert fast == run("-1", "-c", "--model", "order2", str(src)).stdout_bytes
    best = run("--best", "-c", "--model", "order2", str(src)).stdout_bytes
    assert best == run("-9", "-c", "--model", "order2", str(src)).stdout_bytes
    assert run("-V").output.startswith("seqzip ")


def test_verbose_over_several_files_ends_with_a_total(tmp_path):
    paths = []
    for name, text in (("a.txt", b"aaaa bbbb " * 30), ("b.txt", b"cccc dddd " * 20)):
        (tmp_path / name).write_bytes(text)
        paths.append(str(tmp_path / name))
    result = run("-v", "--model", "order2", *paths)
    assert result.exit_code == 0
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("total of 2 files: compressed 500 ->")
