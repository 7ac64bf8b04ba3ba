"""Issue 11 on the lab: the taxi suite through Trino's file-system cache gives S3's results; the cold try after
emptying reads from S3 and the hot try does not, by Trino's own cache counters."""
from perfkit.experiments.cache_tier import CacheTierComparison
from perfkit.suites import DEFAULT_TABLE


def test_trino_cache_same_results_as_s3_cold_reads_s3_and_hot_reads_the_cache(profile):
    c = CacheTierComparison(profile, engines=["trino", "spark"], storages=["s3", "trino-cache"], runs=1,
                            queries=["q1"], query_timeout_s=300)
    c.run(progress=False)
    frame = c.results.to_frame()
    ok = frame[frame["ok"]]
    for (engine, case), group in ok.groupby(["subject", "case"]):
        assert group["result_hash"].nunique() == 1, (engine, case)  # S3 directly and through the cache alike
    assert set(ok.loc[ok["storage"] == "trino-cache", "subject"]) == {"trino"}
    spark_tier = frame[(frame["subject"] == "spark") & (frame["storage"] == "trino-cache")]
    assert list(spark_tier["error"]) == ["unavailable: trino-cache is read through trino only, not spark"]
    counters = c.counters_table()
    taxi_mb = c.tableset.tables["s3"][DEFAULT_TABLE].bytes / 1e6
    for case, tries in counters.groupby("query"):
        by_try = tries.set_index("try")
        assert by_try.loc["cold", "MB from S3"] > 0.5 * taxi_mb, case  # the emptied cache fetched from S3
        assert by_try.loc["hot", "MB from S3"] == 0 and by_try.loc["hot", "MB from cache"] > 0, case
        assert by_try.loc["cold", "emptied before"].startswith("Trino restarted with its cache folder emptied")
    assert list(counters["check"]) == ["ok"] * len(counters)
    assert set(c.tries_table()["tier"]) == {"trino-cache"}
