"""Helpers the tests share: corpus files (skipped when absent), alphabet indices, and a
Python child process."""
import io
import os
import pathlib
import subprocess
import sys

import pytest

from seqzip.api import compress_file
from seqzip.api import symbols_of as _symbols_of

ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED_CORPORA = pathlib.Path(os.environ.get("SEQZIP_CORPORA",
                                             ROOT.parent / "shared" / "corpora"))
CANTERBURY = SHARED_CORPORA / "canterbury"


def canterbury_file(name: str) -> bytes:
    """Read a Canterbury corpus file, skipping the test when the corpus is absent."""
    path = CANTERBURY / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    return path.read_bytes()


def symbols_of(data: bytes):
    """(alphabet indices, alphabet size) of ``data``."""
    symbols, alphabet = _symbols_of(data)
    return symbols, len(alphabet)


def compress_in_frames(data: bytes, model: str, level: int, frame_size: int) -> bytes:
    """One stream of ``data`` coded in frames of ``frame_size`` symbols."""
    out = io.BytesIO()
    compress_file(io.BytesIO(data), out, model=model, level=level, frame_size=frame_size)
    return out.getvalue()


def run_python(script: str, *args: str, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``script`` in a fresh interpreter (its own signals, limits and imports); the
    result holds its stdout and stderr as text."""
    return subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                          timeout=timeout)


def busy_worker_killer(client, task_prefix: str = ""):
    """A thread (not started) that SIGKILLs the first worker of the Dask ``client``'s cluster
    found busy with a task whose key starts with ``task_prefix``, 0.3 s into it (within 60 s),
    and the list it fills with that worker's address."""
    import signal
    import threading
    import time

    pids = client.run(os.getpid)
    killed: list = []

    def kill():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            busy = [w for w, keys in client.processing().items()
                    if any(str(key).startswith(task_prefix) for key in keys)]
            if busy:
                time.sleep(0.3)  # inside the task
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed.append(busy[0])
            time.sleep(0.05)

    return threading.Thread(target=kill), killed
