"""A tier that did not cache, named from its counters (perfkit.presenting.cache_tier_faults): each fault planted in
records shaped as the lab's, and the lab's healthy records (Trino's cache lists S3 itself once a query; Alluxio asks
S3 nothing on a hot read) named by none."""
import pandas as pd

from perfkit.presenting.cache_tier_faults import fault_notes


def _runs(tier="alluxio", fetched=(87_660_572, 0, 0), lists=(0, 0, 0), failed=0, rounds=1):
    rows = []
    for round_ in range(rounds):
        for try_, s3, listed in zip(("cold", "warm", "hot"), fetched, lists):
            rows.append({"subject": "spark", "storage": tier, "case": "q1", "iteration": round_, "try": try_,
                         "s3_bytes": s3, "io": {"server": {"s3_get": 0, "s3_head": 0, "s3_list": listed}},
                         "tier_activity": {"worker cache failed blocks": failed if try_ == "warm" else 0}})
    return rows


def test_healthy_tiers_as_the_lab_gives_them_are_named_by_nothing():
    healthy = _runs() + _runs(tier="trino-cache", fetched=(19_664_160, 0, 0), lists=(1, 1, 1))  # Trino's own LIST
    assert fault_notes(pd.DataFrame(healthy)) == []


def test_a_tier_that_did_not_keep_what_it_fetched_is_named_with_its_failed_cache_requests_and_the_fix():
    full = _runs(fetched=(8_000_000, 8_000_000, 8_000_000), failed=4, rounds=2)  # the copy bench's 8 MB objects
    [note] = fault_notes(pd.DataFrame(full))
    assert note.startswith("spark through alluxio did not keep what it fetched: in 2 rounds the warm and the hot try "
                           "both fetched from S3 (16.0 MB on the hot tries; its workers failed 8 cache requests), so "
                           "its hot times are S3's. Fix: a store with room for the data"), note
    assert "\"Failed to free\"" in note
    [uncounted] = fault_notes(pd.DataFrame(_runs(fetched=(1, 1, 1))))
    assert "its store took nothing" in uncounted
    assert fault_notes(pd.DataFrame(_runs(fetched=(1, 1, 0)))) == []  # kept by the hot try: a slow fill, not a fault


def test_metadata_synced_on_every_hot_read_is_named_but_trino_s_own_listing_is_not():
    [note] = fault_notes(pd.DataFrame(_runs(lists=(3, 2, 2))))
    assert note.startswith("spark through alluxio asked S3 for metadata on 1 of its 1 hot try (2 HEADs and LISTs at "
                           "most): the tier syncs a file's metadata with S3 on a read"), note
    assert note.endswith("Fix: a sync interval of minutes, or -1 with `alluxio fs loadMetadata -R` after the data "
                         "is placed")
    assert fault_notes(pd.DataFrame(_runs(tier="trino-cache", lists=(1, 1, 1)))) == []
