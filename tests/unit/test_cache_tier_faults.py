"""A tier that did not cache, named from its counters (perfkit.presenting.cache_tier_faults): each fault planted in
records shaped as the lab's, and the lab's healthy records (Trino's cache lists S3 itself once a query; Alluxio asks
S3 nothing on a hot read) named by none."""
import pandas as pd

from perfkit.presenting.cache_tier_faults import fault_notes


MB = 1_000_000
STORE = 1024**3  # the lab's store: 1GB, as Alluxio reads it


def _runs(tier="alluxio", fetched=(87_660_572, 0, 0), lists=(0, 0, 0), failed=0, rounds=1, evicted=0,
          held=87_660_572, capacity=STORE):
    rows = []
    for round_ in range(rounds):
        for try_, s3, listed in zip(("cold", "warm", "hot"), fetched, lists):
            rows.append({"subject": "spark", "storage": tier, "case": "q1", "iteration": round_, "try": try_,
                         "s3_bytes": s3, "io": {"server": {"s3_get": 0, "s3_head": 0, "s3_list": listed}},
                         "tier_activity": {"worker cache failed blocks": failed if try_ == "warm" else 0,
                                           "worker blocks evicted": evicted if try_ == "warm" else 0},
                         "tier_holds_bytes": held, "tier_capacity_bytes": capacity})
    return rows


def test_healthy_tiers_as_the_lab_gives_them_are_named_by_nothing():
    healthy = _runs() + _runs(tier="trino-cache", fetched=(19_664_160, 0, 0), lists=(1, 1, 1))  # Trino's own LIST
    assert fault_notes(pd.DataFrame(healthy)) == []


def test_a_write_to_the_store_refused_is_named_by_its_failed_cache_requests_with_its_fix():
    refused = _runs(fetched=(8 * MB, 8 * MB, 8 * MB), failed=4, rounds=2, held=0, capacity=4 * 1024**2)
    [note] = fault_notes(pd.DataFrame(refused))  # the copy bench's 8 MB objects against a 4MB store
    assert note.startswith("spark through alluxio did not keep what it fetched: in 2 rounds the warm and the hot try "
                           "both fetched from S3 (16.0 MB on the hot tries; a write to its store was refused: its "
                           "workers failed 8 cache requests, nothing evicted, 0.0 of its 4.2 MB held (the worker "
                           "logs \"Failed to free ... Blocks removed: 0\": a block larger than the room it could "
                           "make)), so its hot times are S3's. Fix: a store larger than one block of the files"), note
    uncounted = _runs(fetched=(8 * MB, 8 * MB, 8 * MB), held=0, capacity=4 * 1024**2)  # a refusal Alluxio only logs
    [said] = fault_notes(pd.DataFrame(uncounted))
    assert "a write to its store was refused: nothing evicted, 0.0 of its 4.2 MB held" in said, said


def test_a_store_too_small_for_the_working_set_is_named_by_its_evictions():
    small = _runs(fetched=(87 * MB, 60 * MB, 60 * MB), evicted=5, held=16_500_000, capacity=16 * 1024**2)
    [note] = fault_notes(pd.DataFrame(small))
    assert ("(60.0 MB on the hot tries; its store is too small for the working set: its workers evicted 5 blocks to "
            "make room, 16.5 of its 16.8 MB held)") in note, note
    assert note.endswith("Fix: a store larger than the data the queries read (the lab: PERFKIT_LAB_ALLUXIO_STORE; a "
                         "cluster: alluxio.worker.tieredstore.level0.dirs.quota and the levels below it), or fewer "
                         "tables through the tier")


def test_an_eviction_that_removed_nothing_and_a_store_that_took_nothing_for_no_counted_reason():
    stuck = _runs(fetched=(1, 1, 1), held=STORE, capacity=STORE)  # full of blocks it cannot evict
    [note] = fault_notes(pd.DataFrame(stuck))
    assert "its store is full and evicted nothing: 1073.7 of its 1073.7 MB held, no cache request failed" in note
    assert "Fix: free what holds the store (`alluxio fs free`, `alluxio fs unpin` for pinned files)" in note
    [uncounted] = fault_notes(pd.DataFrame(_runs(fetched=(1, 1, 1), held=None, capacity=None)))
    assert "its store took nothing, how full it was not counted)" in uncounted
    assert fault_notes(pd.DataFrame(_runs(fetched=(1, 1, 0)))) == []  # kept by the hot try: a slow fill, not a fault


def test_metadata_synced_on_every_hot_read_is_named_but_trino_s_own_listing_is_not():
    [note] = fault_notes(pd.DataFrame(_runs(lists=(3, 2, 2))))
    assert note.startswith("spark through alluxio asked S3 for metadata on 1 of its 1 hot try (2 HEADs and LISTs at "
                           "most): the tier syncs a file's metadata with S3 on a read"), note
    assert note.endswith("Fix: a sync interval of minutes, or -1 with `alluxio fs loadMetadata -R` after the data "
                         "is placed")
    assert fault_notes(pd.DataFrame(_runs(tier="trino-cache", lists=(1, 1, 1)))) == []
