"""seqzip bench: the legend, the best row, times, the JSON's context, the notes, the plot."""
import json

import pytest
from click.testing import CliRunner

from seqzip import __version__, baselines, bench
from seqzip.cli import cli

SIZES = {"english": 4000, "markov2": 3000}


def run(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def rows():
    return bench.run(None, models=["order2", "ctw"], sizes=SIZES, runs=2)


def test_rows_carry_the_median_and_spread_of_cpu_and_wall_times(rows):
    assert {r["method"] for r in rows} >= {"bzip2-9", "xz-9e", "order2", "ctw"}
    for r in rows:
        assert r["round_trip_ok"] and r["runs"] == 2
        for direction in ("compress", "decompress"):
            for clock in ("cpu", "wall"):
                spread = r["timing"][direction][f"{clock}_s"]
                assert len(spread["values"]) == 2
                assert spread["min"] <= spread["median"] <= spread["max"]
                assert spread["min"] == min(spread["values"])
                assert r[f"{direction}_{clock}_s"] == spread["median"]
        # speeds are original bytes per median CPU second
        assert r["compress_kb_s"] == pytest.approx(r["size"] / 1000 / r["compress_cpu_s"])


def test_table_has_a_legend_and_marks_the_best_row_of_each_file(rows):
    table = bench.format_table(rows, runs=2)
    legend = table.splitlines()[0]
    assert "lower is better" in legend and "-N: seqzip level" in legend
    assert "median of 2 run(s)" in legend
    starred = [line for line in table.splitlines()[2:]
               if any(word.endswith("*") for word in line.split())]
    assert len(starred) == len(SIZES)  # one best row per file
    for name in ("english", "markov2"):
        mine = [r for r in rows if r["file"].startswith(name)]
        best = min(mine, key=lambda r: r["bits_per_character"])
        line = next(line for line in starred if line.startswith(name))
        assert f"{best['bits_per_character']:.3f}*" in line


def test_missing_baselines_are_named_with_how_to_get_them(rows, monkeypatch):
    monkeypatch.setattr(baselines, "missing", lambda: {"ppmd-o6": "pyppmd",
                                                       "zstd-19": "zstandard"})
    note = bench.format_table(rows).splitlines()[-1]
    assert note == ("not run: ppmd-o6, zstd-19 (pip install pyppmd zstandard, or pip install "
                    "'seqzip[bench]')")
    monkeypatch.setattr(baselines, "missing", lambda: {})
    assert not bench.format_table(rows).splitlines()[-1].startswith("not run")


def test_installed_optional_baselines_get_rows(rows):
    methods = {r["method"] for r in rows}
    for name in baselines.OPTIONAL:
        assert (name in methods) == (name in baselines.available())


def test_json_has_version_machine_and_runs():
    result = run("bench", "--json", "--runs", "2", "--models", "order2")
    assert result.exit_code == 0
    doc = json.loads(result.output)
    assert doc["seqzip_version"] == __version__ and doc["runs"] == 2
    assert {"platform", "machine", "python", "cpu_count", "numpy"} <= set(doc["machine"])
    assert doc["rows"] and "lower is better" in doc["legend"]
    files = {r["file"] for r in doc["rows"]}
    assert files == {"english (generated)", "binary (generated)", "markov2 (generated)"}
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, bench.schema())


def test_reports_validate_against_the_schema(rows, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = bench.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(bench.report(rows, runs=2), schema)
    path = tmp_path / "notes.txt"
    path.write_bytes(b"one two three two one " * 30)
    on_files = bench.run([str(path)], models=["order2", "cm"], level=1)
    doc = json.loads(json.dumps(bench.report(on_files)))  # as printed
    jsonschema.validate(doc, schema)
    assert doc["schema_version"] == 2
    # the schema is strict enough to fail: a missing field, a wrong type, an unknown key
    for broken in ({k: v for k, v in doc.items() if k != "rows"},
                   {**doc, "runs": "1"},
                   {**doc, "rows": [{**doc["rows"][0], "bpc": 1.0}]}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, schema)


def test_markdown_table(rows):
    text = bench.format_markdown(rows, runs=2)
    lines = text.splitlines()
    assert lines[0].startswith("| file | size | method |") and set(lines[1]) <= set("|-:")
    table = [line for line in lines if line.startswith("| ")][1:]
    assert len(table) == len(rows)
    assert sum("**" in line for line in table) == len({r["file"] for r in rows})
    result = run("bench", "--markdown", "--models", "order2", "--json")
    assert result.exit_code != 0 and "alternatives" in result.output


def test_plot_without_matplotlib_is_one_line_and_no_work(monkeypatch, tmp_path):
    monkeypatch.setattr(bench, "can_plot", lambda: False)
    monkeypatch.setattr(bench, "run", lambda *a, **k: pytest.fail("ran without matplotlib"))
    result = run("bench", "--plot", str(tmp_path / "p.png"))
    assert result.exit_code == 1
    assert result.output == "seqzip: --plot needs matplotlib: pip install 'seqzip[plot]'\n"


def test_plot_draws_learning_curves(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    monkeypatch.setattr(bench.rows, "DEFAULT_SIZES", SIZES)
    out = tmp_path / "curves.png"
    result = run("bench", "--models", "order2", "--plot", str(out))
    assert result.exit_code == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_learning_curve_is_the_coders_cost():
    data = b"the cat sat on the mat. " * 40
    curve = bench.learning_curve(data, "order2", window=1)
    import seqzip

    packed = seqzip.compress(data, model="order2")
    # the sum of -log2 p is the payload's size, up to the header and the coder's rounding
    assert abs(sum(curve) / 8 - len(packed)) < 100
    assert bench.learning_curve(b"", "order2") == [] and \
        bench.learning_curve(b"aaaa", "order2") == [0.0] * 4


def test_verbose_reports_spectral_radius_of_recurrent_models():
    import numpy as np

    from seqzip import bench

    rows = bench.run(None, models=["relu-rnn", "order2"], level=1, sizes={"english": 3000},
                     verbose=True)
    by = {r["method"]: r for r in rows}
    assert "spectral_radius" not in by["order2"]
    (before, after), = by["relu-rnn"]["spectral_radius"].values()
    from seqzip.models import create, make_config
    model = create("relu-rnn", make_config("relu-rnn", 1), alphabet_size=40)
    R = model.recurrent_matrices()["R"]
    v = np.ones(len(R))
    for _ in range(500):  # power iteration agrees with the eigenvalue routine
        v = R.T @ R @ v
        v /= np.linalg.norm(v)
    assert bench.spectral_radius(R) <= np.sqrt(v @ R.T @ R @ v) + 1e-9  # radius <= norm
    assert 0 < before < 1.0 and after > 0 and before != after
    assert "spectral radius, relu-rnn -1" in bench.format_table(rows)


def _valid(doc):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, bench.schema())
    return doc


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(bench.rows, "DEFAULT_SIZES", {"markov2": 2000})


@pytest.mark.parametrize("flags", [
    ["--runs", "2", "--models", "order2:1,ctw:2"],
    ["-v", "--models", "relu-rnn:1,order2"],
    ["--models", "order2", "--plot", "PLOT"],
    ["-q", "--models", "cm:1"],
])
def test_every_mode_of_bench_json_validates(flags, small, tmp_path):
    flags = [str(tmp_path / "p.png") if f == "PLOT" else f for f in flags]
    result = run("bench", "--json", *flags)
    assert result.exit_code == 0, result.output
    doc = _valid(json.loads(result.stdout))
    assert doc["mode"] == "files" and doc["rows"]
    assert doc["machine"]["constriction"] and doc["machine"]["libraries"]["pyperf"]
    assert doc["inputs"][0]["generator"] == "markov2" and doc["inputs"][0]["seed"] == 0


def test_validation_and_table1_json_validate(tmp_path):
    train, valid = tmp_path / "train.txt", tmp_path / "valid.txt"
    train.write_bytes(b"one two three two one " * 40)
    valid.write_bytes(b"three two one " * 10)
    result = run("bench", "--json", "--models", "order2", "--train", str(train),
                 "--validation", str(valid))
    assert result.exit_code == 0, result.output
    doc = _valid(json.loads(result.stdout))
    assert doc["mode"] == "validation" and doc["validation"]["size"] == len(valid.read_bytes())
    result = run("bench", "--json", "--table1", "--budget", "0.3", "--methods",
                 "glnn-qdh-rbpm", "--problems", "anbn")
    assert result.exit_code == 0, result.output
    doc = _valid(json.loads(result.stdout))
    assert doc["mode"] == "table1" and doc["budget_cpu_s"] == 0.3
    assert "about 0.0 CPU minutes" in result.stderr or "CPU minutes" in result.stderr


def test_table1_defaults_to_minutes_and_says_so():
    option = next(p for p in __import__("seqzip.cli", fromlist=["cli"]).cli.commands[
        "bench"].params if p.name == "budget")
    from seqzip.research import table1
    fits = len(table1.METHODS) * len(table1.PROBLEMS)
    assert fits * option.default <= 15 * 60  # minutes, not the paper's hours


def test_per_model_levels_full_names_and_regret_per_character(tmp_path):
    path = tmp_path / ("a-file-name-longer-than-twenty-two-characters.txt")
    path.write_bytes(b"the cat sat on the mat " * 50)
    rows = bench.run([str(path)], models=["order2:1", "order2:6"])
    assert [(r["method"], r["level"]) for r in rows if r["level"]] == [("order2", 1),
                                                                        ("order2", 6)]
    table = bench.format_table(rows)
    assert str(path) in table  # never cut
    with pytest.raises(ValueError):
        bench.run([str(path)], models=["order2:10"])
    with pytest.raises(ValueError):
        bench.run([str(path)], models=["nosuch:1"])
    generated = bench.run(None, models=["order2"], sizes={"markov2": 2000})
    r = next(r for r in generated if r["method"] == "order2")
    assert r["regret_bits_per_character"] == pytest.approx(r["regret_bits"] / r["size"])
    assert f"{r['regret_bits_per_character']:.4f}" in bench.format_table(generated)


def test_plot_curves_of_models_and_baselines_are_computed_the_same_way():
    data = b"the cat sat on the mat. " * 200
    model = bench.cumulative_curve(data, "order2", 6, points=4)
    base = bench.baseline_curve(data, "bzip2-9", points=4)
    assert [p for p, _ in model] == [p for p, _ in base] == [1200, 2400, 3600, 4800]
    import seqzip
    import bz2
    # each curve ends at its whole file's figure
    assert model[-1][1] == pytest.approx(8 * len(seqzip.compress(data, 6, model="order2"))
                                         / len(data))
    assert base[-1][1] == pytest.approx(8 * len(bz2.compress(data, 9)) / len(data))


def test_pyperf_suite_of_the_timings():
    t = bench.Timing((1.0, 2.0, 4.0), (1.0, 1.0, 1.0))
    assert t.summary()["cpu_s"] == {"median": 2.0, "min": 1.0, "max": 4.0,
                                    "values": [1.0, 2.0, 4.0]}
    with pytest.raises(ValueError):
        bench.timed(len, b"", runs=0)
