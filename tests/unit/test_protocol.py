import pytest

from perfkit.protocol import Protocol


def test_warmup_first_then_measured_runs_interleaved_across_storages():
    steps = [(s.phase, s.iteration, s.storage) for s in Protocol(warmup=1, runs=2).steps(["hdfs", "s3"])]
    assert steps == [("warmup", 0, "hdfs"), ("warmup", 0, "s3"),
                     ("measured", 0, "hdfs"), ("measured", 0, "s3"),
                     ("measured", 1, "hdfs"), ("measured", 1, "s3")]
    assert Protocol(warmup=1, runs=2).count(["hdfs", "s3"]) == len(steps)


def test_protocol_rejects_no_measured_runs():
    with pytest.raises(ValueError, match="runs >= 1"):
        Protocol(warmup=0, runs=0)


def test_a_cold_protocol_drops_the_cache_before_measured_runs_only():
    steps = list(Protocol(warmup=1, runs=1, cold_cache=True).steps(["hdfs", "s3"]))
    assert [(s.phase, s.cold) for s in steps] == [("warmup", False), ("warmup", False),
                                                  ("measured", True), ("measured", True)]
    assert not any(s.cold for s in Protocol(warmup=1, runs=2).steps(["hdfs"]))
