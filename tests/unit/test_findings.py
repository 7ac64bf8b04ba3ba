"""Findings: sentences computed from a comparison's rows, shown first; folded details; progress in reports."""
import io
import re

import numpy as np
import pandas as pd
import pytest

from perfkit import progress
from perfkit.findings import FINDINGS_MIME, Findings, plural, storage_verdicts
from perfkit.report import fold
from perfkit.report.rendering import report_kernel


def rows(subject, storage, cases):
    """stats.compare_storages-shaped rows: (case, speedup, verdict)."""
    return pd.DataFrame([{"subject": subject, "storage": storage, "case": case, "speedup": speedup,
                          "verdict": verdict} for case, speedup, verdict in cases])


def test_slower_faster_and_same_are_counted_with_their_spread():
    comparison = pd.concat([
        rows("Trino 476", "s3", [("q1", 1.4, "HDFS 1.40× faster"), ("q2", 2.0, "HDFS 2.00× faster"),
                                 ("q3", 1.1, "HDFS 1.10× faster"), ("q4", 1.02, "no difference beyond noise")]),
        rows("Spark 4.3.0", "s3", [("q1", 0.5, "S3 2.00× faster"), ("q2", np.nan, "not comparable: results differ")]),
    ])
    sentences, undecided = storage_verdicts(comparison, "hdfs")
    assert sentences[0] == ("Trino 476: S3 slower than HDFS on 3 of 4 queries beyond noise (median 1.40×, range "
                            "1.10–2.00×); no difference beyond noise on 1.")
    assert sentences[1] == "Spark 4.3.0: S3 faster than HDFS on 1 of 2 queries beyond noise (2.00× faster)."
    assert undecided == ["Spark 4.3.0 on S3: q2: not comparable: results differ"]


def test_verdicts_no_larger_than_the_drift_controls_move_are_counted_apart_and_marked():
    comparison = rows("Trino 476", "s3", [("q1", 1.4, "HDFS 1.40× faster"), ("q2", 2.0, "HDFS 2.00× faster"),
                                          ("q3", 1.1, "HDFS 1.10× faster"), ("q4", 0.8, "S3 1.25× faster"),
                                          ("q5", 1.02, "no difference beyond noise")])
    sentences, undecided = storage_verdicts(comparison, "hdfs", drift=1.30)  # the control moved 1.30×
    assert sentences == [
        "Trino 476: S3 slower than HDFS on 2 of 5 queries beyond noise (median 1.70×, range 1.40–2.00×); "
        "S3 slower than HDFS on 1 of 5 queries beyond noise (1.10×; within the control's drift: not a verdict); "
        "S3 faster than HDFS on 1 of 5 queries beyond noise (1.25× faster; within the control's drift: not a "
        "verdict); no difference beyond noise on 1."]
    assert undecided == []
    assert storage_verdicts(comparison, "hdfs", drift=None) == storage_verdicts(comparison, "hdfs")


def test_a_value_and_its_interval_are_rounded_to_what_the_interval_means():
    from perfkit.findings import ci_span, estimate, interval_decimals

    assert estimate(0.0063, 0.0032, 0.0095) == "0.0063 (95% CI 0.0032–0.0095)"  # 2 digits of a 0.0063 width
    assert estimate(-0.000692, -0.0021, 0.0007) == "-0.0007 (95% CI -0.0021 to 0.0007)"
    assert estimate(12.345, 10.2, 14.9, " s") == "12.3 s (95% CI 10.2–14.9 s)"
    assert estimate(0.8, float("nan"), float("nan")) == "0.800"  # no interval: three significant digits
    assert estimate(-0.00001, -0.002, 0.002) == "0.0000 (95% CI -0.0020 to 0.0020)"  # never "-0.0000"
    assert interval_decimals(1.0, 3.0) == 1 and ci_span(float("nan"), 1.0) == "—"


def test_no_difference_anywhere_is_said_as_such():
    comparison = rows("Hive 4.0.1", "s3", [("q1", 1.0, "no difference beyond noise"),
                                           ("q2", 1.01, "no difference beyond noise")])
    sentences, undecided = storage_verdicts(comparison, "hdfs")
    assert sentences == ["Hive 4.0.1: no difference between S3 and HDFS beyond noise on 2 of 2 queries."]
    assert undecided == []


def test_a_no_difference_says_the_largest_change_its_rounds_could_have_missed():
    comparison = rows("Trino 476", "s3", [("q1", 1.0, "no difference beyond noise"),
                                          ("q2", 1.01, "no difference beyond noise"), ("q3", 1.5, "HDFS 1.50× faster")])
    comparison["detectable"] = [1.08, 1.14, 1.2]  # the paired rows' detectable_change; q3 was called
    sentences, _ = storage_verdicts(comparison, "hdfs")
    assert sentences == ["Trino 476: S3 slower than HDFS on 1 of 3 queries beyond noise (1.50×); no difference beyond "
                         "noise on 2 (a change under 14% could hide in this run's noise: its rounds see one that size "
                         "9 times in 10)."]


def test_findings_display_as_a_section_with_conditions_and_as_json_for_the_index():
    found = Findings(["A < B"], "lab; 5 runs", ["q9: too few runs"])
    bundle = found._repr_mimebundle_()
    assert bundle["text/html"].startswith('<section class="perfkit-findings"><h2>Findings</h2><ul><li>A &lt; B</li>')
    assert "Not decided by this run" in bundle["text/html"] and "lab; 5 runs" in bundle["text/html"]
    assert bundle[FINDINGS_MIME] == {"sentences": ["A < B"], "conditions": "lab; 5 runs",
                                     "undecided": ["q9: too few runs"]}
    assert found.first == "A < B"
    assert str(found).splitlines() == ["Findings:", "- A < B", "Not decided by this run:", "- q9: too few runs",
                                       "Conditions: lab; 5 runs"]


def test_plural():
    assert [plural(1, "query"), plural(2, "query"), plural(3, "day"), plural(1_000, "file")] == [
        "1 query", "2 queries", "3 days", "1,000 files"]


def test_folded_details_are_never_truncated():
    frame = pd.DataFrame({"setting": [f"s{i}" for i in range(150)], "value": range(150)})
    shown = fold("Environment and parameters", frame)._repr_html_()
    assert shown.startswith('<details class="perfkit-details"><summary>Environment and parameters</summary>')
    assert len(re.findall(r"<td>s\d+</td>", shown)) == 150 and "..." not in shown


def test_a_report_bar_leaves_one_plain_line_and_draws_live_elsewhere(monkeypatch, capsys):
    live = io.StringIO()
    monkeypatch.setenv(progress.RENDERING, "")
    monkeypatch.setattr(progress, "_live_stream", lambda: live)
    for _ in progress.progress_bar(range(3), desc="placing taxi", unit="file"):
        pass
    out, err = capsys.readouterr()
    assert re.fullmatch(r"placing taxi: 3 files in \d+\.\d s\n", out)
    assert err == "" and "3/3" in live.getvalue()


def test_a_bar_stopped_early_says_how_far_it_got():
    assert progress.summary_line("copies", 2, 5, "copy", 75) == "copies: 2 copies of 5 in 1 min 15 s"


def test_outside_a_report_the_bar_is_tqdms_own(monkeypatch):
    monkeypatch.delenv(progress.RENDERING, raising=False)
    with progress.progress_bar(range(1), disable=True) as bar:
        assert not isinstance(bar, progress.ReportBar)


@pytest.mark.parametrize("cmd, fd_flag", [
    (["python", "-m", "ipykernel_launcher", "-f", "c.json"], True),
    (["R", "--slave", "-e", "IRkernel::main()"], False),
])
def test_a_report_kernel_forwards_no_file_descriptor_output_and_knows_it_renders(cmd, fd_flag):
    new_cmd, launch = report_kernel(cmd, {"env": {"PATH": "/bin"}})
    assert ("--IPKernelApp.capture_fd_output=False" in new_cmd) is fd_flag
    assert launch["env"]["PATH"] == "/bin" and progress.RENDERING in launch["env"]


def test_cases_as_replicates_lean_one_way_beyond_noise_only_with_enough_of_them():
    from perfkit.findings import paired_over_cases

    # all 8 ratios above 1: the exact two-sided signed-rank p is 2 / 2**8
    assert paired_over_cases([1.2, 1.5, 1.1, 2.0, 1.3, 1.7, 1.05, 1.4]) == ("beyond noise", pytest.approx(2 / 256))
    assert paired_over_cases([1.2, 0.8, 1.1, 0.9, 1.05, 0.95, 1.01, 0.99])[0] == "within noise"
    assert paired_over_cases([2.0] * 5)[0] == "too few cases to judge (5; need 6)"


def test_a_long_list_of_cases_is_counted_not_spelt_out():
    from perfkit.findings import cases_list

    assert cases_list(["q1", "q2"]) == "q1, q2"
    assert cases_list([f"q{i}" for i in range(1, 23)]) == "22 queries (q1, q2, q3, q4, q5, ...)"


def test_money_sizes_and_p_values_read_plainly():
    from perfkit.findings import money, p_value, size

    assert [money(0.18), money(0.0002922), money(4.978e-05), money(12.345)] == ["0.18", "0.00029", "0.000050", "12.35"]
    assert [size(2.16e6), size(2e9)] == ["2.16 MB", "2 GB"]
    assert [p_value(0.0004), p_value(0.079)] == ["p < 0.001", "p = 0.079"]
