"""Budgeted training, model files, `seqzip train` and the Table 1 driver."""
import pytest
from click.testing import CliRunner

from seqzip import corpora
from seqzip.research import table1, training
from seqzip.cli import cli
from seqzip.research.glnn import score_bits


def music_split(bars=200):
    data = corpora.generate("music", bars, seed=3).data
    alphabet = sorted(set(data))
    x = training.encode(data, alphabet)
    cut = len(x) * 4 // 5
    return x[:cut], x[cut:], alphabet


def test_fit_improves_validation_and_keeps_the_best_network():
    train_x, valid_x, alphabet = music_split()
    start = training.FastNetwork.initial("glnn", n_units=6, d=3, x=train_x,
                                         alphabet_size=len(alphabet), seed=0)
    result = training.fit("glnn-qdh-rbpm", train_x, valid_x, len(alphabet), budget=3.0,
                          sizes=[6], connectivity=[3])
    assert result.validation_bits < score_bits(start, valid_x) - 50
    assert score_bits(result.network, valid_x) == pytest.approx(result.validation_bits)
    assert result.best.best_bits == min(bits for _, bits in result.best.trajectory)


def test_model_file_round_trip(tmp_path):
    train_x, valid_x, alphabet = music_split(60)
    result = training.fit("rnn-dh-fb", train_x, valid_x, len(alphabet), budget=0.5, sizes=[4])
    digest = training.save_model(tmp_path / "m.sqm", result.network, alphabet, {"x": 1})
    net, loaded_alphabet, info = training.load_model(tmp_path / "m.sqm")
    assert loaded_alphabet == alphabet and info == {"x": 1} and len(digest) == 64
    assert score_bits(net, valid_x) == score_bits(result.network, valid_x)
    (tmp_path / "bad.sqm").write_bytes(b"not a model")
    with pytest.raises(ValueError):
        training.load_model(tmp_path / "bad.sqm")


def test_network_sizes_follow_sqrt2():
    assert training.network_sizes(64) == [4, 6, 8, 11, 16, 23, 32, 45, 64]


def test_cli_train(tmp_path):
    path = tmp_path / "music.txt"
    path.write_bytes(corpora.generate("music", 150, seed=1).data)
    out = tmp_path / "m.sqm"
    runner = CliRunner()
    result = runner.invoke(cli, ["train", str(path), "-o", str(out), "--budget", "1",
                                 "--units", "4", "--method", "gnn-qdh-ruop"])
    assert result.exit_code == 0, result.output
    net, _, info = training.load_model(out)
    assert net.kind == "gnn" and net.n_units == 4 and info["method"] == "gnn-qdh-ruop"
    assert runner.invoke(cli, ["train", str(path), "-o", str(out)]).exit_code == 1  # exists
    bad = runner.invoke(cli, ["train", str(path), "-o", str(tmp_path / "x.sqm"), "--method",
                              "nope"])
    assert bad.exit_code == 1 and "unknown method" in bad.output
    assert not (tmp_path / "x.sqm").exists()


def test_table1_rows_and_regret():
    rows = table1.run_table(["anbn"], ["glnn-qdh-rbpm", "rnn-dh-fb"], budget=1.0,
                            sizes=[4], n_blocks=3)
    by_method = {r["method"]: r for r in rows}
    assert set(by_method) == {"bzip2-9", "ctw", "glnn-qdh-rbpm", "rnn-dh-fb"}
    for r in rows:
        assert r["regret_bits"] == pytest.approx(r["validation_bits"] - r["true_bits"])
        assert r["true_bits"] == 30.0  # three blocks of 10 bits
    assert "regret" in table1.format_table(rows)


def test_xor_run_reports_error_rate():
    result = table1.xor_run(budget=1.0, n_lines=30, n_units=4)
    assert result["chance_bits"] == 30.0 and 0.0 <= result["error_rate"] <= 1.0
    assert result["steps"] >= 1 and "error rate" in table1.format_xor(result)
