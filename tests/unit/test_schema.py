"""A user's files: their columns from one footer, as Hive types; their one format; bad files named."""
import datetime as dt
from decimal import Decimal

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq
import pytest

from perfkit.datasets.schema import columns_of, format_of, read_schema
from perfkit.errors import PerfkitError

TABLE = pa.table({
    "id": pa.array([1, 2], pa.int64()), "qty": pa.array([3, 4], pa.int32()), "flag": [True, False],
    "name": ["a", "b"], "price": pa.array([Decimal("1.25"), Decimal("2.50")], pa.decimal128(12, 2)),
    "day": pa.array([dt.date(2024, 1, 1)] * 2), "at": pa.array([dt.datetime(2024, 1, 1)] * 2, pa.timestamp("us")),
    "tags": [["x"], []], "score": pa.array([0.5, 1.5], pa.float64()),
})
EXPECTED = [("id", "bigint"), ("qty", "int"), ("flag", "boolean"), ("name", "string"), ("price", "decimal(12,2)"),
            ("day", "date"), ("at", "timestamp"), ("tags", "array<string>"), ("score", "double")]


@pytest.mark.parametrize("file_format", ["orc", "parquet"])
def test_the_columns_come_from_the_footer_as_hive_types(tmp_path, file_format):
    path = tmp_path / f"part-0.{file_format}"
    (orc.write_table if file_format == "orc" else pq.write_table)(TABLE, str(path))
    with open(path, "rb") as seekable:  # a file object, as a remote reader hands it over
        assert columns_of(read_schema(seekable, file_format)) == EXPECTED


def test_a_file_that_is_not_what_it_says_is_named(tmp_path):
    path = tmp_path / "part-0.orc"
    path.write_bytes(b"not an orc file at all")
    with pytest.raises(PerfkitError, match=r"part-0.orc is not a readable ORC file"):
        read_schema(str(path), "orc")


def test_one_format_per_location():
    assert format_of(["a/part-0.ORC", "a/_SUCCESS", "a/part-1.orc"], "s3://b/a") == "orc"
    with pytest.raises(PerfkitError, match=r"s3://b/a mixes formats \(orc, parquet\)"):
        format_of(["part-0.orc", "part-1.parquet"], "s3://b/a")
    with pytest.raises(PerfkitError, match=r"hdfs:///t holds no .orc or .parquet file"):
        format_of(["_SUCCESS", "x.csv", "dir.orc/file"], "hdfs:///t")


def test_a_type_without_a_hive_name_is_refused_with_the_fix():
    with pytest.raises(PerfkitError, match=r"column type duration\[s\] has no Hive equivalent"):
        columns_of(pa.schema([("d", pa.duration("s"))]))
