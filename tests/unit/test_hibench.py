"""perfkit's HiBench tables: HiBench's scales and schemas, rows fixed by (seed, id) whatever the partitioning,
every visit's URL a page of rankings, and the suite's write workloads described."""
import pytest

from perfkit import interrupts
from perfkit.datasets import hibench
from perfkit.errors import PerfkitError
from perfkit.suites import open_suite


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    from pyspark.sql import SparkSession

    sigint = interrupts.sigint_handler()  # pyspark installs its own: put back after, as SparkEngine.close does
    session = (SparkSession.builder.master("local[1]").appName("perfkit-unit-hibench")
               .config("spark.ui.enabled", "false").config("spark.sql.session.timeZone", "UTC")
               .config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
               .config("spark.driver.extraJavaOptions", "-XX:TieredStopAtLevel=1")  # C1 only: a third less CPU
               .config("spark.sql.warehouse.dir", str(tmp_path_factory.mktemp("warehouse"))).getOrCreate())
    yield session
    session.stop()  # later tests start their own sessions, with their own settings
    interrupts.restore_sigint(sigint)  # pyspark 3.5's, left behind, raises AttributeError instead of Ctrl-C


def test_scales_are_hibenchs_and_a_bad_one_names_the_choices():
    assert hibench.scale_rows("tiny") == (1_000, 120) and hibench.scale_rows("huge") == (10_000_000, 1_200_000)
    with pytest.raises(PerfkitError, match="scale 'medium': HiBench's scales are tiny, small, large, huge, gigantic"):
        hibench.scale_rows("medium")


def test_rows_depend_on_the_seed_and_the_id_only(spark):
    one = sorted(hibench.uservisits_frame(spark, "tiny", partitions=1).collect())
    three = sorted(hibench.uservisits_frame(spark, "tiny", partitions=3).collect())
    assert one == three and len(one) == 1_000
    assert sorted(hibench.uservisits_frame(spark, "tiny", seed=7).collect()) != one


def test_frames_have_hibenchs_columns_and_value_ranges(spark):
    visits = hibench.uservisits_frame(spark, "tiny")
    rankings = hibench.rankings_frame(spark, "tiny")
    type_names = {"string": "string", "double": "double", "int": "int"}
    assert [(f.name, f.dataType.simpleString()) for f in visits.schema] == \
        [(n, type_names[t]) for n, t in hibench.USERVISITS_COLUMNS]
    assert [(f.name, f.dataType.simpleString()) for f in rankings.schema] == hibench.RANKINGS_COLUMNS
    rows = visits.collect()
    for row in rows:
        a, b, c, d = map(int, row.sourceip.split("."))
        assert 1 <= a <= 254 and 0 <= b <= 254 and 0 <= c <= 254 and 1 <= d <= 254
        assert "1970-01-01" <= row.visitdate <= "2012-05-01" and 0 <= row.adrevenue < 1 and 1 <= row.duration <= 10
    pages = {r.pageurl for r in rankings.collect()}
    assert len(pages) == 120 and {r.desturl for r in rows} <= pages  # every visit joins a page
    assert sum("1999-01-01" <= r.visitdate <= "2000-01-01" for r in rows) > 0  # the join workload has rows
    assert all(r.pagerank >= 1 and 1 <= r.avgduration <= 99 for r in rankings.collect())


def test_the_suite_has_two_write_workloads_and_a_join():
    suite = open_suite("hibench")
    assert [(q.id, q.writes) for q in suite.queries] == [
        ("scan", "uservisits_copy"), ("aggregation", "uservisits_aggre"), ("join", None)]
    assert suite.dataset == "hibench" and suite.targets["uservisits_copy"] == {"like": "uservisits"}
    assert "INSERT INTO" in suite.queries[0].text("trino") and "INSERT OVERWRITE" in suite.queries[0].text("hive")
