import json
import re
from pathlib import Path

import nbformat

from perfkit.findings import FINDINGS_MIME
from perfkit.presenting.intervals import unlabelled_intervals_html
from perfkit.report import render
from perfkit.report.outline import outline


def test_the_notebook_renders_end_to_end_with_its_recap(lab, tmp_path, monkeypatch, reads_well):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    # two of the taxi queries (the smallest and the largest aggregation): the recap's verdicts are per query
    # Spark and Trino (Hive answers in test_engine_conformance and test_suites_lab)
    # the break-even's copy by `stream` alone (DistCp, a local MapReduce job here: test_transfer)
    params = {"rows": 5_000, "files": 2, "runs": 3, "warmup": 1, "engines": ["spark", "trino"], "queries": ["q1", "q4"],
              "copy_methods": ["stream"]}
    report = render("notebooks/hdfs_vs_s3_queries.ipynb", params, out_root=tmp_path / "reports")
    assert report.ok, report.error
    page = report.html.read_text()
    for heading in ("HDFS median (s)", "S3 median (s)", "S3 ÷ HDFS time (median)", "verdict", "copied by"):
        assert heading in page
    assert "S3 on this machine, no emulated network (network local): measured" in page  # the first line says where
    assert "HDFS's reads were counted run by run (above), not per window." in page  # the lab: every 10 ms
    io_section = page[page.index("What each run asked of the storage"):]
    io_section = io_section[:io_section.index("Prices:")]
    assert "<th>HDFS MB (server)</th>" in io_section and "NaN" not in io_section  # a count not kept is blank
    said_under = page[page.index("Prices:"):]  # S3 at local: no emulator counts S3's bytes, and a line says so
    assert "the server's S3 MB read of" in said_under and "no network emulator between" in said_under
    assert "data:image/png;base64" in page  # plots embedded: the page stands alone
    reads_well(page)
    assert unlabelled_intervals_html(page) == []  # every "a–b" a 95% CI or a labelled range (issue 70)
    assert "No run failed." in page
    # an embedded plot's base64 may spell any of these (CI once found "WARN" in a PNG): look at the text only
    text = re.sub(r"data:image/[a-z+]+;base64,[A-Za-z0-9+/=]+", "", page)
    for noise in ("NativeCodeLoader", "log4j", "incubator modules", "setLogLevel", "WARN"):
        assert noise not in text, noise  # JVM and Spark log lines stay out of a shared report
    assert "QueryComparison(" not in page  # code cells hidden from readers ...
    executed = report.notebook.read_text()
    assert "QueryComparison(" in executed  # ... and kept in the executed notebook
    index = (tmp_path / "reports" / "index.html").read_text()
    assert report.html.name in index and "rows=5000" in index
    nb = json.loads(report.notebook.read_text())
    assert nb["metadata"]["papermill"]["parameters"]["rows"] == 5_000
    assert nb["metadata"]["perfkit"]["ok"] is True
    # the same report again from the run's file alone (issue 45): every Finding, table and plot, nothing measured
    _again_with_the_same_findings(report, "notebooks/hdfs_vs_s3_queries.ipynb",
                                  tmp_path / "results" / "hdfs_vs_s3_queries", tmp_path / "again")


def _again_with_the_same_findings(report, notebook: str, results: Path, out: Path, same_sections: bool = True):
    """The report rendered again from one of its run's files alone (`perfkit report --from`'s path; issue 69): the
    same Findings (and sections) as the first render, and no run recorded or touched."""
    stored = sorted(results.glob("*.jsonl"))
    before = {path: path.stat().st_mtime_ns for path in stored}
    again = render(notebook, {"results": str(stored[-1])}, out_root=out)
    assert again.ok, again.error
    first, second = (nbformat.read(r.notebook, as_version=4) for r in (report, again))
    assert _findings(second) == _findings(first) and _findings(first)
    if same_sections:
        assert outline(second) == outline(first)
    assert {path: path.stat().st_mtime_ns for path in sorted(results.glob("*.jsonl"))} == before


def _findings(nb) -> list[str]:
    """Every Findings sentence of an executed notebook, as shown."""
    return [s for cell in nb.cells if cell.cell_type == "code" for output in cell.get("outputs", [])
            for s in output.get("data", {}).get(FINDINGS_MIME, {}).get("sentences", [])]


def test_the_s3_distance_notebook_fits_time_against_the_round_trip(lab, tmp_path, monkeypatch, reads_well):
    from perfkit.network import PROFILES

    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    params = {"rtt_ms": [0, 40], "per_connection_mb_s": [20], "rows": 20_000, "files": 2, "runs": 2, "warmup": 0,
              "queries": ["q1"]}
    try:
        report = render("notebooks/s3_distance.ipynb", params, out_root=tmp_path / "reports")
    finally:
        lab.set_network(PROFILES["local"])  # the sweep leaves the lab behind its last setting
    assert report.ok, report.error
    page = report.html.read_text()
    reads_well(page)
    for shown in ("s per ms of round trip", "bound by", "rtt 40 ms: 40 ms round trip",
                  "bandwidth 20 MB/s: 0 ms round trip, 20 MB/s per connection",
                  "rtt 0 ms: 0 ms round trip",
                  "small GET, direct (ms)", "data:image/png;base64"):
        assert shown in page, shown
    assert unlabelled_intervals_html(page) == []
    runs = sorted((tmp_path / "results" / "s3_distance").glob("*.jsonl"))
    assert len(runs) == 3  # one run per setting, each with its own calibration
    first = json.loads(runs[0].read_text().splitlines()[0])
    assert first["config"]["network"]["network"]["rtt_ms"] in (0, 40)
    # the whole sweep again from one setting's file: the others are found beside it
    _again_with_the_same_findings(report, "notebooks/s3_distance.ipynb", tmp_path / "results" / "s3_distance",
                                  tmp_path / "again")


def test_the_transfer_notebook_shows_every_method_measured_or_unavailable(lab, tmp_path, monkeypatch, reads_well):
    from perfkit.transfer import REGISTRY

    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    params = {"files": 3, "mean_mb": 1, "concurrency": [2], "checksum": True}
    report = render("notebooks/s3_to_hdfs_transfer.ipynb", params, out_root=tmp_path / "reports")
    assert report.ok, report.error
    page = report.html.read_text()
    reads_well(page)
    for heading in ("Duration", "Method", "MB/s", "data:image/png;base64"):
        assert heading in page
    for method in REGISTRY:
        assert method in page
    assert "unavailable: s3-dist-cp is not on PATH" in page
    assert unlabelled_intervals_html(page) == []
    _again_with_the_same_findings(report, "notebooks/s3_to_hdfs_transfer.ipynb",
                                  tmp_path / "results" / "s3_to_hdfs_transfer", tmp_path / "again",
                                  same_sections=False)


def test_the_st1_notebook_labels_measured_and_modelled(lab, tmp_path, monkeypatch, reads_well):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    report = render("notebooks/st1_throughput_burst.ipynb", {"files": 2, "file_mb": 8}, out_root=tmp_path / "reports")
    assert report.ok, report.error
    page = report.html.read_text()
    reads_well(page)
    for text in ("read time (s)", "write MiB/s", "cost per month (USD)", "measured (lab, TestDFSIO 2 × 8 MB)",
                 "modelled (400 × 4 GB)", "page cache dropped",
                 "4 × 512 GiB", "2 × 1 TiB", "1 × 2 TiB", "data:image/png;base64"):
        assert text in page
    assert unlabelled_intervals_html(page) == []
    _again_with_the_same_findings(report, "notebooks/st1_throughput_burst.ipynb",
                                  tmp_path / "results" / "st1_throughput_burst", tmp_path / "again",
                                  same_sections=False)


def test_the_reads_notebook_compares_nfs_and_hdfs_for_both_protocols(lab, tmp_path, monkeypatch, reads_well):
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path / "results"))
    params = {"jobs": 2, "files_per_job": 2, "files": 4, "mean_mb": 1, "large_file_mb": 4}
    report = render("notebooks/nfs_vs_hdfs_reads.ipynb", params, out_root=tmp_path / "reports")
    assert report.ok, report.error
    page = report.html.read_text()
    reads_well(page)
    for text in ("random-files", "large-file", "libnfs (nfs)", "hdfs-cli (hdfs)", "webhdfs (hdfs)",
                 "fuse-hdfs (hdfs)", "gohdfs (hdfs)", "unavailable: no NFS mount", "data nodes", "replicas",
                 "data:image/png;base64"):
        assert text in page
    assert unlabelled_intervals_html(page) == []
    _again_with_the_same_findings(report, "notebooks/nfs_vs_hdfs_reads.ipynb",
                                  tmp_path / "results" / "nfs_vs_hdfs_reads", tmp_path / "again",
                                  same_sections=False)
