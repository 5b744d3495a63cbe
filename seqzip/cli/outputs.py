"""Outputs that appear whole or not at all: a temporary file beside the output, renamed on
success, and a guardian process (:class:`Janitor`) that removes it if this process dies first.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import signal
import sys
from typing import IO, Iterator

from .failures import ENDING_SIGNALS, UserError, ending_signals


class Janitor:
    """Removes a temporary file if this process dies before it is done with it.

    A small child process holds the file's name; if the pipe to it closes while the name is
    still registered (this process ended, by any signal, even SIGKILL), it unlinks the file.
    So SIGINT, SIGTERM and SIGHUP can keep their default action and end the run at once, even
    in the middle of a long frame of coding, and still leave nothing behind.  Where there is no
    ``fork``, ``active`` is false and the caller must clean up through signal handlers.

        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "partial")
        >>> janitor = Janitor()
        >>> janitor.watch(path); open(path, "w").close()
        >>> janitor.release(path); janitor.close()  # released: the file stays
        >>> os.path.exists(path)
        True
    """

    def __init__(self) -> None:
        self._child = _PipeChild(_sweep) if hasattr(os, "fork") else None

    @property
    def active(self) -> bool:
        return self._child is not None and self._child.fd is not None

    def _send(self, tag: bytes, path: str) -> None:
        if self._child is not None:
            self._child.write(tag + os.fsencode(path) + b"\0")

    def watch(self, path: str) -> None:
        self._send(b"+", path)

    def release(self, path: str) -> None:
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
        self.pid = pid

    def write(self, data: bytes) -> None:
        if self.fd is not None:
            os.write(self.fd, data)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
            with contextlib.suppress(OSError):
                os.waitpid(self.pid, 0)


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


def _temporary_name(name: str, pid: int, tag: str) -> str:
    """``.NAME.PID-TAG.sqztmp``: hidden, beside its output, and recognisable as seqzip's, with
    the process that made it (so that a later run can tell a stale one from a live one)."""
    return f".{name}.{pid}-{tag}{TMP_SUFFIX}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists but is someone else's
        return True
    return True


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
    pattern = re.compile(rf"^\.{re.escape(name)}\.(\d+)-[0-9a-f]{{12}}{re.escape(TMP_SUFFIX)}$")
    removed = []
    try:
        entries = os.listdir(directory)
    except OSError:
        return removed
    for entry in entries:
        match = pattern.match(entry)
        if match and not _alive(int(match.group(1))):
            path = os.path.join(directory, entry)
            with contextlib.suppress(OSError):
                os.unlink(path)
                removed.append(path)
    return removed


def _temporary_path(directory: str, name: str, janitor: Janitor) -> tuple[int, str]:
    """Create a new file beside ``name`` with mode 0666 & ~umask, watched by ``janitor``."""
    for _ in range(100):
        tmp = os.path.join(directory, _temporary_name(name, os.getpid(), os.urandom(6).hex()))
        janitor.watch(tmp)  # before the file exists: no instant in which it is unwatched
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                           0o666), tmp
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


@contextlib.contextmanager
def atomic_output(path: str, force: bool, like: str | None) -> Iterator[IO[bytes]]:
    """Write to a temporary file beside ``path`` and give it the name on success.

    A failure (full disk, bad input) or a signal (SIGINT, SIGTERM, SIGHUP, even SIGKILL:
    see :class:`Janitor`) leaves no partial or temporary file, and the input is never touched.
    An existing output is replaced only with ``force``, and only if it is a regular file; an
    output that appears while this one is written is never replaced (the name is linked).  A
    character device or FIFO is written into in place.  The output's mode follows the umask
    (0644 under 022) or, with ``like``, copies that file's mode and times, as gzip does.
    Worker processes (``-T``) end with their parent.

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
    directory = os.path.dirname(os.path.abspath(path))
    remove_stale_temporaries(directory, os.path.basename(path))
    janitor = Janitor()
    try:
        fd, tmp = _temporary_path(directory, os.path.basename(path), janitor)
        try:
            with ending_signals(cleanup=not janitor.active), \
                    os.fdopen(fd, "wb") as out:
                yield out
                out.flush()
                os.fsync(out.fileno())
                if like is not None:
                    stat = os.stat(like)
                    os.chmod(out.fileno(), stat.st_mode & 0o7777)
                    os.utime(out.fileno(), ns=(stat.st_atime_ns, stat.st_mtime_ns))
                _publish(tmp, path, force)
            janitor.release(tmp)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            janitor.release(tmp)
            if isinstance(exc, OSError):
                raise _as_output_error(exc, tmp, path) from None
            raise
    finally:
        janitor.close()


# --- progress ---------------------------------------------------------------------------------

