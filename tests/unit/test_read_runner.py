import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.reads import REGISTRY
from perfkit.reads.methods import Posix
from perfkit.reads.runner import run_jobs


@pytest.fixture
def files(tmp_path):
    sizes = [3_000_000, 1_000_000, 0, 2_500_001]
    for i, size in enumerate(sizes):
        Path(tmp_path, f"f{i}.bin").write_bytes(os.urandom(size))
    return tmp_path, sizes


def _profile(folder):
    return replace(load_profile("lab"), nfs_mount=str(folder))


class StaggeredPrepare(Posix):
    """Posix whose set-up takes 0.4 s longer in each job that reaches it later (0, 0.4, 0.8 s: more
    than a fixed head start such as the 0.45 s the runner once gave 3 jobs) and notes when it ended;
    the job that gets slot `fail` fails its set-up."""

    name = "test-staggered"
    fail = None

    def prepare(self):
        folder = Path(self.profile.nfs_mount, "slots")
        folder.mkdir(exist_ok=True)
        slot = 0
        while True:  # claim the first free slot, atomically
            try:
                os.close(os.open(folder / str(slot), os.O_CREAT | os.O_EXCL))
                break
            except FileExistsError:
                slot += 1
        if slot == self.fail:
            raise PerfkitError(f"set-up of slot {slot} failed")
        time.sleep(0.4 * slot)
        super().prepare()
        (folder / f"{slot}.ready").write_text(repr(time.time()))


@pytest.fixture
def staggered(monkeypatch):
    monkeypatch.setitem(REGISTRY, "test-staggered", f"{__name__}:StaggeredPrepare")
    return StaggeredPrepare


def test_jobs_are_separate_processes_read_every_byte_and_keep_plan_order(files):
    folder, sizes = files
    plan = [[str(folder / "f0.bin"), str(folder / "f2.bin")], [str(folder / "f1.bin")], [str(folder / "f3.bin")]]
    jobs = run_jobs("posix", _profile(folder), plan)
    assert [j["bytes"] for j in jobs] == [sizes[0] + sizes[2], sizes[1], sizes[3]]
    assert all(j["ok"] and j["error"] is None and j["start"] <= j["end"] for j in jobs)
    pids = {j["pid"] for j in jobs}
    assert len(pids) == 3 and os.getpid() not in pids


def test_no_job_starts_its_clock_before_every_job_is_set_up(files, staggered):
    folder, _ = files
    plan = [[str(folder / "f0.bin")], [str(folder / "f1.bin")], [str(folder / "f3.bin")]]
    jobs = run_jobs("test-staggered", _profile(folder), plan)
    ready = [float(p.read_text()) for p in Path(folder, "slots").glob("*.ready")]
    assert len(ready) == 3 and max(ready) - min(ready) >= 0.7  # set-ups really were staggered
    assert min(j["start"] for j in jobs) >= max(ready)  # yet every clock started after the last set-up
    assert max(j["start"] for j in jobs) - min(j["start"] for j in jobs) < 0.25


def test_a_read_error_fails_only_its_job(files):
    folder, sizes = files
    jobs = run_jobs("posix", _profile(folder), [[str(folder / "f1.bin")], [str(folder)]])
    assert jobs[0]["ok"] and jobs[0]["bytes"] == sizes[1]
    assert not jobs[1]["ok"] and jobs[1]["error"].endswith("Is a directory")


def test_a_failed_set_up_fails_the_run_with_its_own_error_and_releases_the_others(files, staggered, monkeypatch):
    folder, _ = files
    monkeypatch.setattr(StaggeredPrepare, "fail", 1)
    began = time.time()
    with pytest.raises(PerfkitError, match="set-up of slot 1 failed"):
        run_jobs("test-staggered", _profile(folder), [[str(folder / "f0.bin")]] * 3)
    assert time.time() - began < 30  # the jobs waiting for it were released, not left at the barrier
