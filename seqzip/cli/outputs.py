"""Outputs that appear whole or not at all: a temporary file beside the output, private
until it is complete and renamed on success, and a guardian process (:class:`Janitor`) that
removes it if this process dies first.  A run over many outputs shares one guardian and scans
each directory once for a dead run's temporaries (:class:`OutputRun`).
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import signal
import sys
import time
from typing import IO, Iterator

from .failures import ENDING_SIGNALS, UserError, ending_signals


class GuardianEnded(UserError):
    """The guardian process (:class:`Janitor`) ended while a temporary file was being written
    (killed: nothing else ends it).  That output fails, its temporary file is removed and
    nothing is written; a run over several files goes on with a new guardian."""


class Janitor:
    """Removes a temporary file if this process dies before it is done with it.

    A small child process holds the file's name; if the pipe to it closes while the name is
    still registered (this process ended, by any signal, even SIGKILL), it unlinks the file.
    So SIGINT, SIGTERM and SIGHUP can keep their default action and end the run at once, even
    in the middle of a long frame of coding, and still leave nothing behind.  Where there is no
    ``fork``, ``active`` is false and the caller must clean up through signal handlers.  If the
    child itself ends first, :meth:`watch` and :meth:`check` raise :class:`GuardianEnded`.

        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "partial")
        >>> janitor = Janitor()
        >>> janitor.watch(path); open(path, "w").close()
        >>> janitor.check(path); janitor.release(path); janitor.close()  # the file stays
        >>> os.path.exists(path)
        True
    """

    def __init__(self) -> None:
        self._child = _PipeChild(_sweep) if hasattr(os, "fork") else None
        self.pid = self._child.pid if self._child is not None else None

    @property
    def active(self) -> bool:
        return self._child is not None and self._child.fd is not None

    @property
    def ended(self) -> bool:
        """Whether the guardian child has ended (its exit is collected here)."""
        return self._child is not None and self._child.ended()

    def _send(self, tag: bytes, path: str) -> None:
        if self._child is not None:
            try:
                self._child.write(tag + os.fsencode(path) + b"\0")
            except BrokenPipeError:
                raise self._ended(path) from None

    def _ended(self, path: str) -> GuardianEnded:
        return GuardianEnded(f"the guardian process of temporary files (pid {self.pid}) "
                             f"ended (killed?) while {_output_of(path)} was written; nothing "
                             "was written")

    def watch(self, path: str) -> None:
        self._send(b"+", path)

    def check(self, path: str) -> None:
        """Raise :class:`GuardianEnded` if the guardian of ``path`` has ended."""
        if self.ended:
            raise self._ended(path)

    def release(self, path: str) -> None:
        """Stop watching ``path`` (now named, or removed: nothing to guard, so an ended
        guardian is no error here)."""
        with contextlib.suppress(GuardianEnded):
            self._send(b"-", path)

    def close(self) -> None:
        if self._child is not None:
            self._child.close()


class _PipeChild:
    """A forked child process running ``body(read_fd)`` on the read end of a pipe that this
    process writes: the child sees the pipe close however this process ends (even SIGKILL)."""

    def __init__(self, body) -> None:
        read_end, write_end = os.pipe()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: run the body, never return
            try:
                _close_other_fds(read_end)
                body(read_end)
            finally:
                os._exit(0)
        os.close(read_end)
        self.fd: int | None = write_end
        self.pid: int | None = pid

    def write(self, data: bytes) -> None:
        if self.fd is not None:
            os.write(self.fd, data)

    def ended(self) -> bool:
        """Whether the child has ended (collected now if so)."""
        if self.pid is None:
            return True
        try:
            done, _ = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:
            done = self.pid
        if done:
            self.pid = None
        return bool(done)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
            if self.pid is not None:
                with contextlib.suppress(OSError):
                    os.waitpid(self.pid, 0)
                self.pid = None


def _close_other_fds(keep: int) -> None:
    """In a helper child: hold no one else's pipe ends (stdio stays, for the progress line)."""
    os.closerange(3, keep)
    os.closerange(keep + 1, 65536)


def _parent_alive(parent: int, fd: int, timeout: float) -> tuple[bool, bytes | None]:
    """Wait up to ``timeout`` for data on ``fd``: (parent still alive, data or None; b"" is
    the end of the pipe)."""
    import select

    ready, _, _ = select.select([fd], [], [], timeout)
    data = os.read(fd, 65536) if ready else None
    return os.getppid() == parent, data


def _sweep(fd: int) -> None:
    for sig in ENDING_SIGNALS:  # outlive a signal sent to the whole process group
        signal.signal(sig, signal.SIG_IGN)
    parent = os.getppid()
    watched: set[bytes] = set()
    pending = b""
    while True:
        alive, chunk = _parent_alive(parent, fd, 1.0 if os.getppid() == parent else 0.0)
        if chunk == b"" or (chunk is None and not alive):
            break  # the end of the pipe, or a dead parent's last words are read
        if chunk is None:
            continue
        pending += chunk
        *messages, pending = pending.split(b"\0")
        for message in messages:
            (watched.add if message[:1] == b"+" else watched.discard)(message[1:])
    for path in watched:
        with contextlib.suppress(OSError):
            os.unlink(path)


TMP_SUFFIX = ".sqztmp"
# Bytes of the output's name kept in a temporary name: with the dot, the process id, the tag
# and the suffix (at most 32 more) the name stays under NAME_MAX (255 on Linux and macOS).
MAX_STEM = 200
_TEMPORARY = re.compile(rf"^\.(.+)\.(\d+)-[0-9a-f]{{12}}{re.escape(TMP_SUFFIX)}$", re.DOTALL)


def _stem(name: str) -> str:
    """The part of a temporary name that stands for output ``name``: the name itself, or for
    a long one its start and a hash of the whole (one name, one stem, so that a later run
    finds a dead run's temporaries).

        >>> _stem("a.sqz"), len(os.fsencode(_stem("x" * 300))), _stem("x" * 300)[-17:-16]
        ('a.sqz', 200, '~')
    """
    raw = os.fsencode(name)
    if len(raw) <= MAX_STEM:
        return name
    digest = hashlib.sha256(raw).hexdigest()[:16]
    keep = name[:MAX_STEM]  # each character takes at least one byte
    while len(os.fsencode(keep)) > MAX_STEM - len(digest) - 1:
        keep = keep[:-1]
    return f"{keep}~{digest}"


def _temporary_name(name: str, pid: int, tag: str) -> str:
    """``.STEM.PID-TAG.sqztmp``: hidden, beside its output, and recognisable as seqzip's, with
    the process that made it (so that a later run can tell a stale one from a live one).
    ``STEM`` is the output's name, shortened for a long name (:func:`_stem`)."""
    return f".{_stem(name)}.{pid}-{tag}{TMP_SUFFIX}"


def _output_of(tmp: str) -> str:
    """The output a temporary file stands for (its stem, for a long name)."""
    match = _TEMPORARY.match(os.path.basename(tmp))
    return match.group(1) if match else tmp


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but is someone else's
        return True
    return True


def _temporaries(directory: str) -> dict[str, list[tuple[str, int]]]:
    """The seqzip temporary files in ``directory``: (name, process id) by stem."""
    found: dict[str, list[tuple[str, int]]] = {}
    try:
        entries = os.listdir(directory)
    except OSError:
        return found
    for entry in entries:
        match = _TEMPORARY.match(entry)
        if match:
            found.setdefault(match.group(1), []).append((entry, int(match.group(2))))
    return found


def _remove_stale(directory: str, entries: list[tuple[str, int]]) -> list[str]:
    removed = []
    for entry, pid in entries:
        if not _alive(pid):
            path = os.path.join(directory, entry)
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed.append(path)
    return removed


def remove_stale_temporaries(directory: str, name: str) -> list[str]:
    """Remove the temporary files a killed seqzip run left for output ``name`` in
    ``directory`` (after SIGKILL of the whole process group, nothing else could); files of a
    process still running are left alone.  Returns the paths removed.

        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> mine = os.path.join(d, _temporary_name("a.sqz", os.getpid(), "0" * 12))
        >>> open(mine, "w").close()
        >>> remove_stale_temporaries(d, "a.sqz"), os.path.exists(mine)  # this process lives
        ([], True)
    """
    return _remove_stale(directory, _temporaries(directory).get(_stem(name), []))


class OutputRun:
    """What the outputs of one run share: one guardian process (:class:`Janitor`, replaced
    if it ended between outputs), and one scan per directory for dead runs' temporaries, so
    that a run over many files costs the same per file however many there are (``-r``).

        >>> import tempfile
        >>> d = tempfile.mkdtemp()
        >>> with OutputRun() as run:
        ...     for name in ("a.sqz", "b.sqz"):
        ...         with atomic_output(os.path.join(d, name), False, None, run) as out:
        ...             _ = out.write(b"x")
        >>> run.scans, sorted(os.listdir(d))
        (1, ['a.sqz', 'b.sqz'])
    """

    def __init__(self) -> None:
        self._janitor: Janitor | None = None
        self._found: dict[str, dict[str, list[tuple[str, int]]]] = {}
        self.scans = 0  # directories listed

    def janitor(self) -> Janitor:
        """The run's guardian, started now if there is none or the last one ended."""
        if self._janitor is not None and self._janitor.ended:
            self._janitor.close()
            self._janitor = None
        if self._janitor is None:
            self._janitor = Janitor()
        return self._janitor

    def remove_stale(self, directory: str, name: str) -> list[str]:
        """:func:`remove_stale_temporaries`, from one listing of ``directory`` per run."""
        if directory not in self._found:
            self._found[directory] = _temporaries(directory)
            self.scans += 1
        return _remove_stale(directory, self._found[directory].pop(_stem(name), []))

    def close(self) -> None:
        if self._janitor is not None:
            self._janitor.close()
            self._janitor = None

    def __enter__(self) -> "OutputRun":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # elsewhere: read it by setting it (briefly)
    os.umask(mask)
    return mask


def final_mode(like: str | None) -> int:
    """The mode of a finished output: ``like``'s (a file made from a file, as gzip does), or
    what the umask gives a new file (0644 under 022)."""
    if like is not None:
        return os.stat(like).st_mode & 0o7777
    return 0o666 & ~_umask()


def _temporary_path(directory: str, name: str, janitor: Janitor,
                    mode: int) -> tuple[int, str]:
    """Create a new file beside ``name`` with ``mode`` (at most 0600: readable by no one
    else while incomplete), watched by ``janitor``."""
    for _ in range(100):
        tmp = os.path.join(directory, _temporary_name(name, os.getpid(), os.urandom(6).hex()))
        janitor.watch(tmp)  # before the file exists: no instant in which it is unwatched
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                           mode & 0o600), tmp
        except FileExistsError:
            janitor.release(tmp)
    raise UserError(f"{name}: cannot find a free temporary name in {directory}")


def _special_output(path: str) -> bool:
    """True when ``path`` is a character device or a FIFO: written into in place (as gzip and
    zstd do with /dev/null), never replaced.  Other files that are not regular are refused."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return True
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise UserError(f"{path} is not a regular file, a character device or a FIFO")
    return False


def _as_output_error(exc: OSError, tmp: str, path: str) -> OSError:
    """The same error, naming the output the user asked for instead of its temporary file."""
    if exc.filename == tmp or exc.filename2 == tmp or (
            exc.filename is None and exc.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)):
        return type(exc)(exc.errno, exc.strerror, path)
    return exc


def _publish(tmp: str, path: str, force: bool) -> None:
    """Give the finished temporary file its name.  Without ``force`` the name is linked, so
    that an output another process made in the meantime is never replaced; with ``force`` only
    a regular file (or a link) is replaced."""
    if force:
        if os.path.lexists(path) and not os.path.islink(path) and not os.path.isfile(path):
            raise UserError(f"{path} is not a regular file; it was left as it is")
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise UserError(f"{path} appeared while it was being written (another run?); "
                        "it was left as it is and nothing was written") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV,
                             errno.EMLINK):
            raise
        # A file system without hard links: the check and the rename are two steps here.
        if os.path.lexists(path):
            raise UserError(f"{path} appeared while it was being written (another run?); "
                            "it was left as it is and nothing was written") from None
        os.rename(tmp, path)
        return
    os.unlink(tmp)


class _Guarded:
    """A temporary output whose writes notice, within a second, that its guardian ended
    (:meth:`Janitor.check`), so that a long run stops then rather than at its end."""

    CHECK_EVERY = 0.5  # seconds

    def __init__(self, out: IO[bytes], janitor: Janitor, tmp: str) -> None:
        self._out, self._janitor, self._tmp = out, janitor, tmp
        self._next = time.monotonic() + self.CHECK_EVERY

    def write(self, data) -> int:
        now = time.monotonic()
        if now >= self._next:
            self._janitor.check(self._tmp)
            self._next = now + self.CHECK_EVERY
        return self._out.write(data)

    def __getattr__(self, name: str):
        return getattr(self._out, name)


@contextlib.contextmanager
def atomic_output(path: str, force: bool, like: str | None,
                  run: OutputRun | None = None) -> Iterator[IO[bytes]]:
    """Write to a temporary file beside ``path`` and give it the name on success.

    A failure (full disk, bad input) or a signal (SIGINT, SIGTERM, SIGHUP, even SIGKILL:
    see :class:`Janitor`) leaves no partial or temporary file, and the input is never touched.
    An existing output is replaced only with ``force``, and only if it is a regular file; an
    output that appears while this one is written is never replaced (the name is linked).  A
    character device or FIFO is written into in place.  The temporary file is created with
    the output's mode restricted to 0600 at most (no one else reads a partial output, the
    plaintext of ``-d`` included) and given that mode when complete: the umask's (0644 under
    022) or, with ``like``, that file's mode and times, as gzip does.  ``run``: what the
    outputs of a run share (:class:`OutputRun`; by default, one of its own).  Worker processes
    (``-T``) end with their parent.

        >>> import pathlib, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "out.sqz")
        >>> with atomic_output(path, force=False, like=None) as out:
        ...     _ = out.write(b"complete")
        >>> pathlib.Path(path).read_bytes(), sorted(os.listdir(os.path.dirname(path)))
        (b'complete', ['out.sqz'])
    """
    if os.path.isdir(path):
        raise UserError(f"{path} is a directory")
    if _special_output(path):
        with ending_signals(cleanup=False), open(path, "wb") as out:
            yield out
        return
    if os.path.lexists(path) and not force:
        raise UserError(f"{path} already exists (use -f to overwrite)")
    if run is None:
        with OutputRun() as own, atomic_output(path, force, like, own) as out:
            yield out
        return
    directory, name = os.path.dirname(os.path.abspath(path)), os.path.basename(path)
    mode = final_mode(like)
    run.remove_stale(directory, name)
    janitor = run.janitor()
    fd, tmp = _temporary_path(directory, name, janitor, mode)
    try:
        with ending_signals(cleanup=not janitor.active), os.fdopen(fd, "wb") as out:
            yield _Guarded(out, janitor, tmp)
            out.flush()
            os.fsync(out.fileno())
            os.chmod(out.fileno(), mode)  # complete: now the output's own mode
            if like is not None:
                stat = os.stat(like)
                os.utime(out.fileno(), ns=(stat.st_atime_ns, stat.st_mtime_ns))
            janitor.check(tmp)  # guarded to the end, or not published
            _publish(tmp, path, force)
        janitor.release(tmp)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        janitor.release(tmp)
        if isinstance(exc, OSError):
            raise _as_output_error(exc, tmp, path) from None
        raise


# --- progress ---------------------------------------------------------------------------------

