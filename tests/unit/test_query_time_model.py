"""The query-time model recovers the terms it was made from, predicts sizes and networks it never saw, and says
what a design lacks. Synthetic runs: times computed from known terms, with a relative scatter."""
import math

import numpy as np
import pandas as pd
import pytest

from perfkit.model.query_time import DesignError, fit

# an engine's truth: each query's fixed cost and cost per byte, the S3 terms
TRUTH = {"a": {"q1": 0.30, "scan": 0.50}, "c": {"q1": 2e-9, "scan": 25e-9}, "u": 0.4e-3, "rt": 0.25, "bw": 0.125}
# per query at make report's size: bytes read and requests made (the scan reads every column)
WORK = {"q1": (0.9e6, 32), "scan": (87e6, 180)}
SIZES = [1, 10]  # the fit's data sizes, as multiples: bytes and requests grow with the data
NETWORKS = [(0.0024, 370e6), (0.022, 85e6), (0.042, 40e6)]  # (small GET s, one connection's bytes/s)


def true_time(query, storage, bytes, requests, g_s, w_bytes_s):
    own = TRUTH["a"][query] + TRUTH["c"][query] * bytes
    if storage == "hdfs":
        return own
    return own + TRUTH["u"] * requests + TRUTH["rt"] * requests * g_s + TRUTH["bw"] * bytes / w_bytes_s


def runs(scatter=0.03, seed=1, sizes=SIZES, networks=NETWORKS, repeats=5, engine="trino"):
    rng = np.random.default_rng(seed)
    rows = []
    for query, (bytes1, requests1) in WORK.items():
        for size in sizes:
            bytes, requests = bytes1 * size, requests1 * size
            cells = [("hdfs", None, None, None)] + [("s3", requests, g, w) for g, w in networks]
            for storage, r, g, w in cells:
                for _ in range(repeats):
                    t = true_time(query, storage, bytes, r, g, w) * (1 + rng.normal(0, scatter))
                    rows.append({"engine": engine, "query": query, "storage": storage, "wall_s": t, "bytes": bytes,
                                 "requests": r, "g_s": g, "w_bytes_s": w})
    return pd.DataFrame(rows)


def test_the_fit_recovers_the_terms_the_runs_were_made_from():
    model = fit(runs())
    fitted = model.engines["trino"]
    for name in ("u", "rt", "bw"):
        assert fitted.term(name)[0] == pytest.approx(TRUTH[name], rel=0.15)
    for query in WORK:
        assert fitted.term(f"a[{query}]")[0] == pytest.approx(TRUTH["a"][query], rel=0.1)
    # the scan's bytes are most of its time: its cost per byte is sharp (q1's 9 MB at most are 6% of its time)
    assert fitted.term("c[scan]")[0] == pytest.approx(TRUTH["c"]["scan"], rel=0.1)


def test_without_scatter_the_terms_are_exact():
    fitted = fit(runs(scatter=0.0)).engines["trino"]
    for name in ("u", "rt", "bw"):
        assert fitted.term(name)[0] == pytest.approx(TRUTH[name], rel=1e-6)


def test_the_intervals_hold_their_level_over_many_fits():
    """Each term's 95% interval holds the truth in about 95 of 100 fits (88 or fewer: under 0.1% by chance), and a
    prediction's 95% interval a new run's time at a size and network the fit never saw (the scan, 100x, far S3)."""
    covered, predicted, new_runs = {}, [], np.random.default_rng(999)
    bytes, requests = WORK["scan"][0] * 100, WORK["scan"][1] * 100
    terms = {**{name: TRUTH[name] for name in ("u", "rt", "bw")},
             **{f"{name}[{q}]": TRUTH[name][q] for q in WORK for name in ("a", "c")}}
    for seed in range(100):
        model = fit(runs(seed=seed))
        for name, truth in terms.items():
            _, low, high = model.engines["trino"].term(name)
            covered.setdefault(name, []).append(low <= truth <= high)
        got = model.predict("trino", "scan", "s3", bytes=bytes, requests=requests, g_s=0.062, w_bytes_s=30e6)
        new_run = true_time("scan", "s3", bytes, requests, 0.062, 30e6) * (1 + new_runs.normal(0, 0.03))
        predicted.append(got.low <= new_run <= got.high)
    assert {name: sum(hits) for name, hits in covered.items() if not 88 < sum(hits) <= 100} == {}
    assert 88 < sum(predicted) <= 100


@pytest.mark.parametrize("storage, size, g_s, w_bytes_s", [
    ("s3", 100, 0.005, 500e6),  # 100x the data, a near S3 the fit never saw
    ("s3", 100, 0.062, 30e6),  # ... and a far one
    ("hdfs", 100, None, None),
])
def test_a_prediction_at_a_size_and_network_the_fit_never_saw_holds_the_truth(storage, size, g_s, w_bytes_s):
    model = fit(runs())
    for query, (bytes1, requests1) in WORK.items():
        bytes, requests = bytes1 * size, requests1 * size
        got = model.predict("trino", query, storage, bytes=bytes, requests=requests, g_s=g_s or 0.0,
                            w_bytes_s=w_bytes_s or math.inf)
        truth = true_time(query, storage, bytes, requests, g_s, w_bytes_s)
        assert got.low <= truth <= got.high, (query, got, truth)
        assert got.seconds == pytest.approx(truth, rel=0.15)
        assert got.engine_s + got.latency_s + got.bandwidth_s == pytest.approx(got.seconds)


def test_the_regime_is_the_larger_network_term():
    model = fit(runs(scatter=0.0))
    # q1 at make report's size: 32 requests' round trips against 0.9 MB: latency-bound
    near = model.predict("trino", "q1", "s3", bytes=0.9e6, requests=32, g_s=0.022, w_bytes_s=85e6)
    assert near.latency_s == pytest.approx(32 * (TRUTH["u"] + TRUTH["rt"] * 0.022))
    assert near.regime == "latency-bound"
    # the scan at 100x in large files (2,000 requests) on a thin pipe: 8.7 GB at 30 MB/s a connection
    far = model.predict("trino", "scan", "s3", bytes=8.7e9, requests=2_000, g_s=0.022, w_bytes_s=30e6)
    assert far.bandwidth_s == pytest.approx(TRUTH["bw"] * 8.7e9 / 30e6)
    assert far.regime == "bandwidth-bound"
    assert model.predict("trino", "q1", "hdfs", bytes=0.9e6).regime == "no S3 network terms"


@pytest.mark.parametrize("design, lacking", [
    ({"sizes": [1]}, "query q1 at two or more data sizes"),
    ({"networks": [(0.022, 85e6), (0.042, 85e6)]}, "S3 at two or more bandwidths per connection"),
    ({"networks": [(0.022, 85e6), (0.022, 40e6)]}, "S3 at two or more round trips"),
])
def test_a_design_that_cannot_separate_the_terms_says_what_to_run(design, lacking):
    with pytest.raises(DesignError, match=f"trino: the runs cannot separate the model's terms; they need .*{lacking}"):
        fit(runs(**design))


def test_a_prediction_outside_the_fit_is_refused_by_name():
    model = fit(runs())
    with pytest.raises(Exception, match="engine 'spark' was not in the fit"):
        model.predict("spark", "q1", "s3", bytes=1e6)
    with pytest.raises(Exception, match="query 'q9' was not in trino's fit"):
        model.predict("trino", "q9", "s3", bytes=1e6)


def test_observations_are_read_from_the_records_server_counters_and_calibration():
    from perfkit.model.observations import observations
    from perfkit.results import Record, records_frame

    network = {"name": "ec2-s3", "small_get_ms": 22.0, "one_connection_mb_s": 85.0}
    s3_io = {"server": {"s3_get": 32.0, "s3_head": 24.0, "s3_list": 1.0, "s3_bytes_read": 962889.0},
             "engine": {"s3_get": 30, "s3_head": 24, "s3_list": 1, "s3_bytes_read": 927584}}
    engine_only = {"server": {}, "engine": {"hdfs_bytes_read": 890788}}

    def record(storage, io, phase="measured", ok=True):
        return Record("r1", "hdfs_vs_s3_queries", "trino", storage, "q1", phase, 0, "2026-12-07T13:24:33+00:00",
                      0.5 if ok else None, ok=ok, io=io,
                      config={"network": network, "dataset": {"one_copy_bytes": 87_000_000}})

    rows = [record("s3", s3_io), record("hdfs", engine_only), record("s3", s3_io, phase="warmup"),
            record("s3", s3_io, ok=False), record("s3", {})]
    unconfigured = Record("r1", "hdfs_vs_s3_queries", "trino", "s3", "q1", "measured", 1, "2026-12-07T13:24:34+00:00",
                          0.5, io=s3_io)  # a live run's record: its run's config is the ResultSet's, not its own
    frame, left_out = observations(records_frame([r.__dict__ for r in [*rows, unconfigured]]))
    assert left_out == 2  # the run with no counters at all, the S3 run with no calibration
    assert frame.astype(object).where(frame.notna(), None).to_dict("records") == [
        {"engine": "trino", "query": "q1", "storage": "s3", "wall_s": 0.5, "bytes": 962889.0, "requests": 57.0,
         "g_s": 0.022, "w_bytes_s": 85e6, "table_bytes": 87e6},  # the server's counts, not the engine's
        {"engine": "trino", "query": "q1", "storage": "hdfs", "wall_s": 0.5, "bytes": 890788.0, "requests": None,
         "g_s": None, "w_bytes_s": None, "table_bytes": 87e6}]  # the engine's bytes where the server counted none
