"""Pieces, whole inputs and bench sweeps as tasks on a Dask cluster (``dask.distributed``,
the optional extra ``seqzip[cluster]``).

Data goes to the workers as bytes and comes back as streams (or rows); nothing is written
but the caller's outputs, and the output is the same whatever ran it and however many workers
there were.  A worker lost in the middle is the engine's to handle: the scheduler runs its
tasks again elsewhere, and a task that raised is retried ``RETRIES`` times.

With a scheduler running at ADDRESS (``dask scheduler``, ``dask worker ADDRESS`` on each
machine): ``seqzip.compress_file(src, dst, processes=64, scheduler="tcp://ADDRESS:8786")``
or ``seqzip -T 64 --scheduler tcp://ADDRESS:8786 big.txt``.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from .models import Model
from .session import state_bytes

INSTALL = 'pip install "seqzip[cluster]"'
RETRIES = 2  # a task that raised runs again up to this many times (a lost worker: see above)


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ValueError(f"a Dask scheduler needs dask.distributed: {INSTALL}") from None
    return distributed


class Cluster:
    """A client of the Dask cluster at ``scheduler`` (an address such as
    ``"tcp://10.0.0.5:8786"``, or a ``distributed.Client``, used as it is and not closed).

    Raises:
        ValueError: dask.distributed is not installed (the message says what to install).
        OSError: no scheduler answers at the address.
    """

    def __init__(self, scheduler: Any) -> None:
        distributed = _distributed()
        self._owned = not isinstance(scheduler, distributed.Client)
        self.client = (distributed.Client(scheduler, set_as_default=False) if self._owned
                       else scheduler)

    def threads(self) -> int:
        """Worker threads in the cluster now (at least 1)."""
        return max(1, sum(self.client.nthreads().values()))

    def map(self, work: Callable, jobs: Iterable[tuple], window: int) -> Iterator[Any]:
        """``work(*job)`` for each job as Dask tasks, at most ``window`` in flight; yields
        the results in order."""
        pending: list = []
        jobs = iter(jobs)
        while True:
            for job in jobs:
                pending.append(self.client.submit(work, *job, pure=False, retries=RETRIES))
                if len(pending) >= window:
                    break
            if not pending:
                return
            yield pending.pop(0).result()

    def close(self) -> None:
        if self._owned:
            self.client.close()

    def __enter__(self) -> "Cluster":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class DaskEngine(Cluster):
    """Where the pieces of ``-T N --scheduler ADDRESS`` run (the interface of
    :class:`seqzip.pieces.LocalEngine`): ``processes`` pieces side by side, or one per worker
    thread when ``processes`` is 1."""

    def __init__(self, scheduler: Any, processes: int = 1) -> None:
        super().__init__(scheduler)
        self.processes = processes if processes > 1 else max(2, self.threads())

    def warm(self, model: Model) -> Any:
        """The prefix's state, sent once to every worker (each piece's task receives it):
        a copy on each, so that losing a worker loses no state the others need.  Its key is
        this call's own (``hash=False``): a key named by the content is shared with any other
        client that scatters the same state, and when that client lets it go the scheduler
        drops the data under this run's pieces ("lost dependencies")."""
        return self.client.scatter(state_bytes(model), broadcast=True, hash=False)

    def map(self, work: Callable, jobs: Iterable[tuple], window: int | None = None
            ) -> Iterator[Any]:
        return super().map(work, jobs, window or self.processes + 1)


def map_jobs(scheduler: Any, work: Callable, jobs: list[tuple]) -> list[Any]:
    """``[work(*job) for job in jobs]``, computed as Dask tasks on the cluster at
    ``scheduler`` (all in flight at once; the results in order)."""
    with Cluster(scheduler) as cluster:
        return list(cluster.map(work, jobs, max(1, len(jobs))))
