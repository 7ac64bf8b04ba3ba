"""How busy this machine's CPUs were over a stretch of work, how much of them the host took, and how fast one core
did a fixed piece of work: what `make report`'s and `make test`'s times need beside them to be compared across days.

The same code on the same 2-core machine kind took 1,421 s of integration tests on one day and 557 s on another:
a cloud machine's host shares its cores (the time it took back is "steal" in /proc/stat) and its cores' speed is not
the same from one machine to the next. Both show here.

    python -m perfkit.machine_load start FILE   # the CPU counters now, kept in FILE
    python -m perfkit.machine_load since FILE   # one line: busy, stolen, the reference work's seconds
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REFERENCE_STEPS = 5_000_000  # Python multiply-adds: about a quarter of a second on one core here


@dataclass(frozen=True)
class Load:
    seconds: float  # wall time between the two snapshots
    cores: int
    busy: float  # of all cores' time: running anything (user, system, interrupts), the host's share apart
    stolen: float  # of all cores' time: taken by the host for other guests

    def sentence(self) -> str:
        return (f"CPU over those {self.seconds:,.0f} s: {self.cores} cores {self.busy:.0%} busy, "
                f"{self.stolen:.1%} taken by the host (steal)")


# /proc/stat's first line, after "cpu": all cores' time in each state since boot (proc(5)). Read here rather than
# through psutil: `make report` takes its first snapshot before any package is installed, with the system's Python.
STATES = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice")


def snapshot(stat: str = "/proc/stat") -> dict[str, float]:
    """The CPU time counters of all cores together (clock ticks since boot), with the wall clock."""
    first = Path(stat).read_text().splitlines()[0].split()
    return {**dict(zip(STATES, map(float, first[1:]))), "at": time.time(), "cores": os.cpu_count() or 1}


def load_between(before: dict[str, float], after: dict[str, float]) -> Load:
    """The share of the cores' time in each state between two snapshots; idle and waiting on I/O are not busy."""
    counted = [k for k in before if k not in ("at", "cores", "guest", "guest_nice")]  # guest time is inside user
    spent = {k: after[k] - before[k] for k in counted}
    total = sum(spent.values())
    if total <= 0:
        return Load(after["at"] - before["at"], int(after["cores"]), 0.0, 0.0)
    idle = spent.get("idle", 0.0) + spent.get("iowait", 0.0)
    stolen = spent.get("steal", 0.0)
    return Load(after["at"] - before["at"], int(after["cores"]), (total - idle - stolen) / total, stolen / total)


def reference_seconds(steps: int = REFERENCE_STEPS) -> float:
    """Seconds one core takes for a fixed piece of pure-Python work: the machine's speed as one process sees it."""
    t0 = time.perf_counter()
    total = 0
    for i in range(steps):
        total += i * i
    return time.perf_counter() - t0


def line_since(before: dict[str, float]) -> str:
    """The line printed after a stretch of work's times: the load since `before`, and one core's speed now."""
    return (f"{load_between(before, snapshot()).sentence()}; one core did the reference work "
            f"({REFERENCE_STEPS:,} Python multiply-adds) in {reference_seconds():.2f} s")


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("start", "since"):
        print("usage: python -m perfkit.machine_load start|since FILE", file=sys.stderr)
        return 2
    path = Path(argv[1])
    if argv[0] == "start":
        try:
            path.write_text(json.dumps(snapshot()))
        except OSError as err:  # no /proc/stat (not Linux): the times go without their CPU line
            print(f"perfkit: the CPU line is left out: {err}", file=sys.stderr)
        return 0
    try:
        before = json.loads(path.read_text())
    except (OSError, ValueError) as err:
        print(f"perfkit: {path}: {err}. Fix: run `python -m perfkit.machine_load start {path}` first",
              file=sys.stderr)
        return 1
    print(line_since(before))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
