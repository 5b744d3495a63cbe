"""More of seqzip on a Dask cluster (a LocalCluster of 2 worker processes): the size scan of
``seqzip train`` and whole files under ``-r``, each giving the bytes of the local run."""
import io
import os
import subprocess
import sys

import pytest
import seqzip
from click.testing import CliRunner

from seqzip import corpora
from seqzip.cli import cli
from seqzip.research import training

from tests.helpers import busy_worker_killer

distributed = pytest.importorskip("distributed")

TEXT = corpora.generate("text", 3000, seed=3).data
NO_DASK = "import sys; sys.modules['distributed'] = None\n"
INSTALL = 'a Dask scheduler needs dask.distributed: pip install "seqzip[cluster]"'


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0") as local, \
            distributed.Client(local, set_as_default=False) as client:
        client.wait_for_workers(2, timeout=60)
        yield client


def _scan_file(**options) -> bytes:
    """The research network file of a size scan that ends by steps (2 per setting)."""
    result, alphabet, _ = training.train_bytes(TEXT, method="glnn-qdh-rbpm", budget=1e4,
                                               max_steps=2, **options)
    summary = result.summary()
    summary.pop("settings"), summary.pop("seconds")
    out = io.BytesIO()
    training.save_model(out, result.network, alphabet, {"method": "glnn-qdh-rbpm", **summary})
    return out.getvalue()


def test_the_size_scan_on_the_cluster_picks_the_local_winner_with_the_same_bytes(cluster):
    local = _scan_file()
    assert _scan_file(scheduler=cluster) == local
    assert _scan_file(scheduler=cluster.scheduler.address) == local
    # EM's matrix products run in BLAS, whose sums depend on its thread count (the workers
    # run one thread): the same winner and steps, the bits within rounding
    result, _, _ = training.train_bytes(TEXT, method="hmm-em", budget=1e4, max_steps=2,
                                        scheduler=cluster)
    again, _, _ = training.train_bytes(TEXT, method="hmm-em", budget=1e4, max_steps=2)
    assert len(result.candidates) == len(again.candidates) > 4
    assert result.best.n_units == again.best.n_units
    assert result.validation_bits == pytest.approx(again.validation_bits, rel=1e-12)
    assert [c.trainer.steps for c in result.candidates] == \
        [c.trainer.steps for c in again.candidates]


@pytest.mark.parametrize("method", ["gnn-qdh-ruop", "hmm-em"])
def test_cli_train_scan_gives_the_same_file_locally_and_on_the_cluster(cluster, tmp_path,
                                                                       method):
    path = tmp_path / "in.txt"
    path.write_bytes(TEXT)
    args = [sys.executable, "-m", "seqzip.cli", "train", str(path), "--method", method,
            "--budget", "10000", "--steps", "3", "-q", "-o"]
    # BLAS on one thread, as on the workers (dask's nannies set it): EM's sums then agree
    one_thread = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
                  "MKL_NUM_THREADS": "1"}
    local = subprocess.run(args + [str(tmp_path / "local.sqm")], capture_output=True,
                           text=True, env=one_thread)
    assert local.returncode == 0, local.stderr
    remote = subprocess.run(args + [str(tmp_path / "remote.sqm"), "--scheduler",
                                    cluster.scheduler.address], capture_output=True, text=True)
    assert remote.returncode == 0, remote.stderr
    assert (tmp_path / "remote.sqm").read_bytes() == (tmp_path / "local.sqm").read_bytes()
    digest = local.stderr.split("sha256 ")[1][:16]
    assert f"sha256 {digest}" in remote.stderr


def test_train_scheduler_without_dask_says_what_to_install(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(TEXT)
    script = NO_DASK + ("from seqzip.cli import main\n"
                        f"sys.argv = ['seqzip', 'train', {str(path)!r}, '-o', "
                        f"{str(tmp_path / 'm.sqm')!r}, '--method', 'glnn-qdh-rbpm', "
                        "'--scheduler', 'tcp://h:1']\nmain()")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [f"seqzip: {INSTALL}"]
    assert not (tmp_path / "m.sqm").exists()


def test_steps_and_scheduler_without_a_scan_are_refused_in_one_line(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(TEXT)
    runner = CliRunner()
    for extra in (["--model", "order2"], ["--method", "relu-rnn-sgd"],
                  ["--method", "lstm"]):
        for flag in (["--steps", "3"], ["--scheduler", "tcp://h:1"]):
            result = runner.invoke(cli, ["train", str(path), "-o", str(tmp_path / "m.sqm"),
                                         *extra, *flag])
            assert result.exit_code == 1
            assert result.output.strip().splitlines() == [
                f"seqzip: {flag[0]} applies to the size scan of a research network "
                f"(--method {', '.join(training.METHODS)} without --model), not to "
                f"{' '.join(extra)}"]
    assert not (tmp_path / "m.sqm").exists()


# -- whole files under -r as Dask tasks ---------------------------------------------------------

def _tree(root, big: bytes = b""):
    """A directory of inputs (one nested, one empty, one ``big``); returns it."""
    (root / "sub").mkdir(parents=True)
    for i, name in enumerate(["a.txt", "b.bin", "sub/c.txt", "sub/d.txt"]):
        (root / name).write_bytes(corpora.generate("text", 2000 + 700 * i, seed=i).data)
    (root / "empty").write_bytes(b"")
    if big:
        (root / "sub" / "big.txt").write_bytes(big)
    return root


def _outputs(root, suffix=".sqz"):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*" + suffix))
            if p.is_file()}


@pytest.fixture
def seqzip_cli(cluster):
    """Runs the command line in this process (so that the task stream shows its tasks), and
    lets go of the client it opens for --scheduler."""
    from seqzip.cli import options

    def run(*args):
        with distributed.get_task_stream(client=cluster) as stream:
            result = CliRunner().invoke(cli, [str(a) for a in args])
        return result, {t["key"].split("-")[0] for t in stream.data}

    yield run
    client = options._CLIENTS.pop(cluster.scheduler.address, None)
    if client is not None:
        client.close()


def test_files_under_r_are_tasks_with_the_bytes_of_the_local_run(cluster, seqzip_cli,
                                                                 tmp_path):
    big = corpora.generate("text", 200_000, seed=9).data  # two pieces at -T 2
    local, remote = _tree(tmp_path / "local", big), _tree(tmp_path / "remote", big)
    for options in (["--model", "order2", "-T", "2"], ["--model", "order2"],
                    ["--model", "ctw", "-2"]):
        options.append("-f")
        result, _ = seqzip_cli("-r", "-q", *options, local)
        assert result.exit_code == 0, result.output
        result, tasks = seqzip_cli("-r", "-q", *options, "--scheduler",
                                   cluster.scheduler.address, remote)
        assert result.exit_code == 0, result.output
        assert "_compress_task" in tasks
        assert len(_outputs(local)) == 6 and _outputs(remote) == _outputs(local)
        # -T 2 makes big.txt a piece set (its pieces tasks of their own), else one stream
        one_stream = io.BytesIO()
        seqzip.compress_file(io.BytesIO(big), one_stream, model=options[1],
                             level=2 if options[1] == "ctw" else None)
        assert (_outputs(remote)["sub/big.txt.sqz"] == one_stream.getvalue()) == \
            ("-T" not in options)
    for path in local.rglob("*"):
        if path.is_file() and path.suffix != ".sqz":
            path.unlink()
    result, tasks = seqzip_cli("-d", "-r", "-q", "--scheduler", cluster.scheduler.address,
                               local)
    assert result.exit_code == 0, result.output
    assert "_decompress_task" in tasks
    assert _outputs(local, "") == _outputs(remote, "")  # every input back, and the .sqz
    result, tasks = seqzip_cli("-t", "-r", "--scheduler", cluster.scheduler.address, remote)
    assert result.exit_code == 0 and "_decompress_task" in tasks
    inputs = [local / "a.txt", local / "sub" / "c.txt", local / "empty"]  # -c: in order, as
    # the last -r run coded them
    result, tasks = seqzip_cli("-c", "--model", "ctw", "-2", "--scheduler",
                               cluster.scheduler.address, *inputs)
    assert result.exit_code == 0 and "_compress_task" in tasks
    assert result.stdout_bytes == b"".join(
        (remote / path.relative_to(local)).with_suffix(path.suffix + ".sqz").read_bytes()
        for path in inputs)


def test_a_bad_file_under_r_on_the_cluster_leaves_no_output_and_the_others_whole(
        cluster, seqzip_cli, tmp_path):
    root = tmp_path / "in"
    root.mkdir()
    for name in ("a", "b", "c"):
        (root / f"{name}.sqz").write_bytes(seqzip.compress(name.encode() * 999, model="order2"))
    (root / "b.sqz").write_bytes((root / "b.sqz").read_bytes()[:-3])  # truncated
    result, tasks = seqzip_cli("-d", "-r", "--scheduler", cluster.scheduler.address, root)
    assert result.exit_code == 1 and "_decompress_task" in tasks
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"seqzip: {root / 'b.sqz'}: ")
    assert sorted(p.name for p in root.iterdir()) == ["a", "a.sqz", "b.sqz", "c", "c.sqz"]
    assert (root / "a").read_bytes() == b"a" * 999 and (root / "c").read_bytes() == b"c" * 999
    local = CliRunner().invoke(cli, ["-t", str(root / "b.sqz")])
    assert local.output == result.output  # the local run's message


def test_r_scheduler_without_dask_says_what_to_install_once(tmp_path):
    root = _tree(tmp_path / "in")
    script = NO_DASK + ("from seqzip.cli import main\n"
                        f"sys.argv = ['seqzip', '-r', '--scheduler', 'tcp://h:1', {str(root)!r}]"
                        "\nmain()")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [f"seqzip: {INSTALL}"]
    assert _outputs(root) == {}


# -- a piece set's decoder holds two models: --max-memory counts both ---------------------------

def test_max_memory_counts_the_two_models_of_a_piece_set(cluster, tmp_path):
    from seqzip.errors import LimitError
    from seqzip.models import make_config

    data = corpora.generate("text", 200_000, seed=9).data
    pieces = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), pieces, model="order2", level=1, processes=2)
    one_stream = seqzip.compress(data, model="order2", level=1)
    need = make_config("order2", 1).memory_bytes(len(set(data)))
    assert seqzip.decompress(one_stream, max_memory=need) == data
    message = "piece set's two models \\(the prefix's and a piece's\\) may need"
    with pytest.raises(LimitError, match=message):
        seqzip.decompress(pieces.getvalue(), max_memory=2 * need - 1)
    assert seqzip.decompress(pieces.getvalue(), max_memory=2 * need) == data
    for where in (dict(processes=2), dict(scheduler=cluster)):
        with pytest.raises(LimitError, match=message):
            seqzip.decompress_file(io.BytesIO(pieces.getvalue()), io.BytesIO(),
                                   max_memory=2 * need - 1, **where)
        out = io.BytesIO()
        seqzip.decompress_file(io.BytesIO(pieces.getvalue()), out, max_memory=2 * need, **where)
        assert out.getvalue() == data
    path = tmp_path / "in.sqz"
    path.write_bytes(pieces.getvalue())
    result = CliRunner().invoke(cli, ["-t", "--max-memory", str(2 * need - 1), str(path)])
    assert result.exit_code == 1
    assert result.output.startswith(f"seqzip: {path}: piece set's two models")


def test_a_worker_killed_during_r_gives_the_local_outputs(cluster, seqzip_cli, tmp_path):
    local, remote = tmp_path / "local", tmp_path / "remote"
    for root in (local, remote):
        root.mkdir()
        for i in range(4):  # about a second of cm -1 each
            (root / f"{i}.txt").write_bytes(corpora.generate("text", 120_000, seed=i).data)
    killer, killed = busy_worker_killer(cluster, "_compress_task")
    killer.start()
    result, _ = seqzip_cli("-r", "-q", "--model", "cm", "-1", "--scheduler",
                           cluster.scheduler.address, remote)
    killer.join()
    cluster.wait_for_workers(2, timeout=60)  # the nanny starts a new worker
    assert killed, "no worker was busy"
    assert result.exit_code == 0, result.output
    assert CliRunner().invoke(cli, ["-r", "-q", "--model", "cm", "-1", str(local)]).exit_code == 0
    assert len(_outputs(local)) == 4 and _outputs(remote) == _outputs(local)
