"""Every interval a report prints says what it is (issue 70, item 3): a confidence interval of the quantity named
("95% CI a–b") or a range labelled as one ("range a–b over N queries"). The checker against hand-made text, then every
report's Findings and shown tables from synthetic records, and the rendered pages of stored runs."""
import html

import pandas as pd
import pytest

from perfkit.presenting.intervals import unlabelled_in_frame, unlabelled_intervals, unlabelled_intervals_html


@pytest.mark.parametrize("text, found", [
    ("median 1.40×, 1.10–2.30×", ["1.10–2.30×"]),
    ("median 0.007, 0.006 to 0.007 s per ms of round trip", ["0.006 to 0.007 s"]),
    ("0.3-0.5×", ["0.3-0.5×"]),
    ("after 2–5 runs of a query", ["2–5 runs"]),
    ("-0.01 to +0.20 s", ["-0.01 to +0.20 s"]),
    ("at round trips from 0 to 60 ms", ["0 to 60 ms"]),
    ("q1 0.0063 (95% CI 0.0032–0.0095), q4 0.0069 (95% CI 0.0027–0.0111)", []),
    ("median 1.40×, range 1.10–2.30×", []),
    ("spark range 10–12 over 2 queries (range 1.0–2.0 MB)", []),
    ("a range of 2–5 runs", []),
    ("the round trip beyond which the tier is faster (its 95% interval: 10–30 ms)", []),
    ("-0.0007 (95% CI -0.0021 to 0.0007)", []),
    ("started 2026-12-07T11:00:00+00:00, run 20261207-110000-abcd", []),  # a date, a time, an id
    ("Python 3.11.2-1, Spark 4.0.1, q1-q4, 11:00–12:00", []),  # versions, names, clock times
    ("1 of 5 queries; 5 × 16 MB; 12.3 → 45.6 MB/s", []),
])
def test_the_checker_finds_a_bare_span_and_leaves_labelled_ones_dates_and_versions(text, found):
    assert unlabelled_intervals(text) == found


def test_a_tables_cells_are_labelled_by_their_header_and_a_pages_styles_are_no_text():
    frame = pd.DataFrame({"95% CI (median ratio)": ["1.10–2.30×"], "note": ["1.1–2.3"], "n": [3]})
    assert unlabelled_in_frame(frame) == ["1.1–2.3"]
    page = ("<style>.x { margin: 0 -1px; width: 10-20px }</style><p>median 1.40×, 1.10–2.30×</p>"
            "<table><thead><tr><th></th><th>a</th><th>95% CI</th></tr></thead>"
            "<tbody><tr><th>q1</th><td>1–2</td><td>3–4</td></tr></tbody></table>"
            '<img src="data:image/png;base64,AAAA1-2"/>')
    assert unlabelled_intervals_html(page) == ["1.10–2.30×", "1–2"]


def _said(found) -> list[str]:
    return unlabelled_intervals("\n".join([*found.sentences, *found.undecided, found.conditions]))


def test_the_query_reports_findings_and_tables_label_every_interval(tmp_path):
    from test_query_report import _run

    from perfkit.presenting.query_report import QueryReport, _range

    report = QueryReport(_run(tmp_path))
    assert _said(report.findings()) == []
    for table in (report.recap(), report.break_even()):
        assert unlabelled_in_frame(table) == []
    assert _range([10, 12, 11], "{:.0f}", "query") == "range 10–12 over 3 queries"
    assert _range([10.0, 10.04], "{:.0f}") == "10"  # the same when printed: one value


def test_the_distance_reports_slopes_come_with_their_intervals(monkeypatch):
    from test_s3_distance import _samples

    from perfkit.experiments.s3_distance import S3Distance
    from perfkit.presenting.distance_report import DistanceReport, fit_slopes, slopes_table

    samples = pd.concat([_samples(rtt_slope=0.02, bandwidth_cost=0.1),
                         _samples(rtt_slope=0.01, bandwidth_cost=0.3).replace({"case": {"q1": "q4"}})])
    sweep = DistanceReport([], S3Distance("lab", rtt_ms=[0, 10, 20, 40], per_connection_mb_s=[200, 40],
                                          runs=3).sweep_record())
    monkeypatch.setattr(sweep, "samples", lambda: samples)
    monkeypatch.setattr(sweep, "break_even_frame", lambda: pd.DataFrame())
    found = sweep.findings()
    assert _said(found) == []
    fits = fit_slopes(samples).set_index(["storage", "query"])
    q1, q4 = fits.loc[("s3", "q1")], fits.loc[("s3", "q4")]
    # each query's slope with its interval, to two significant digits of the interval's width
    assert found.sentences[0].startswith(
        f"trino on S3: q1 {q1['s_per_ms_rtt']:.5f} s per ms of round trip (95% CI {q1['ci_low']:.5f}–"
        f"{q1['ci_high']:.5f}), q4 {q4['s_per_ms_rtt']:.5f} (95% CI {q4['ci_low']:.5f}–{q4['ci_high']:.5f}); "
        "over the 40 ms sweep: q1 0.80 s, q4 0.40 s more; bound by")
    table = slopes_table(fit_slopes(samples))
    assert unlabelled_in_frame(table) == [] and not any("_" in c for c in table.columns)  # plain headers
    assert "s per ms of round trip" in table and "95% CI" in table


def test_the_transfer_reads_st1_payoff_and_copy_reports_label_every_interval(tmp_path):
    from test_cache_tier_stored import _comparison_run, _copy_bench, _sweep_point
    from test_read_findings import _report as read_report
    from test_st1_report import ROUND, _stored as st1_run
    from test_transfer_report import _run as transfer_run

    from perfkit.presenting.payoff_report import PayoffReport
    from perfkit.presenting.st1_report import St1Report
    from perfkit.presenting.tier_copy_report import CopyReport
    from perfkit.presenting.transfer_report import TransferReport
    from perfkit.results import ResultSet

    transfer = TransferReport(transfer_run(tmp_path / "transfer"))
    reads = read_report(tmp_path / "reads")
    st1 = St1Report(st1_run(tmp_path / "st1", **ROUND))
    run = _comparison_run(tmp_path / "tier")
    for rtt in (0, 60):
        _sweep_point(tmp_path / "tier", run.run_id, rtt)
    _copy_bench(tmp_path / "tier", run.run_id)
    payoff, copy = PayoffReport.load(ResultSet.load(run.path)), CopyReport.load(run)
    for report, tables in ((transfer, ("recap",)), (reads, ("table", "aggregates")), (st1, ("table",)),
                           (payoff, ("table",)), (copy, ("copy_table", "counters_table"))):
        assert _said(report.findings()) == [], type(report).__name__
        for table in tables:
            assert unlabelled_in_frame(getattr(report, table)()) == [], table
    assert payoff.table().iloc[0]["S3 ÷ tier at 60 ms"].startswith("2.22× (95% CI ")


def test_the_cache_tier_why_counts_say_range(tmp_path):
    from perfkit.presenting.cache_tier_why import why_sentences

    table = pd.DataFrame([
        {"engine": "trino", "query": q, "storage": "s3", "S3 GETs": gets, "S3 HEADs, LISTs": 1.0,
         "tier metadata RPCs": None, "of which": None, "tier clients started": None, "tier blocks read": None,
         "reading (s)": 0.1, "CPU (s)": 0.2} for q, gets in (("q1", 32.0), ("q2", 34.0))] + [
        {"engine": "trino", "query": q, "storage": "alluxio", "S3 GETs": 0.0, "S3 HEADs, LISTs": 0.0,
         "tier metadata RPCs": rpcs, "of which": "GetStatus 8", "tier clients started": 8.0, "tier blocks read": 16.0,
         "reading (s)": 0.3, "CPU (s)": 0.2} for q, rpcs in (("q1", 17.0), ("q2", 19.0))])
    [sentence] = why_sentences(table)
    assert "on S3 directly range 32–34 GETs" in sentence and "range 17–19 metadata RPCs" in sentence
    assert unlabelled_intervals(sentence) == []


@pytest.mark.parametrize("which", ["query", "reads", "distance"])
def test_a_rendered_report_of_a_stored_run_has_no_unlabelled_interval(which, tmp_path, report_from):
    """The whole page `perfkit report --from RUN.jsonl` renders: its Findings, its tables (a cell labelled by its
    column's header), the lines under them."""
    if which == "query":
        from test_query_report import _run

        path, experiment = _run(tmp_path / "stored").path, "hdfs_vs_s3_queries"
    elif which == "reads":
        from test_reads_report import EXPERIMENT, _run

        path, experiment = _run(tmp_path / "stored", failed=False).path, EXPERIMENT
    else:
        from test_s3_distance import _setting_file

        from perfkit.experiments.s3_distance import S3Distance
        from perfkit.network import NetworkProfile
        from perfkit.results import run_group

        record = S3Distance("lab", rtt_ms=[0, 40], per_connection_mb_s=[40], runs=3, warmup=0).sweep_record()
        settings = [NetworkProfile("rtt 0 ms", rtt_ms=0), NetworkProfile("rtt 40 ms", rtt_ms=40),
                    NetworkProfile("bandwidth 40 MB/s", per_connection_mb_s=40)]
        (tmp_path / "stored").mkdir()
        files = [_setting_file(tmp_path / "stored", record, group, network, 1.0 + network.rtt_ms, extra)
                 for network, group, extra in zip(settings, run_group([s.name for s in settings]), (0.0, 0.8, 0.5))]
        path, experiment = files[0].path, "s3_distance"
    page = report_from(path, experiment)
    assert unlabelled_intervals_html(page) == []
    assert "95% CI" in html.unescape(page) or which == "reads"
