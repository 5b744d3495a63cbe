"""How a command fails and ends: one-line errors, and SIGINT / SIGTERM / SIGHUP.

    >>> describe(UserError("book.txt.sqz already exists"))
    'book.txt.sqz already exists'
"""
from __future__ import annotations

import contextlib
import signal
import threading
from typing import Iterator

import click


class UserError(click.ClickException):
    """An error to report as one line, without a traceback; exit status 1.

        >>> UserError("book.txt.sqz already exists").message
        'book.txt.sqz already exists'
    """

    exit_code = 1

    def show(self, file=None) -> None:
        click.echo(f"seqzip: {self.message}", err=True)


class Interrupted(BaseException):
    """SIGINT, SIGTERM or SIGHUP arrived while something had to be cleaned up.

        >>> Interrupted(signal.SIGTERM).signum == signal.SIGTERM
        True
    """

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                       if hasattr(signal, name))


def _raise_interrupted(signum, frame) -> None:
    raise Interrupted(signum)


@contextlib.contextmanager
def ending_signals(cleanup: bool) -> Iterator[None]:
    """How SIGINT, SIGTERM and SIGHUP end a run while this block runs.

    With ``cleanup`` they raise :class:`Interrupted` so that ``finally`` blocks remove
    temporary files (the handler runs between Python steps, so a long frame of coding may delay
    it: the fallback where there is no :class:`Janitor`).  Without, they end the process at
    once (the kernel's default action): right when nothing needs cleaning up or a janitor
    does it; worker processes end with their parent.  Signals someone set to be ignored
    (``nohup``) stay ignored.

        >>> before = signal.getsignal(signal.SIGTERM)
        >>> with ending_signals(cleanup=True):
        ...     signal.getsignal(signal.SIGTERM) is _raise_interrupted or before is signal.SIG_IGN
        True
        >>> signal.getsignal(signal.SIGTERM) == before
        True
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = {sig: signal.getsignal(sig) for sig in ENDING_SIGNALS}
    for sig, old in saved.items():
        if old is not signal.SIG_IGN:
            signal.signal(sig, _raise_interrupted if cleanup else signal.SIG_DFL)
    try:
        yield
    finally:
        for sig, old in saved.items():
            signal.signal(sig, old if old is not None else signal.SIG_DFL)


def describe(exc: BaseException) -> str:
    if isinstance(exc, click.ClickException):
        return exc.message
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.filename}: {exc.strerror}" if exc.filename else exc.strerror
    return str(exc) or type(exc).__name__

