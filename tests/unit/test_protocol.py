import pytest

from collections import Counter

from perfkit.protocol import Protocol, run_order


def test_warmup_first_then_measured_runs_interleaved_across_storages():
    steps = [(s.phase, s.iteration, s.storage) for s in Protocol(warmup=1, runs=2).steps(["hdfs", "s3"], "q1", 7)]
    assert [(phase, iteration) for phase, iteration, _ in steps] == [
        ("warmup", 0), ("warmup", 0), ("measured", 0), ("measured", 0), ("measured", 1), ("measured", 1)]
    rounds = [[where for _, _, where in steps[i:i + 2]] for i in range(0, 6, 2)]
    assert all(sorted(r) == ["hdfs", "s3"] for r in rounds)  # every round visits every storage once
    # rotated round by round: consecutive rounds start with another storage
    assert [r[0] for r in rounds[:2]] != [rounds[0][0]] * 2 and rounds[0] == rounds[2]
    assert Protocol(warmup=1, runs=2).count(["hdfs", "s3"]) == len(steps)


def test_the_run_order_is_seeded_differs_by_key_and_puts_every_item_in_every_position():
    items = ["a", "b", "c", "d"]
    assert run_order(items, 0, "q1", 5) == run_order(items, 0, "q1", 5)  # the same seed, the same order
    firsts = Counter(run_order(items, 0, f"q{k}", 5)[0] for k in range(200))
    assert set(firsts) == set(items) and min(firsts.values()) > 25  # no item is always first across keys
    for key in ("q1", "q2"):  # over len(items) rounds, each item once in each position (a Latin square)
        square = [run_order(items, r, key, 5) for r in range(4)]
        assert all(sorted(column) == items for column in zip(*square))
    assert {tuple(run_order(items, 0, "q1", seed)) for seed in range(20)} != {tuple(items)}


def test_protocol_rejects_no_measured_runs():
    with pytest.raises(ValueError, match="runs >= 1"):
        Protocol(warmup=0, runs=0)


def test_a_cold_protocol_drops_the_cache_before_measured_runs_only():
    steps = list(Protocol(warmup=1, runs=1, cold_cache=True).steps(["hdfs", "s3"]))
    assert [(s.phase, s.cold) for s in steps] == [("warmup", False), ("warmup", False),
                                                  ("measured", True), ("measured", True)]
    assert not any(s.cold for s in Protocol(warmup=1, runs=2).steps(["hdfs"]))
