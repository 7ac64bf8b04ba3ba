"""The shared parameter checks, and the read comparison's use of them: one line naming the parameter and the fix."""
import re
from datetime import date, datetime

import numpy as np
import pytest

from perfkit import validate as v
from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.presenting import report_of


@pytest.mark.parametrize("value, message", [
    ("1e5", "rows='1e5': this is text, not a number: write rows=100000"),  # YAML reads 1e5 (no dot) as text
    ("many", "rows='many': this is text, not a number: give a whole number >= 1"),
    ("nan", "rows='nan': this is text, not a number: give a whole number >= 1"),
    (8.5, "rows=8.5: give a whole number >= 1"),
    (True, "rows=True: give a whole number >= 1"),
    (float("nan"), "rows=nan: give a whole number >= 1"),
    (float("inf"), "rows=inf: give a whole number >= 1"),
    (0, "rows=0: give a whole number >= 1"),
    (None, "rows=None: give a whole number >= 1"),
])
def test_whole_refuses_what_is_not_a_count(value, message):
    with pytest.raises(PerfkitError, match=f"^{re.escape(message)}$"):
        v.whole("rows", value)


def test_whole_takes_integral_floats_and_numpy_ints_as_int():
    assert v.whole("rows", 1e5) == 100000 and type(v.whole("rows", 1e5)) is int
    assert v.whole("rows", np.int64(3)) == 3 and v.whole("warmup", 0, minimum=0) == 0
    with pytest.raises(PerfkitError, match=r"^runs=9: give a whole number >= 1 and <= 8 \(why\)$"):
        v.whole("runs", 9, maximum=8, why="why")


def test_number():
    assert v.number("mean_mb", 8, above=0) == 8.0
    assert v.number("query_timeout_s", None, above=0, none_means="no limit") is None
    with pytest.raises(PerfkitError, match=r"^query_timeout_s=0: give a number of seconds > 0, or None for no limit$"):
        v.number("query_timeout_s", 0, above=0, unit="seconds", none_means="no limit")
    for bad in (float("nan"), float("inf"), -1, None, False):
        with pytest.raises(PerfkitError, match=r"^price=.*: give a number >= 0$"):
            v.number("price", bad, minimum=0)
    with pytest.raises(PerfkitError, match=r"^price='0.045': this is text, not a number: write price=0.045$"):
        v.number("price", "0.045", minimum=0)


@pytest.mark.parametrize("value, message", [
    ("spark", "engines='spark': one text, not a list: write engines=[spark]"),
    ("spark,hive", "engines='spark,hive': one text, not a list: write engines=[spark, hive]"),
    ([], "engines=[]: give at least one, e.g. engines=[spark, hive]"),
    (None, "engines=None: give a list, e.g. engines=[spark, hive]"),
    (["spark", "spark"], "engines=['spark', 'spark']: spark given more than once: give each once"),
    (["spork"], "engines=['spork']: unknown spork: choose from spark, hive"),
    (["spark", 1], "engines[1]=1: give a name (text)"),
])
def test_names_refuse_a_bare_string_and_anything_but_known_names(value, message):
    with pytest.raises(PerfkitError, match=f"^{re.escape(message)}$"):
        v.names("engines", value, choices=["spark", "hive"])


def test_names_and_wholes_return_lists():
    assert v.names("queries", ("q1", "q2")) == ["q1", "q2"] and v.names("volume_ids", [], empty_ok=True) == []
    assert v.wholes("concurrency", [1, 4.0]) == [1, 4]
    for value, message in [(4, r"concurrency=4: one number, not a list: write concurrency=\[4\]"),
                           ("1,4", r"concurrency='1,4': one text, not a list: write concurrency=\[1, 4\]"),
                           ([], r"concurrency=\[\]: give at least one"),
                           ([1, 0], r"concurrency\[1\]=0: give a whole number >= 1")]:
        with pytest.raises(PerfkitError, match="^" + message):
            v.wholes("concurrency", value)


def test_flag_text_and_choice():
    assert v.flag("cold_cache", np.bool_(True)) is True
    with pytest.raises(PerfkitError, match=r"^cold_cache='false': give true or false$"):
        v.flag("cold_cache", "false")
    assert v.text("source_prefix", None, none_ok=True) is None
    with pytest.raises(PerfkitError, match=r"^region='': give a non-empty text$"):
        v.text("region", "", empty_ok=False)
    with pytest.raises(PerfkitError, match=r"^order='x': use one of given, rotate$"):
        v.choice("order", "x", ("given", "rotate"))


def test_iso_time_takes_text_and_what_yaml_makes_of_it():
    utc = "2026-11-20T14:00:00+00:00"
    assert v.iso_time("t", "2026-11-20T14:00:00Z") == v.iso_time("t", datetime(2026, 11, 20, 14)) == utc
    assert v.iso_time("t", date(2026, 11, 20)) == "2026-11-20T00:00:00+00:00" and v.iso_time("t", "") == ""
    for bad in ("yesterday", 5):
        with pytest.raises(PerfkitError, match=r"^t=.*: give an ISO 8601 time, e.g. t=2026-11-20T14:00:00\+00:00$"):
            v.iso_time("t", bad)


def test_free_space_is_checked_where_the_folder_will_be(tmp_path):
    v.check_free_space("x", 1, tmp_path / "not" / "yet", "fix")
    with pytest.raises(PerfkitError, match=r"^x needs 1,000,000,000,000.0 GB in .*not/yet, which has .* GB free: fix$"):
        v.check_free_space("x", 10**21, tmp_path / "not" / "yet", "fix")


# -- the read comparison -------------------------------------------------------------------------------------------
def _reads(**kwargs):
    from perfkit.experiments.nfs_vs_hdfs_reads import ReadComparison

    return ReadComparison(load_profile("lab"), **kwargs)


@pytest.mark.parametrize("kwargs, message", [
    ({"methods": []}, r"methods=\[\]: give at least one"),
    ({"protocols": []}, r"protocols=\[\]: give at least one"),
    ({"protocols": "large-file"}, r"protocols='large-file': one text, not a list: write protocols=\[large-file\]"),
    ({"methods": "posix"}, r"methods='posix': one text, not a list: write methods=\[posix\]"),
    ({"protocols": ["big"]}, r"protocols=\['big'\]: unknown big: choose from random-files, large-file"),
    ({"jobs": 8.5}, r"jobs=8.5: give a whole number >= 1"),
    ({"replicas": 0}, r"replicas=0: give a whole number >= 1"),
    ({"mean_mb": float("nan")}, r"mean_mb=nan: give a number of MB > 0"),
    ({"cold_cache": "no"}, r"cold_cache='no': give true or false"),
])
def test_reads_refuse_bad_parameters_before_anything_runs(kwargs, message):
    with pytest.raises(PerfkitError, match="^" + message):
        _reads(**kwargs)


def test_reads_tables_before_run_say_so():
    cmp = _reads(jobs=2.0)
    assert cmp.jobs == 2
    with pytest.raises(PerfkitError, match="^nfs_vs_hdfs_reads: nothing has run yet: call run\\(\\) first$"):
        report_of(cmp)  # its tables (table, jobs_frame) are the report's (perfkit.presenting.reads_report)


def test_reads_refuse_more_replicas_than_live_datanodes(monkeypatch):
    from perfkit.storages import hdfs as hdfs_storage

    monkeypatch.setattr(hdfs_storage, "check_hdfs", lambda profile: None)
    cmp = _reads(replicas=3)
    monkeypatch.setattr(cmp, "datanodes", lambda: 1)
    with pytest.raises(PerfkitError, match=r"^replicas=3 but HDFS has 1 live DataNode: start 3 with "
                                           r"PERFKIT_LAB_DATANODES=3 perfkit lab up, or give replicas=1$"):
        cmp.prepare(progress=False)
