"""The independent TPC-H answers: tpchgen-cli's data queried by DuckDB, checked here against pandas."""
from pathlib import Path

import pandas as pd
import pytest

from perfkit.datasets import tpch_reference
from perfkit.datasets.tpch_reference import ReferenceAnswer, answers_over, generate
from perfkit.engines import result_hash
from perfkit.errors import PerfkitError
from perfkit.experiments.query_reference import raise_for_reference, reference_table
from perfkit.suites import open_suite

SCALE = 0.01


@pytest.fixture(scope="module")
def tpch_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("tpch")
    generate(SCALE, folder)
    return folder


@pytest.fixture(scope="module")
def answers(tpch_folder) -> dict:
    return answers_over(tpch_folder, open_suite("tpch").queries, progress=False)


def test_every_query_of_the_suite_has_an_answer(answers):
    assert list(answers) == [f"q{n}" for n in range(1, 23)]
    assert [q for q, a in answers.items() if a.error] == []
    assert all(a.rows >= 1 for a in answers.values())


def test_q6_is_the_revenue_pandas_computes_from_the_same_files(tpch_folder, answers):
    items = pd.read_parquet(tpch_folder / "lineitem.parquet")
    price, discount = items["l_extendedprice"].astype(float), items["l_discount"].astype(float)
    shipped = pd.to_datetime(items["l_shipdate"])
    chosen = ((shipped >= "1994-01-01") & (shipped < "1995-01-01") & (discount >= 0.05 - 1e-9)
              & (discount <= 0.07 + 1e-9) & (items["l_quantity"].astype(float) < 24))
    revenue = float((price[chosen] * discount[chosen]).sum())
    assert answers["q6"].rows == 1
    assert answers["q6"].result_hash == result_hash([(revenue,)])


def test_q1_groups_and_counts_match_pandas(tpch_folder, answers):
    items = pd.read_parquet(tpch_folder / "lineitem.parquet")
    kept = items[pd.to_datetime(items["l_shipdate"]) <= pd.Timestamp("1998-12-01") - pd.Timedelta(days=90)]
    groups = kept.groupby(["l_returnflag", "l_linestatus"])
    assert answers["q1"].rows == groups.ngroups == 4
    expected = [(flag, status, float(g["l_quantity"].astype(float).sum()),
                 float(g["l_extendedprice"].astype(float).sum()),
                 float((g["l_extendedprice"].astype(float) * (1 - g["l_discount"].astype(float))).sum()),
                 float((g["l_extendedprice"].astype(float) * (1 - g["l_discount"].astype(float))
                        * (1 + g["l_tax"].astype(float))).sum()),
                 float(g["l_quantity"].astype(float).mean()), float(g["l_extendedprice"].astype(float).mean()),
                 float(g["l_discount"].astype(float).mean()), len(g))
                for (flag, status), g in groups]
    assert answers["q1"].result_hash == result_hash(expected)


def test_a_scale_beyond_the_driver_check_is_refused_with_the_range():
    with pytest.raises(PerfkitError, match=r"scale 10: .* up to sf 1"):
        tpch_reference.reference_answers([], 10)
    with pytest.raises(PerfkitError, match=r"scale 0: "):
        tpch_reference.check_scale(0)


def test_verdicts_name_every_cell_that_differs_and_the_batch_fails_on_them():
    frame = pd.DataFrame([
        {"subject": "trino", "storage": "hdfs", "case": "q1", "ok": True, "result_hash": "aaa"},
        {"subject": "trino", "storage": "s3", "case": "q1", "ok": True, "result_hash": "aaa"},
        {"subject": "hive", "storage": "s3", "case": "q1", "ok": True, "result_hash": "bbb"},
        {"subject": "hive", "storage": "hdfs", "case": "q2", "ok": False, "result_hash": None},
        {"subject": "trino", "storage": "hdfs", "case": "q3", "ok": True, "result_hash": "ccc"},
    ])
    answers = {"q1": ReferenceAnswer("q1", 4, "aaa"), "q2": ReferenceAnswer("q2", 1, "xyz"),
               "q3": ReferenceAnswer("q3", None, None, "DuckDB: syntax error"),
               "q4": ReferenceAnswer("q4", 5, "ddd")}
    table = reference_table(frame, answers, "DuckDB 9 over tpchgen-cli 9 data at sf 0.01")
    assert dict(zip(table["query"], table["verdict"])) == {
        "q1": "DIFFERS (hive/s3)", "q2": "no run returned a result",
        "q3": "no reference: DuckDB: syntax error", "q4": "no run returned a result"}
    assert list(table["runs compared"]) == [3, 0, 1, 0]
    with pytest.raises(PerfkitError, match=r"differ from the independent reference \(DuckDB 9 over tpchgen-cli 9 "
                                           r"data at sf 0.01\): q1 \(hive/s3\)\."):
        raise_for_reference(table)
    raise_for_reference(table[table["query"] != "q1"])  # nothing differs: no error
