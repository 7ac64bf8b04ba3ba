"""Promote and demote against a metastore double that answers the statements HiveServer2 answers."""
import json
import re

import pytest

from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.tiers.promote import ORIGINALS, demote, parse_name, partitions, promote
from perfkit.tiers import Alluxio


class Metastore:
    """SHOW TABLES / SHOW PARTITIONS / DESCRIBE FORMATTED / SHOW TBLPROPERTIES /
    ALTER ... SET LOCATION|TBLPROPERTIES."""

    def __init__(self, locations: dict[str, str]):
        self.locations, self.properties, self.statements = dict(locations), {}, []

    def execute(self, sql):
        self.statements.append(sql)
        if sql.startswith("SHOW TABLES IN perfkit LIKE"):
            return [("perfkit", "views")] if "'views'" in sql else []
        if sql.startswith("SHOW PARTITIONS"):
            return [(name,) for name in self.locations]
        if sql.startswith("DESCRIBE FORMATTED"):
            return [("col", "int", ""), ("Location:", self.locations[_name(sql)], None)]
        if sql.startswith("SHOW TBLPROPERTIES"):
            return list(self.properties.items())
        if m := re.match(r"ALTER TABLE \S+ SET TBLPROPERTIES \('(.+?)'='(.*)'\)$", sql):
            self.properties[m[1]] = m[2].replace("\\'", "'")
            return []
        if m := re.match(r"ALTER TABLE \S+ PARTITION \((.+)\) SET LOCATION '(.+)'$", sql):
            self.locations[_name(sql)] = m[2]
            return []
        raise AssertionError(sql)


def _name(sql):
    inner = re.search(r"PARTITION \((.+?)\)", sql)[1]
    return "/".join(f"{k.strip('` ')}={v.strip(chr(39))}" for k, v in (p.split("=") for p in inner.split(", ")))


BASE = "s3a://perfkit-lab/perfkit/datasets/views"


def _views(hours=(9, 10, 11), bucket="perfkit-lab"):
    return {f"year=2026/month=11/day=2/hour={h}": f"s3a://{bucket}/perfkit/datasets/views/h{h}" for h in hours}


def test_the_newest_are_found_by_number_not_by_text():
    store = Metastore(_views(hours=(10, 9, 11)))
    assert [p.name for p in partitions(store, "perfkit.views")] == [
        "year=2026/month=11/day=2/hour=9", "year=2026/month=11/day=2/hour=10", "year=2026/month=11/day=2/hour=11"]


def test_promote_then_demote_restores_every_location_string_for_string():
    lab = load_profile("lab")
    store = Metastore({**_views(), "year=2026/month=11/day=2/hour=12": "s3://perfkit-lab/other/scheme"})
    original = dict(store.locations)
    moves = promote(store, "perfkit.views", newest=2, tier=Alluxio(lab))
    assert [m.partition for m in moves] == ["year=2026/month=11/day=2/hour=11", "year=2026/month=11/day=2/hour=12"]
    assert store.locations["year=2026/month=11/day=2/hour=12"] == f"alluxio://{lab.alluxio_master}/perfkit-lab/other/scheme"
    assert {k: v for k, v in store.locations.items() if k.endswith(("=9", "=10"))} == \
        {k: v for k, v in original.items() if k.endswith(("=9", "=10"))}
    assert json.loads(store.properties[ORIGINALS]) == {m.partition: m.old for m in moves}
    assert promote(store, "perfkit.views", newest=2, tier=Alluxio(lab)) == []  # already there: nothing moves
    back = demote(store, "perfkit.views", tier=Alluxio(lab))
    assert store.locations == original  # s3:// stays s3://, though the profile's scheme is s3a
    assert [m.new for m in back] == [original[m.partition] for m in back]
    assert json.loads(store.properties[ORIGINALS]) == {}


def test_bad_input_is_named_with_the_fix():
    lab = load_profile("lab")
    store = Metastore(_views())
    with pytest.raises(PerfkitError, match=r"newest=0: give how many of the newest partitions"):
        promote(store, "perfkit.views", newest=0, tier=Alluxio(lab))
    with pytest.raises(PerfkitError, match="table perfkit.nosuch does not exist in the metastore"):
        promote(store, "perfkit.nosuch", newest=1, tier=Alluxio(lab))
    with pytest.raises(PerfkitError, match=r"has no partition year=2026/month=11/day=3/hour=1: its partitions are "):
        demote(store, "perfkit.views", tier=Alluxio(lab), names=["year=2026/month=11/day=3/hour=1"])
    with pytest.raises(PerfkitError, match="give it as key=value/key=value"):
        parse_name("2026/11")
    elsewhere = Metastore(_views(bucket="someone-elses"))
    with pytest.raises(PerfkitError, match="s3a://someone-elses/perfkit/datasets/views/h11 is not on the S3 bucket "
                                           "the Alluxio tier mounts"):
        promote(elsewhere, "perfkit.views", newest=1, tier=Alluxio(lab))
    assert not any("SET LOCATION" in s for s in elsewhere.statements)  # refused before anything changed


def test_a_listing_passed_on_moves_the_same_and_lists_nothing_again():
    lab = load_profile("lab")
    store = Metastore(_views())
    original = dict(store.locations)
    listed = partitions(store, "perfkit.views")
    asked = len(store.statements)
    assert demote(store, "perfkit.views", tier=Alluxio(lab), listed=listed) == []
    assert store.statements[asked:] == ["SHOW TBLPROPERTIES perfkit.views"]  # nothing promoted: nothing written
    moves = promote(store, "perfkit.views", newest=1, tier=Alluxio(lab), listed=listed)
    assert [m.partition for m in moves] == ["year=2026/month=11/day=2/hour=11"]
    assert not [s for s in store.statements[asked:] if s.startswith(("SHOW PARTITIONS", "DESCRIBE"))]
    demote(store, "perfkit.views", tier=Alluxio(lab), listed=partitions(store, "perfkit.views"))
    assert store.locations == original
