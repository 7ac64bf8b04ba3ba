"""The cluster's conditions, watched between a run's steps (issue 73): the DataNodes HDFS serves from and the
NodeManagers YARN runs containers on (HDFS's under-replicated blocks are kept beside them, read, not judged). A change
(a DataNode lost, a NodeManager back) is recorded in the run's config with the step it was seen after; the records of
that step carry it (params["conditions_changed"]) and every later record counts the changes before it
(params["after_changes"]), so that a verdict never pools runs from before and after a change without saying so
(Findings: changed_sentence).

    watch = ConditionsWatch(lambda: provider.conditions(profile))
    watch.start()                             # before the first step: what the run starts with
    watch.check(results, first_new_record)    # after each step
    config["conditions"] = watch.record()

What a provider can read: perfkit.providers.Provider.conditions (the NameNode's view, any cluster) and the lab's own
(its daemons' processes: the lab knows a DataNode is gone before the NameNode does).
"""
from __future__ import annotations

from collections.abc import Callable

from perfkit.findings import plural
from perfkit.results import ResultSet, now

# snapshot key -> what one member is called, and the words for one gone and one come
NODE_SETS = {"datanodes": ("DataNode", "lost", "back"), "nodemanagers": ("NodeManager", "lost", "back"),
             "spark_executors": ("Spark executor", "removed", "added")}


def changes(before: dict, after: dict) -> list[str]:
    """What differs between two snapshots, in words: members of each node set gone or come. A set only one snapshot
    has is no change (an engine opened or closed between them). Under-replicated blocks are kept in each snapshot but
    are no change: a run's own writes make them (a file written with more replicas than the lab's DataNodes, a block
    still being written)."""
    said = []
    for key, (noun, gone, come) in NODE_SETS.items():
        if key not in before or key not in after:
            continue
        was, now_ = set(before[key]), set(after[key])
        said += [f"{noun} {name} {gone} ({len(now_)} of {len(was)} left)" for name in sorted(was - now_)]
        said += [f"{noun} {name} {come} ({len(now_)} now)" for name in sorted(now_ - was)]
    return said


class ConditionsWatch:
    """Snapshots of `probe()` (a dict: node sets as lists, under_replicated_blocks as a count; {} where nothing can
    be read) at the start and after each step, the changes between consecutive ones recorded. `engines()` adds what
    the run's open engines see of their own (Spark's executors on a cluster manager): read at every snapshot, since an
    engine opens at its first step, after the start."""

    def __init__(self, probe: Callable[[], dict], engines: Callable[[], dict] | None = None,
                 after_loss: Callable[[dict, dict], str] | None = None):
        self.probe, self.engines = probe, engines
        # given the snapshots before and after a DataNode was lost: waits for HDFS, says how it went
        self.after_loss = after_loss
        self.started: dict = {}
        self.last: dict = {}
        self.found: list[dict] = []  # {"after_step", "at", "what": [...], "snapshot"}
        self.steps = 0
        self.blind = False

    def start(self) -> None:
        cluster = self._read()
        self.started = self.last = {**cluster, **self._read_engines()}
        self.blind = not cluster  # nothing to read at the start (no NameNode here): not asked again each step

    def check(self, results: ResultSet | None, first_new: int) -> list[str]:
        """After a step whose records start at `first_new` in results.records: a new snapshot; on a change, the step's
        records marked with it. Every record of the step carries the changes seen before it. Returns the change."""
        self.steps += 1
        before = len(self.found)
        snapshot = {**({} if self.blind else self._read()), **self._read_engines()}
        said = changes(self.last, snapshot) if self.last and snapshot else []
        if said:
            self.found.append({"after_step": self.steps, "at": now(), "what": said, "snapshot": snapshot})
            if self.after_loss is not None and lost_datanode(said):  # before the next step is timed
                self.found[-1]["then"] = self.after_loss(self.last, snapshot)
        if snapshot:
            self.last = snapshot
        for record in (results.records[first_new:] if results is not None else []):
            if before:
                record.params["after_changes"] = before
            if said:
                record.params["conditions_changed"] = "; ".join(said)
        return said

    def record(self) -> dict:
        """For the run's config: what it started with, each change, and how many steps were watched."""
        return {"start": self.started, "changes": self.found, "steps_watched": self.steps}

    def _read(self) -> dict:
        return _asked(self.probe)

    def _read_engines(self) -> dict:
        return _asked(self.engines) if self.engines is not None else {}


def _asked(probe: Callable[[], dict]) -> dict:
    try:
        return probe() or {}
    except Exception:  # noqa: BLE001 - a probe that fails watches nothing this time; the run goes on
        return {}


def lost_datanode(said: list[str]) -> bool:
    return any(line.startswith("DataNode ") and " lost (" in line for line in said)


def changed_sentence(config: dict | None) -> str | None:
    """For a report's "Not decided by this run": the changes the run saw, and that its verdicts pool runs from before
    and after them; None when nothing changed (or nothing was watched)."""
    found = ((config or {}).get("conditions") or {}).get("changes") or []
    if not found:
        return None
    each = "; ".join(f"{', '.join(c['what'])} (seen after step {c['after_step']}" + (f"; then {c['then']}" if
                     c.get("then") else "") + ")" for c in found)
    return (f"The cluster changed during the run: {each}. Its verdicts pool runs from before and after "
            f"{'that change' if len(found) == 1 else 'those changes'}: run it again on a steady cluster, or read the "
            "runs apart (each record's after_changes).")


def watched_phrase(config: dict | None) -> str:
    """For a report's Conditions: what was watched between runs, and whether it held ('' when nothing was)."""
    watched = (config or {}).get("conditions") or {}
    start = watched.get("start") or {}
    parts = [plural(len(start[key]), noun) for key, (noun, *_) in NODE_SETS.items() if key in start]
    if not parts:
        return ""
    held = "changed (see above)" if watched.get("changes") else "no change"
    return f"the cluster watched between runs ({', '.join(parts)}): {held}"
