"""Two runs at once on one metastore: tables are shared read-only and made once, never dropped under a reader."""
from __future__ import annotations

import re
import threading
import time

import pytest

from perfkit.partitions import Partition, Partitioning
from perfkit.engines import Engine, hive_ddl, table_definition
from perfkit.errors import PerfkitError

COLUMNS = [("trip_id", "bigint"), ("cab_type", "string")]
ONE_M = "hdfs://127.0.0.1:9000/perfkit/datasets/taxi_r1000000_f8_s42/orc"
TEN_M = "hdfs://127.0.0.1:9000/perfkit/datasets/taxi_r10000000_f8_s42/orc"


class Metastore(dict):
    """The shared catalog: table -> {property: value}; and table -> the partition folders added to it."""

    def __init__(self, *args):
        super().__init__(*args)
        self.partitions: dict[str, set[str]] = {}


class Run(Engine):
    """One run's engine on the shared metastore, with Hive's real DDL; `between` runs just before its CREATE."""

    name = "hive"

    def __init__(self, metastore: Metastore, between=None, adding=None):
        self.metastore, self.between, self.adding, self.statements = metastore, between, adding, []
        self.partitions = metastore.partitions

    def open(self):
        pass

    def create_table_sql(self, table, location, file_format, columns, properties, partitioning=None):
        return hive_ddl(table, location, file_format, columns, partitioning, properties=properties)

    def execute(self, sql, timeout_s=None):
        self.statements.append(sql)
        if sql.startswith("SHOW TABLES IN perfkit"):
            return [("perfkit", name, False) for name in self.metastore]
        if sql.startswith("SHOW TBLPROPERTIES perfkit."):
            return list(self.metastore[sql.rsplit(".", 1)[1]].items())
        if sql.startswith("DROP TABLE perfkit."):
            del self.metastore[sql.rsplit(".", 1)[1]]
            self.partitions.pop(sql.rsplit(".", 1)[1], None)
        if sql.startswith("CREATE EXTERNAL TABLE"):
            if self.between:
                self.between()
            name = re.match(r"CREATE EXTERNAL TABLE perfkit\.(\w+) ", sql).group(1)
            if name in self.metastore:
                raise RuntimeError(f"AlreadyExistsException(message:Table hive.perfkit.{name} already exists)")
            self.metastore[name] = dict(re.findall(r"'([\w.]+)'='(\w+)'", sql.split("TBLPROPERTIES")[1]))
        if sql.startswith("ALTER TABLE perfkit."):  # ADD IF NOT EXISTS PARTITION (...) LOCATION '...' ...
            if self.adding:
                self.adding()
            name = sql.split()[2].split(".", 1)[1]
            self.partitions.setdefault(name, set()).update(re.findall(r"LOCATION '[^']*/(\w+=\w+)'", sql))
        return []

    def drops(self) -> list[str]:
        return [s for s in self.statements if s.startswith("DROP")]


def test_two_runs_on_the_same_data_share_one_table_and_neither_drops_it():
    metastore = Metastore()
    first, second = Run(metastore), Run(metastore)
    name = first.register_shared_table("taxi_orc_hdfs", ONE_M, "orc", COLUMNS)
    assert second.register_shared_table("taxi_orc_hdfs", ONE_M, "orc", COLUMNS) == name  # while the first reads it
    assert first.drops() == second.drops() == [] and list(metastore) == [name]
    assert not any(s.startswith("CREATE EXTERNAL") for s in second.statements)  # made once
    digest = table_definition("hive", ONE_M, "orc", COLUMNS)
    assert name == f"taxi_orc_hdfs_{digest[:8]}"
    assert metastore[name] == {"perfkit.created": "true", "perfkit.definition": digest}


def test_runs_on_other_data_get_other_tables_instead_of_replacing_each_others():
    """Before: both were perfkit.taxi_orc_hdfs, dropped and re-created by each run, so a run of 1 M rows could read
    the 10 M rows another run had just registered."""
    metastore = Metastore()
    small = Run(metastore).register_shared_table("taxi_orc_hdfs", ONE_M, "orc", COLUMNS)
    large = Run(metastore).register_shared_table("taxi_orc_hdfs", TEN_M, "orc", COLUMNS)
    other_engine = type("Trino", (Run,), {"name": "trino"})(metastore)
    assert len({small, large, other_engine.register_shared_table("taxi_orc_hdfs", ONE_M, "orc", COLUMNS)}) == 3
    assert len(metastore) == 3


def test_a_concurrent_run_that_made_the_same_table_first_is_no_error(monkeypatch):
    import contextlib

    import perfkit.engines

    # a run on another machine: the lock is per machine, so only the metastore tells the two apart
    monkeypatch.setattr(perfkit.engines, "table_lock", lambda *args: contextlib.nullcontext())
    metastore = Metastore()
    name = f"taxi_orc_hdfs_{table_definition('hive', ONE_M, 'orc', COLUMNS)[:8]}"
    # the other run creates the table between this run's look and its CREATE
    late = Run(metastore, between=lambda: Run(metastore).register_table(name, ONE_M, "orc", COLUMNS))
    assert late.register_shared_table("taxi_orc_hdfs", ONE_M, "orc", COLUMNS) == name
    assert late.drops() == [] and list(metastore) == [name]


def test_a_failed_create_that_made_nothing_is_raised():
    class Refusing(Run):
        def execute(self, sql, timeout_s=None):
            if sql.startswith("CREATE EXTERNAL"):
                raise RuntimeError("Permission denied: user=perfkit, access=WRITE")
            return super().execute(sql, timeout_s)

    with pytest.raises(RuntimeError, match="Permission denied"):
        Refusing(Metastore()).register_shared_table("taxi_orc_hdfs", ONE_M, "orc", COLUMNS)


def test_a_table_of_perfkits_that_is_not_what_its_name_says_is_replaced_and_anyone_elses_refused():
    digest = table_definition("hive", ONE_M, "orc", COLUMNS)
    name = f"taxi_orc_hdfs_{digest[:8]}"
    metastore = Metastore({name: {"perfkit.created": "true"}})  # e.g. made by hand, or by an older perfkit
    run = Run(metastore)
    assert run.register_shared_table("taxi_orc_hdfs", ONE_M, "orc", COLUMNS) == name
    assert run.drops() == [f"DROP TABLE perfkit.{name}"] and metastore[name]["perfkit.definition"] == digest
    foreign = Metastore({name: {"transient_lastDdlTime": "1"}})
    with pytest.raises(PerfkitError, match=rf"table perfkit.{name} exists and was not created by perfkit"):
        Run(foreign).register_shared_table("taxi_orc_hdfs", ONE_M, "orc", COLUMNS)
    assert foreign[name] == {"transient_lastDdlTime": "1"}


def test_each_engine_writes_both_properties_in_its_own_ddl():
    from perfkit.config import load_profile
    from perfkit.engines.spark import SparkEngine
    from perfkit.engines.trino import TrinoEngine

    props = {"perfkit.created": "true", "perfkit.definition": "0123456789abcdef"}
    profile = load_profile("emr", bucket="b")
    spark = SparkEngine(profile).create_table_sql("t", "s3a://b/p", "orc", COLUMNS, props)
    assert spark.endswith("TBLPROPERTIES ('perfkit.created'='true', 'perfkit.definition'='0123456789abcdef')")
    trino = TrinoEngine(profile).create_table_sql("t", "s3a://b/p", "orc", COLUMNS, props)
    assert trino.endswith("extra_properties = MAP(ARRAY['perfkit.created', 'perfkit.definition'], "
                          "ARRAY['true', '0123456789abcdef']))")


def test_a_write_target_is_the_steps_own_table_dropped_once_the_run_is_measured(tmp_path, monkeypatch):
    """A write workload's target sits in a folder of the run's and the step's own: its table is named for that folder
    (two runs at once never write into one table) and dropped after the step, so targets do not pile up."""
    from test_faults import FakeEngine, _comparison

    from perfkit.protocol import Step

    class WriteQuery:
        id, writes = "w1", "out"

        @staticmethod
        def for_tables(tables, engine=None):
            return f"INSERT INTO {tables['out']} SELECT * FROM {tables['table']}"

    engine = FakeEngine({"t_hdfs": [(3,)], "perfkit.out_1": [(3,)]})  # the insert, then the read-back
    engine.dropped = []
    engine.drop_own_table = engine.dropped.append
    cmp = _comparison(tmp_path, {"hdfs": lambda: None})
    monkeypatch.setattr(cmp, "write_target", lambda engine, query, step, tables: {**tables, "out": "perfkit.out_1"})
    cmp.measure(cmp.results, engine, WriteQuery, Step("measured", 0, "hdfs"), {"table": "t_hdfs"})
    assert cmp.results.records[-1].ok and cmp.results.records[-1].rows == 1
    assert engine.dropped == ["out_1"]
    other_run = Run(Metastore()).register_shared_table("taxi_orc_out_out_hdfs", ONE_M + "/runs/B/w1", "orc", COLUMNS)
    assert other_run != Run(Metastore()).register_shared_table("taxi_orc_out_out_hdfs", ONE_M + "/runs/A/w1", "orc",
                                                               COLUMNS)


# -- partitioned tables (issue 21 item 6) shared the same way: the partitions found are part of the definition ------

EVENTS = "hdfs://127.0.0.1:9000/user/me/events"


def _years(*years: int) -> Partitioning:
    return Partitioning((("year", "int"),), tuple(Partition(f"year={y}", (str(y),)) for y in years), files=len(years),
                        rows=10 * len(years))


def _makes(run: Run) -> list[str]:
    return [s for s in run.statements if s.startswith(("CREATE EXTERNAL", "ALTER", "DROP"))]


def test_a_partitioned_table_is_made_once_with_its_partitions_and_a_new_partition_makes_a_new_table():
    metastore = Metastore()
    first, second = Run(metastore), Run(metastore)
    name = first.register_shared_table("events_hdfs", EVENTS, "parquet", COLUMNS, _years(2024, 2025))
    assert metastore.partitions[name] == {"year=2024", "year=2025"}
    assert [s.split(" (")[0] for s in _makes(first)] == ["CREATE EXTERNAL TABLE perfkit." + name,
                                                         f"ALTER TABLE perfkit.{name} ADD IF NOT EXISTS PARTITION"]
    assert "PARTITIONED BY (`year` int)" in _makes(first)[0]
    digest = table_definition("hive", EVENTS, "parquet", COLUMNS, _years(2024, 2025))
    assert name == f"events_hdfs_{digest[:8]}" and metastore[name]["perfkit.definition"] == digest
    # the same folder again: the table is there with its partitions, nothing is re-created or re-added
    assert second.register_shared_table("events_hdfs", EVENTS, "parquet", COLUMNS, _years(2024, 2025)) == name
    assert _makes(second) == []
    # a partition more, or another one of the same count, or none: each is another table; the first is left as it is
    grown = Run(metastore).register_shared_table("events_hdfs", EVENTS, "parquet", COLUMNS, _years(2024, 2025, 2026))
    moved = Run(metastore).register_shared_table("events_hdfs", EVENTS, "parquet", COLUMNS, _years(2024, 2026))
    flat = Run(metastore).register_shared_table("events_hdfs", EVENTS, "parquet", COLUMNS)
    assert len({name, grown, moved, flat}) == 4
    assert metastore.partitions[grown] == {"year=2024", "year=2025", "year=2026"}
    assert metastore.partitions[name] == {"year=2024", "year=2025"} and flat not in metastore.partitions
    assert table_definition("hive", EVENTS, "parquet", COLUMNS, Partitioning((("year", "string"),),
                                                                              _years(2024).partitions)) != \
        table_definition("hive", EVENTS, "parquet", COLUMNS, _years(2024))  # the key's type is part of it


def test_a_second_run_waits_while_the_first_adds_the_partitions_then_uses_the_whole_table(capsys):
    """Without the lock the second would find the table (its definition is set by the CREATE) before its partitions
    are there, and count none of their rows."""
    metastore, order = Metastore(), []
    adding, second_started = threading.Event(), threading.Event()

    def slowly():
        adding.set()
        second_started.wait(5)
        time.sleep(0.3)  # the second run is at the lock meanwhile
        order.append("first added the partitions")

    first, second = Run(metastore, adding=slowly), Run(metastore)
    one = threading.Thread(target=lambda: first.register_shared_table("events_hdfs", EVENTS, "parquet", COLUMNS,
                                                                      _years(2024)))
    one.start()
    adding.wait(5)
    second_started.set()
    name = second.register_shared_table("events_hdfs", EVENTS, "parquet", COLUMNS, _years(2024))
    order.append("second has the table")
    one.join(5)
    assert order == ["first added the partitions", "second has the table"]
    assert _makes(second) == [] and metastore.partitions[name] == {"year=2024"}
    assert re.search(r"is making table events_hdfs_\w{8} on hive: waiting for it to finish, then the table is "
                     r"shared \(lock .*\.lock\)", capsys.readouterr().err)


def test_partitions_that_cannot_be_added_leave_no_table_that_says_it_has_them():
    def refuse():
        raise RuntimeError("MetaException: Permission denied: user=perfkit, access=WRITE")

    metastore = Metastore()
    failing = Run(metastore, adding=refuse)
    with pytest.raises(RuntimeError, match="Permission denied"):
        failing.register_shared_table("events_hdfs", EVENTS, "parquet", COLUMNS, _years(2024))
    assert dict(metastore) == {}  # dropped: the next run makes it whole instead of taking it as made
    name = Run(metastore).register_shared_table("events_hdfs", EVENTS, "parquet", COLUMNS, _years(2024))
    assert metastore.partitions[name] == {"year=2024"}


def test_a_table_listed_before_is_checked_by_its_properties_alone_and_one_dropped_since_is_made_again():
    metastore = Metastore()
    run = Run(metastore)
    made = [run.register_shared_table(f"part{i}_hdfs", f"{ONE_M}/part{i}", "orc", COLUMNS) for i in range(3)]
    run.statements.clear()
    assert [run.register_shared_table(f"part{i}_hdfs", f"{ONE_M}/part{i}", "orc", COLUMNS) for i in range(3)] == made
    assert run.statements == [f"SHOW TBLPROPERTIES perfkit.{name}" for name in made]  # no listing, no database
    del metastore[made[1]]  # another run dropped it since
    run.statements.clear()
    assert run.register_shared_table("part1_hdfs", f"{ONE_M}/part1", "orc", COLUMNS) == made[1]
    listing = "SHOW TABLES IN perfkit"
    assert run.statements[:3] == [f"SHOW TBLPROPERTIES perfkit.{made[1]}", listing, listing]  # looked up afresh ...
    assert run.statements[3].startswith(f"CREATE EXTERNAL TABLE perfkit.{made[1]} ")
    assert made[1] in metastore and run.drops() == []  # ... and made again, nothing dropped
