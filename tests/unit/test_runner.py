"""The one loop every experiment runs through (perfkit.experiments.runner): steps in their declared order, a save after
each, the attempt in flight recorded on a stop, the session held around every step and the cleanup last."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from perfkit.config import load_profile
from perfkit.experiments.base import Experiment, Sweep


@dataclass
class Toy(Experiment):
    """Three steps; each adds one record, and can be told to stop the run midway."""
    experiment = "toy"
    behind_s3_network = False

    profile: object = None
    stop_at: int | None = None

    def __post_init__(self):
        self.events: list[str] = []
        self.saved_lines: list[int] = []

    def steps(self) -> list[int]:
        return [0, 1, 2]

    def record_of(self, step: int) -> dict:
        return dict(subject="toy", storage="here", case=f"c{step}", phase="measured", iteration=step)

    def ready(self, progress=True):
        self.events.append("ready")

    def begin(self) -> dict:
        self.events.append("begin")
        return {"versions": {}}

    def session(self, results):
        toy = self

        class Session:
            def __enter__(self):
                toy.events.append("session open")

            def __exit__(self, *exc):
                toy.events.append("session closed")

        return Session()

    def attempt(self, step: int) -> None:
        if self.results.path.exists():  # what the file held when this step began: the earlier steps' records
            self.saved_lines.append(len(self.results.path.read_text().splitlines()))
        self.events.append(f"attempt {step}")
        if step == self.stop_at:
            raise KeyboardInterrupt("signal 15")
        self.results.add(**self.record_of(step), started_at="2026-12-07T00:00:00+00:00", wall_s=1.0 + step)

    def cleanup(self) -> None:
        self.events.append("cleanup")


@pytest.fixture(autouse=True)
def results_here(monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))


def test_every_step_in_order_inside_the_session_saved_after_each_then_the_cleanup():
    toy = Toy()
    results = toy.run(progress=False)
    assert toy.events == ["ready", "begin", "session open", "attempt 0", "attempt 1", "attempt 2", "session closed",
                          "cleanup"]
    assert toy.saved_lines == [1, 2]  # step 1 found step 0's record saved, step 2 found both
    rows = [json.loads(line) for line in results.path.read_text().splitlines()]
    assert [(r["case"], r["wall_s"]) for r in rows] == [("c0", 1.0), ("c1", 2.0), ("c2", 3.0)]
    assert "interrupted" not in rows[0]["config"]


def test_a_stop_records_the_attempt_in_flight_as_not_a_sample_and_marks_the_file():
    toy = Toy(stop_at=1)
    with pytest.raises(KeyboardInterrupt):
        toy.run(progress=False)
    rows = [json.loads(line) for line in toy.results.path.read_text().splitlines()]
    assert [(r["case"], r["ok"], r["wall_s"]) for r in rows] == [("c0", True, 1.0), ("c1", False, None)]
    assert rows[1]["error"].startswith("interrupted (signal 15) after ") and rows[1]["error"].endswith(
        " s: not a sample")
    assert all(r["config"]["interrupted"] is True for r in rows)
    assert toy.events[-2:] == ["session closed", "cleanup"]


@dataclass
class Points(Sweep):
    experiment = "points"
    settings: tuple = ("near", "far")

    def __post_init__(self):
        self.ran: list[str] = []

    def steps(self) -> list[str]:
        return list(self.settings)

    def attempt(self, setting: str) -> None:
        self.ran.append(setting)


def test_a_sweep_runs_its_points_in_order_and_records_nothing_itself(tmp_path):
    sweep = Points()
    sweep.run(progress=False)
    assert sweep.ran == ["near", "far"] and not any(tmp_path.iterdir())


def test_the_query_experiments_declare_their_steps_once_as_data():
    from perfkit.experiments.cache_tier import CacheTierComparison
    from perfkit.experiments.engine_storage_matrix import EngineStorageMatrix
    from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison

    profile = load_profile("lab")
    plain = QueryComparison(profile, engines=["spark", "trino"], queries=["q1"], runs=2, warmup=1)
    plain.order_seed = 3
    steps = plain.steps()
    assert [(s.engine, s.step.phase, s.step.iteration) for s in steps] == [
        (e, phase, i) for e in ("spark", "trino") for phase, i in (("warmup", 0), ("measured", 0), ("measured", 1))
        for _ in ("hdfs", "s3")]
    for e in ("spark", "trino"):  # every round visits both storages, and the next round starts with the other
        rounds = [[s.storage for s in steps if s.engine == e][i:i + 2] for i in (0, 2, 4)]
        assert all(sorted(r) == ["hdfs", "s3"] for r in rounds)
        assert rounds[0][0] != rounds[1][0] != rounds[2][0]
    matrix = EngineStorageMatrix(profile, engines=["spark", "trino"], suite="taxi", queries=["q1"], runs=2,
                                 warmup=0)
    matrix.order_seed = 3
    cells = [(s.engine, s.storage) for s in matrix.steps()]
    assert sorted(cells[:4]) == sorted(cells[4:]) == [("spark", "hdfs"), ("spark", "s3"), ("trino", "hdfs"),
                                                      ("trino", "s3")]
    assert cells[4:] == cells[1:4] + cells[:1]  # each round every cell once, the next round rotated by one
    tiers = CacheTierComparison(profile, queries=["q1"], runs=2)
    tiers.order_seed = 3
    tier_steps = [(s.step.iteration, s.storage, s.try_) for s in tiers.steps()]
    first = tier_steps[0][1]
    other = "trino-cache" if first == "s3" else "s3"
    assert tier_steps == [(r, where, t) for r, order in ((0, (first, other)), (1, (other, first)))
                          for where in order for t in ("cold", "warm", "hot")]


class ControlledToy(Toy):
    """A toy whose drift control reads two fake storages, one slower at the end than at the start."""

    def control(self):
        from perfkit.experiments.control import DriftControl

        ticks = iter(range(1000))
        self.reads = []

        def read(where):
            self.reads.append((where, len(self.events)))

        return DriftControl({"hdfs": lambda: read("hdfs"), "s3": lambda: read("s3")}, "two fake reads",
                            between_s=1.5, clock=lambda: float(next(ticks)))


def test_the_drift_control_is_timed_at_start_between_steps_when_due_and_at_end_and_kept_in_the_config():
    from perfkit.experiments.control import READS

    toy = ControlledToy()
    results = toy.run(progress=False)
    control = json.loads(results.path.read_text().splitlines()[0])["config"]["control"]
    # the fake clock ticks once per due() check and per round: "between" is due once in the middle of three steps
    assert [r["at"] for r in control["rounds"]] == ["start", "between", "end"]
    assert control["what"] == "two fake reads"
    for round_ in control["rounds"]:
        assert sorted(round_["seconds"]) == ["hdfs", "s3"]
        assert all(len(seconds) == READS and min(seconds) >= 0 for seconds in round_["seconds"].values())
    start_reads = [where for where, events in toy.reads if events == 3]  # ready, begin, session open: then start
    # one untimed read each first (the clients' first-request costs), then interleaved: a blip hits both alike
    assert start_reads == ["hdfs", "s3"] + ["hdfs", "s3"] * READS


def test_a_control_read_that_fails_is_said_and_left_out_never_fatal():
    from perfkit.experiments.control import DriftControl

    def broken():
        raise OSError("connection refused")

    control = DriftControl({"hdfs": lambda: None, "s3": broken}, "fake")
    control.time("start")
    control.time("end")
    record = control.record()
    assert record["failed"] == {"s3": "start: OSError: connection refused"} or \
        record["failed"]["s3"].startswith("start: ") and "connection refused" in record["failed"]["s3"]
    assert [sorted(r["seconds"]) for r in record["rounds"]] == [["hdfs"], ["hdfs"]]


def test_each_run_draws_and_records_its_order_seed_unless_one_is_given():
    first, second = Toy(), Toy()
    seeds = [json.loads(t.run(progress=False).path.read_text().splitlines()[0])["config"]["order"]["seed"]
             for t in (first, second)]
    assert seeds[0] != seeds[1] and first.order_seed is None  # drawn per run, not kept on the experiment
    given = Toy()
    given.order_seed = 1234
    config = json.loads(given.run(progress=False).path.read_text().splitlines()[0])["config"]
    assert config["order"] == {"seed": 1234, "design": Toy.order_design}
