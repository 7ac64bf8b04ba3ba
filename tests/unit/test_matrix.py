"""The engine x storage matrix: ranking by geometric mean over queries every cell completed, speed-ups against a
baseline cell, failures per engine, and results that differ between engines are not compared."""
from __future__ import annotations

import math

import pytest

from perfkit.config import load_profile
from perfkit.errors import PerfkitError
from perfkit.experiments.engine_storage_matrix import EngineStorageMatrix, matrices
from perfkit.protocol import rotated
from perfkit.results import ResultSet
from perfkit.suites import load_suite
from perfkit.presenting import report_of


def _matrix(tmp_path, runs):
    """A matrix over the taxi suite whose records are `runs`: (engine, storage, query, seconds or error, hash)."""
    m = EngineStorageMatrix(load_profile("lab"), engines=["trino", "hive"], suite="taxi", runs=2, warmup=0)
    m.results = ResultSet("test_matrix", {"parameters": m.parameters(), "profile": {"name": "lab"}}, folder=tmp_path)
    for engine, where, query, value, digest in runs:
        for i in range(2):
            if isinstance(value, str):
                m.results.add(subject=engine, storage=where, case=query, phase="measured", iteration=i,
                              started_at="2026-11-22T12:00:00+00:00", wall_s=None, ok=False, error=value)
            else:
                m.results.add(subject=engine, storage=where, case=query, phase="measured", iteration=i,
                              started_at="2026-11-22T12:00:00+00:00", wall_s=value * (1 + i), rows=1,
                              result_hash=digest)
    return m


def test_the_ranking_is_the_geometric_mean_over_queries_every_cell_completed(tmp_path):
    m = _matrix(tmp_path, [
        ("trino", "hdfs", "q1", 1.0, "a"), ("trino", "s3", "q1", 2.0, "a"),
        ("hive", "hdfs", "q1", 10.0, "a"), ("hive", "s3", "q1", 20.0, "a"),
        ("trino", "hdfs", "q2", 4.0, "b"), ("trino", "s3", "q2", 4.0, "b"),
        ("hive", "hdfs", "q2", 40.0, "b"), ("hive", "s3", "q2", 80.0, "b"),
        # q3: hive cannot run it on either storage: left out of every cell's mean, listed for hive
        ("trino", "hdfs", "q3", 100.0, "c"), ("trino", "s3", "q3", 100.0, "c"),
        ("hive", "hdfs", "q3", "SemanticException: count_if", None),
        ("hive", "s3", "q3", "SemanticException: count_if", None),
    ])
    ranking = report_of(m).ranking()
    assert list(ranking["cell"]) == ["trino/hdfs", "trino/s3", "hive/hdfs", "hive/s3"]
    def median(s):
        return (s + 2 * s) / 2  # the two runs take s and 2s

    expected = {"trino/hdfs": math.sqrt(median(1) * median(4)), "hive/s3": math.sqrt(median(20) * median(80))}
    for cell, value in expected.items():
        assert ranking.set_index("cell").loc[cell, "geomean (s)"] == pytest.approx(value, abs=1e-3)
    assert ranking.set_index("cell").loc["hive/hdfs", "failed"] == "q3"
    assert list(ranking["queries"]) == [2, 2, 2, 2]
    assert ranking["× best"].iloc[0] == 1.0

    speedups = report_of(m).speedups()  # against the first engine on the baseline storage
    assert m.baseline_cell == "trino/hdfs"
    assert speedups.loc["q2", "hive/s3"] == pytest.approx(round(median(4) / median(80), 2))
    assert math.isnan(speedups.loc["q3", "hive/hdfs"])

    unsupported = report_of(m).unsupported()
    assert list(unsupported["query"]) == ["q3"] and unsupported["engine"].iloc[0] == "hive"
    assert unsupported["storages"].iloc[0] == "hdfs, s3" and "count_if" in unsupported["message"].iloc[0]


def test_results_that_differ_between_engines_are_listed_and_not_ranked(tmp_path):
    m = _matrix(tmp_path, [
        ("trino", "hdfs", "q1", 1.0, "a"), ("trino", "s3", "q1", 1.0, "a"),
        ("hive", "hdfs", "q1", 2.0, "z"), ("hive", "s3", "q1", 2.0, "z"),
        ("trino", "hdfs", "q2", 1.0, "b"), ("trino", "s3", "q2", 1.0, "b"),
        ("hive", "hdfs", "q2", 2.0, "b"), ("hive", "s3", "q2", 2.0, "b"),
    ])
    problems = report_of(m).problems()
    assert list(problems["case"]) == ["q1"] and "engines return different results" in problems["error"].iloc[0]
    assert list(report_of(m).ranking()["queries"]) == [1, 1, 1, 1]  # q2 only


def test_a_baseline_cell_outside_the_matrix_and_an_empty_suite_list_are_refused():
    with pytest.raises(PerfkitError, match=r"baseline_cell 'presto/hdfs' is not one of the cells trino/hdfs, trino/s3"):
        EngineStorageMatrix(load_profile("lab"), engines=["trino"], suite="taxi", baseline_cell="presto/hdfs")
    with pytest.raises(PerfkitError, match="suite: give a built-in suite"):
        matrices(load_profile("lab"), [])


def test_scale_and_queries_are_given_per_suite_or_for_all():
    profile = load_profile("lab")
    tpch, hibench = matrices(profile, ["tpch", "hibench"], {"tpch": 0.01, "hibench": "tiny"},
                             queries={"tpch": ["q6", "q1"]}, engines=["trino"])
    assert [q.id for q in tpch.suite_queries] == ["q1", "q6"] and tpch.scale == 0.01
    assert [q.id for q in hibench.suite_queries] == [q.id for q in load_suite("hibench")]  # not named: every query
    [taxi] = matrices(profile, "taxi", queries=["q3"], engines=["trino"])
    assert [q.id for q in taxi.suite_queries] == ["q3"]
    [taxi] = matrices(profile, "taxi", {"tpch": 0.01}, queries={"tpch": ["q1"]}, engines=["trino"])  # not run: unused
    assert len(taxi.suite_queries) == len(load_suite("taxi"))


def test_every_round_starts_with_another_cell():
    assert [rotated(["a", "b", "c"], i) for i in range(4)] == [
        ["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]


def test_with_one_run_per_cell_the_cells_order_varies_from_query_to_query():
    """Issue 70: the same order for every query made Trino's cold first run always land on HDFS."""
    m = EngineStorageMatrix(load_profile("lab"), engines=["trino", "hive"], suite="tpch", scale=0.01, runs=1,
                            warmup=0)
    m.order_seed = 11
    steps = m.steps()
    orders = {}
    for step in steps:
        orders.setdefault(step.query.id, []).append(f"{step.engine}/{step.storage}")
    assert all(sorted(order) == sorted(m.cells()) for order in orders.values())
    assert len({tuple(order) for order in orders.values()}) > 1
    assert len({order[0] for order in orders.values()}) > 1  # not the same cell first for every query
    m.order_seed = 11
    assert m.steps() == steps  # the recorded seed gives the run's order again


def test_the_findings_open_with_the_ranking_and_name_what_an_engine_could_not_run(tmp_path):
    m = _matrix(tmp_path, [
        ("trino", "hdfs", "q1", 1.0, "a"), ("trino", "s3", "q1", 2.0, "a"),
        ("hive", "hdfs", "q1", 10.0, "a"), ("hive", "s3", "q1", 20.0, "a"),
        ("trino", "hdfs", "q3", 100.0, "c"), ("trino", "s3", "q3", 100.0, "c"),
        ("hive", "hdfs", "q3", "SemanticException: count_if", None),
        ("hive", "s3", "q3", "SemanticException: count_if", None),
    ])
    found = report_of(m).findings()
    # medians: trino/hdfs 1.5, trino/s3 3.0, hive/hdfs 15, hive/s3 30 over q1, the one query every cell completed
    assert found.sentences[0] == ("taxi: fastest is trino/hdfs (1.500 s geometric mean over the 1 read query every "
                                  "cell completed); then trino/s3 2.00× slower, hive/hdfs 10.00× slower, "
                                  "hive/s3 20.00× slower (2 runs per query and cell: an order of medians, not a "
                                  "verdict beyond noise; the storages' verdicts follow).")
    assert "taxi: hive failed q3: SemanticException: count_if" in found.undecided
    assert "2 measured runs each, no warm-up" in found.conditions


def test_the_findings_subjects_do_not_depend_on_which_cell_won(tmp_path):
    # the EMR parity test compares a report's findings by their subjects: a run where S3 wins by noise must read alike
    from perfkit.report.outline import subject

    def subjects(hdfs_s, s3_s, folder):
        folder.mkdir()
        m = _matrix(folder, [("trino", "hdfs", "q1", hdfs_s, "a"), ("trino", "s3", "q1", s3_s, "a"),
                             ("hive", "hdfs", "q1", 10.0, "a"), ("hive", "s3", "q1", 20.0, "a")])
        return [subject(s) for s in report_of(m).findings().sentences]

    hdfs_won, s3_won = subjects(1.0, 1.1, tmp_path / "a"), subjects(1.1, 1.0, tmp_path / "b")
    assert hdfs_won[0] == s3_won[0] == "taxi: fastest"
    assert hdfs_won == s3_won


def test_each_engine_s_storages_are_compared_with_the_queries_as_replicates(tmp_path):
    runs = []
    for i in range(1, 7):  # six queries: S3 twice HDFS's time for trino, equal for hive
        runs += [("trino", "hdfs", f"q{i}", float(i), f"h{i}"), ("trino", "s3", f"q{i}", 2.0 * i, f"h{i}"),
                 ("hive", "hdfs", f"q{i}", 10.0 * i, f"h{i}"), ("hive", "s3", f"q{i}", 10.0 * i, f"h{i}")]
    found = report_of(_matrix(tmp_path, runs)).findings()
    # six ratios of 2 all one way: the exact two-sided signed-rank p is 2 / 2**6
    assert ("taxi, trino: S3 ÷ HDFS per query, geometric mean 2.00× (S3 slower on 6 of 6 queries); Wilcoxon "
            "signed-rank over the queries: p = 0.031, beyond noise.") in found.sentences
    assert ("taxi, hive: S3 ÷ HDFS per query, geometric mean 1.00× (S3 slower on 0 of 6 queries); Wilcoxon "
            "signed-rank over the queries: p = 1.000, no difference beyond noise.") in found.sentences
    assert ("taxi: trino on S3: 6 queries (q1, q2, q3, q4, q5, ...): too few runs to judge (need 3 per storage)"
            in found.undecided)


def test_each_suite_of_one_matrix_run_records_the_group_and_its_own_part():
    made = matrices(load_profile("lab"), ["taxi", "tpch"], engines=["trino", "hive"])
    assert [m.group["part"] for m in made] == ["taxi", "tpch"]
    assert made[0].group["id"] == made[1].group["id"] and made[0].group["parts"] == ["taxi", "tpch"]
    assert "group" not in made[0].parameters()  # an id of this run, not a parameter: runs compare alike
    assert matrices(load_profile("lab"), "taxi")[0].group["id"] != made[0].group["id"]


def _suite_file(folder, name: str, group: dict | None, seconds: float):
    """One suite's stored run: trino on both storages, q1 (hand-made records, their config as a run's)."""
    m = EngineStorageMatrix(load_profile("lab"), engines=["trino"], suite="taxi", queries=["q1"], runs=2, warmup=0)
    config = {"parameters": {**m.parameters(), "suite": name}, "profile": {"name": "lab"}, "versions": {},
              **({"run_group": group} if group else {})}
    results = ResultSet("engine_storage_matrix", config, folder=folder)
    for where, factor in (("hdfs", 1.0), ("s3", 3.0)):
        for i in range(2):
            results.add(subject="trino", storage=where, case="q1", phase="measured", iteration=i,
                        started_at="2026-12-07T12:00:00+00:00", wall_s=seconds * factor, rows=1, result_hash="a")
    results.save()
    return results


def test_report_from_one_suite_s_file_renders_every_suite_of_its_run_and_says_so(tmp_path, report_from):
    from perfkit.presenting.matrix_report import matrix_findings, stored_reports
    from perfkit.report.stored import stored_results
    from perfkit.results import run_group

    folder = tmp_path / "stored"
    folder.mkdir()
    taxi_group, tpch_group = run_group(["taxi", "tpch"])
    tpch = _suite_file(folder, "tpch", tpch_group, 2.0)
    taxi = _suite_file(folder, "taxi", taxi_group, 1.0)
    _suite_file(folder, "hibench", run_group(["hibench"])[0], 5.0)  # another run's: not of this one
    alone = _suite_file(folder, "taxi", None, 1.0)  # a run of one suite, recorded before groups

    value, said = stored_results(tpch.path)
    assert value == [str(taxi.path), str(tpch.path)]  # the group's order, whichever file was given
    assert said == (f"{tpch.path.name} is one of 2 parts of run {taxi_group['id']} (taxi, tpch): rendering "
                    f"taxi ({taxi.path.name}), tpch ({tpch.path.name})")
    assert stored_results(alone.path) == (str(alone.path), None)

    text = report_from(tpch.path, "engine_storage_matrix")
    for sentence in matrix_findings(stored_reports(value)).sentences:  # both suites' findings, as first rendered
        assert sentence.split(" (")[0] in text, sentence
    assert "taxi: fastest is trino/hdfs" in text and "tpch: fastest is trino/hdfs" in text

    taxi.path.unlink()
    assert stored_results(tpch.path) == ([str(tpch.path)], said.split(": rendering")[0] + ": rendering tpch ("
                                         f"{tpch.path.name}); not beside it, so not in the report: taxi")


def _one_run_matrix(tmp_path, first_storage_of, true_s3_factor=1.0, penalty=1.5, queries=8):
    """trino on HDFS and S3, one run per cell, no warm-up: each query's first run pays `penalty` (an engine's cold
    caches); `first_storage_of(k)` says which storage ran first for query k. S3's true time is `true_s3_factor` ×."""
    m = EngineStorageMatrix(load_profile("lab"), engines=["trino"], suite="tpch", scale=0.01, runs=1, warmup=0)
    m.results = ResultSet("test_matrix", {"parameters": m.parameters(), "profile": {"name": "lab"}}, folder=tmp_path)
    for k, query in enumerate(q.id for q in load_suite("tpch")[:queries]):
        base = 1.0 + 0.37 * k  # queries of different sizes
        first = first_storage_of(k)
        for position, where in enumerate([first, "s3" if first == "hdfs" else "hdfs"]):
            seconds = base * (true_s3_factor if where == "s3" else 1.0) * (penalty if position == 0 else 1.0)
            m.results.add(subject="trino", storage=where, case=query, phase="measured", iteration=0,
                          started_at=f"2026-12-07T12:{k:02d}:{10 * position:02d}+00:00", wall_s=seconds, rows=1,
                          result_hash=f"h{k}")
    return report_of(m)


def test_a_first_run_penalty_on_a_fixed_order_gives_no_verdict_and_says_why(tmp_path):
    """Issue 70: trino/hdfs always first, each query's first run 1.5× slower, no storage effect at all: the plain
    test over queries would call S3 faster beyond noise (p = 0.008); the report must not."""
    report = _one_run_matrix(tmp_path, lambda k: "hdfs")
    found = report.findings()
    assert not any("S3 ÷ HDFS per query" in s for s in found.sentences)
    assert ("tpch, trino: S3 ÷ HDFS: no verdict: HDFS ran before S3 in every round of all 8 queries, so the run "
            "order (a first run's cold caches) cannot be told from the storage") in found.undecided


def test_a_first_run_penalty_on_a_randomised_order_is_the_order_term_not_the_storages(tmp_path):
    import random

    firsts = ["hdfs", "s3"] * 4
    random.Random(3).shuffle(firsts)
    found = _one_run_matrix(tmp_path, lambda k: firsts[k]).findings()
    [sentence] = [s for s in found.sentences if "S3 ÷ HDFS per query" in s]
    # no storage effect: the fit gives the storage term 0 exactly, and the order term the planted 1.5² (first vs
    # second, each ratio carrying the penalty on one side)
    assert "order effect 2.25× when S3 ran first" in sentence and sentence.endswith("no difference beyond noise.")
    # a real effect next to the same penalty: seen, with the order accounted for
    found = _one_run_matrix(tmp_path, lambda k: firsts[k], true_s3_factor=1.3).findings()
    [sentence] = [s for s in found.sentences if "S3 ÷ HDFS per query" in s]
    assert sentence.endswith(", beyond noise.") and "order effect 2.25×" in sentence
