import hashlib
import re

import numpy as np
import pyarrow.orc as orc
import pytest

from perfkit.datasets.taxi import SCHEMA, TaxiDataset

# the benchmark's trips table, in order (Mark Litwintschik's 1.1-billion-taxi-rides schema)
BENCHMARK_COLUMNS = """trip_id vendor_id pickup_datetime dropoff_datetime store_and_fwd_flag rate_code_id
pickup_longitude pickup_latitude dropoff_longitude dropoff_latitude passenger_count trip_distance fare_amount
extra mta_tax tip_amount tolls_amount ehail_fee improvement_surcharge total_amount payment_type trip_type
pickup dropoff cab_type precipitation snow_depth snowfall max_temperature min_temperature average_wind_speed
pickup_nyct2010_gid pickup_ctlabel pickup_borocode pickup_boroname pickup_ct2010 pickup_boroct2010
pickup_cdeligibil pickup_ntacode pickup_ntaname pickup_puma dropoff_nyct2010_gid dropoff_ctlabel
dropoff_borocode dropoff_boroname dropoff_ct2010 dropoff_boroct2010 dropoff_cdeligibil dropoff_ntacode
dropoff_ntaname dropoff_puma""".split()


def test_schema_is_the_benchmarks_51_columns():
    assert [name for name, _, _ in SCHEMA] == BENCHMARK_COLUMNS
    assert len(SCHEMA) == 51


def _digests(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.mark.parametrize("fmt", ["orc", "parquet"])
def test_same_parameters_give_the_same_bytes(tmp_path, fmt):
    ds = TaxiDataset(rows=3000, files=3, seed=7)
    ds.write(tmp_path / "a", fmt)
    ds.write(tmp_path / "b", fmt)
    assert _digests(tmp_path / "a") == _digests(tmp_path / "b")
    TaxiDataset(rows=3000, files=3, seed=8).write(tmp_path / "c", fmt)
    assert _digests(tmp_path / "a") != _digests(tmp_path / "c")


def test_rows_are_split_over_files_without_gaps(tmp_path):
    ds = TaxiDataset(rows=1001, files=4)
    tables = [orc.read_table(p) for p in ds.write(tmp_path, "orc")]
    ids = np.concatenate([t.column("trip_id").to_numpy() for t in tables])
    assert ids.tolist() == list(range(1001))


def test_distributions_are_plausible():
    t = TaxiDataset(rows=20_000, files=1).table(0).to_pandas()
    assert set(t["cab_type"]) == {"yellow", "green", "uber"}
    assert t["passenger_count"].between(0, 9).all() and t["passenger_count"].nunique() == 10
    assert t["pickup_datetime"].dt.year.nunique() >= 6
    assert t["trip_distance"].mean() > 1.2 * t["trip_distance"].median()  # right-skewed
    assert (t["dropoff_datetime"] > t["pickup_datetime"]).all()
    parts = t[["fare_amount", "extra", "mta_tax", "tip_amount", "tolls_amount", "improvement_surcharge"]].sum(axis=1)
    assert np.allclose(parts, t["total_amount"], atol=0.011)
    # the same day has the same weather in every trip
    assert t.groupby(t["pickup_datetime"].dt.date)["max_temperature"].nunique().max() == 1


@pytest.mark.parametrize("kwargs, message", [
    ({"rows": 2, "files": 3}, "files=3: give a whole number >= 1 and <= 2 (at most one file per row)"),
    ({"rows": "1e5"}, "rows='1e5': this is text, not a number: write rows=100000"),
    ({"rows": 10**23}, "rows=100000000000000000000000: give a whole number >= 1 and <= 9,223,372,036,854,775,807"),
    ({"rows": 10**7, "files": 4}, "rows=10,000,000 in files=4 is 2,500,000 rows per file, more than the 1,000,000 "
                                  "one file may hold (each is generated in memory, ~3 KB a row): give files=10 or "
                                  "more"),
    ({"rows": 10, "seed": -1}, "seed=-1: give a whole number >= 0"),
])
def test_bad_sizes_are_refused(kwargs, message):
    from perfkit.errors import PerfkitError

    with pytest.raises(PerfkitError, match="^" + re.escape(message)):
        TaxiDataset(**kwargs)


def test_an_integral_float_is_a_row_count():
    ds = TaxiDataset(rows=1e5, files=4.0)
    assert (ds.rows, ds.files, ds.name) == (100000, 4, "taxi_r100000_f4_s42")


def test_verification_catches_missing_truncated_and_extra_files():
    from perfkit.datasets.placement import verify_same_files
    from perfkit.errors import PerfkitError

    expected = {"part-0.orc": 100, "part-1.orc": 200}
    verify_same_files(expected, {"hdfs": dict(expected), "s3": dict(expected)})
    for found, what in [({"part-0.orc": 100}, "1 missing ['part-1.orc']"),
                        ({"part-0.orc": 100, "part-1.orc": 150}, "1 of wrong size ['part-1.orc']"),
                        ({**expected, "junk": 1}, "1 unexpected ['junk']")]:
        with pytest.raises(PerfkitError, match=r"dataset on s3 differs") as err:
            verify_same_files(expected, {"hdfs": dict(expected), "s3": found})
        assert what in str(err.value)
