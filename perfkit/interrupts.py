"""A stop asked by signal (Ctrl-C, `kill`), remembered: a KeyboardInterrupt raised inside a py4j call can come back
as py4j's own error ("Answer from Java side is empty"), and the run would go on as if a query had merely failed."""
from __future__ import annotations

import signal
import threading

_asked = threading.Event()
_why: list[str] = []


def stop(signum, frame) -> None:
    """Signal handler: remember the stop, then raise it as Ctrl-C does."""
    _why[:] = [f"signal {signum}"]
    _asked.set()
    raise KeyboardInterrupt(_why[0])


def asked() -> str | None:
    """Why a stop was asked ('signal 15'), or None."""
    return _why[0] if _asked.is_set() else None


UNSET = object()  # sigint_handler() outside the main thread: nothing to put back


def sigint_handler():
    """The SIGINT handler now (on the main thread; elsewhere a marker that restore_sigint ignores): what a library
    that installs its own (pyspark's SparkContext) is to leave behind."""
    if threading.current_thread() is not threading.main_thread():
        return UNSET
    return signal.getsignal(signal.SIGINT)


def restore_sigint(handler) -> None:
    """Put back a handler sigint_handler() returned (None: one not set from Python, taken as Python's default)."""
    if handler is UNSET or threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGINT, signal.default_int_handler if handler is None else handler)
