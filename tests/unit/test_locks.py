"""Two runs at once on data not yet generated: one run at a time places a dataset, the other waits and reuses it."""
from __future__ import annotations

import re
import threading
import time
from pathlib import Path

import pytest

from perfkit import locks


def test_a_second_run_waits_for_the_lock_and_says_who_holds_it(tmp_path, capsys):
    order, first_in, second_started = [], threading.Event(), threading.Event()

    def first():
        with locks.held(tmp_path / "d.lock", "dataset x (orc)"):
            first_in.set()
            order.append("first placing")
            second_started.wait(5)
            time.sleep(0.3)  # the second run is at the lock meanwhile: it must still be waiting
            order.append("first done")

    one = threading.Thread(target=first)
    two = threading.Thread(target=lambda: _hold_then(tmp_path / "d.lock", order))
    one.start()
    first_in.wait(5)
    two.start()
    second_started.set()
    one.join(5)
    two.join(5)
    assert order == ["first placing", "first done", "second placing"]
    err = capsys.readouterr().err
    assert re.search(r"perfkit: perfkit run pid \d+ \(since \d\d:\d\d:\d\d\) is placing dataset x \(orc\): waiting "
                     r"for it to finish, then its data is reused \(lock .*d\.lock\)", err), err


def _hold_then(path: Path, order: list) -> None:
    with locks.held(path, "dataset x (orc)"):
        order.append("second placing")


def test_the_lock_is_per_dataset_and_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_LOCK_DIR", str(tmp_path))
    with locks.dataset_lock("tpch-sf0.01", "orc", ["hdfs://a/p", "s3a://b/p"]):
        # another dataset, or the same one at other folders (another prefix): not held, no wait
        with locks.dataset_lock("tpch-sf1", "orc", ["hdfs://a/p"]), \
                locks.dataset_lock("tpch-sf0.01", "orc", ["hdfs://a/q", "s3a://b/q"]):
            pass
    assert len(list(tmp_path.glob("tpch-sf0.01-orc-*.lock"))) == 2


def test_two_runs_placing_one_generated_dataset_generate_it_once(monkeypatch):
    """The second run waits while the first generates, then reuses its complete copies; without the lock it took the
    first run's incomplete marker for a stopped run's leftover, deleted the folder and generated it again."""
    from test_dataset_placing import FakeGenerator, StoredFolder

    from perfkit.datasets import generate

    folders = {w: StoredFolder(w) for w in ("hdfs", "s3")}
    monkeypatch.setattr(generate, "dataset_folders", lambda g, fmt, storages: folders)
    started, second_started, results = threading.Event(), threading.Event(), {}

    class SlowGenerator(FakeGenerator):
        def write(self, table, url, file_format):
            if threading.current_thread() is first:  # the second run starts while the first generates
                started.set()
                second_started.wait(5)
                time.sleep(0.2)
            super().write(table, url, file_format)

    gens = {"first": SlowGenerator(), "second": SlowGenerator()}

    def run(name):
        placement = generate.Placement()
        results[name] = generate.place_generated(gens[name], "orc", ["hdfs", "s3"], False, placement), placement

    first = threading.Thread(target=run, args=("first",))
    second = threading.Thread(target=run, args=("second",))
    first.start()
    started.wait(5)
    second.start()
    second_started.set()
    first.join(10)
    second.join(10)
    assert gens["first"].written == ["hdfs://x/a", "hdfs://x/b"] and gens["second"].written == []
    assert results["first"][1].reused == [] and results["second"][1].reused == ["hdfs", "s3"]
    assert results["second"][0].details["rows"] == results["first"][0].details["rows"] == {"a": 1, "b": 2}


def test_two_lab_starts_at_once_fetch_a_tool_once_and_both_find_it(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_CACHE", str(tmp_path / "cache"))
    target = tmp_path / "cache" / "tool-1.0"
    fetches, results, inside = [], [], threading.Event()

    def fetch():
        fetches.append(threading.get_ident())
        inside.set()
        time.sleep(0.3)  # the second start reaches the lock meanwhile
        target.mkdir(parents=True)
        (target / ".complete").touch()

    def start():
        results.append(locks.fetched_once(target, target / ".complete", fetch))

    first = threading.Thread(target=start)
    first.start()
    inside.wait(5)
    second = threading.Thread(target=start)
    second.start()
    first.join(5)
    second.join(5)
    assert len(fetches) == 1 and results == [target, target]


def test_a_failed_fetch_leaves_nothing_ready_and_the_next_start_fetches_again(tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_CACHE", str(tmp_path / "cache"))
    target = tmp_path / "cache" / "tool-1.0"
    calls = []

    def broken():
        calls.append("broken")
        raise RuntimeError("registry refused")

    with pytest.raises(RuntimeError, match="registry refused"):
        locks.fetched_once(target, target, broken)
    assert not target.exists()
    assert locks.fetched_once(target, target, lambda: (calls.append("fixed"), target.write_text("x"))) == target
    assert calls == ["broken", "fixed"] and target.read_text() == "x"
    assert locks.fetched_once(target, target, lambda: calls.append("again")) == target and calls[-1] == "fixed"
