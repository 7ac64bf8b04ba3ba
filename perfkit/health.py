"""Is a storage healthy right now, and was it healthy for the whole of a measured run?

A query blocked in storage-client retries (S3A retries for minutes while its server is down) can
still finish and look like a slow sample. The watch probes each storage the run reads just before
the run, every `interval` seconds during it, and just after it: one failed probe makes the run a
failure with that cause. An outage shorter than the interval can slip between two probes.

A storage found healthy less than RECENT_S ago (a probe, or a run that got its answer from it) is not asked again
just before the next run: runs interleaved across storages would otherwise pay a probe each (a round trip to S3,
20 ms behind ec2-s3, on runs of 0.2 s). An outage since then shows in the run's own probes and its answer.

Each storage makes its own probe (Storage.health_probe, in perfkit.storages); here are the watch and what every probe
keeps to (one attempt, PROBE_TIMEOUT_S).
"""
from __future__ import annotations

import threading
import time
import weakref
from typing import Callable

from botocore.config import Config

Probe = Callable[[], "str | None"]  # None when healthy, else the reason in one line
_LAST_HEALTHY: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # probe -> when last healthy (monotonic)
# a DataNode serving a benchmark's own parallel reads on 2 busy cores stalled a probe past 2 s (read jobs then
# failed as "unhealthy"); a frozen or dead service never answers, so a longer wait costs only detection time
PROBE_TIMEOUT_S = 10.0
RECENT_S = 5.0
# one attempt, short timeouts: a probe answers "healthy now?", it must not retry its way past an outage.
# botocore's `max_attempts` in a Config's retries counts *retries* in every retry mode (1 meant two requests);
# `total_max_attempts` counts the first request too: 1 is exactly one HTTP request
PROBE_CONFIG = Config(retries={"mode": "standard", "total_max_attempts": 1}, connect_timeout=PROBE_TIMEOUT_S,
                      read_timeout=PROBE_TIMEOUT_S)


class HealthWatch:
    """Context manager: probes before, during (every `interval` s) and after the block, unless the block says the
    run got its answer (answered()).

        with HealthWatch(probes) as watch:
            run()
            watch.answered()
        if watch.problem: ...   # the first failed probe, with when it failed
    """

    def __init__(self, probes: dict[str, Probe], interval: float = 1.0):
        self.probes, self.interval = probes, interval
        self.recent_s = max(interval, RECENT_S)
        self.problems: list[str] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def check(self, when: str, recent_ok: bool = False) -> None:
        """Probe every storage; with recent_ok, one found healthy less than `recent_s` ago is not asked again
        (runs one after the other: the previous run's last probe or answer stands for this run's first)."""
        now = time.monotonic()
        for probe in self.probes.values():
            if recent_ok and now - _LAST_HEALTHY.get(probe, -1e9) < self.recent_s:
                continue
            reason = probe()
            if reason:
                self.problems.append(f"{reason} {when}")
            else:
                _LAST_HEALTHY[probe] = time.monotonic()

    @property
    def problem(self) -> str | None:
        return self.problems[0] if self.problems else None

    def answered(self) -> None:
        """The run read its storages and got its answer: the storages answered until now, which stands for the
        probe after the run (a round trip to S3 on every run, 5% of a short query behind an emulated network) and
        for the next run's first (back-to-back runs)."""
        self._answered = True
        for probe in self.probes.values():
            _LAST_HEALTHY[probe] = time.monotonic()

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self.check(f"{time.monotonic() - self._t0:.1f} s into the run")

    def __enter__(self) -> "HealthWatch":
        self._t0, self._answered = time.monotonic(), False
        self.check("before the run", recent_ok=True)
        if self.probes and not self.problems:
            self._thread = threading.Thread(target=self._loop, name="perfkit-health-watch", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            if not self._answered:  # a failed run: was the storage the cause?
                self.check("after the run")
