"""The user's own tables: the map's shapes, every bad entry named with its fix, locations parsed, footers read
by range (a large file is not downloaded), and the CLI's --table pairs."""
import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from perfkit.cli import _tables
from perfkit.config import load_profile
from perfkit.datasets.locations import Location, parse_location
from perfkit.storages.base import _RangeReader
from perfkit.datasets.schema import read_schema
from perfkit.datasets.tpch import scale_factor
from perfkit.datasets.user_tables import normalize, read_tables_file
from perfkit.errors import PerfkitError


def test_one_location_per_storage_is_the_suites_table_and_names_give_several():
    one = normalize({"hdfs": "hdfs:///w/trips", "s3": {"location": "s3://b/trips/", "format": "ORC"}}, ["hdfs", "s3"])
    assert one == {"hdfs": {"table": {"location": "hdfs:///w/trips", "format": None}},
                   "s3": {"table": {"location": "s3://b/trips/", "format": "orc"}}}
    several = normalize({"hdfs": {"orders": "hdfs:///w/o", "lineitem": {"location": "hdfs:///w/l"}},
                         "s3": {"orders": "s3://b/o", "lineitem": "s3://b/l"}}, ["hdfs", "s3"])
    assert sorted(several["s3"]) == ["lineitem", "orders"]


@pytest.mark.parametrize("tables, message", [
    ({"hdfs": "hdfs:///w/t"}, r"the map has storages hdfs but the run compares hdfs, s3.*\(missing: s3\)"),
    ({"hdfs": {"a": "hdfs:///a"}, "s3": {"b": "s3://x/b"}}, r"every storage needs the same tables \(hdfs: a; s3: b\)"),
    ({"hdfs": "hdfs:///w", "s3": {"location": "s3://b/t", "format": "csv"}},
     r"format 'csv' is not one of orc, parquet"),
    ({"hdfs": 3, "s3": "s3://b/t"}, r"tables.hdfs: give a location"),
    ([], r"tables: give a map of each storage"),
])
def test_a_bad_tables_map_is_named_with_the_fix(tables, message):
    with pytest.raises(PerfkitError, match=message):
        normalize(tables, ["hdfs", "s3"])


def test_locations_of_both_storages_and_the_urls_engines_read():
    profile = load_profile("lab")
    hdfs = parse_location("hdfs://namenode:8020/w/trips/", "t")
    assert hdfs == Location("hdfs", "/w/trips") and hdfs.url(profile) == f"{profile.hdfs_uri}/w/trips"
    s3 = parse_location("s3://bucket/data/trips/", "t")
    assert s3 == Location("s3", "data/trips", "bucket") and s3.url(profile) == "s3a://bucket/data/trips"
    for bad in ["/local/folder", "file:///x", "s3:///nokey", "hdfs:///"]:
        with pytest.raises(PerfkitError, match=r"is not a table location: give hdfs:///path/to/folder or s3://"):
            parse_location(bad, "tables.hdfs")


def test_a_footer_is_read_by_range_without_fetching_the_whole_file():
    buffer = io.BytesIO()
    pq.write_table(pa.table({"id": pa.array(range(200_000), pa.int64()), "name": ["x"] * 200_000}), buffer)
    data, fetched = buffer.getvalue(), []

    def read(offset, length):
        fetched.append(length)
        return data[offset:offset + length]

    schema = read_schema(io.BufferedReader(_RangeReader("f.parquet", len(data), read), 64 * 1024), "parquet")
    assert schema.names == ["id", "name"]
    assert sum(fetched) < len(data) / 4, (sum(fetched), len(data))


def test_cli_table_pairs_and_files(tmp_path):
    assert _tables(None, ("hdfs=hdfs:///w/t", "s3=s3://b/t")) == {"hdfs": "hdfs:///w/t", "s3": "s3://b/t"}
    assert _tables(None, ("hdfs.orders=hdfs:///o", "hdfs.lineitem=hdfs:///l")) == {
        "hdfs": {"orders": "hdfs:///o", "lineitem": "hdfs:///l"}}
    assert _tables(None, ()) is None
    with pytest.raises(PerfkitError, match=r"--table 'hdfs': write STORAGE=URL"):
        _tables(None, ("hdfs",))
    with pytest.raises(PerfkitError, match="has a location already"):
        _tables(None, ("hdfs=hdfs:///a", "hdfs=hdfs:///b"))
    spec = tmp_path / "tables.yml"
    spec.write_text("tables:\n  hdfs: hdfs:///w/t\n  s3: s3://b/t/\n")
    assert read_tables_file(spec) == {"hdfs": "hdfs:///w/t", "s3": "s3://b/t/"}
    with pytest.raises(PerfkitError, match=r"tables file .*missing.yml cannot be read"):
        read_tables_file(tmp_path / "missing.yml")


@pytest.mark.parametrize("bad", [0, -1, "ten", None, float("nan"), float("inf"), True])
def test_a_tpch_scale_factor_must_be_a_positive_number(bad):
    with pytest.raises(PerfkitError, match="the TPC-H scale factor must be a positive number"):
        scale_factor(bad)
    assert scale_factor("0.01") == 0.01


def test_an_unknown_placement_method_is_named_with_the_choices():
    from perfkit.config import load_profile
    from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison

    with pytest.raises(PerfkitError, match=r"placement.*'rsync'.*use one of copy, generate"):
        QueryComparison(load_profile("lab"), engines=["spark"], suite="tpch", placement="rsync")
    assert QueryComparison(load_profile("lab"), engines=["spark"], suite="tpch").parameters()["placement"] == "copy"
