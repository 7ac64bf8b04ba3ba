"""Where a Spark session on a cluster manager ran its work, as its records say: the executors as they registered,
waited for when YARN starts them after the session opened."""
from types import SimpleNamespace

import pytest

from perfkit.engines import spark as spark_engine
from perfkit.engines.spark import SparkEngine


class _Executor:
    def __init__(self, host, port):
        self._host, self._port = host, port

    def host(self):
        return self._host

    def port(self):
        return self._port


def _session(conf: dict, registrations: list[list[_Executor]]):
    """A session whose status tracker answers each call with the next list of executors (the last one repeats)."""
    calls = []

    def executor_infos():
        calls.append(1)
        return registrations[min(len(calls), len(registrations)) - 1]

    tracker = SimpleNamespace(getExecutorInfos=executor_infos)
    context = SimpleNamespace(master="yarn", applicationId="application_1_0001", getConf=lambda: SimpleNamespace(
        get=lambda key, default=None: conf.get(key, default)),
        _jsc=SimpleNamespace(sc=lambda: SimpleNamespace(statusTracker=lambda: tracker)))
    return SimpleNamespace(sparkContext=context), calls


def _engine(session) -> SparkEngine:
    engine = SparkEngine.__new__(SparkEngine)
    engine.spark = session
    return engine


DRIVER = _Executor("127.0.0.1", 0)  # the driver is listed among the executors; it is not one


def test_executors_registering_after_the_session_opened_are_waited_for():
    conf = {"spark.driver.host": "127.0.0.1", "spark.executor.instances": "2", "spark.executor.memory": "1g"}
    late = [[DRIVER], [DRIVER, _Executor("127.0.0.3", 4100)],
            [DRIVER, _Executor("127.0.0.3", 4100), _Executor("127.0.0.2", 4200)]]
    session, calls = _session(conf, late)
    placement = _engine(session).placement()
    assert placement == {"master": "yarn", "application": "application_1_0001",
                         "executors": "2 (127.0.0.2:4200, 127.0.0.3:4100), 1 core and 1g each"}
    assert len(calls) == 3


def test_executors_that_never_register_are_counted_as_they_are_after_the_schedulers_wait():
    conf = {"spark.driver.host": "127.0.0.1", "spark.executor.instances": "2", "spark.executor.cores": "2",
            "spark.scheduler.maxRegisteredResourcesWaitingTime": "300ms"}
    session, calls = _session(conf, [[DRIVER, _Executor("127.0.0.2", 4200)]])
    placement = _engine(session).placement()
    assert placement["executors"] == "1 (127.0.0.2:4200), 2 cores and 1g each"
    assert 2 <= len(calls) <= 4  # polled every 0.2 s for 0.3 s, and once at the deadline


def test_with_dynamic_allocation_the_executors_present_are_recorded_without_waiting():
    conf = {"spark.dynamicAllocation.enabled": "true", "spark.executor.instances": "2"}
    session, calls = _session(conf, [[]])
    assert _engine(session).placement()["executors"] == "0 (none registered), 1 core and 1g each"
    assert len(calls) == 1


@pytest.mark.parametrize("setting, seconds", [("30s", 30), ("500ms", 0.5), ("2min", 120), ("45", 45), ("1h", 3600)])
def test_spark_time_settings_read_in_seconds(setting, seconds):
    assert spark_engine._seconds(setting) == seconds
