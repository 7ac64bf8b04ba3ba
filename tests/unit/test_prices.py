"""Prices with their basis: request cost and monthly storage against hand-computed numbers, a user's file, bad files."""
import math

import pytest

from perfkit.errors import PerfkitError
from perfkit.prices import PriceTable
from perfkit.storages.hdfs import Hdfs
from perfkit.storages.pricing import monthly_storage_table
from perfkit.storages.s3 import S3


def test_the_shipped_table_prices_requests_as_aws_lists_them():
    prices = PriceTable.load()
    cost = prices.request_cost({"s3_get": 12_345, "s3_list": 67, "s3_put": 3, "s3_delete": 9, "hdfs_bytes_read": 1e9})
    assert cost == pytest.approx(12_345 * 0.0004 / 1000 + 70 * 0.005 / 1000)  # DELETE is free; HDFS is not S3
    assert "us-east-1" in prices.basis() and "as of" in prices.basis() and "aws.amazon.com/s3/pricing" in prices.basis()


def test_an_ebs_price_is_named_for_its_ebs_product_not_s3s_class(tmp_path):
    from perfkit.presenting.st1_report import ebs_named

    prices = PriceTable.load()
    basis = prices.ebs_basis("st1")
    assert basis == (f"AWS list prices, us-east-1, EBS st1 (Throughput Optimized HDD), USD, as of "
                     f"{prices.texts['as_of']} (https://aws.amazon.com/ebs/pricing/)")
    assert "S3" not in basis and "gp3 (General Purpose SSD)" in prices.ebs_basis("gp3")
    # a run that recorded basis() for its st1 price: its report names the EBS product, S3's page left out
    recorded = f"st1 at 0.045 USD per GB-month: {prices.basis()}"
    assert ebs_named(recorded) == f"st1 at 0.045 USD per GB-month: {basis}"
    own = tmp_path / "prices.yml"
    own.write_text("ebs:\n  st1_per_gb_month: 0.05\n")
    assert PriceTable.load(own).ebs_basis().endswith("us-east-1, EBS st1 (Throughput Optimized HDD))")


def test_a_count_not_measured_makes_the_cost_unknown_not_zero():
    assert math.isnan(PriceTable.load().request_cost({"s3_get": 10, "s3_head": math.nan}))


def test_a_month_of_a_dataset_on_s3_and_on_hdfs_with_its_replicas():
    prices = PriceTable.load()
    assert S3.month_stored(prices, 500e9) == ("S3 Standard", 500, pytest.approx(500 * 0.023))
    assert Hdfs.month_stored(prices, 500e9, replication=3) == ("HDFS on EBS st1, 3 replicas", 1500,
                                                               pytest.approx(1500 * 0.045))
    assert Hdfs.month_stored(prices, 500e9, 1, "gp3") == ("HDFS on EBS gp3, 1 replica", 500, pytest.approx(500 * 0.08))
    table = monthly_storage_table(prices, 500e9)
    assert list(table["USD per month"]) == pytest.approx([67.5, 11.5]) and table.attrs["basis"] == prices.basis()
    both = monthly_storage_table(prices, 500e9, 2, volume_types=("st1", "gp3"))  # S3 once, HDFS per volume type
    assert list(both["storage"]) == ["HDFS on EBS st1, 2 replicas", "S3 Standard", "HDFS on EBS gp3, 2 replicas"]
    assert list(both["USD per month"]) == pytest.approx([1000 * 0.045, 500 * 0.023, 1000 * 0.08])


def test_a_user_file_replaces_the_figures_it_gives_and_says_so(tmp_path):
    own = tmp_path / "mine.yml"
    own.write_text("s3:\n  get_per_1000: 0.001\n")
    prices = PriceTable.load(own)
    assert prices.request_cost({"s3_get": 1000, "s3_list": 1000}) == pytest.approx(0.001 + 0.005)
    assert str(own) in prices.basis()


@pytest.mark.parametrize("text, message", [
    ("s3:\n  get_per_1000: -1\n", r"s3.get_per_1000 is -1, a negative price. Fix: give 0 or more"),
    ("s3:\n  get_per_1000: cheap\n", r"s3.get_per_1000 is 'cheap', not a number"),
    ("s3:\n  get_per_1000: null\n", r"s3.get_per_1000 is missing"),
    ("s3:\n  gets_per_1000: 1\n", r"unknown key s3.gets_per_1000"),
    ("gcs: {}\n", r"unknown key 'gcs'"),
    ("s3: [1, 2\n", r"not valid YAML"),
])
def test_a_bad_price_file_is_named_with_the_key_and_the_fix(tmp_path, text, message):
    own = tmp_path / "bad.yml"
    own.write_text(text)
    with pytest.raises(PerfkitError, match=message) as err:
        PriceTable.load(own)
    assert str(own) in str(err.value)


def test_a_missing_price_file_is_named(tmp_path):
    with pytest.raises(PerfkitError, match=r"price file .*nothing.yml: cannot be read"):
        PriceTable.load(tmp_path / "nothing.yml")


def test_the_query_report_prices_a_month_of_its_dataset_at_the_replication_its_hdfs_files_have(monkeypatch):
    from perfkit.config import load_profile
    from perfkit.datasets.tables import Table, TableSet
    from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
    from perfkit.presenting.query_report import QueryReport
    from perfkit.results import ResultSet
    from perfkit.storages.hdfs import Hdfs

    cmp = QueryComparison(load_profile("lab"), engines=["trino"])
    files = {"hdfs": "hdfs://127.0.0.1:9000/d/t", "s3": "s3a://b/d/t"}
    cmp.tableset = TableSet("d", {where: {"table": Table(url, "orc", [], files=4, bytes=2_000_000_000)}
                                  for where, url in files.items()}, "yes", {})
    monkeypatch.setattr(Hdfs, "replication", lambda self, loc: 2 if loc.path == "/d/t" else None)
    # the run records its dataset's size and replication; its report prices them, from the records alone
    report = QueryReport(ResultSet("hdfs_vs_s3_queries", {"parameters": cmp.parameters(),
                                                          "dataset": cmp.dataset_record()}))
    cost = report.storage_cost().set_index("storage")["USD per month"]
    # 2 GB: S3 Standard 0.023/GB; HDFS twice over on st1 0.045/GB and on gp3 0.08/GB
    assert cost.to_dict() == pytest.approx({"HDFS on EBS st1, 2 replicas": 2 * 2 * 0.045, "S3 Standard": 2 * 0.023,
                                            "HDFS on EBS gp3, 2 replicas": 2 * 2 * 0.08})
    assert report._storage_cost_sentence() == (
        "A month of keeping the 2 GB of data, in USD: HDFS on EBS st1, 2 replicas 0.18; S3 Standard 0.046; "
        "HDFS on EBS gp3, 2 replicas 0.32 (AWS list prices, us-east-1, S3 Standard, USD, as of 2026-11-23).")
