"""A signal's stop is not lost when py4j turns the KeyboardInterrupt into an error of its own."""
import signal
import threading

import pytest

from perfkit import interrupts
from perfkit.engines.spark import SparkEngine


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(interrupts, "_asked", threading.Event())
    monkeypatch.setattr(interrupts, "_why", [])


class _Context:
    def __init__(self):
        self.cancelled = 0

    def cancelAllJobs(self):  # pyspark's name
        self.cancelled += 1


class _Spark:
    """A session whose query fails the way py4j does when the signal arrived inside its socket read."""

    def __init__(self):
        self.sparkContext = _Context()

    def sql(self, _):
        return self

    def collect(self):
        with pytest.raises(KeyboardInterrupt):
            interrupts.stop(signal.SIGTERM, None)  # the handler ran inside the call ...
        raise RuntimeError("Answer from Java side is empty")  # ... and py4j reported its broken socket instead


def test_the_signal_is_remembered_and_raised_as_ctrl_c(fresh):
    assert interrupts.asked() is None
    with pytest.raises(KeyboardInterrupt, match="signal 15"):
        interrupts.stop(signal.SIGTERM, None)
    assert interrupts.asked() == "signal 15"


def test_a_py4j_error_after_the_signal_stops_the_run_and_its_jobs(fresh):
    engine = SparkEngine.__new__(SparkEngine)
    engine.spark = _Spark()
    with pytest.raises(KeyboardInterrupt, match="signal 15") as stopped:
        engine.execute("SELECT 1")
    assert "Answer from Java side is empty" in str(stopped.value.__cause__)
    assert engine.spark.sparkContext.cancelled == 1


def test_a_py4j_error_without_a_signal_is_the_query_s_failure(fresh):
    engine = SparkEngine.__new__(SparkEngine)
    engine.spark = _Spark()
    engine.spark.collect = lambda: (_ for _ in ()).throw(RuntimeError("Answer from Java side is empty"))
    with pytest.raises(RuntimeError, match="Answer from Java side is empty"):
        engine.execute("SELECT 1")
    assert engine.spark.sparkContext.cancelled == 0


def test_a_ctrl_c_handler_taken_is_put_back_and_none_means_pythons_default():
    import signal
    import threading

    from perfkit import interrupts

    before = signal.getsignal(signal.SIGINT)
    try:
        taken = interrupts.sigint_handler()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        interrupts.restore_sigint(taken)
        assert signal.getsignal(signal.SIGINT) is taken
        interrupts.restore_sigint(None)  # a handler not set from Python: Python's own
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        found = []
        worker = threading.Thread(target=lambda: found.append(interrupts.sigint_handler()))
        worker.start()
        worker.join()
        assert found == [interrupts.UNSET]  # only the main thread handles signals
        interrupts.restore_sigint(interrupts.UNSET)
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)
