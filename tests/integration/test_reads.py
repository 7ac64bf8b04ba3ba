"""Every read method on the lab: bytes read equal the file sizes; failures are per job, named."""
from dataclasses import replace

import pytest

from perfkit.experiments.nfs_vs_hdfs_reads import ReadComparison
from perfkit.lab.settings import lab_home
from perfkit.reads import REGISTRY, get_method
from perfkit.reads.runner import run_jobs
from perfkit.presenting import report_of


@pytest.fixture(scope="module")
def placed(profile):
    cmp = ReadComparison(profile, jobs=3, files_per_job=2, files=5, mean_mb=1, large_file_mb=4, seed=9)
    cmp.prepare(progress=False)
    return cmp


def _profile_for(name, profile):
    # the lab has no kernel NFS client: posix reads the export's own folder, the same files
    return replace(profile, nfs_mount=str(lab_home() / "nfs")) if name == "posix" else profile


@pytest.mark.parametrize("name", list(REGISTRY))
def test_conformance_every_method_reads_every_byte(name, profile, placed):
    method = get_method(name, _profile_for(name, profile))
    assert method.unavailable() is None, method.unavailable()
    sizes = placed.fileset.sizes()
    for i in range(placed.fileset.files):
        rel = f"{placed.folder(placed.fileset)}/{placed.fileset.file_name(i)}"
        assert method.read(method.location(rel)) == sizes[i]
    large = f"{placed.folder(placed.large)}/{placed.large.file_name(0)}"
    assert method.read(method.location(large)) == placed.large.sizes()[0]


def test_posix_in_the_lab_says_why_it_cannot_run(profile):
    assert "no NFS mount" in get_method("posix", profile).unavailable()


def test_jobs_are_separate_processes_and_a_missing_file_fails_only_its_job(profile, placed):
    method = get_method("webhdfs", profile)
    plan = placed.plan("random-files")
    locations = [[method.location(rel) for rel in job] for job in plan]
    locations[1] = [method.location(f"{placed.folder(placed.fileset)}/no-such-file.bin")]
    jobs = run_jobs("webhdfs", profile, locations)
    assert len({j["pid"] for j in jobs}) == 3
    assert [j["ok"] for j in jobs] == [True, False, True]
    assert "WebHDFS read of /perfkit/filesets/" in jobs[1]["error"] and "no-such-file.bin" in jobs[1]["error"]
    sizes = dict(zip([placed.fileset.file_name(i) for i in range(placed.fileset.files)], placed.fileset.sizes()))
    assert jobs[0]["bytes"] == sum(sizes[rel.rsplit("/", 1)[1]] for rel in plan[0])


def test_an_unreadable_path_is_named(profile, placed):
    method = get_method("posix", _profile_for("posix", profile))
    job = run_jobs("posix", _profile_for("posix", profile), [[method.location(placed.folder(placed.fileset))]])[0]
    assert not job["ok"] and job["error"].endswith("Is a directory")


def test_a_stopped_nfs_server_fails_the_nfs_jobs_with_its_words(lab, profile, placed):
    nfs = next(s for s in lab.services if s.name == "nfs")
    nfs.stop()
    try:
        method = get_method("libnfs", profile)
        rel = f"{placed.folder(placed.fileset)}/{placed.fileset.file_name(0)}"
        jobs = run_jobs("libnfs", profile, [[method.location(rel)], [method.location(rel)]])
        assert not any(j["ok"] for j in jobs)
        assert jobs[0]["error"].startswith("nfs-cat nfs://127.0.0.1/perfkit/filesets/")
    finally:
        nfs.start()


def test_the_comparison_table_has_the_published_shape(profile, placed, tmp_path, monkeypatch):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    placed.methods, placed.protocols = ["webhdfs", "libnfs", "posix"], ["random-files", "large-file"]
    placed.run(progress=False)
    report = report_of(placed)
    table = report.table()
    assert list(table.columns) == ["test", "MB/s", "data nodes", "replicas", "jobs", "access", "comment"]
    assert set(table["test"]) == {"random-files", "large-file"}
    measured = table.dropna(subset=["MB/s"])
    assert len(measured) == 4 and (measured["MB/s"] > 0).all()
    assert table.loc[table["access"] == "posix", "comment"].str.startswith("unavailable: no NFS mount").all()
    jobs = report.jobs_frame()
    large = jobs[(jobs["case"] == "large-file") & (jobs["subject"] == "webhdfs")]
    assert (large["bytes"] == placed.large.sizes()[0]).all() and len(large) == 3
