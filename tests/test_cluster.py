"""Pieces, whole inputs and bench sweeps as Dask tasks on a local cluster of 2 worker
processes: the same bytes (and rows) as local processes, whatever runs them."""
import io
import os
import subprocess
import sys

import pytest

import seqzip
from seqzip import bench, corpora

from tests.helpers import busy_worker_killer

distributed = pytest.importorskip("distributed")

DATA = corpora.generate("text", 300_000, seed=11).data


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=":0") as local, \
            distributed.Client(local, set_as_default=False) as client:
        yield client


def _compress(data=DATA, **options):
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, model="order2", **options)
    return out.getvalue()


@pytest.fixture(scope="module")
def local_packed():
    return _compress(processes=2)


def test_pieces_on_one_or_two_workers_give_the_bytes_of_local_processes(cluster, local_packed):
    assert _compress(processes=2, scheduler=cluster) == local_packed
    assert _compress(processes=2, scheduler=cluster.scheduler.address) == local_packed
    one = distributed.Client(distributed.LocalCluster(n_workers=1, processes=True,
                                                      threads_per_worker=1,
                                                      dashboard_address=":0"))
    try:
        assert _compress(processes=2, scheduler=one) == local_packed
    finally:
        one.cluster.close()
        one.close()
    restored = io.BytesIO()
    seqzip.decompress_file(io.BytesIO(local_packed), restored, scheduler=cluster)
    assert restored.getvalue() == DATA


def test_old_multi_stream_outputs_decode_on_the_cluster(cluster):
    packed = seqzip.compress(DATA[:150_000], model="order2") + \
        seqzip.compress(DATA[150_000:], model="order2")
    restored = io.BytesIO()
    seqzip.decompress_file(io.BytesIO(packed), restored, scheduler=cluster)
    assert restored.getvalue() == DATA


def test_a_worker_killed_mid_run_gives_the_same_output_or_none(cluster):
    data = corpora.generate("text", 600_000, seed=12).data
    options = dict(model="cm", level=1, processes=4)  # pieces of a second or more each
    killer, killed = busy_worker_killer(cluster)
    killer.start()
    out = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), out, scheduler=cluster, **options)
    killer.join()
    assert killed, "no worker was busy"
    cluster.wait_for_workers(2, timeout=60)  # the nanny starts a new worker
    # the lost worker's piece ran again elsewhere (the prefix's state is on every worker)
    expected = io.BytesIO()
    seqzip.compress_file(io.BytesIO(data), expected, **options)
    assert out.getvalue() == expected.getvalue()


def test_bench_sweep_on_the_cluster_returns_the_local_table(cluster):
    files = {"a": corpora.generate("text", 4000, seed=1).data,
             "b": corpora.generate("markov2", 3000, seed=2).data}
    def table(rows):  # everything but the times, which differ from run to run
        return [{k: v for k, v in r.items() if k not in ("compress_kb_s", "decompress_kb_s",
                                                          "timing") and not k.endswith("_s")}
                for r in rows]

    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for name, data in files.items():
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            paths.append(path)
        local = bench.run(paths, models=["order2", "ctw:2"])
        remote = bench.run(paths, models=["order2", "ctw:2"], scheduler=cluster)
    assert table(remote) == table(local) and len(local) >= 4


def test_without_dask_the_scheduler_option_says_what_to_install():
    script = ("import sys; sys.modules['distributed'] = None; import io, seqzip\n"
              "try:\n"
              "    seqzip.compress_file(io.BytesIO(b'x' * 10), io.BytesIO(), scheduler='tcp://h:1')\n"
              "except ValueError as e:\n"
              "    print(e)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert 'pip install "seqzip[cluster]"' in result.stdout, result.stderr


def test_a_small_input_is_one_task_and_decodes_on_the_cluster(cluster):
    data = DATA[:5000]
    packed = _compress(data, scheduler=cluster)
    assert packed == seqzip.compress(data, model="order2")
    restored = io.BytesIO()
    seqzip.decompress_file(io.BytesIO(packed), restored, scheduler=cluster)
    assert restored.getvalue() == data


def test_cli_scheduler_option_gives_the_local_bytes(cluster, local_packed, tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(DATA)
    run = [sys.executable, "-m", "seqzip.cli", "--model", "order2", "-T", "2", "-c", str(path)]
    result = subprocess.run(run + ["--scheduler", cluster.scheduler.address],
                            capture_output=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == local_packed
    packed = tmp_path / "in.txt.sqz"
    packed.write_bytes(local_packed)
    result = subprocess.run([sys.executable, "-m", "seqzip.cli", "-t", "--scheduler",
                             cluster.scheduler.address, str(packed)], capture_output=True)
    assert result.returncode == 0, result.stderr
    script = ("import sys; sys.modules['distributed'] = None; from seqzip.cli import main; "
              f"sys.argv = ['seqzip', '-c', '--scheduler', 'tcp://h:1', {str(path)!r}]; main()")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f'seqzip: {path}: a Dask scheduler needs dask.distributed: pip install "seqzip[cluster]"']
