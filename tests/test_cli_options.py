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
