import json
import os
import re

import pytest

from perfkit.keep import ResultsNotSaved
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
    # nor could it be kept elsewhere: os.replace fails there too
    with pytest.raises(ResultsNotSaved, match="disk full"):
        rs.save()
    assert rs.path.read_bytes() == before
    assert [p.name for p in rs.path.parent.iterdir()] == [rs.path.name]


def _good_run(folder):
    rs = ResultSet("exp", folder=folder)
    _add(rs)
    _add(rs, storage="s3", wall_s=0.7)
    rs.save()
    return rs


def test_a_truncated_result_file_is_left_out_with_a_warning_and_the_others_load(tmp_path):
    good = _good_run(tmp_path)
    killed = ResultSet("exp", folder=tmp_path)
    _add(killed)
    _add(killed, wall_s=0.9)
    killed.save()
    text = killed.path.read_text()
    killed.path.write_text(text[: len(text) - 40])  # a writer killed in the middle of its last line
    with pytest.warns(UserWarning, match=rf"result file {killed.path} line 2 is not JSON: left out") as caught:
        frame = load_results("exp", folder=tmp_path)
    assert len(caught) == 1
    assert set(frame["run_id"]) == {good.run_id} and len(frame) == 2


@pytest.mark.parametrize("text, problem", [
    ('{"name": "x", "value": 1}\n', "line 1 is not a perfkit record (no run_id, experiment, subject"),
    ("[1, 2]\n", "line 1 is not a perfkit record (no run_id"),
    ('{"run_id": "r"}\n', "line 1 is not a perfkit record (no experiment, subject"),
])
def test_a_file_of_foreign_rows_is_left_out_with_a_warning(tmp_path, text, problem):
    good = _good_run(tmp_path)
    (tmp_path / "exp" / "foreign.jsonl").write_text(text)
    with pytest.warns(UserWarning, match=re.escape(f"result file {tmp_path / 'exp' / 'foreign.jsonl'} {problem}")):
        frame = load_results("exp", folder=tmp_path)
    assert set(frame["run_id"]) == {good.run_id}


def test_a_row_with_a_bad_time_or_an_unreadable_file_is_left_out(tmp_path):
    good = _good_run(tmp_path)
    row = json.loads(good.path.read_text().splitlines()[0])
    (tmp_path / "exp" / "late.jsonl").write_text(json.dumps({**row, "run_id": "late", "started_at": "yesterday"}))
    (tmp_path / "exp" / "binary.jsonl").write_bytes(b"\xff\xfe\x00")
    with pytest.warns(UserWarning) as caught:
        frame = load_results(folder=tmp_path)
    messages = sorted(str(w.message) for w in caught)
    assert "binary.jsonl cannot be read" in messages[0]
    assert "late.jsonl line 1 has no valid started_at ('yesterday')" in messages[1]
    assert set(frame["run_id"]) == {good.run_id}


@pytest.mark.parametrize("field, value, problem", [
    ("wall_s", "fast", 'field wall_s is "fast", not a number or null'),
    ("iteration", "x", 'field iteration is "x", not a whole number'),
    ("iteration", True, "field iteration is true, not a whole number"),
    ("ok", "no", 'field ok is "no", not true or false'),
    ("case", 5, "field case is 5, not text"),
    ("error", 3, "field error is 3, not text or null"),
    ("params", [1], "field params is [1], not a mapping {...}"),
    ("phase", "timed", "field phase is 'timed', not one of warmup, measured"),
])
def test_a_record_with_a_value_of_the_wrong_type_is_named_with_its_field(tmp_path, field, value, problem):
    """The right keys with wrong values used to pass, then fail as a traceback from pandas or the statistics."""
    from perfkit.errors import PerfkitError
    from perfkit.results import read_result_file

    good = _good_run(tmp_path)
    rows = [json.loads(line) for line in good.path.read_text().splitlines()]
    rows[1][field] = value
    bad = tmp_path / "exp" / "bad.jsonl"
    bad.write_text("".join(json.dumps(row) + "\n" for row in rows))
    with pytest.raises(PerfkitError) as caught:
        read_result_file(bad)
    assert str(caught.value) == (f"result file {bad}: line 2, {problem}: correct that value, or move the file "
                                 "aside and give another run")
    with pytest.warns(UserWarning, match=re.escape(f"result file {bad} line 2, {problem}: left out")):
        frame = load_results("exp", folder=tmp_path)
    assert set(frame["run_id"]) == {good.run_id}


def test_blank_lines_are_not_errors_and_no_files_is_an_empty_frame(tmp_path):
    assert load_results("exp", folder=tmp_path).empty
    good = _good_run(tmp_path)
    good.path.write_text(good.path.read_text() + "\n\n")
    assert len(load_results("exp", folder=tmp_path)) == 2


def test_a_result_file_has_the_users_umask_like_any_file_they_make(tmp_path):
    old = os.umask(0o027)
    try:
        path = ResultSet("exp", folder=tmp_path).save()
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o640  # was 0600 always (mkstemp's), unreadable to the user's group
