"""Issue 21, item 6, on the lab: a Hive-style partitioned folder (year=.../month=.../part-N), Parquet written by
pyarrow's dataset writer and ORC, put on HDFS and on S3 through perfkit's own storage classes and given as the user's
tables, is registered as a partitioned table on every engine (Spark, the Spark Thrift Server, Hive, Trino): its
count, a group-by over its partition columns and a filter on one partition equal pyarrow's answers on both storages.
A mixed layout (files beside the partition folders) is refused before any engine runs."""
from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.orc as orc
import pytest

from perfkit.datasets import locations
from perfkit.partitions import DEFAULT_PARTITION
from perfkit.engines import REGISTRY, get_engine, result_hash
from perfkit.errors import PerfkitError
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.storages import Location, get_storage

pytestmark = pytest.mark.lab

ENGINES = sorted(REGISTRY)  # hive, spark, spark-thrift, trino
STORAGES = ["hdfs", "s3"]
ROWS = 3000
YEARS, MONTHS = (2024, 2025), (1, 2, 3)
QUERIES = {
    "count": "SELECT count(*) FROM {table}",
    "by_month": "SELECT year, month, count(*), sum(id) FROM {table} GROUP BY year, month",
    "one_partition": "SELECT count(*), sum(id) FROM {table} WHERE year = 2025 AND month = 2",
}


def _events() -> pa.Table:
    return pa.table({"id": pa.array(range(ROWS), pa.int64()),
                     "amount": pa.array([(i % 97) * 0.25 for i in range(ROWS)]),
                     "page": pa.array([f"/p/{i % 13}" for i in range(ROWS)]),
                     "year": pa.array([YEARS[i % 2] for i in range(ROWS)], pa.int32()),
                     "month": pa.array([MONTHS[i % 3] for i in range(ROWS)], pa.int32())})


def _write_local(folder: Path, file_format: str) -> None:
    """year=Y/month=M/ folders of files without the partition columns, as Hive, Spark and pyarrow write them."""
    events = _events()
    if file_format == "parquet":
        ds.write_dataset(events, folder, format="parquet", partitioning=["year", "month"], partitioning_flavor="hive",
                         max_rows_per_file=300, max_rows_per_group=300)
    else:  # pyarrow's dataset writer does not write ORC: two files per partition folder
        for year in YEARS:
            for month in MONTHS:
                part = events.filter(pc.and_(pc.equal(events["year"], year), pc.equal(events["month"], month)))
                part = part.drop_columns(["year", "month"])
                (folder / f"year={year}" / f"month={month}").mkdir(parents=True)
                half = part.num_rows // 2
                for i, piece in enumerate([part.slice(0, half), part.slice(half)]):
                    orc.write_table(piece, folder / f"year={year}" / f"month={month}" / f"part-{i}.orc")
    (folder / "_SUCCESS").write_bytes(b"")  # hidden: not data, left out as the engines leave it out


def _expected(folder: Path, file_format: str) -> dict[str, list[tuple]]:
    """pyarrow's own answers, read back from the local folder as a hive-partitioned dataset."""
    table = ds.dataset(folder, format=file_format, partitioning="hive").to_table()
    assert table.num_rows == ROWS
    by_month = table.group_by(["year", "month"]).aggregate([("id", "count"), ("id", "sum")])
    one = table.filter(pc.and_(pc.equal(table["year"], 2025), pc.equal(table["month"], 2)))
    return {"count": [(table.num_rows,)],
            "by_month": [(r["year"], r["month"], r["id_count"], r["id_sum"]) for r in by_month.to_pylist()],
            "one_partition": [(one.num_rows, pc.sum(one["id"]).as_py())]}


def _upload(profile, local: Path, folder: Location) -> None:
    """Every file below `local` into the same folders below `folder`, through the storage's own class."""
    storage = get_storage(folder.storage, profile)
    for path in sorted(p for p in local.rglob("*") if p.is_file()):
        rel = path.parent.relative_to(local).as_posix()
        target = folder if rel == "." else Location(folder.storage, f"{folder.path}/{rel}", folder.bucket)
        storage.upload(target, path)


@pytest.fixture(scope="module", params=["parquet", "orc"])
def partitioned(request, profile, tmp_path_factory):
    """(the tables map, pyarrow's answers): the same partitioned folder on HDFS and on S3; deleted after."""
    file_format = request.param
    local = tmp_path_factory.mktemp(f"partitioned-{file_format}") / "events"
    local.mkdir()
    _write_local(local, file_format)
    folders = {where: locations.profile_location(profile, where, "test-partitions", file_format, "events")
               for where in STORAGES}
    for folder in folders.values():
        locations.delete_tree(profile, folder)  # a run that stopped may have left one
        _upload(profile, local, folder)
    yield {where: str(folder) for where, folder in folders.items()}, _expected(local, file_format), file_format
    for folder in folders.values():
        locations.delete_tree(profile, folder)


@pytest.fixture(scope="module")
def comparison(profile, partitioned, tmp_path_factory):
    tables, _, _ = partitioned
    suite = tmp_path_factory.mktemp("suite")
    for name, sql in QUERIES.items():
        (suite / f"{name}.sql").write_text(sql + "\n")
    cmp = QueryComparison(profile, engines=ENGINES, suite=str(suite), tables=tables, runs=1, warmup=0,
                          query_timeout_s=600)
    cmp.prepare(progress=False)
    return cmp


def test_the_folder_is_found_partitioned_on_both_storages_with_pyarrows_rows(comparison, partitioned):
    _, _, file_format = partitioned
    for where in STORAGES:
        table = comparison.tableset.tables[where]["table"]
        assert table.file_format == file_format
        assert [name for name, _ in table.columns] == ["id", "amount", "page"]
        assert table.partitioning.columns == (("year", "int"), ("month", "int"))
        assert sorted(p.path for p in table.partitioning.partitions) == [
            f"year={y}/month={m}" for y in YEARS for m in MONTHS]
        assert table.partitioning.rows == ROWS
    assert comparison.tableset.details["partitions"]["s3"]["table"] == {
        "partitioned_by": ["year", "month"], "partitions": 6, "rows": ROWS}


@pytest.mark.parametrize("engine_name", ENGINES)
def test_every_engine_reads_every_partition_on_both_storages(comparison, partitioned, engine_name):
    """register_tables checks each engine's count(*) against the footers' rows; the queries then answer as pyarrow."""
    _, expected, _ = partitioned
    with get_engine(engine_name, comparison.profile) as engine:
        tables = comparison.register_tables(engine, comparison.tableset)
        # shared and made once: registering again finds the same tables (with their partitions: counted again)
        assert comparison.register_tables(engine, comparison.tableset) == tables
        for where in STORAGES:
            for query in comparison.suite_queries:
                got = engine.execute(query.for_tables(tables[where], engine.name), timeout_s=600)
                assert result_hash(got) == result_hash(expected[query.id]), (
                    engine_name, where, query.id, sorted(got), sorted(expected[query.id]))


def test_files_beside_the_partition_folders_are_refused_before_any_engine_runs(profile, partitioned, tmp_path):
    tables, _, file_format = partitioned
    stray = tmp_path / f"stray.{file_format}"
    stray.write_bytes(b"not read")
    for where in STORAGES:
        folder = locations.parse_location(tables[where], f"tables.{where}")
        get_storage(where, profile).upload(folder, stray)
        try:
            cmp = QueryComparison(profile, engines=["trino"], suite=str(_one_query(tmp_path)), tables=tables)
            with pytest.raises(PerfkitError, match=rf"tables.{where}: .* holds data files \(stray.{file_format}\) "
                                                   r"beside partition folders \(year=2024/, year=2025/\)"):
                cmp.prepare(progress=False)
        finally:
            _delete_one(profile, folder, stray.name)


def _one_query(tmp_path: Path) -> Path:
    folder = tmp_path / "one"
    folder.mkdir(exist_ok=True)
    (folder / "n.sql").write_text("SELECT count(*) FROM {table}")
    return folder


def _delete_one(profile, folder: Location, name: str) -> None:
    storage = get_storage(folder.storage, profile)
    if folder.storage == "hdfs":
        storage.client.delete(f"{folder.path}/{name}")
    else:
        storage.client.delete_object(Bucket=folder.bucket, Key=f"{folder.path}/{name}")


# -- folders as other writers name them: a key in upper case, zero-padded numbers, escaped text, a partition of nulls --

EDGE_FOLDERS = ["Region=eu/Day=01", "Region=o%27k/Day=02", "Region=a b%3Ac/Day=02",
                "Region=__HIVE_DEFAULT_PARTITION__/Day=10"]
# region, day, rows, sum(id)
EDGE_ANSWER = [("eu", 1, 2, 10), ("o'k", 2, 2, 12), ("a b:c", 2, 2, 14), (None, 10, 2, 16)]


@pytest.fixture(scope="module")
def edge_tables(profile, tmp_path_factory):
    import pyarrow.parquet as pq

    local = tmp_path_factory.mktemp("edge") / "events"
    for i, name in enumerate(EDGE_FOLDERS):
        (local / name).mkdir(parents=True)
        pq.write_table(pa.table({"id": pa.array([i, i + 10], pa.int64())}), local / name / "part-0.parquet")
    folders = {where: locations.profile_location(profile, where, "test-partitions", "edge", "events")
               for where in STORAGES}
    for folder in folders.values():
        locations.delete_tree(profile, folder)
        _upload(profile, local, folder)
    yield {where: str(folder) for where, folder in folders.items()}
    for folder in folders.values():
        locations.delete_tree(profile, folder)


@pytest.mark.parametrize("engine_name", ENGINES)
def test_keys_in_upper_case_padded_numbers_escaped_values_and_nulls_read_alike_on_every_engine(
        profile, edge_tables, engine_name, tmp_path):
    suite = tmp_path / "edge"
    suite.mkdir()
    (suite / "by_region.sql").write_text("SELECT region, day, count(*), sum(id) FROM {table} GROUP BY region, day")
    cmp = QueryComparison(profile, engines=[engine_name], suite=str(suite), tables=edge_tables, runs=1, warmup=0,
                          query_timeout_s=600)
    cmp.prepare(progress=False)
    assert cmp.tableset.tables["hdfs"]["table"].partitioning.columns == (("region", "string"), ("day", "int"))
    with get_engine(engine_name, profile) as engine:
        tables = cmp.register_tables(engine, cmp.tableset)
        for where in STORAGES:
            got = engine.execute(cmp.suite_queries[0].for_tables(tables[where], engine.name), timeout_s=600)
            # Hive answers its partition of nulls with the folder's name for a string key (the others: NULL); a
            # suite comparing engines then finds the results differ, which is what Hive does
            answer = [(DEFAULT_PARTITION if r is None and engine_name == "hive" else r, *rest)
                      for r, *rest in EDGE_ANSWER]
            assert result_hash(got) == result_hash(answer), (engine_name, where, got)
