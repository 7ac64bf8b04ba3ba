"""A suite is a named built-in or any folder of .sql files; placeholders name the tables; bad folders are named."""
import pytest

from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.suites import Query, load_suite, open_suite


def _folder(tmp_path, files: dict[str, str]):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return str(tmp_path)


def test_a_folder_of_sql_files_is_a_suite_titled_by_first_comment(tmp_path):
    folder = _folder(tmp_path, {"b_top.sql": "-- the ten longest trips\nSELECT * FROM {table} ORDER BY trip_distance "
                                             "DESC LIMIT 10;\n", "a_count.sql": "SELECT count(*) FROM {table}"})
    queries = load_suite(folder)
    assert [(q.id, q.title) for q in queries] == [("a_count", "a_count"), ("b_top", "the ten longest trips")]
    assert queries[1].for_table("perfkit.t").endswith("FROM perfkit.t ORDER BY trip_distance DESC LIMIT 10")
    assert load_suite(folder, ["b_top"])[0].id == "b_top"


def test_a_manifest_orders_and_titles_the_queries(tmp_path):
    folder = _folder(tmp_path, {"x.sql": "SELECT 1 FROM {table}", "y.sql": "SELECT 2 FROM {table}",
                                "manifest.yml": "queries:\n  - {id: second, file: y.sql, title: Two}\n"
                                                "  - {id: first, file: x.sql}\n"})
    assert [(q.id, q.title) for q in load_suite(folder)] == [("second", "Two"), ("first", "first")]


def test_named_placeholders_take_their_tables():
    query = Query("j", "join", "SELECT * FROM {table:orders} o JOIN {table:lineitem} l ON o.k = l.k "
                               "JOIN {table:orders} o2 ON o2.k = o.k")
    assert query.table_names() == ["orders", "lineitem"]
    assert query.for_tables({"orders": "db.o", "lineitem": "db.l"}) == (
        "SELECT * FROM db.o o JOIN db.l l ON o.k = l.k JOIN db.o o2 ON o2.k = o.k")
    with pytest.raises(PerfkitError) as caught:
        query.for_tables({"orders": "db.o"})
    assert str(caught.value) == ("query j uses {table:lineitem}, which the tables map lacks (it has orders). "
                                 "Fix: add that table to `tables`, or change the placeholder")


@pytest.mark.parametrize("files, message", [
    ({}, "has no .sql file: put one query per .sql file there"),
    ({"q.sql": "SELECT 1"}, "query q (q.sql) names no table placeholder: write {table}"),
    ({"q.sql": "  ;\n"}, "q.sql is empty: write one SQL query in it"),
    ({"q.sql": b"\xff\xfe SELECT"}, "q.sql cannot be read as text"),
    ({"q.sql": "SELECT 1 FROM {table}", "manifest.yml": "queries: [{id: a, file: nope.sql}]"},
     "query file nope.sql does not exist: fix the manifest's `file`"),
    ({"q.sql": "SELECT 1 FROM {table}", "manifest.yml": "queries: 3"}, "manifest.yml needs a list `queries:`"),
    ({"q.sql": "SELECT 1 FROM {table}", "manifest.yml": "queries: [{id: a, file: q.sql}, {id: a, file: q.sql}]"},
     "query ids repeat (a)"),
])
def test_a_bad_suite_folder_is_named_with_the_fix(tmp_path, files, message):
    for name, text in files.items():
        (tmp_path / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(PerfkitError) as caught:
        load_suite(str(tmp_path))
    assert message in str(caught.value) and str(tmp_path) in str(caught.value)


def test_a_missing_folder_and_an_unknown_name_say_what_a_suite_is(tmp_path):
    with pytest.raises(PerfkitError, match=r"suite folder .*/nowhere does not exist or is not a folder"):
        load_suite(str(tmp_path / "nowhere"))
    with pytest.raises(PerfkitError,
                       match=r"unknown query suite 'tpcz': choose from (\w+, )*tpch, or give the path of a folder"):
        load_suite("tpcz")


def test_the_generated_dataset_is_one_table_so_named_placeholders_are_refused_before_any_work(tmp_path):
    folder = _folder(tmp_path, {"j.sql": "SELECT count(*) FROM {table:trips} JOIN {table:zones} USING (zone)"})
    with pytest.raises(PerfkitError,
                       match=r"its queries name tables \(\{table:NAME\}\): give `tables`, each storage's locations"):
        QueryComparison(load_profile("lab"), engines=["spark"], suite=folder)
    own = _folder(tmp_path / "own" if (tmp_path / "own").mkdir() is None else tmp_path,
                  {"q.sql": "SELECT cab_type, max(total_amount) FROM {table} GROUP BY cab_type"})
    assert [q.id for q in QueryComparison(load_profile("lab"), engines=["spark"], suite=own).suite_queries] == ["q"]


def test_an_engines_own_text_sits_beside_the_common_one_and_is_not_a_query_of_its_own(tmp_path):
    folder = _folder(tmp_path, {"d.sql": "SELECT datediff(d, '1999-01-01') FROM {table}",
                                "d.trino.sql": "SELECT date_diff('day', DATE '1999-01-01', d) FROM {table}"})
    [query] = load_suite(folder)
    assert query.for_table("t", "trino").startswith("SELECT date_diff") and query.for_table("t", "hive").startswith(
        "SELECT datediff") and query.for_table("t").startswith("SELECT datediff")


def test_a_write_workload_needs_its_target_described(tmp_path):
    folder = _folder(tmp_path, {"w.sql": "INSERT INTO {table:out} SELECT * FROM {table}",
                                "manifest.yml": "queries:\n  - {id: w, file: w.sql, writes: out}\n"})
    with pytest.raises(PerfkitError, match=r"query w writes 'out', which the manifest's `targets:` does not describe"):
        open_suite(folder)


WRITE = {"w.sql": "INSERT INTO {table:out} SELECT cab_type, count(*) FROM {table} GROUP BY cab_type"}


def _write_suite(tmp_path, target: str):
    return _folder(tmp_path, {**WRITE, "manifest.yml": "queries:\n  - {id: w, file: w.sql, writes: out}\n"
                                                       f"targets:\n  out: {target}\n"})


@pytest.mark.parametrize("target", ["{columns: [[cab_type, string], [n, bigint]]}", "{like: table}"])
def test_a_write_workload_runs_on_the_generated_taxi_data_without_a_dataset_line(tmp_path, target):
    """Its target is made by the run, not read: only {table} is read, and that is the taxi table."""
    cmp = QueryComparison(load_profile("lab"), engines=["spark"], suite=_write_suite(tmp_path, target))
    assert cmp.source == "taxi" and [q.writes for q in cmp.suite_spec.writes] == ["out"]


def test_a_write_target_like_a_table_the_data_lacks_is_named_before_any_work(tmp_path):
    with pytest.raises(PerfkitError, match=r"write target 'out' is like 'trips', which the data has not \(it has "
                                           r"table; the bare \{table\} is 'table'\)\. Fix: name one of those"):
        QueryComparison(load_profile("lab"), engines=["spark"], suite=_write_suite(tmp_path, "{like: trips}"))


@pytest.mark.parametrize("target", ["{columns: [cab_type]}", "trips", "{}"])
def test_a_write_target_neither_like_nor_columns_is_named_with_both_forms(tmp_path, target):
    with pytest.raises(PerfkitError, match=r"write target 'out' is .*: describe it as \{like: TABLE\} .* or as "
                                           r"\{columns: \[\[NAME, TYPE\], \.\.\.\]\}"):
        open_suite(_write_suite(tmp_path, target))
