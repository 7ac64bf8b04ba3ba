"""One way to wait for something: call a condition until it holds or the time is up.

    value = poll_until(lambda: server.info(), 30, interval_s=0.5, what="the server's info")
"""
from __future__ import annotations

import time
from typing import Callable, TypeVar

from perfkit.errors import PerfkitError

T = TypeVar("T")


class WaitTimeout(PerfkitError, TimeoutError):
    """The awaited condition did not hold in time; `last` is the condition's last (false) value."""

    def __init__(self, what: str, timeout_s: float, last: object = None):
        super().__init__(f"gave up waiting for {what} after {timeout_s:g} s")
        self.what, self.timeout_s, self.last = what, timeout_s, last


def poll_until(condition: Callable[[], T], timeout_s: float, interval_s: float = 0.5, what: str = "a condition",
               *, clock: Callable[[], float] = time.monotonic,
               sleep: Callable[[float], None] = time.sleep) -> T:
    """Call condition() every interval_s until it returns a true value, and return that value.

    The condition is called at least once, and once more at the deadline (a late success still counts); after
    that, WaitTimeout names `what`. An exception from the condition ends the wait at once: a condition that
    can tell "never" from "not yet" raises.
    """
    deadline = clock() + timeout_s
    while True:
        value = condition()
        if value:
            return value
        left = deadline - clock()
        if left <= 0:
            raise WaitTimeout(what, timeout_s, value)
        sleep(min(interval_s, left))
