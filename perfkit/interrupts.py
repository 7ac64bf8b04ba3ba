"""A stop asked by signal (Ctrl-C, `kill`), remembered: a KeyboardInterrupt raised inside a py4j call can come back
as py4j's own error ("Answer from Java side is empty"), and the run would go on as if a query had merely failed."""
from __future__ import annotations

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
