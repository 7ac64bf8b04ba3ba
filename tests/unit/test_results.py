import json
import os

import pytest

from perfkit.errors import PerfkitError
from perfkit.results import RECORD_FIELDS, Record, ResultSet, load_results, now


def _add(rs, **over):
    values = dict(subject="spark", storage="hdfs", case="q1", phase="measured", iteration=0,
                  started_at=now(), wall_s=0.5)
    return rs.add(**{**values, **over})


def test_record_schema_says_who_what_which_attempt_and_how_it_went():
    for name in ("experiment", "subject", "storage", "case", "phase", "iteration", "wall_s", "bytes",
                 "rows", "mb_per_s", "ok", "error", "params", "config"):
        assert name in RECORD_FIELDS


def test_record_rejects_unknown_phase_and_success_without_time():
    with pytest.raises(ValueError, match="phase"):
        Record("r", "e", "s", "hdfs", "q1", "cooldown", 0, now(), 1.0)
    with pytest.raises(ValueError, match="wall_s"):
        Record("r", "e", "s", "hdfs", "q1", "measured", 0, now(), None)


def test_mb_per_s_is_derived_from_bytes_and_time():
    rec = Record("r", "e", "s", "hdfs", "c", "measured", 0, now(), 2.0, bytes=50_000_000)
    assert rec.mb_per_s == pytest.approx(25.0)


def test_save_and_load_across_runs(tmp_path):
    a = ResultSet("exp", {"profile": {"name": "lab"}}, folder=tmp_path)
    _add(a)
    _add(a, storage="s3", wall_s=0.7)
    a.save()
    b = ResultSet("exp", folder=tmp_path)
    _add(b, ok=False, wall_s=None, error="boom")
    b.save()
    frame = load_results("exp", folder=tmp_path)
    assert len(frame) == 3 and set(frame["run_id"]) == {a.run_id, b.run_id}
    assert frame.loc[frame["storage"] == "s3", "wall_s"].item() == 0.7
    assert frame.loc[~frame["ok"], "error"].item() == "boom"
    assert frame.loc[frame["run_id"] == a.run_id, "config"].iloc[0]["profile"]["name"] == "lab"
    assert [json.loads(line)["wall_s"] for line in a.path.read_text().splitlines()] == [0.5, 0.7]


def test_a_failed_save_leaves_the_previous_file_whole_and_no_temp_file(tmp_path, monkeypatch):
    rs = ResultSet("exp", folder=tmp_path)
    _add(rs)
    rs.save()
    before = rs.path.read_bytes()
    _add(rs, wall_s=0.9)

    def crash(*args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        rs.save()
    assert rs.path.read_bytes() == before
    assert [p.name for p in rs.path.parent.iterdir()] == [rs.path.name]


def test_a_corrupt_result_file_is_named(tmp_path):
    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(PerfkitError, match="bad.jsonl line 1"):
        load_results("exp", folder=tmp_path)
