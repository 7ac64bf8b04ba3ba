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


def test_files_written_by_a_process_per_core_are_the_files_written_one_by_one(tmp_path, monkeypatch):
    import perfkit.datasets.taxi as taxi

    ds = TaxiDataset(rows=3000, files=3, seed=7)
    ds.write(tmp_path / "one_by_one", "orc")
    monkeypatch.setattr(taxi, "PARALLEL_FROM_ROWS", 1)
    monkeypatch.setattr(taxi.os, "cpu_count", lambda: 2)
    spawned, get_context = [], taxi.multiprocessing.get_context
    monkeypatch.setattr(taxi.multiprocessing, "get_context", lambda how: spawned.append(how) or get_context(how))
    ds.write(tmp_path / "in_parallel", "orc")
    assert spawned == ["spawn"]
    assert _digests(tmp_path / "in_parallel") == _digests(tmp_path / "one_by_one")


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
    ({"rows": 10, "seed": -1}, "seed=-1: give a whole number >= 0"),
])
def test_bad_sizes_are_refused(kwargs, message):
    from perfkit.errors import PerfkitError

    with pytest.raises(PerfkitError, match="^" + re.escape(message)):
        TaxiDataset(**kwargs)


def test_a_file_larger_than_a_batch_is_generated_and_written_a_batch_at_a_time(tmp_path, monkeypatch):
    import perfkit.datasets.taxi as taxi

    monkeypatch.setattr(taxi, "BATCH_ROWS", 1000)
    sizes = []
    generate = taxi.generate
    monkeypatch.setattr(taxi, "generate", lambda rng, first, n: sizes.append(n) or generate(rng, first, n))
    ds = TaxiDataset(rows=5000, files=2, seed=3)  # 2,500 rows a file: batches of 1,000, 1,000 and 500
    written = [orc.read_table(path) for path in ds.write(tmp_path, "orc")]
    assert sizes == [1000, 1000, 500] * 2
    ids = np.concatenate([t.column("trip_id").to_numpy() for t in written])
    assert ids.tolist() == list(range(5000))
    # each batch from its own seed: the file's for batch 0, as a file of one batch always was
    first_batch = generate(np.random.default_rng([3, 1]), 2500, 1000)
    assert written[1].slice(0, 1000).cast(first_batch.schema).equals(first_batch)  # read back in ns
    second_batch = generate(np.random.default_rng([3, 1, 1]), 3500, 1000)
    assert written[1].slice(1000, 1000).cast(second_batch.schema).equals(second_batch)


def test_points_are_written_as_numpy_writes_floats():
    from perfkit.datasets.taxi import _as_text

    values = np.round(np.concatenate([[-74.0, 40.0, -73.5], np.random.default_rng(0).normal(-74, 0.04, 100_000)]), 6)
    assert _as_text(values).to_pylist() == values.astype(str).tolist()  # -74.0 (Arrow alone writes -74)


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
