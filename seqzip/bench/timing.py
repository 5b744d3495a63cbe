"""Timing of the bench's jobs: repeats, spread, and the machine they ran on, through pyperf.

pyperf (the benchmarking library of CPython's own performance suite) holds the values of each
measurement, computes their statistics and records the machine's metadata (CPU model and
frequency, load, timer, Python build); its JSON files compare with
``python -m pyperf compare_to a.json b.json``.  A job is timed ``runs`` times, each run reading
both clocks: CPU seconds of this process (``time.process_time``; the figure to quote on a
shared machine) and wall seconds.

    >>> result, t = timed(sum, [1, 2, 3], runs=3)
    >>> result, t.runs, sorted(t.summary()["cpu_s"])
    (6, 3, ['max', 'median', 'min', 'values'])
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import pyperf

# pyperf refuses values of exactly zero; a job faster than the clock counts as one tick
_TICK = 1e-9


@dataclass(frozen=True)
class Timing:
    """The CPU and wall seconds of each run of one job."""
    cpu: tuple[float, ...]
    wall: tuple[float, ...]

    @property
    def runs(self) -> int:
        return len(self.cpu)

    def benchmark(self, name: str, clock: str = "cpu") -> pyperf.Benchmark:
        """The runs as a pyperf benchmark named ``name`` (one value per run).

            >>> Timing((1.0, 3.0, 2.0), (1.0, 1.0, 1.0)).benchmark("x").median()
            2.0
        """
        values = [max(v, _TICK) for v in (self.cpu if clock == "cpu" else self.wall)]
        run = pyperf.Run(values, metadata={"name": name, "unit": "second"},
                         collect_metadata=False)
        return pyperf.Benchmark([run])

    def summary(self) -> dict[str, dict[str, Any]]:
        """Median, min, max and the values, for each clock (seconds).

            >>> Timing((1.0, 3.0, 2.0), (2.0, 2.0, 5.0)).summary()["wall_s"]["median"]
            2.0
        """
        out = {}
        for key, clock in (("cpu_s", "cpu"), ("wall_s", "wall")):
            bench = self.benchmark("job", clock)
            values = list(bench.get_values())
            out[key] = {"median": bench.median(), "min": min(values), "max": max(values),
                        "values": values}
        return out

    @property
    def cpu_median(self) -> float:
        return self.benchmark("job", "cpu").median()

    @property
    def wall_median(self) -> float:
        return self.benchmark("job", "wall").median()


def timed(func: Callable[[Any], Any], arg: Any, runs: int = 1) -> tuple[Any, Timing]:
    """``func(arg)`` run ``runs`` times; its last result and the :class:`Timing` of the runs."""
    if runs < 1:
        raise ValueError("runs must be at least 1")
    cpu, wall, result = [], [], None
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        result = func(arg)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return result, Timing(tuple(cpu), tuple(wall))


def machine_metadata() -> dict[str, Any]:
    """What pyperf records of this machine and interpreter (CPU model, frequency, load, timer,
    Python build ...).

        >>> "cpu_count" in machine_metadata()
        True
    """
    run = pyperf.Run([1.0], metadata={"name": "machine"}, collect_metadata=True)
    meta = dict(run.get_metadata())
    for key in ("name", "date", "uptime", "mem_max_rss", "hostname", "boot_time"):
        meta.pop(key, None)
    return {k: v for k, v in meta.items() if isinstance(v, (str, int, float))}


def suite(rows: list[dict], timings: dict[int, tuple[Timing, Timing]]) -> pyperf.BenchmarkSuite:
    """A pyperf suite of the rows' timings: one benchmark per (file, method, direction) in CPU
    seconds (``seqzip bench --pyperf FILE`` writes it).

        >>> rows = [{"file": "f", "method": "order2", "level": 6}]
        >>> t = Timing((1.0, 2.0), (1.0, 2.0))
        >>> [b.get_name() for b in suite(rows, {0: (t, t)}).get_benchmarks()]
        ['f order2 -6 compress (CPU)', 'f order2 -6 decompress (CPU)']
    """
    benchmarks = []
    for i, row in enumerate(rows):
        if i not in timings:
            continue
        label = row["method"] + (f" -{row['level']}" if row.get("level") is not None else "")
        for direction, timing in zip(("compress", "decompress"), timings[i]):
            benchmarks.append(timing.benchmark(f"{row['file']} {label} {direction} (CPU)"))
    return pyperf.BenchmarkSuite(benchmarks)
