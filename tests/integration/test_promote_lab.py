"""Issue 11 on the lab: the newest partitions of a pageview table promoted to Alluxio and demoted back through the
shared metastore; queries over the mixed table give S3's answer, and S3's objects are untouched."""
from perfkit.storages import s3 as s3_storage
from perfkit.tiers.alluxio_client import AlluxioClient
from perfkit.datasets.pageviews import place_pageviews
from perfkit.engines import get_engine
from perfkit.tiers.promote import demote, partitions, promote
from perfkit.tiers import Alluxio

SQL = ("SELECT year, month, day, hour, count(*), sum(bytes), count(DISTINCT user_id) FROM {t} "
       "GROUP BY year, month, day, hour ORDER BY year, month, day, hour")


def _objects(profile, table):
    s3 = s3_storage.shared_s3_client(profile)
    prefix = profile.s3_key("datasets", table.split(".")[1]) + "/"
    return {o["Key"]: o["ETag"] for page in s3.get_paginator("list_objects_v2").paginate(
        Bucket=profile.s3_bucket, Prefix=prefix) for o in page.get("Contents", [])}


def test_promote_then_demote_reads_the_tier_and_restores_the_locations_exactly(profile):
    tier = Alluxio(profile)
    with get_engine("hive", profile) as hive:
        table = place_pageviews(profile, hive, days=2, hours=3)
        before = partitions(hive, table)
        objects = _objects(profile, table)
        assert len(before) == 6 and len(objects) == 6
        with get_engine("trino", profile) as trino, get_engine("spark", profile) as spark:
            on_s3 = {e.name: [tuple(map(str, r)) for r in e.execute(SQL.format(t=table))] for e in (trino, spark)}
            assert on_s3["trino"] == on_s3["spark"] and len(on_s3["trino"]) == 6
            moves = promote(hive, table, newest=2, tier=tier)
            mixed = partitions(hive, table)
            assert [m.partition for m in moves] == [p.name for p in before[-2:]]
            assert [p.location for p in mixed[:4]] == [p.location for p in before[:4]]
            assert [p.location for p in mixed[4:]] == [tier.location(p.location) for p in before[4:]]
            counters = AlluxioClient(profile).worker_counters()
            for engine in (trino, spark):
                assert [tuple(map(str, r)) for r in engine.execute(SQL.format(t=table))] == on_s3[engine.name]
            served = [a - b for a, b in zip(AlluxioClient(profile).worker_counters(), counters)]
            assert sum(served) > 0  # the promoted partitions were read through Alluxio
        back = demote(hive, table, tier=tier)
        assert [m.partition for m in back] == [m.partition for m in moves]
        assert [(p.name, p.location) for p in partitions(hive, table)] == [(p.name, p.location) for p in before]
    assert _objects(profile, table) == objects  # nothing copied, written or deleted on S3
