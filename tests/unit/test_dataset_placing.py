"""place_generated's steps without a lab: the plan (what each storage keeps, what is made) over in-memory
folders, and generate, copy and verify through a fake generator."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from perfkit.datasets.placing.folder import MARKER
from perfkit.datasets.placing.plan import Decision, decide, plan_over
from perfkit.datasets.placing.verify import fingerprint
from perfkit.datasets.replicate import CopiedFile
from perfkit.datasets.tables import Table
from perfkit.errors import PerfkitError

IDENTITY = {"generator": "tpch", "scale": 0.01, "format": "orc", "tables": ["a", "b"]}
FILES = {"a": {"part-0.orc": 10}, "b": {"part-0.orc": 20}}
SUMS = {"a": [1, "x"], "b": [2, "y"]}


def marker(checksums=SUMS, complete=True, identity=IDENTITY, files=FILES) -> dict:
    return {"complete": complete, "identity": identity, "checksums": checksums, "files": files}


def test_nothing_there_copy_generates_hdfs_and_copies_it_to_s3():
    assert decide(["hdfs", "s3"], {"hdfs": None, "s3": None}, "copy") == Decision([], ["hdfs"], ["s3"], [])


def test_nothing_there_generate_writes_every_storage():
    assert decide(["hdfs", "s3"], {"hdfs": None, "s3": None}, "generate") == Decision([], ["hdfs", "s3"], [], [])


def test_one_storage_alone_is_generated_whatever_the_method():
    assert decide(["s3"], {"s3": None}, "copy") == Decision([], ["s3"], [], [])


def test_two_equal_complete_copies_are_reused():
    complete = {"hdfs": marker(), "s3": marker()}
    for method in ("copy", "generate"):
        assert decide(["hdfs", "s3"], complete, method) == Decision(["hdfs", "s3"], [], [], [])


def test_two_complete_copies_that_are_not_byte_copies_get_s3_copied_again_only_by_copy():
    complete = {"hdfs": marker(), "s3": marker({"a": [1, "other"], "b": [2, "y"]})}
    assert decide(["hdfs", "s3"], complete, "copy") == Decision(["hdfs"], [], ["s3"], [])
    assert decide(["hdfs", "s3"], complete, "generate") == Decision(["hdfs", "s3"], [], [], [])


def test_a_new_hdfs_copy_makes_s3s_complete_copy_stale():
    complete = {"hdfs": None, "s3": marker()}
    assert decide(["hdfs", "s3"], complete, "copy") == Decision([], ["hdfs"], ["s3"], ["s3"])
    assert decide(["hdfs", "s3"], complete, "generate") == Decision(["s3"], ["hdfs"], [], [])


def test_a_missing_s3_copy_is_copied_from_the_complete_hdfs_one():
    assert decide(["hdfs", "s3"], {"hdfs": marker(), "s3": None}, "copy") == Decision(["hdfs"], [], ["s3"], [])


class MemoryFolder:
    """A DatasetFolder's storage side, in memory: a marker's text, files per table, and whether it was deleted."""

    def __init__(self, where: str, marker_text: str | None = None, files: dict | None = None, identity=IDENTITY):
        self.where, self.root, self.identity = where, f"{where}://prefix/datasets/x/orc", identity
        self.marker_text, self.tables, self.deleted = marker_text, dict(files or {}), False
        self.bad: dict[str, str] = {}  # table/file -> why, as the storage reports it

    def damaged(self, tables) -> dict[str, str]:
        return dict(self.bad)

    def read_marker(self) -> str | None:
        return self.marker_text

    def exists(self) -> bool:
        return self.marker_text is not None or bool(self.tables)

    def files(self, table: str) -> dict[str, int]:
        return self.tables.get(table, {})

    def delete(self) -> None:
        self.marker_text, self.tables, self.deleted = None, {}, True


GEN = SimpleNamespace(tables=("a", "b"))


def plan(folders: dict, method: str = "copy"):
    return plan_over(GEN, "orc", folders, method)


def test_the_plan_reuses_complete_unchanged_copies_with_their_checksums():
    folders = {w: MemoryFolder(w, json.dumps(marker()), FILES) for w in ("hdfs", "s3")}
    made = plan(folders)
    assert made.decision.reused == ["hdfs", "s3"] and made.todo == [] and not made.copying
    assert made.reused_checksums == {"hdfs": SUMS, "s3": SUMS}
    assert not any(f.deleted for f in folders.values())


def test_the_plan_remakes_what_a_stopped_run_or_a_change_left_and_clears_the_stale_copy():
    stopped = MemoryFolder("hdfs", json.dumps({"complete": False, "identity": IDENTITY}), {"a": {"part-0.orc": 3}})
    changed = MemoryFolder("s3", json.dumps(marker()), {**FILES, "b": {"part-0.orc": 21}})
    made = plan({"hdfs": stopped, "s3": changed})
    assert stopped.deleted and changed.deleted
    assert made.decision == Decision([], ["hdfs"], ["s3"], []) and made.todo == ["hdfs", "s3"] and made.copying


def test_the_plan_clears_s3s_complete_copy_when_hdfs_is_made_again():
    hdfs, s3 = MemoryFolder("hdfs"), MemoryFolder("s3", json.dumps(marker()), FILES)
    made = plan({"hdfs": hdfs, "s3": s3})
    assert s3.deleted and made.decision == Decision([], ["hdfs"], ["s3"], ["s3"])


def test_the_plan_remakes_a_copy_of_another_dataset_or_an_unreadable_marker():
    other = MemoryFolder("hdfs", json.dumps(marker(identity={**IDENTITY, "scale": 1.0})), FILES)
    garbled = MemoryFolder("s3", "{not json", FILES)
    made = plan({"hdfs": other, "s3": garbled}, "generate")
    assert other.deleted and garbled.deleted and made.decision.generate_on == ["hdfs", "s3"]


def test_a_complete_copy_with_a_block_its_storage_knows_corrupt_is_made_again(capsys):
    hdfs, s3 = (MemoryFolder(w, json.dumps(marker()), FILES) for w in ("hdfs", "s3"))
    hdfs.bad = {"a/part-0.orc": "block 1073741825 at byte 0 is corrupt (every replica failed its checksum)"}
    made = plan({"hdfs": hdfs, "s3": s3})
    assert hdfs.deleted and s3.deleted  # S3's copy was HDFS's bytes: copied again from the new HDFS copy
    assert made.decision == Decision([], ["hdfs"], ["s3"], ["s3"])
    assert ("hdfs://prefix/datasets/x/orc holds damaged files (a/part-0.orc: block 1073741825 at byte 0 is corrupt"
            in capsys.readouterr().err)


def test_the_plan_never_touches_a_folder_perfkit_did_not_make():
    foreign = MemoryFolder("s3", None, {"a": {"data.orc": 5}})
    with pytest.raises(PerfkitError, match=rf"s3://prefix/datasets/x/orc exists but was not made by perfkit "
                                           rf"\(no {MARKER} there\)"):
        plan({"hdfs": MemoryFolder("hdfs"), "s3": foreign})
    assert not foreign.deleted


class StoredFolder(MemoryFolder):
    """A MemoryFolder that also takes markers, tables and copies, as a storage would."""

    def __init__(self, where: str, *args, **kwargs):
        super().__init__(where, *args, **kwargs)
        self.copied_from = None

    def table_url(self, table: str) -> str:
        return f"{self.where}://x/{table}"

    def start_marker(self) -> None:
        self.marker_text = json.dumps({"complete": False, "identity": self.identity})

    def finish_marker(self, checksums: dict, files: dict) -> None:
        self.marker_text = json.dumps(marker(checksums, files=files))

    def inspect(self, table: str, file_format: str):
        return Table(self.table_url(table), file_format, [("id", "bigint")])

    def footer_rows(self, tables, file_format: str) -> dict[str, int]:
        return {t: ROWS[t] for t in tables}

    def copy_in(self, source, tables) -> dict:
        self.copied_from = source.where
        return {t: [CopiedFile(f"part-0.{t}", 10, "md5")] for t in tables}


ROWS = {"a": 1, "b": 2}


class FakeGenerator:
    name, tables = "fake", ("a", "b")

    def __init__(self, rows=ROWS):
        self.rows, self.written, self.placed = rows, [], []

    def describe(self) -> dict:
        return {"generator": "fake"}

    def write(self, table: str, url: str, file_format: str) -> None:
        self.written.append(url)

    def place(self, table: str, url: str, file_format: str) -> list:
        self.placed.append(url)
        return [self.rows[table], f"sum-{table}"]

    def expected_rows(self, table: str) -> int:
        return ROWS[table]


def place(monkeypatch, gen, folders: dict, method: str):
    from perfkit.datasets import generate

    monkeypatch.setattr(generate, "dataset_folders", lambda g, fmt, storages: folders)
    placement = generate.Placement()
    return generate.place_generated(gen, "orc", list(folders), False, placement, method), placement


def test_generate_writes_and_reads_back_every_storage_then_marks_each_complete(monkeypatch):
    from perfkit.datasets.generate import VERIFIED

    gen, folders = FakeGenerator(), {w: StoredFolder(w) for w in ("hdfs", "s3")}
    tableset, placement = place(monkeypatch, gen, folders, "generate")
    assert gen.placed == ["hdfs://x/a", "hdfs://x/b", "s3://x/a", "s3://x/b"] and not gen.written
    assert list(placement.generated_s) == ["hdfs", "s3"] and not placement.copied_s and placement.reused == []
    for folder in folders.values():
        assert json.loads(folder.marker_text)["checksums"] == {"a": [1, "sum-a"], "b": [2, "sum-b"]}
    assert tableset.verified == VERIFIED and tableset.details["placed"] == "generated on hdfs, s3"
    assert tableset.details["rows"] == ROWS and tableset.tables["s3"]["b"].location == "s3://x/b"


def test_copy_generates_hdfs_once_and_records_the_copys_digest_on_both(monkeypatch):
    from perfkit.datasets.generate import VERIFIED_BY_COPY

    gen, folders = FakeGenerator(), {w: StoredFolder(w) for w in ("hdfs", "s3")}
    tableset, placement = place(monkeypatch, gen, folders, "copy")
    assert gen.written == ["hdfs://x/a", "hdfs://x/b"] and not gen.placed and folders["s3"].copied_from == "hdfs"
    assert list(placement.generated_s) == ["hdfs"] and list(placement.copied_s) == ["s3"]
    sums = [json.loads(f.marker_text)["checksums"] for f in folders.values()]
    assert sums[0] == sums[1] and sums[0]["a"][0] == 1 and sums[0]["a"][1] == fingerprint(
        [CopiedFile("part-0.a", 10, "md5")])
    assert tableset.verified == VERIFIED_BY_COPY and tableset.details["placed"] == "generated on hdfs, copied to s3"


def test_rows_other_than_the_generator_makes_stop_the_placement_before_any_marker_is_complete(monkeypatch):
    gen, folders = FakeGenerator({"a": 1, "b": 3}), {w: StoredFolder(w) for w in ("hdfs", "s3")}
    with pytest.raises(PerfkitError, match=r"dataset fake on hdfs: b hold other row counts than the generator makes "
                                           r"\(read back, expected: \{'b': \(3, 2\)\}\)"):
        place(monkeypatch, gen, folders, "generate")
    assert all(json.loads(f.marker_text)["complete"] is False for f in folders.values())


def test_a_dataset_folder_sits_under_the_profiles_prefix_with_one_folder_per_table():
    from perfkit.config import load_profile
    from perfkit.datasets.placing.folder import DatasetFolder

    profile = load_profile("lab")
    for where in ("hdfs", "s3"):
        folder = DatasetFolder.under_prefix(profile, where, "datasets/tpch-sf0.01/orc", IDENTITY)
        assert folder.root.storage == where and folder.root.path.endswith("/datasets/tpch-sf0.01/orc")
        assert folder.table("nation").path == f"{folder.root.path}/nation"
        assert folder.table_url("nation").endswith("/datasets/tpch-sf0.01/orc/nation")
