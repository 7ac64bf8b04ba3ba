"""Issue 21, item 6: a Hive-style partitioned folder is a partitioned table. Its partitions found from a listing, its
keys typed, mixed layouts refused naming the folder, the DDL each engine runs, and the row count checked."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as ds
import pytest

from perfkit import storages
from perfkit.config import load_profile
from perfkit.partitions import (Partition, Partitioning, add_partitions_ddl, check_rows, discover, key_type,
                                         rows_problem)
from perfkit.datasets.user_tables import user_tables
from perfkit.engines import hive_ddl, table_definition
from perfkit.engines.hive import HiveEngine
from perfkit.engines.spark import SparkEngine, spark_ddl
from perfkit.engines.trino import TrinoEngine, trino_ddl
from perfkit.errors import PerfkitError
from perfkit.storages import Storage
from perfkit.storages.base import visible, visible_tree

LABEL, LOC = "tables.hdfs", "hdfs:///w/events"


def test_key_value_folders_are_partitions_with_typed_keys():
    layout = discover({"year=2024/month=1/part-0.parquet": 10, "year=2024/month=2/part-0.parquet": 11,
                       "year=2025/month=12/part-0.parquet": 12, "year=2025/month=12/part-1.parquet": 13},
                      LABEL, LOC)
    assert layout.files == {"year=2024/month=1/part-0.parquet": 10, "year=2024/month=2/part-0.parquet": 11,
                            "year=2025/month=12/part-0.parquet": 12, "year=2025/month=12/part-1.parquet": 13}
    part = layout.partitioning
    assert part.columns == (("year", "int"), ("month", "int")) and part.files == 4
    assert part.partitions == (Partition("year=2024/month=1", ("2024", "1")),
                               Partition("year=2024/month=2", ("2024", "2")),
                               Partition("year=2025/month=12", ("2025", "12")))
    assert part.describe() == "partitioned by year int, month int: 3 partitions"


def test_a_folder_of_files_is_not_partitioned_and_other_folders_beside_its_files_are_ignored_as_before():
    layout = discover({"part-0.orc": 5, "part-1.orc": 6, "backup/old.orc": 7}, LABEL, LOC)
    assert layout.files == {"part-0.orc": 5, "part-1.orc": 6} and layout.partitioning is None
    assert layout.other_folders == ("backup/",)
    assert discover({"data/x.orc": 1}, LABEL, LOC).files == {}


@pytest.mark.parametrize("values, expected", [
    (["1", "2", "30"], "int"),
    (["01", "02", "10"], "int"),  # zero-padded months: still numbers, none the same
    (["1", "01"], "string"),  # two folders would be one partition as numbers
    (["-5", "7"], "int"),
    (["2147483647", "2147483648"], "bigint"),
    (["2024-01-01", "2024-01-02"], "string"),
    (["us", "de"], "string"),
    (["1", None], "string"),  # a partition of nulls: Hive's name of it is a string every engine reads as NULL
])
def test_a_key_is_int_when_every_value_is_a_whole_number_else_string(values, expected):
    assert key_type(values) == expected


def test_values_are_unescaped_as_hive_escapes_them_and_the_default_partition_is_null():
    layout = discover({"ts=2024-01-01 00%3A00%3A00/a.parquet": 1, "ts=__HIVE_DEFAULT_PARTITION__/a.parquet": 1},
                      LABEL, LOC)
    assert [p.values for p in layout.partitioning.partitions] == [("2024-01-01 00:00:00",), (None,)]
    assert layout.partitioning.columns == (("ts", "string"),)
    upper = discover({"Year=2024/a.parquet": 1, "Year=2025/a.parquet": 1}, LABEL, LOC).partitioning
    assert upper.columns == (("year", "int"),) and upper.partitions[0].path == "Year=2024"  # the folder as listed


def test_hidden_files_and_folders_are_left_out_at_every_level():
    assert visible_tree({"_SUCCESS": 0, "year=1/_SUCCESS": 0, "year=1/.part.crc": 1, "_temporary/0/x.parquet": 5,
                         "year=1/.hive-staging_1/y.parquet": 5, "year=1/part-0.parquet": 9}) == {
        "year=1/part-0.parquet": 9}
    assert visible({"_SUCCESS": 0, "a.orc": 1}) == {"a.orc": 1}


@pytest.mark.parametrize("listing, message", [
    ({"part-0.parquet": 1, "year=2024/part-0.parquet": 1},
     r"^tables.hdfs: hdfs:///w/events holds data files \(part-0.parquet\) beside partition folders \(year=2024/\): "
     r"an engine reads either the files or the partitions, not both. Fix: move those files into a key=value "
     r"partition folder"),
    ({"year=2024/part-0.parquet": 1, "year=2024/month=1/part-0.parquet": 1},
     r"^tables.hdfs: hdfs:///w/events/year=2024 holds data files \(part-0.parquet\) beside partition folders "
     r"\(year=2024/month=1/\)"),
    ({"year=2024/month=1/a.parquet": 1, "month=2/year=2024/a.parquet": 1},
     r"^tables.hdfs: the partition folders of hdfs:///w/events are not nested by the same keys in the same order "
     r"\(month=2/year=2024/ by month, year; year=2024/month=1/ by year, month\). Fix: give a location whose "
     r"partition folders all follow one order of keys"),
    ({"year=2024/a.parquet": 1, "year=2025/month=1/a.parquet": 1},
     r"not nested by the same keys in the same order \(year=2024/ by year; year=2025/month=1/ by year, month\)"),
    ({"year=2024/data/a.parquet": 1},
     r"^tables.hdfs: hdfs:///w/events/year=2024/data is inside a partition folder but 'data' is not key=value. Fix:"),
    ({"year=2024/Year=2025/a.parquet": 1}, r"repeats a partition key \(year, year\)"),
    ({"year=2024/a.parquet": 1, "misc/b.parquet": 1},
     r"^tables.hdfs: hdfs:///w/events mixes partition folders \(year=2024/\) with folders that are not key=value "
     r"\(misc/\). Fix: move those folders out"),
])
def test_a_mixed_layout_is_refused_naming_the_folder_and_the_fix(listing, message):
    with pytest.raises(PerfkitError, match=message):
        discover(listing, LABEL, LOC)


def test_many_files_beside_partitions_are_named_by_a_few():
    listing = {f"f{i}.parquet": 1 for i in range(5)} | {"k=1/a.parquet": 1}
    with pytest.raises(PerfkitError, match=r"\(f0.parquet, f1.parquet, f2.parquet and 2 more\)"):
        discover(listing, LABEL, LOC)


PARTS = Partitioning((("year", "int"), ("region", "string")),
                     (Partition("year=2024/region=eu", ("2024", "eu")),
                      Partition("year=2024/region=o'k", ("2024", "o'k")),
                      Partition("year=2025/region=__HIVE_DEFAULT_PARTITION__", ("2025", None))), files=3, rows=300)


PROPS = {"perfkit.created": "true", "perfkit.definition": "0123456789abcdef"}  # as Engine.register_table gives them
MARKED = "TBLPROPERTIES ('perfkit.created'='true', 'perfkit.definition'='0123456789abcdef')"


def test_hive_and_the_spark_thrift_server_create_a_partitioned_table_then_add_each_partition_at_its_folder():
    create = hive_ddl("ev_hdfs", "hdfs://nn:9000/w/ev", "parquet", [("id", "bigint"), ("name", "string")], PARTS,
                      properties=PROPS)
    assert create == ("CREATE EXTERNAL TABLE perfkit.ev_hdfs (`id` bigint, `name` string) PARTITIONED BY "
                      "(`year` int, `region` string) STORED AS PARQUET LOCATION 'hdfs://nn:9000/w/ev' " + MARKED)
    engine = HiveEngine(load_profile("lab"))
    assert engine.create_table_sql("ev_hdfs", "hdfs://nn:9000/w/ev", "parquet", [("id", "bigint"), ("name", "string")],
                                   PROPS, PARTS) == create
    named = ("ALTER TABLE perfkit.ev_hdfs ADD IF NOT EXISTS "
             "PARTITION (`year`=2024, `region`='eu') LOCATION 'hdfs://nn:9000/w/ev/year=2024/region=eu' "
             "PARTITION (`year`=2024, `region`='o\\'k') LOCATION 'hdfs://nn:9000/w/ev/year=2024/region=o\\'k'")
    assert add_partitions_ddl("perfkit.ev_hdfs", "hdfs://nn:9000/w/ev/", PARTS) == [  # the Spark Thrift Server's
        named + " PARTITION (`year`=2025, `region`='__HIVE_DEFAULT_PARTITION__') "
                "LOCATION 'hdfs://nn:9000/w/ev/year=2025/region=__HIVE_DEFAULT_PARTITION__'"]
    # Hive refuses to name its partition of nulls in DDL: MSCK REPAIR TABLE finds it in its folder
    assert engine.add_partitions_sql("ev_hdfs", "hdfs://nn:9000/w/ev/", PARTS) == [
        named, "MSCK REPAIR TABLE perfkit.ev_hdfs"]
    batches = add_partitions_ddl("perfkit.t", "s3a://b/t", PARTS, batch=2)
    assert len(batches) == 2 and batches[1].count("PARTITION (") == 1


def test_spark_sql_makes_a_partitioned_data_source_table_with_the_same_partitions():
    engine = SparkEngine(load_profile("lab"))
    assert engine.create_table_sql("ev_s3", "s3a://b/w/ev", "orc", [("id", "bigint")], PROPS, PARTS) == (
        "CREATE TABLE perfkit.ev_s3 (`id` bigint, `year` int, `region` string) USING orc "
        "PARTITIONED BY (`year`, `region`) LOCATION 's3a://b/w/ev' " + MARKED)
    assert engine.add_partitions_sql("ev_s3", "s3a://b/w/ev", PARTS) == add_partitions_ddl("perfkit.ev_s3",
                                                                                           "s3a://b/w/ev", PARTS)
    assert engine.create_table_sql("t", "s3a://b/t", "orc", [("id", "bigint")], PROPS) == (
        "CREATE TABLE perfkit.t (`id` bigint) USING orc LOCATION 's3a://b/t' " + MARKED)
    assert spark_ddl("t", "s3a://b/t", "orc", [("id", "bigint")]).endswith("TBLPROPERTIES ('perfkit.created'='true')")


def test_trino_creates_the_table_partition_columns_last_and_syncs_its_partitions_from_the_folders():
    engine = TrinoEngine(load_profile("lab"))
    assert engine.create_table_sql("ev_s3", "s3a://b/w/ev", "parquet", [("id", "bigint"), ("name", "string")], PROPS,
                                   PARTS) == (
        "CREATE TABLE perfkit.ev_s3 (\"id\" bigint, \"name\" varchar, \"year\" integer, \"region\" varchar) WITH "
        "(format = 'PARQUET', external_location = 's3a://b/w/ev', partitioned_by = ARRAY['year', 'region'], "
        "extra_properties = MAP(ARRAY['perfkit.created', 'perfkit.definition'], ARRAY['true', '0123456789abcdef']))")
    assert engine.add_partitions_sql("ev_s3", "s3a://b/w/ev", PARTS) == [
        "CALL hive.system.sync_partition_metadata(schema_name => 'perfkit', table_name => 'ev_s3', mode => 'FULL', "
        "case_sensitive => false)"]
    assert trino_ddl("t", "s3a://b/t", "orc", [("id", "bigint")]) == (
        "CREATE TABLE perfkit.t (\"id\" bigint) WITH (format = 'ORC', external_location = 's3a://b/t', "
        "extra_properties = MAP(ARRAY['perfkit.created'], ARRAY['true']))")


class _Recording:
    """An engine's execute() recorded: perfkit's database is empty, count(*) answers `rows`."""

    def __init__(self, rows=0):
        self.statements, self.rows = [], rows

    def execute(self, sql, timeout_s=None):
        self.statements.append(sql)
        return [(self.rows,)] if sql.startswith("SELECT count(*)") else []


@pytest.mark.parametrize("engine_class", [HiveEngine, TrinoEngine])
def test_each_engine_runs_its_ddl_for_a_partitioned_table(engine_class, monkeypatch):
    engine = engine_class(load_profile("lab"))
    recorded = _Recording()
    monkeypatch.setattr(engine, "execute", recorded.execute)
    assert engine.register_table("ev_s3", "s3a://b/w/ev", "parquet", [("id", "bigint")], PARTS) is True
    created = [s for s in recorded.statements if s.startswith("CREATE TABLE") or s.startswith("CREATE EXTERNAL")]
    assert len(created) == 1 and "year" in created[0]
    digest = table_definition(engine.name, "s3a://b/w/ev", "parquet", [("id", "bigint")], PARTS)
    assert "'perfkit.definition'" in created[0] and f"'{digest}'" in created[0]
    last = recorded.statements[-1]
    assert last == "MSCK REPAIR TABLE perfkit.ev_s3" if engine_class is HiveEngine else \
        last.startswith("CALL hive.system.sync_partition_metadata(")


def test_an_engine_that_counts_other_rows_than_the_footers_hold_stops_the_run_with_the_fix():
    engine = _Recording(rows=200)
    engine.name = "trino"
    with pytest.raises(PerfkitError, match=(
            r"^table own on s3 \(s3a://b/w/ev, partitioned by year int, region string: 3 partitions\): trino counts "
            r"200 rows but the 3 files' footers hold 300: it does not read every partition. Fix: check that every "
            r"partition folder is named key=value with the key in lower case")):
        check_rows(engine, "perfkit.ev_s3", "table own on s3", "s3a://b/w/ev", PARTS, 30)
    assert engine.statements == ["SELECT count(*) FROM perfkit.ev_s3"]
    engine.rows = 300
    assert check_rows(engine, "perfkit.ev_s3", "table own on s3", "s3a://b/w/ev", PARTS) == 300
    assert rows_problem("t", "l", "hive", 300, PARTS) is None


# -- a partitioned folder read where it is, through a storage (a local folder here; HDFS and S3 on the lab) --------

class _Folder(Storage):
    name = "test-folder"
    schemes = ("file",)

    def url(self, loc):
        return Path(loc.path).as_uri()

    def list_files(self, loc):
        path = Path(loc.path)
        return visible({p.name: p.stat().st_size for p in path.iterdir() if p.is_file()}) if path.is_dir() else None

    def list_tree(self, loc):
        path = Path(loc.path)
        return visible_tree({p.relative_to(path).as_posix(): p.stat().st_size for p in path.rglob("*")
                             if p.is_file()}) if path.is_dir() else None

    def read_range(self, loc, name, offset, length):
        with open(Path(loc.path, name), "rb") as f:
            f.seek(offset)
            return f.read(length)


@pytest.fixture
def folder_storage(monkeypatch):
    monkeypatch.setitem(storages.REGISTRY, "test-folder", _Folder)
    return load_profile("emr", bucket="b")


def _events(rows: int = 600) -> pa.Table:
    return pa.table({"id": pa.array(range(rows), pa.int64()), "amount": pa.array([i * 0.5 for i in range(rows)]),
                     "year": pa.array([2024 + i % 2 for i in range(rows)], pa.int32()),
                     "region": pa.array([["eu", "us", "apac"][i % 3] for i in range(rows)])})


def test_a_partitioned_parquet_folder_is_a_partitioned_table_with_the_rows_of_its_footers(folder_storage, tmp_path,
                                                                                           capsys):
    ds.write_dataset(_events(), tmp_path / "ev", format="parquet", partitioning=["year", "region"],
                     partitioning_flavor="hive", max_rows_per_file=40, max_rows_per_group=40)
    (tmp_path / "ev" / "_SUCCESS").write_bytes(b"")
    tables = user_tables(folder_storage, {"test-folder": (tmp_path / "ev").as_uri()}, ["test-folder"])
    table = tables.tables["test-folder"]["table"]
    assert table.columns == [("id", "bigint"), ("amount", "double")]
    assert table.partitioning.columns == (("year", "int"), ("region", "string"))
    assert [p.path for p in table.partitioning.partitions] == [
        f"year={y}/region={r}" for y in (2024, 2025) for r in ("apac", "eu", "us")]
    assert table.partitioning.rows == 600 and table.files == table.partitioning.files > 6
    assert table.all_columns == [("id", "bigint"), ("amount", "double"), ("year", "int"), ("region", "string")]
    assert tables.details["partitions"] == {"test-folder": {"table": {
        "partitioned_by": ["year", "region"], "partitions": 6, "rows": 600}}}
    assert (f"perfkit: tables.test-folder: test-folder://{tmp_path}/ev is partitioned by year int, region string: "
            f"6 partitions, {table.files} files, 600 rows in their footers") in capsys.readouterr().err


def test_an_orc_folder_partitioned_by_one_key_is_read_as_orc(folder_storage, tmp_path):
    import pyarrow.compute as pc
    import pyarrow.orc as orc

    events = _events(90).drop_columns(["region"])
    for year in (2024, 2025):  # pyarrow's dataset writer does not write ORC: one file per partition folder
        folder = tmp_path / "ev" / f"year={year}"
        folder.mkdir(parents=True)
        orc.write_table(events.filter(pc.equal(events["year"], year)).drop_columns(["year"]), folder / "part-0.orc")
    table = user_tables(folder_storage, {"test-folder": (tmp_path / "ev").as_uri()}, ["test-folder"]).tables[
        "test-folder"]["table"]
    assert table.file_format == "orc" and table.partitioning.keys == ["year"] and table.partitioning.rows == 90


def test_a_partition_key_that_is_also_a_column_of_the_files_is_refused(folder_storage, tmp_path):
    folder = tmp_path / "ev" / "id=1"
    folder.mkdir(parents=True)
    ds.write_dataset(_events(10), folder, format="parquet")
    with pytest.raises(PerfkitError, match=r"is partitioned by id, which the files also hold as a column"):
        user_tables(folder_storage, {"test-folder": (tmp_path / "ev").as_uri()}, ["test-folder"])


def test_a_folder_of_other_folders_is_named_as_such_and_an_empty_one_as_empty(folder_storage, tmp_path):
    (tmp_path / "ev" / "2024").mkdir(parents=True)
    (tmp_path / "ev" / "2024" / "a.parquet").write_bytes(b"x")
    with pytest.raises(PerfkitError, match=r"holds no data file directly, and its folders \(2024/\) are not "
                                           r"key=value partition folders. Fix:"):
        user_tables(folder_storage, {"test-folder": (tmp_path / "ev").as_uri()}, ["test-folder"])
    (tmp_path / "empty" / "_temporary").mkdir(parents=True)
    with pytest.raises(PerfkitError, match=r"is empty \(no data file in it or in key=value partition folders"):
        user_tables(folder_storage, {"test-folder": (tmp_path / "empty").as_uri()}, ["test-folder"])


def test_a_table_partitioned_on_one_storage_and_not_on_the_other_is_refused(folder_storage, tmp_path, monkeypatch):
    monkeypatch.setitem(storages.REGISTRY, "test-other", type("_Other", (_Folder,), {"name": "test-other",
                                                                                      "schemes": ("other",)}))
    ds.write_dataset(_events(30), tmp_path / "p", format="parquet", partitioning=["year"], partitioning_flavor="hive")
    ds.write_dataset(_events(30).drop_columns(["year"]), tmp_path / "flat", format="parquet")
    with pytest.raises(PerfkitError, match=r"table table: the files on test-folder and on test-other have different "
                                           r"columns"):
        user_tables(folder_storage, {"test-folder": (tmp_path / "p").as_uri(),
                                     "test-other": f"other://{tmp_path}/flat"}, ["test-folder", "test-other"])


def test_the_partitions_do_not_depend_on_the_order_a_storage_lists_them_in():
    listing = {f"k={i}/a.parquet": i for i in range(20)}
    assert discover(listing, LABEL, LOC) == discover(dict(reversed(listing.items())), LABEL, LOC)


def test_a_query_comparison_registers_a_partitioned_table_with_its_partitions_and_checks_its_rows_per_engine():
    from perfkit.datasets.tables import Table, TableSet
    from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison

    class Engine(_Recording):
        name = "hive"

        def register_shared_table(self, base, *args):
            self.statements.append((base, *args))
            return f"{base}_0123abcd"  # the digest of its definition, partitions included

    table = {"table": Table("s3a://b/w/ev", "parquet", [("id", "bigint")], 3, 300, "", PARTS)}
    tableset = TableSet("own", {"hdfs": table, "s3": table})
    cmp = QueryComparison(load_profile("lab"), engines=["hive"])
    engine = Engine(rows=300)
    assert cmp.register_tables(engine, tableset) == {"hdfs": {"table": "perfkit.own_hdfs_0123abcd"},
                                                     "s3": {"table": "perfkit.own_s3_0123abcd"}}
    assert engine.statements[:2] == [("own_hdfs", "s3a://b/w/ev", "parquet", [("id", "bigint")], PARTS),
                                     "SELECT count(*) FROM perfkit.own_hdfs_0123abcd"]
    # the count is checked on every registration, also of a table another run made (register_shared_table made
    # nothing here): the footers are read afresh and a table short of partitions is caught before any timing
    engine.rows = 299
    with pytest.raises(PerfkitError, match=r"^the table on hdfs \(s3a://b/w/ev, partitioned by year int, region "
                                           r"string: 3 partitions\): hive counts 299 rows but the 3 files' footers "
                                           r"hold 300"):
        cmp.register_tables(engine, tableset)


def test_hive_finds_its_partition_of_nulls_by_msck_as_it_refuses_to_name_it_in_ddl():
    from perfkit.config import load_profile
    from perfkit.partitions import DEFAULT_PARTITION, discover
    from perfkit.engines.hive import HiveEngine
    from perfkit.engines.spark_thrift import SparkThriftEngine

    layout = discover({"region=eu/a.parquet": 5, f"region={DEFAULT_PARTITION}/b.parquet": 5}, "t", "hdfs:///w/t")
    hive = HiveEngine(load_profile("lab")).add_partitions_sql("t", "hdfs:///w/t", layout.partitioning)
    assert hive[-1] == "MSCK REPAIR TABLE perfkit.t" and DEFAULT_PARTITION not in " ".join(hive)
    assert "PARTITION (`region`='eu')" in hive[0]
    spark_thrift = SparkThriftEngine(load_profile("lab")).add_partitions_sql("t", "hdfs:///w/t", layout.partitioning)
    assert DEFAULT_PARTITION in spark_thrift[0]  # Spark names it in DDL
