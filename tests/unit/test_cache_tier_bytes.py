"""Where a tier's reads came from (perfkit.presenting.cache_tier_bytes): the tier's bytes from the cache and from S3
against the S3 server's count and the bytes the engine read, run by run; the reads a tier needs before it serves a
query; the Findings' sentence. The figures are the lab's own (Trino's q1 on the 1 M-row taxi table: 887,548 bytes
read; Alluxio's cold fill of the whole table, 87,660,572 bytes)."""
import pandas as pd

from perfkit.presenting.cache_tier_bytes import bytes_table, bytes_sentences, check, disagreements, warmup_table
from tests.unit.test_cache_tier import _comparison

READ = 887_548  # Trino's query stats: q1's physical input bytes
FILL = 87_660_572  # Alluxio's workers: the whole table's blocks, fetched for q1's cold read


def _run(try_, cache, s3, server=None, requests=0, engine=READ, tier="alluxio", subject="trino", round_=0,
         activity=None):
    io = {"engine": {"input_bytes": engine} if engine is not None else {}}
    if server is None:
        io["missing"] = {"server": "not attributable: another perfkit run measured at the same time"}
    else:
        io["server"] = {"s3_bytes_read": server, "s3_get": requests, "s3_head": 0, "s3_list": 0}
    return {"subject": subject, "storage": tier, "case": "q1", "iteration": round_, "try": try_, "cache_bytes": cache,
            "s3_bytes": s3, "io": io, "tier_activity": activity}


def test_each_run_s_bytes_are_checked_against_the_s3_server_and_the_bytes_read():
    frame = pd.DataFrame([
        _run("cold", 0, FILL, server=FILL + 20 * 700, requests=20),  # the server adds each response's headers
        _run("warm", READ, 0, server=3_440, requests=4),  # Trino's own LIST and HEADs: headers and a listing
        _run("hot", READ, 0, server=0),
        _run("hot", READ, 0, server=0, tier="trino-cache"),
        _run("s3-direct", 0, 0, tier="s3")])  # not a tier: left out
    table = bytes_table(frame)
    assert list(table["try"]) == ["cold", "warm", "hot", "hot"] and list(table["tier"])[-1] == "trino-cache"
    cold = table.iloc[0]
    assert (cold["MB read"], cold["MB from cache"], cold["MB from S3 (tier)"]) == (0.888, 0.0, 87.661)
    assert cold["MB from S3 (S3 server)"] == round((FILL + 14_000) / 1e6, 3)
    assert cold["read counted by"] == "the engine (its query stats)"
    assert cold["% of the read from cache"] == 0.0
    assert cold["check"] == f"ok: fetched {FILL / READ:.1f}× the bytes read (the tier's fill)" == \
        "ok: fetched 98.8× the bytes read (the tier's fill)"
    assert list(table["check"])[1:] == ["ok: cache + S3 = the bytes read"] * 3
    assert list(table["% of the read from cache"])[1:] == [100.0] * 3
    assert disagreements(table).empty


def test_counts_that_do_not_add_up_are_said_in_megabytes():
    # the server's window closed before Alluxio's background fill ended (as before the fill was waited for first)
    assert check(READ, 0, FILL, 16_472_189, 8, "") == ("the tier counted 87.66 MB from S3, the S3 server 16.47 MB (the "
                                                       "tier counted more than S3 sent)")
    # Trino's cold read through Alluxio here: 40 GETs, 2.5 MB more sent than Alluxio's workers counted
    assert check(READ, 0, FILL, 90_204_156, 40, "") == (
        "the tier counted 87.66 MB from S3, the S3 server 90.20 MB (S3 sent more than the tier counted: streams "
        "closed early, or reads the tier does not count)")
    # a hot read whose bytes the tier did not all count
    assert check(READ, 500_000, 0, 0, 0, "") == ("0.39 MB of the 0.89 MB read came from neither the cache nor S3 by "
                                                  "the tier's count")
    # within 1% of the bytes in play and a KB of headers per request: the same bytes
    assert check(READ, READ, 0, 3_440, 4, "").startswith("ok")
    assert check(READ, READ, 0, 0.011 * READ + 1, 0, "").startswith("the tier counted 0.00 MB from S3, the S3 "
                                                                     "server 0.01 MB (S3 sent more")
    # Hive's hot read here: Alluxio's workers counted 0.22 MB from the cache and 0.18 MB sent
    assert check(184_000, 221_000, 0, 0, 0, "") == "ok: the cache served 0.04 MB more than the bytes read"
    assert check(float("nan"), READ, 0, 0, 0, "") == ("not checked: no count of the bytes read (the engine keeps none "
                                                      "perfkit reads)")
    assert check(READ, None, None, 0, 0, "") == "not checked: no counters from the tier"
    why = "not attributable: another perfkit run measured at the same time"
    assert check(READ, READ, 0, float("nan"), float("nan"), why) == \
        f"ok: cache + S3 = the bytes read (no count from the S3 server: {why})"
    frame = pd.DataFrame([_run("cold", 0, FILL, server=16_472_189, requests=8), _run("hot", READ, 0, server=0)])
    assert list(disagreements(bytes_table(frame))["try"]) == ["cold"]


def test_a_read_the_engine_does_not_count_is_counted_by_the_tier_s_workers():
    hive = _run("hot", READ, 0, server=0, engine=None, subject="hive", activity={"worker bytes sent": READ})
    table = bytes_table(pd.DataFrame([hive]))
    assert table.loc[0, "read counted by"] == "the tier (bytes its workers sent)" and table.loc[0, "MB read"] == 0.888
    unknown = bytes_table(pd.DataFrame([_run("hot", READ, 0, server=0, engine=None)]))
    assert unknown.loc[0, "read counted by"] == "nobody" and unknown.loc[0, "check"].startswith("not checked")
    # a cold read: the workers' bytes sent hold their fill of whole blocks too (76.9 MB for Hive's cold q1 here)
    filled = _run("cold", 0, FILL, server=FILL, engine=None, subject="hive", activity={"worker bytes sent": 76_861_366})
    cold = bytes_table(pd.DataFrame([filled])).iloc[0]
    assert cold["read counted by"] == "nobody" and cold["check"].startswith("not checked: no count of the bytes read")
    [said] = bytes_sentences(bytes_table(pd.DataFrame([filled, hive])))
    assert said.startswith("Where hive's reads through alluxio came from (the tier's counters): cold 87.66 MB fetched "
                           "from S3 (the S3 server: 87.66 MB), the bytes read not counted; hot 100.0% of 0.89 MB read "
                           "from the cache"), said


def test_the_reads_a_tier_needs_before_it_serves_a_query_are_the_most_any_round_needed():
    def rounds(*shares_by_round, tier="alluxio"):  # each round's cold, warm, hot share of the read from the cache
        return [_run(try_, int(READ * share), READ - int(READ * share), server=READ - int(READ * share), tier=tier,
                     round_=r) for r, shares in enumerate(shares_by_round)
                for try_, share in zip(("cold", "warm", "hot"), shares)]

    frame = pd.DataFrame(rounds((0, 1, 1), (0, 0.5, 1)) + rounds((0, 1, 0.8), tier="trino-cache"))
    warmup = warmup_table(bytes_table(frame)).set_index("tier")
    assert warmup.loc["alluxio", "reads before 99% from the cache"] == 2  # round 2's warm read was half from S3
    assert warmup.loc["alluxio", ["read 1 (cold): % from cache", "read 2 (warm): % from cache",
                                  "read 3 (hot): % from cache"]].tolist() == [0.0, 75.0, 100.0]  # medians
    assert pd.isna(warmup.loc["trino-cache", "reads before 99% from the cache"])  # its hot read missed: never
    sentences = bytes_sentences(bytes_table(frame))
    assert sentences[0].endswith("; at least 99% of each query's bytes from the cache after 2 reads.")
    assert sentences[1].endswith("; not 99% from the cache within 3 reads.")


def test_the_findings_say_per_try_where_the_bytes_came_from_by_both_counts(tmp_path):
    c = _comparison(tmp_path, [("s3", "cold", 1.0, 0, 0), ("alluxio", "cold", 5.0, 0, 87.66),
                               ("alluxio", "warm", 1.0, 0.89, 0), ("alluxio", "hot", 0.8, 0.89, 0)])
    c.storages = c.results.config["parameters"]["storages"] = ["s3", "alluxio"]
    for record in c.results.records:  # both rounds: the engine read 0.89 MB; the server counted the tier's S3 bytes
        fetched = record.params.get("s3_bytes", 0)
        record.io = {"engine": {"input_bytes": 890_000},
                     "server": {"s3_bytes_read": fetched + (5_000 if fetched else 0), "s3_get": 10 if fetched else 0}}
    from perfkit.presenting import report_of

    said = [s for s in report_of(c).findings().sentences if s.startswith("Where trino's reads")]
    assert said == [
        "Where trino's reads through alluxio came from (the tier's counters): cold 0.0% of 1.78 MB read from the "
        "cache, 175.32 MB fetched from S3 (the S3 server: 175.33 MB); warm 100.0% of 1.78 MB read from the cache, "
        "0.00 MB fetched from S3 (the S3 server: 0.00 MB); hot 100.0% of 1.78 MB read from the cache, 0.00 MB "
        "fetched from S3 (the S3 server: 0.00 MB); at least 99% of each query's bytes from the cache after 1 read."]
    assert not [u for u in report_of(c).findings().undecided if "do not add up" in u]


def test_a_tier_whose_emptying_left_blocks_held_is_named_with_what_it_does_to_the_cold_tries(tmp_path):
    c = _comparison(tmp_path, [("s3", "cold", 1.0, 0, 0), ("alluxio", "cold", 5.0, 0.11, 76.7),
                               ("alluxio", "hot", 0.8, 0.89, 0)])
    c.storages = c.results.config["parameters"]["storages"] = ["s3", "alluxio"]
    cold = [r for r in c.results.records if r.storage == "alluxio" and r.params["try"] == "cold"]
    cold[0].params.update(emptied=("Alluxio freed /perfkit-lab (the bucket's mount), yet its workers still hold "
                                   "23.9 MB; page cache dropped"), held_before_bytes=23_912_345)  # as a run records it
    cold[1].params.update(emptied="Alluxio freed /perfkit-lab (the bucket's mount); page cache dropped",
                          held_before_bytes=0)  # the second round's free worked
    from perfkit.presenting import report_of

    [said] = [u for u in report_of(c).findings().undecided if u.startswith("emptying")]
    assert said.startswith("emptying alluxio left 23.9 MB held before 1 of its 2 cold tries: its workers did not "
                           "free those blocks"), said
    assert said.endswith("Fix: free the mount again once nothing reads it, or restart the workers (the lab: "
                         "`perfkit lab down`, then `perfkit lab up`)")
    counters = report_of(c).counters_table()
    assert list(counters.loc[counters["try"] == "cold", "MB held before"]) == [23.91, 0.0]
    del cold[0].params["held_before_bytes"], cold[1].params["held_before_bytes"]  # a run recorded before the count:
    [said_before] = [u for u in report_of(c).findings().undecided if u.startswith("emptying")]  # from its words
    assert said_before == said
    cold[0].params["emptied"] = cold[1].params["emptied"]
    assert not [u for u in report_of(c).findings().undecided if u.startswith("emptying")]
