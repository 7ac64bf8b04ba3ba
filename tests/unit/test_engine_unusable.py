"""An engine that cannot run a suite is one failed record and the run goes on with the others, in every query
experiment (they open engines through QueryComparison.engine_with_tables); a PerfkitError stops the run."""
import pytest

from perfkit.errors import PerfkitError
from perfkit.suites import DEFAULT_TABLE


# the engines' real names (the experiments check them), each faked to behave as named here
FINE, BROKEN_OPEN, BROKEN_REGISTER, SERVICE_DOWN = "spark", "trino", "hive", "spark-thrift"


class FakeEngine:
    def __init__(self, name, *args):
        if name == BROKEN_OPEN:
            raise RuntimeError("no such catalog")
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def versions(self):
        return {self.name: f"{self.name} 1.0 (fake)"}

    def execute(self, sql, timeout_s=None):
        return [("yellow", 3)]


def _register(self, engine, tableset):
    if engine.name == BROKEN_REGISTER:
        raise ValueError("CREATE EXTERNAL TABLE: unsupported file format")
    if engine.name == SERVICE_DOWN:
        raise PerfkitError(f"{SERVICE_DOWN} is not running. Fix: perfkit lab up")
    return {where: {DEFAULT_TABLE: f"perfkit.t_{where}"} for where in ("hdfs", "s3")}


@pytest.fixture
def faked(monkeypatch, tmp_path):
    from perfkit.experiments import hdfs_vs_s3_queries as module
    from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison

    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    monkeypatch.setattr(module, "get_engine", FakeEngine)
    monkeypatch.setattr(QueryComparison, "prepare", lambda self, progress=True: "tables")
    monkeypatch.setattr(QueryComparison, "config", lambda self: {"versions": {}})
    monkeypatch.setattr(QueryComparison, "watch_storages",
                        lambda self, tableset: setattr(self, "probes", {"hdfs": lambda: None, "s3": lambda: None}))
    monkeypatch.setattr(QueryComparison, "register_tables", _register)
    monkeypatch.setattr(QueryComparison, "cleanup", lambda self: None)


def _experiment(kind: str, engines: list[str]):
    from perfkit.config import load_profile
    from perfkit.experiments.engine_storage_matrix import EngineStorageMatrix
    from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison

    cls = {"comparison": QueryComparison, "matrix": EngineStorageMatrix}[kind]
    extra = {"suite": "taxi"} if kind == "matrix" else {}
    return cls(load_profile("lab"), engines=engines, queries=["q1"], runs=1, warmup=0, health_interval_s=0.01,
               accounting=False, **extra)


@pytest.mark.parametrize("kind", ["comparison", "matrix"])
@pytest.mark.parametrize("broken", [BROKEN_OPEN, BROKEN_REGISTER])
def test_an_engine_that_cannot_run_the_suite_is_recorded_once_and_the_others_run(faked, kind, broken):
    experiment = _experiment(kind, [FINE, broken])
    experiment.run(progress=False)
    records = experiment.results.records
    unusable = [r for r in records if r.case == "register tables"]
    assert [(r.subject, r.storage, r.ok) for r in unusable] == [(broken, "all", False)]
    assert ("no such catalog" if broken == BROKEN_OPEN else "unsupported file format") in unusable[0].error
    measured = [(r.subject, r.storage, r.ok) for r in records if r.case == "q1"]
    assert sorted(measured) == [(FINE, "hdfs", True), (FINE, "s3", True)]
    assert experiment.results.path.exists()


@pytest.mark.parametrize("kind", ["comparison", "matrix"])
def test_a_service_down_stops_the_run_with_its_fix(faked, kind):
    experiment = _experiment(kind, [SERVICE_DOWN])
    with pytest.raises(PerfkitError, match="Fix: perfkit lab up"):
        experiment.run(progress=False)
