"""The cluster's conditions watched between a run's steps (issue 73): a change is named, recorded in the run's config
with the step it was seen after, on that step's records, and counted on every later one; reports say so."""
from __future__ import annotations

import json

import pytest

from perfkit.experiments.conditions import ConditionsWatch, changed_sentence, changes, watched_phrase
from tests.unit.test_runner import Toy

THREE = {"datanodes": ["127.0.0.2:9866", "127.0.0.3:9866", "127.0.0.4:9866"],
         "nodemanagers": ["127.0.0.3:8041", "127.0.0.4:8041"], "under_replicated_blocks": 0}


def without(snapshot: dict, key: str, member: str, **more) -> dict:
    return {**snapshot, key: [m for m in snapshot[key] if m != member], **more}


def test_a_lost_datanode_and_a_nodemanager_back_are_changes_and_under_replicated_blocks_are_not():
    lost = without(THREE, "datanodes", "127.0.0.3:9866", under_replicated_blocks=12)
    assert changes(THREE, lost) == ["DataNode 127.0.0.3:9866 lost (2 of 3 left)"]
    # a run's own writes leave blocks under-replicated (HiBench's on a one-DataNode lab): read, never a change
    assert changes(THREE, {**THREE, "under_replicated_blocks": 1}) == []
    back = changes(without(THREE, "nodemanagers", "127.0.0.4:8041"), THREE)
    assert back == ["NodeManager 127.0.0.4:8041 back (2 now)"]
    assert changes({"datanodes": ["a"]}, {"nodemanagers": []}) == []  # a set the probe does not read: not compared


class Watched(Toy):
    """Toy's three steps, its cluster read from a script of snapshots (one per read: the start, then each step)."""

    def __init__(self, snapshots):
        super().__init__()
        self.snapshots = list(snapshots)

    def conditions_watch(self):
        return ConditionsWatch(lambda: self.snapshots.pop(0))


@pytest.fixture(autouse=True)
def results_here(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))


def test_a_change_is_on_the_step_it_was_seen_after_and_every_later_record_counts_it():
    lost = without(THREE, "datanodes", "127.0.0.3:9866")
    results = Watched([THREE, THREE, lost, lost]).run(progress=False)
    rows = [json.loads(line) for line in results.path.read_text().splitlines()]
    assert [r["params"].get("conditions_changed") for r in rows] == [
        None, "DataNode 127.0.0.3:9866 lost (2 of 3 left)", None]
    assert [r["params"].get("after_changes") for r in rows] == [None, None, 1]
    watched = rows[-1]["config"]["conditions"]
    assert watched["start"] == THREE and watched["steps_watched"] == 3
    assert [(c["after_step"], c["what"]) for c in watched["changes"]] == [
        (2, ["DataNode 127.0.0.3:9866 lost (2 of 3 left)"])]
    assert changed_sentence(rows[-1]["config"]) == (
        "The cluster changed during the run: DataNode 127.0.0.3:9866 lost (2 of 3 left) (seen after step 2). Its "
        "verdicts pool runs from before and after that change: run it again on a steady cluster, or read the runs "
        "apart (each record's after_changes).")
    assert watched_phrase(rows[-1]["config"]) == ("the cluster watched between runs (3 DataNodes, 2 NodeManagers): "
                                                  "changed (see above)")


def test_a_steady_cluster_says_so_and_marks_nothing():
    results = Watched([THREE] * 4).run(progress=False)
    assert all("conditions_changed" not in r.params and "after_changes" not in r.params for r in results.records)
    assert changed_sentence(results.config) is None
    assert watched_phrase(results.config) == "the cluster watched between runs (3 DataNodes, 2 NodeManagers): no change"


def test_nothing_to_read_at_the_start_is_not_asked_again_and_a_failing_read_is_skipped():
    asked = []

    def nothing():
        asked.append(1)
        return {}

    watch = ConditionsWatch(nothing)
    watch.start()
    assert watch.check(None, 0) == [] and len(asked) == 1 and watched_phrase({"conditions": watch.record()}) == ""
    reads = iter([THREE, RuntimeError("NameNode gone"), THREE])

    def flaky():
        found = next(reads)
        if isinstance(found, Exception):
            raise found
        return found

    watch = ConditionsWatch(flaky)
    watch.start()
    assert watch.check(None, 0) == [] and watch.check(None, 0) == []  # the failed read compared with nothing


def test_the_namenode_s_view_counts_the_datanodes_it_heard_from_lately(monkeypatch):
    import requests

    from perfkit import providers

    live = {"node2:9866": {"xferaddr": "127.0.0.2:9866", "lastContact": 1},
            "node3:9866": {"xferaddr": "127.0.0.3:9866", "lastContact": 31},  # silent past HDFS's stale interval
            "node4:9866": {"xferaddr": "127.0.0.4:9866", "lastContact": 30}}
    beans = {"Hadoop:service=NameNode,name=NameNodeInfo": {"LiveNodes": json.dumps(live)},
             "Hadoop:service=NameNode,name=FSNamesystem": {"UnderReplicatedBlocks": 7},
             "Hadoop:service=NameNode,name=FSNamesystemState": {"NumDeadDataNodes": 0}}
    asked = []

    class Answer:
        def __init__(self, bean):
            self.bean = bean

        def raise_for_status(self):
            pass

        def json(self):
            return {"beans": [self.bean]}

    def get(url, params, timeout):
        asked.append(url)
        return Answer(beans[params["qry"]])

    monkeypatch.setattr(requests, "get", get)
    assert providers.namenode_conditions("http://127.0.0.1:9870/") == {
        "datanodes": ["127.0.0.2:9866", "127.0.0.4:9866"], "under_replicated_blocks": 7, "dead_datanodes": 0}
    assert asked == ["http://127.0.0.1:9870/jmx"] * 3

    def refused(url, params, timeout):
        raise requests.ConnectionError("refused")

    monkeypatch.setattr(requests, "get", refused)
    assert providers.namenode_conditions("http://127.0.0.1:9870") == {}


def test_spark_executors_removed_and_added_are_changes_and_an_engine_opened_later_is_not():
    two = {"spark_executors": ["127.0.0.3:40001", "127.0.0.4:40002"]}
    one = {"spark_executors": ["127.0.0.4:40002"]}
    assert changes(two, one) == ["Spark executor 127.0.0.3:40001 removed (1 of 2 left)"]
    assert changes(one, {"spark_executors": ["127.0.0.4:40002", "127.0.0.3:40007"]}) == [
        "Spark executor 127.0.0.3:40007 added (2 now)"]  # YARN's replacement, on a port of its own
    assert changes(THREE, {**THREE, **two}) == []  # Spark opened between the snapshots: its executors are no change


def test_the_open_engines_are_watched_after_each_step_even_where_the_cluster_cannot_be_read():
    engines = [{}, {"spark_executors": ["e1", "e2"]}, {"spark_executors": ["e2"]}]  # Spark opens at step 1
    watch = ConditionsWatch(lambda: {}, engines=lambda: engines.pop(0))  # no NameNode to read here
    watch.start()
    assert watch.blind  # the cluster's probe is not asked again
    assert watch.check(None, 0) == []  # the executors' first sight: what the engine started with
    assert watch.check(None, 0) == ["Spark executor e1 removed (1 of 2 left)"]
    assert [c["after_step"] for c in watch.record()["changes"]] == [2]


def test_spark_on_a_cluster_manager_lists_its_executors_without_the_driver_and_local_mode_none():
    from types import SimpleNamespace

    from perfkit.config import load_profile
    from perfkit.engines.spark import SparkEngine
    from perfkit.experiments.hdfs_vs_s3_queries import OpenEngines

    def executor(host, port):
        return SimpleNamespace(host=lambda: host, port=lambda: port)

    infos = [executor("127.0.0.1", 41000), executor("127.0.0.4", 40002), executor("127.0.0.3", 40001)]
    tracker = SimpleNamespace(getExecutorInfos=lambda: infos)
    context = SimpleNamespace(master="yarn", getConf=lambda: {"spark.driver.host": "127.0.0.1"},
                              _jsc=SimpleNamespace(sc=lambda: SimpleNamespace(statusTracker=lambda: tracker)))
    engine = SparkEngine(load_profile("lab"))
    engine.spark = SimpleNamespace(sparkContext=context)
    assert engine.conditions() == {"spark_executors": ["127.0.0.3:40001", "127.0.0.4:40002"]}
    engines = OpenEngines(None, one_at_a_time=False)
    engines.held = {"spark": (None, engine, {}), "trino": (None, SimpleNamespace(), {})}  # Trino reads none
    assert engines.conditions() == {"spark_executors": ["127.0.0.3:40001", "127.0.0.4:40002"]}
    context.master = "local[2]"
    assert engine.conditions() == {}  # the driver runs the tasks: no executor to lose


class Clock:
    """A clock that moves only when the code under test sleeps."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _script(states: list[dict]):
    """The NameNode's counts, one per read; the last repeats."""
    def read():
        return states.pop(0) if len(states) > 1 else states[0]
    return read


def test_after_a_lost_datanode_the_next_step_waits_for_hdfs_to_call_it_dead_and_re_replicate():
    from perfkit.providers import wait_for_replication

    clock = Clock()
    states = [{"dead": 0, "under_replicated": 0, "pending": 0}] * 20 + [  # called dead at the 20th second
        {"dead": 1, "under_replicated": 12, "pending": 4}] * 6 + [{"dead": 1, "under_replicated": 0, "pending": 0}]
    said = wait_for_replication(_script(list(states)), dead_before=0, dead_within_s=20, clock=clock, sleep=clock.sleep)
    assert said == ("HDFS re-replicated the lost DataNode's blocks 26 s after the loss (called dead after 20 s), "
                    "before the next step")
    assert clock.now == 26


def test_a_namenode_that_does_not_call_it_dead_in_time_or_blocks_left_or_lost_are_said():
    from perfkit.providers import wait_for_replication

    clock = Clock()
    never = wait_for_replication(_script([{"dead": 2}]), dead_before=2, dead_within_s=10, clock=clock,
                                 sleep=clock.sleep)
    assert never.startswith("the NameNode had not called the DataNode dead after 15 s (it waits 2 x "
                            "dfs.namenode.heartbeat.recheck-interval + 10 x dfs.heartbeat.interval): not waited for")
    clock = Clock()
    stuck = wait_for_replication(_script([{"dead": 1, "under_replicated": 3, "missing": 2}]), dead_before=0,
                                 dead_within_s=10, replicate_within_s=60, clock=clock, sleep=clock.sleep)
    assert stuck == ("3 blocks still under-replicated 60 s after the loss (called dead after 0 s): the runs after read "
                     "them with a replica fewer; 2 blocks missing (their only replica was on it): reads of them fail")
    clock = Clock()
    blind = wait_for_replication(_script([{}]), dead_before=0, dead_within_s=1, clock=clock, sleep=clock.sleep)
    assert blind.startswith("the NameNode could not be read")


def test_the_watch_waits_after_a_datanode_loss_only_and_the_findings_say_how_hdfs_came_out():
    lost = without(THREE, "datanodes", "127.0.0.3:9866")
    waited = []
    watch = ConditionsWatch(_script([THREE, lost, lost, without(lost, "nodemanagers", "127.0.0.4:8041")]),
                            after_loss=lambda before, after: waited.append(before) or "HDFS re-replicated it")
    watch.start()
    watch.check(None, 0)
    watch.check(None, 0)
    assert waited == [THREE]  # once, given what the NameNode said before the loss
    watch.check(None, 0)
    assert len(waited) == 1  # a NodeManager lost: nothing for HDFS to do
    config = {"conditions": watch.record()}
    assert "DataNode 127.0.0.3:9866 lost (2 of 3 left) (seen after step 1; then HDFS re-replicated it)" in \
        changed_sentence(config)


def test_the_namenode_s_own_wait_before_it_calls_a_datanode_dead_is_read_from_its_configuration(monkeypatch):
    import requests

    from perfkit import providers

    class Answer:
        def raise_for_status(self):
            pass

        def json(self):
            return {"properties": [{"key": "dfs.namenode.heartbeat.recheck-interval", "value": "5000"},
                                   {"key": "dfs.heartbeat.interval", "value": "1s"}]}

    monkeypatch.setattr(requests, "get", lambda url, params, timeout: Answer())
    assert providers.namenode_dead_after_s("http://127.0.0.1:9870") == 2 * 5 + 10 * 1  # the lab's cluster shape

    def refused(url, params, timeout):
        raise requests.ConnectionError("refused")

    monkeypatch.setattr(requests, "get", refused)
    assert providers.namenode_dead_after_s("http://127.0.0.1:9870") == 2 * 300 + 10 * 3  # Hadoop's defaults


def test_a_lost_last_datanode_is_not_waited_for():
    from perfkit import providers

    said = providers.Provider().after_datanode_loss(None, {"datanodes": ["127.0.0.1:9866"], "dead_datanodes": 0},
                                                     {"datanodes": []})
    assert said == "no DataNode left to copy its blocks to: runs on HDFS fail until one is back (not waited for)"
