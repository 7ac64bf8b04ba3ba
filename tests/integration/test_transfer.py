"""Every copy method on the real lab: copies a small manifest, verified byte for byte."""
import re
import shutil

import pytest

from perfkit.storages import hdfs as hdfs_storage
from perfkit.datasets.files import FileSet, place_fileset
from perfkit.errors import PerfkitError, ServiceError
from perfkit.experiments.s3_to_hdfs_transfer import TransferComparison
from perfkit.transfer import REGISTRY, TransferMethod, get_method
from perfkit.transfer.manifest import build_manifest
from perfkit.transfer.stream import Stream

FILES = FileSet(files=3, mean_mb=1.5, seed=5)


@pytest.fixture(scope="module")
def manifest(profile):
    return build_manifest(profile, place_fileset(FILES, profile, progress=False))


@pytest.mark.parametrize("name", list(REGISTRY))
def test_conformance_every_method_copies_the_manifest_exactly(name, profile, manifest, tmp_path):
    method = get_method(name, profile, concurrency=2)
    reason = method.unavailable()
    if reason:  # only EMR's own tool may be missing here, and it must say why
        assert name == "s3-dist-cp" and shutil.which("s3-dist-cp") is None and "EMR" in reason
        return
    hdfs = hdfs_storage.webhdfs_client(profile)
    dest = profile.hdfs_path("transfers", "conformance", name)
    hdfs.delete(dest, recursive=True)
    hdfs.makedirs(dest)
    try:
        per_file = method.copy(manifest, dest, tmp_path)
        assert hdfs_storage.hdfs_listing(hdfs, dest) == manifest.sizes
        for i in range(FILES.files):
            with hdfs.read(f"{dest}/{FILES.file_name(i)}") as reader:
                assert reader.read() == FILES.content(i)
        assert set(per_file) <= set(manifest.sizes) and all(s > 0 for s in per_file.values())
    finally:
        hdfs.delete(dest, recursive=True)
    assert list(tmp_path.iterdir()) in ([], [tmp_path / "aws-config"], [tmp_path / "distcp-sources.txt"])


class Truncating(Stream):
    name = "truncating"

    def copy(self, manifest, dest, scratch):
        times = super().copy(manifest, dest, scratch)
        hdfs = hdfs_storage.webhdfs_client(self.profile)
        hdfs.write(f"{dest}/{manifest.files[0][0]}", data=b"short", overwrite=True)
        hdfs.delete(f"{dest}/{manifest.files[1][0]}")
        return times


class Interrupted(TransferMethod):
    name = "interrupted"

    def copy(self, manifest, dest, scratch):
        hdfs_storage.webhdfs_client(self.profile).write(f"{dest}/{manifest.files[0][0]}", data=b"partial")
        raise KeyboardInterrupt


def _comparison(profile, manifest, methods, monkeypatch, tmp_path):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    return TransferComparison(profile, methods=methods, concurrency=[1], source_prefix=manifest.prefix)


def test_a_truncated_and_a_missing_file_fail_verification(profile, manifest, monkeypatch, tmp_path):
    monkeypatch.setitem(REGISTRY, "truncating", f"{__name__}:Truncating")
    cmp = _comparison(profile, manifest, ["truncating", "stream"], monkeypatch, tmp_path)
    frame = cmp.run(progress=False).to_frame()
    bad = frame[frame.subject == "truncating"]
    assert len(bad) == 1 and not bad.ok.item()
    assert ("1 missing ['part-00001.bin']" in bad.error.item()
            and "1 of wrong size ['part-00000.bin']" in bad.error.item())
    good = frame[(frame.subject == "stream") & (frame.case == "total")]
    assert good.ok.item() and good.bytes.item() == manifest.total_bytes
    assert good.mb_per_s.item() == pytest.approx(manifest.total_bytes / 1e6 / good.wall_s.item())
    with pytest.raises(PerfkitError, match=r"1 copy failed \(truncating: verification failed: 1 missing"):
        cmp.raise_for_failures()
    assert not hdfs_storage.webhdfs_client(profile).status(cmp.run_root, strict=False)  # run prefix removed


def test_an_interrupted_run_marks_no_copy_successful_and_cleans_up(profile, manifest, monkeypatch, tmp_path):
    monkeypatch.setitem(REGISTRY, "interrupted", f"{__name__}:Interrupted")
    cmp = _comparison(profile, manifest, ["interrupted"], monkeypatch, tmp_path)
    with pytest.raises(KeyboardInterrupt):
        cmp.run(progress=False)
    frame = cmp.results.to_frame()
    assert len(frame) == 1 and not frame["ok"].any()
    assert re.fullmatch(r"interrupted \(Ctrl-C\) after \d+\.\d s: not a sample", frame["error"].item())
    assert frame[["subject", "case", "iteration"]].values.tolist() == [["interrupted", "total", 0]]
    saved = cmp.results.path.read_text()
    assert '"ok": true' not in saved and '"interrupted": true' in saved
    assert not hdfs_storage.webhdfs_client(profile).status(cmp.run_root, strict=False)


def test_a_destination_outside_the_run_prefix_is_refused(profile, manifest, monkeypatch, tmp_path):
    cmp = _comparison(profile, manifest, ["stream"], monkeypatch, tmp_path)
    from perfkit.results import ResultSet

    with pytest.raises(PerfkitError, match="outside this run's prefix"):
        cmp.copy_once(ResultSet("t", folder=tmp_path), get_method("stream", profile), manifest,
                      profile.hdfs_path("datasets"), 0, tmp_path, hdfs_storage.webhdfs_client(profile))


def test_a_missing_prefix_and_an_unreachable_source_give_one_clear_message(profile):
    from dataclasses import replace

    with pytest.raises(PerfkitError, match=r"no files under s3://perfkit-lab/no/such/prefix/: check the source prefix"):
        build_manifest(profile, "no/such/prefix")
    with pytest.raises(ServiceError, match="S3 bucket 'perfkit-lab' at http://127.0.0.1:1: not reachable"):
        build_manifest(replace(profile, s3_endpoint="http://127.0.0.1:1"), "x")
