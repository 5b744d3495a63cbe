"""The progress line on a terminal: position, percentage, measured rate and time left.

The position is measured: the coding loop publishes the symbols it has coded
(:func:`seqzip.api.symbols_coded`) and lets the interpreter go every few milliseconds, so a
thread of this process samples the count while a frame is coded; worker processes (``-T``)
report after each frame.  The rate is taken over the last seconds of those measurements, the
time left follows from it, and the line never goes backwards.  Only before the first
measurement does it advance at a model's typical speed.

    >>> meter = Meter(start=0.0, prior_rate=100.0, total=1000)
    >>> meter.reading(1.0)  # nothing measured yet: the typical speed
    (100.0, 100.0)
    >>> meter.observe(2.0, 50); meter.observe(4.0, 450)
    >>> meter.reading(4.0)  # measured 50 -> 450 in 2 s; the guess of 100 is not undone
    (450.0, 200.0)
"""
from __future__ import annotations

import collections
import contextlib
import os
import signal
import sys
import threading
import time
from typing import Callable

from .outputs import _parent_alive, _PipeChild

PROGRESS_AFTER = 2.0  # seconds: show progress for jobs expected (or found) to take longer
PROGRESS_EVERY = 0.5  # seconds between redraws
SAMPLE_EVERY = 0.25  # seconds between readings of the coded-symbols counter
RATE_WINDOW = 5.0  # seconds of measurements the rate is taken over


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60}:{rest % 60:02d}"


def progress_line(label: str, done: float, total: float | None, rate: float,
                  unit: str = "bytes") -> str:
    """One progress line: position, percentage, rate and time left.

        >>> progress_line("a.txt", 50_000, 200_000, 25_000)
        'a.txt   25%  48.8 KiB / 195.3 KiB  25.0 KB/s  ETA 0:06'
        >>> progress_line("train", 15, 60, 1, unit="seconds")
        'train   25%  0:15 / 1:00  ETA 0:45'
        >>> progress_line("train", 61, 60, 1, unit="seconds")
        'train  1:01  (budget of 1:00 spent, finishing)'
    """
    if unit == "seconds":
        if total and done >= total:  # a CPU budget: wall time may run past it
            return f"{label}  {_clock(done)}  (budget of {_clock(total)} spent, finishing)"
        where = f"{_clock(done)} / {_clock(total)}" if total else _clock(done)
        speed = ""
    else:
        where = f"{_size(done)} / {_size(total)}" if total else _size(done)
        speed = f"  {rate / 1000:.1f} KB/s" if rate > 0 else ""
    if total:
        percent = f"{min(100, int(100 * done / total)):>3d}%  "
        left = f"  ETA {_clock((total - done) / rate)}" if rate > 0 else ""
    else:
        percent, left = "", ""
    return f"{label}  {percent}{where}{speed}{left}"


class Meter:
    """Position and rate of a job from measured counts (``observe``), read at any time
    (``reading``): the rate is the count's slope over the last ``RATE_WINDOW`` seconds, the
    position is the last count and never goes backwards.  Before the first count the position
    advances at ``prior_rate`` (a model's typical speed), up to 99.9% of ``total``.

        >>> meter = Meter(start=0.0, prior_rate=10.0, total=100)
        >>> meter.reading(3.0)
        (30.0, 10.0)
        >>> meter.observe(3.5, 20)  # fewer than guessed: the line holds, the rate is measured
        >>> meter.reading(3.5)
        (30.0, 5.714285714285714)
        >>> meter.observe(10.0, 90); meter.reading(10.0)
        (90.0, 10.76923076923077)
    """

    def __init__(self, start: float, prior_rate: float, total: float | None) -> None:
        self.start, self.prior_rate, self.total = start, prior_rate, total
        self.samples: collections.deque[tuple[float, float]] = collections.deque()
        self.shown = 0.0

    def observe(self, now: float, done: float) -> None:
        if self.samples and done <= self.samples[-1][1]:
            return
        self.samples.append((now, done))
        while len(self.samples) > 2 and self.samples[1][0] < now - RATE_WINDOW:
            self.samples.popleft()

    def reading(self, now: float) -> tuple[float, float]:
        """(position, rate per second) at time ``now``."""
        if not self.samples:
            position, rate = self.prior_rate * (now - self.start), self.prior_rate
            if self.total:
                position = min(position, self.total * 0.999)
        else:
            (t0, d0), (t1, d1) = self.samples[0], self.samples[-1]
            if len(self.samples) == 1 or t1 - t0 < 0.5:  # too short: the whole job so far
                t0, d0 = self.start, 0.0
            position, rate = d1, (d1 - d0) / (t1 - t0) if t1 > t0 else 0.0
        self.shown = max(self.shown, float(position))
        return self.shown, rate


class Progress:
    """A progress line on a terminal, redrawn every half second by a small child process
    (which erases it whatever ends this process: the pipe to it closes).

    ``counter()``, when given, is the job's measured position (e.g. symbols coded since the
    start); a thread samples it every quarter second while the job runs.  ``update(n)`` adds
    ``n`` to the position reported by the job itself (after each frame).  The child draws the
    larger of the two.  The line appears when the job is expected to take more than two seconds
    (at the typical ``rate``), or once it has.

        >>> with Progress("book.txt", 1000, 100.0, quiet=True) as bar:  # quiet: no child
        ...     bar.update(600)
        >>> bar.done
        600
    """

    def __init__(self, label: str, total: float | None, rate: float, quiet: bool,
                 unit: str = "bytes", counter: Callable[[], float] | None = None) -> None:
        self.done = 0
        self._child = None
        self._sent = 0.0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sampler = None
        if quiet or not sys.stderr.isatty() or not hasattr(os, "fork"):
            return
        expected = total / rate if total and rate > 0 else None
        self._child = _PipeChild(
            lambda fd: _draw_progress(fd, label, total, rate, expected, unit))
        if counter is not None:
            self._sampler = threading.Thread(target=self._sample, args=(counter,), daemon=True,
                                             name="seqzip-progress")
            self._sampler.start()

    def _send(self, position: float) -> None:
        with self._lock:
            if self._child is None or position <= self._sent:
                return
            self._sent = position
            with contextlib.suppress(OSError):
                self._child.write(f"{position}\n".encode())

    def _sample(self, counter: Callable[[], float]) -> None:
        while not self._stop.wait(SAMPLE_EVERY):
            self._send(max(self.done, counter()))

    def update(self, n: float) -> None:
        self.done += n
        self._send(self.done)

    def close(self) -> None:
        self._stop.set()
        if self._sampler is not None:
            self._sampler.join()
        with self._lock:
            if self._child is not None:
                self._child.close()
                self._child = None

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def coded_since_now() -> Callable[[], float]:
    """A counter of the symbols this process codes from now on (:func:`seqzip.api.symbols_coded`)
    for :class:`Progress`."""
    from .. import api

    base = api.symbols_coded()
    return lambda: api.symbols_coded() - base


def _draw_progress(fd: int, label: str, total: float | None, prior_rate: float,
                   expected: float | None, unit: str) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's end closes the pipe
    parent = os.getppid()
    start = time.monotonic()
    meter = Meter(start, prior_rate, total)
    shown, pending = False, b""
    while True:
        alive, chunk = _parent_alive(parent, fd, PROGRESS_EVERY)
        if chunk == b"" or not alive:
            break
        now = time.monotonic()
        if chunk:
            pending += chunk
            *counts, pending = pending.split(b"\n")
            if counts:
                meter.observe(now, float(counts[-1]))
        if unit == "seconds":  # a budget of time: the clock is the measurement
            position, rate = now - start, 1.0
        else:
            position, rate = meter.reading(now)
        if not shown and (now - start < PROGRESS_AFTER and (expected or 0) <= PROGRESS_AFTER):
            continue
        line = progress_line(label, position, total, rate, unit)
        with contextlib.suppress(OSError):
            width = os.get_terminal_size(2).columns
            if width > 20:  # 0: the terminal does not say
                line = line[:width - 1]
        os.write(2, b"\r\x1b[K" + line.encode("utf-8", "replace"))
        shown = True
    if shown:
        os.write(2, b"\r\x1b[K")
