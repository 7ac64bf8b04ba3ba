"""Power and false alarms of perfkit's verdicts, measured with a planted slowdown whose truth is known (issue 70).

    python bench/power.py [--sizes make-report defaults] [--trials 20] [--engine trino] [--network ec2-s3]
                          [--runs N] [--effect 0.10] [--seed 70] [--design interleaved|sequential]
                          [--compare-factors 1.10 1.05] [--quick]

The decision rules under test are perfkit's own, imported, not re-implemented:
- the report rule: the HDFS vs S3 report's verdict per engine and query (perfkit.stats.compare: a bootstrap 95%
  interval of median(other) / median(baseline) that excludes 1 is "beyond noise"), as the report reads it (each row at
  95%), and with the family correction perfkit.stats offers (compare(..., family_confidence=0.95): Bonferroni, each
  row's interval at 1 - 0.05 / m over the m queries of a trial);
- a paired rule, perfkit's own too (stats.paired_ratio_ci, as bench/query_overhead.py judges paths timed side by side):
  the median of the rounds' ratios b / a with its bootstrap interval, at 95% and with the Bonferroni correction;
- the compare rule: `perfkit compare A B` (perfkit.compare.compare_runs on two result files: "slower" / "faster" only
  when median(B) / median(A) is outside [1/1.10, 1.10] and the Mann-Whitney p < 0.05), per query, uncorrected as
  compare reads it. A change of +10% sits on its noise factor, so by design it calls such a change only when the
  measured ratio lands above 1.10 with every b run beyond every a run (4 against 4: p = 0.029): its power here says
  what `perfkit compare` does with a 10% change, not how well it finds the changes it is meant for (`--effect 0.2`).
`--compare-factors` judges the same trials by compare's rule at each factor given (its --factor).

The design. S3 is compared with S3 itself, so that the truth is known: two arms, `a` and `b`, read the same S3 files
through the same engine session, both through the lab's Toxiproxy (S3Network, the lab's own client: its apply() sets
a network profile's toxics) at the base network (`--network`, default ec2-s3: the network `make report` puts the lab
behind). In a planted trial, arm b's runs have a latency toxic on top: the round trip of the base network plus X ms,
X calibrated per size and query so that b's query time is +10% of a's (`--effect`): after a settling pass at the
base (the engine's JIT), each query is timed at the base and at +10 and +40 ms in interleaved rounds, and the slope of
a straight line through its three medians gives X = 10% of its time at the base / slope, in whole milliseconds
(Toxiproxy's resolution). The calibration is printed, and so is the effect as it was: median b / median a over all the
planted trials' runs pooled (and over the null trials', which should be 1). In a null trial both arms
run at the base network, identical. Arm b's toxic is set just before each of its runs and the base put back just
after, so nothing else (the engine's warm-up, the drift control, arm a) ever runs behind it.

A trial is one perfkit run (QueryComparison's runner: the data placed once and verified, the engine opened with its
tables registered, warm-up runs, accounting and health probes around each run, the records saved) whose steps are,
per query, `warmup` then `runs` rounds, each round both arms in a random order (seeded per trial, query and round);
each record carries its arm. The samples are the records perfkit's runner writes. The report rule reads the trial's
records with the arm as the storage (baseline a); the compare rule gets them as two result files, one per arm, as two
runs. Planted and null trials alternate in a random order, so a drift of the machine hits both kinds alike.

Power: the share of planted trials whose verdict says b slower (the right direction), per query; a size with several
queries shows its weakest query and each one. False alarm: the share of null trials with any "beyond noise" verdict
(slower or faster) among the trial's queries (a trial's queries are one family). Each rate with its exact binomial
(Clopper-Pearson) 95% interval, and the issue's goal: at least 18 of 20 planted trials called, at most 1 of 20 null
trials with a false alarm, per rule.

`--design sequential` runs a trial's arms one after the other instead (all of one arm's runs, with its warm-up, then
the other's; which goes first drawn per trial), as `perfkit compare` meets two runs: whatever drifts between two runs
(the engine warming, the machine's load) is then in the null trials' false alarms, which the interleaved design hides.

Sizes: make-report is the HDFS vs S3 report's run as `make report` sizes it (QueryComparison.REPORT_DEFAULTS and the
Makefile's REPORT_OVERRIDES: q1 only), defaults is the notebook's parameters cell (the same sizes, every taxi query).
`--runs N` times N rounds a trial instead, to show what would meet the goals. --quick (tests/integration/
test_bench.py) goes through every step at a tiny size (10,000 rows in 2 files, 2 trials of each kind, a short
calibration): its figures say nothing, only that the script still runs. Needs the lab up (HDFS, S3, the S3 network's
proxy, the metastore and the engine); it leaves the lab's network as it found it.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import json
import math
import os
import random
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

from perfkit import stats
from perfkit.compare import DEFAULT_ALPHA, DEFAULT_FACTOR, FASTER, SLOWER, compare_runs
from perfkit.config import load_profile
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.lab import Lab
from perfkit.lab.s3_network import S3Network, current_network
from perfkit.network import NetworkProfile, network_profile
from perfkit.parameters import default_of
from perfkit.protocol import QueryStep, Step
from perfkit.results import ResultSet

ROOT = Path(__file__).resolve().parents[1]
ARMS = ("a", "b")
CALIBRATION_RTT_MS = (10, 40)  # added round trips the calibration times besides the base: well above the noise
GOAL_POWER, GOAL_FALSE = 18 / 20, 1 / 20  # the goals, as shares of the trials
FAMILY_CONFIDENCE = 0.95
# --quick: every step once at a tiny size (4 rounds: the fewest with which compare can call a change at all)
QUICK = {"trials": 2, "rows": 10_000, "files": 2, "runs": 4, "calibration_runs": 3}
SLOWER_B, FASTER_B, NONE = "b slower", "b faster", "none"


def report_sizes() -> dict[str, dict]:
    """make-report: QueryComparison.REPORT_DEFAULTS with the Makefile's REPORT_OVERRIDES for the HDFS vs S3 report;
    defaults: the HDFS vs S3 notebook's parameters cell. Both read where they are declared."""
    notebook = json.loads((ROOT / "notebooks" / "hdfs_vs_s3_queries.ipynb").read_text())
    cell = next(c for c in notebook["cells"] if "parameters" in c.get("metadata", {}).get("tags", []))
    values = {t.id: ast.literal_eval(node.value) for node in ast.parse("".join(cell["source"])).body
              if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)}
    defaults = {name: values[name] for name in ("rows", "files", "runs", "warmup", "queries")}
    overrides = re.search(r"^REPORT_OVERRIDES_hdfs_vs_s3_queries\s*:=\s*(.*)$", (ROOT / "Makefile").read_text(), re.M)
    queries = re.search(r"queries=\[([^\]]*)\]", overrides.group(1)) if overrides else None
    report = {**{name: QueryComparison.REPORT_DEFAULTS.get(name, default_of(QueryComparison, name))
                 for name in ("rows", "files", "runs", "warmup")},
              "queries": [q.strip() for q in queries.group(1).split(",")] if queries else ["q1"]}
    return {"make-report": report, "defaults": defaults}


@dataclass(frozen=True)
class ArmStep(QueryStep):
    """One run of a trial: a query step of the runner, on arm a or b (both on the same S3 files)."""
    arm: str = "a"

    def record(self) -> dict:
        fields = super().record()
        return {**fields, "params": {**fields["params"], "arm": self.arm}}


@dataclass
class TwoArms(QueryComparison):
    """QueryComparison's run over S3 alone, in two arms that differ only by the network each run goes through: its
    steps are the arms' runs in a random order per round, its attempt sets the arm's toxics around each run. All the
    rest (placing, engines, warm-up, probes, accounting, recording) is QueryComparison's."""

    def __post_init__(self):
        super().__post_init__()
        self.base: NetworkProfile | None = None  # the network both arms share; set by the bench
        self.arms: dict[str, dict[str, NetworkProfile]] = {}  # arm -> query id -> the network of its runs
        self.proxy: S3Network | None = None
        self.trial_seed = 0
        self.sequential = False  # each arm's runs all together (two runs back to back), the first arm drawn

    def steps(self) -> list[ArmStep]:
        if self.sequential:
            return self.sequential_steps()
        found = []
        for engine in self.engines:
            for query in self.suite_queries:
                for phase, count in (("warmup", self.warmup), ("measured", self.runs)):
                    for iteration in range(count):
                        order = sorted(self.arms)
                        random.Random(f"{self.trial_seed}/{engine}/{query.id}/{phase}/{iteration}").shuffle(order)
                        found += [ArmStep(engine, query, Step(phase, iteration, "s3"), arm=arm) for arm in order]
        return found

    def sequential_steps(self) -> list[ArmStep]:
        """As `perfkit compare` is used: run A, then run B (or B then A, drawn per trial), each with its warm-up."""
        arms = sorted(self.arms)
        random.Random(f"{self.trial_seed}/arms").shuffle(arms)
        return [ArmStep(engine, query, Step(phase, iteration, "s3"), arm=arm)
                for arm in arms for engine in self.engines for query in self.suite_queries
                for phase, count in (("warmup", self.warmup), ("measured", self.runs)) for iteration in range(count)]

    def label(self, step: ArmStep) -> str:
        return f"{step.engine} {step.query.id} {step.arm}"

    def attempt(self, step: ArmStep) -> None:
        engine, tables = self.open_engines.get(step.engine)  # opened (tables registered, warmed) at the base network
        if engine is None:
            return
        network = self.arms[step.arm][step.query.id]
        self.proxy.apply(network)
        try:
            self.measure(self.results, engine, step.query, step.step, tables["s3"],
                         params={"arm": step.arm, "added_rtt_ms": network.rtt_ms - self.base.rtt_ms})
        finally:
            self.proxy.apply(self.base)


def plus_rtt(base: NetworkProfile, added_ms: int) -> NetworkProfile:
    """The base network with `added_ms` more round trip (Toxiproxy's latency toxics: whole milliseconds)."""
    return base if not added_ms else replace(base, name=f"{base.name} +{added_ms} ms", rtt_ms=base.rtt_ms + added_ms)


def medians(results: ResultSet) -> dict[tuple[str, str], float]:
    """(query, arm) -> the median of its measured, successful runs."""
    frame = stats.samples(results.to_frame())
    arms = frame["params"].map(lambda p: p.get("arm"))
    return {(case, arm): float(group.median()) for (case, arm), group in frame.groupby([frame["case"], arms])["wall_s"]}


def calibrate_effect(exp: TwoArms, effect: float, runs: int) -> tuple[dict[str, int], list[str]]:
    """X per query: the added round trip (ms) that makes its runs `effect` slower, from a straight line through its
    median times at the base and at CALIBRATION_RTT_MS more (the engine's JIT settled first by a pass at the base).
    Returns X per query and the fit, in words."""
    queries = [q.id for q in exp.suite_queries]
    saved = exp.runs
    exp.runs = runs
    try:
        exp.arms, exp.trial_seed = {"a": {q: exp.base for q in queries}}, -2
        exp.run(progress=False)  # settling: not used
        exp.arms = {"a": {q: exp.base for q in queries},
                    **{f"b{ms}": {q: plus_rtt(exp.base, ms) for q in queries} for ms in CALIBRATION_RTT_MS}}
        exp.trial_seed = -1
        timed = medians(exp.run(progress=False))
    finally:
        exp.runs = saved
    added, words = {}, []
    for q in queries:
        xs = np.array([0, *CALIBRATION_RTT_MS], float)
        ys = np.array([timed[(q, "a")], *(timed[(q, f"b{ms}")] for ms in CALIBRATION_RTT_MS)])
        slope = float(np.polyfit(xs, ys, 1)[0])  # seconds per added millisecond of round trip
        # whole milliseconds, at least 1, at most twice the fit's widest point (a flat fit: no latency-bound query)
        added[q] = min(2 * max(CALIBRATION_RTT_MS), max(1, round(effect * ys[0] / slope))) if slope > 0 else \
            2 * max(CALIBRATION_RTT_MS)
        words.append(f"{q} {ys[0]:.3f} s at the base, {1000 * slope:.1f} ms per added ms -> +{added[q]} ms")
    return added, words


def realised(results: list[ResultSet], queries: list[str]) -> str:
    """Per query, median b / median a over all the trials' runs pooled: the effect as it was."""
    pooled = ResultSet("pooled")
    pooled.records = [r for each in results for r in each.records]
    timed = medians(pooled)
    return ", ".join(f"{q} {timed[(q, 'b')] / timed[(q, 'a')]:.3f}" for q in queries)


def report_calls(results: ResultSet, family_confidence: float | None) -> dict[str, str]:
    """Per query, the HDFS vs S3 report's verdict on the trial, the arms as its storages (baseline a), in one word."""
    frame = results.to_frame()
    frame["storage"] = frame["params"].map(lambda p: p.get("arm"))
    table = stats.compare(frame, baseline="a", other="b", family_confidence=family_confidence)
    said = {}
    for row in table.itertuples():
        words = row.verdict
        said[row.case] = (SLOWER_B if words.startswith(f"{stats.label('a')} ") else
                          FASTER_B if words.startswith(f"{stats.label('b')} ") else NONE)
    return said


def paired_calls(results: ResultSet, family_confidence: float | None) -> dict[str, str]:
    """Per query, a paired rule: the median of the rounds' ratios b / a (both arms of one round side by side) with its
    bootstrap interval (stats.paired_ratio_ci), at 95% or the family's Bonferroni level: what drifts over a run moves
    both runs of a round alike and leaves their ratio, so the interval is narrower where the noise is drift."""
    frame = stats.samples(results.to_frame())
    frame = frame.assign(arm=frame["params"].map(lambda p: p.get("arm")))
    queries = sorted(frame["case"].unique())
    level = stats.family_level(family_confidence, len(queries)) if family_confidence else stats.CONFIDENCE
    said = {}
    for query in queries:
        rounds = frame[frame["case"].eq(query)].pivot_table(index="iteration", columns="arm", values="wall_s").dropna()
        _, low, high = stats.paired_ratio_ci(rounds["b"], rounds["a"], confidence=level,
                                             n_resamples=stats.resamples_for(level))
        said[query] = SLOWER_B if low > 1 else FASTER_B if high < 1 else NONE
    return said


def compare_calls(results: ResultSet, folder: Path, factors: list[float]) -> dict[float, dict[str, str]]:
    """Per factor and query, `perfkit compare A B --factor F`'s verdict with arm a's records as run A, b's as run B."""
    paths = {}
    for arm in ARMS:
        part = ResultSet(results.experiment, results.config, run_id=f"{results.run_id}-{arm}", folder=folder)
        part.records = [replace(r, run_id=part.run_id) for r in results.records if (r.params or {}).get("arm") == arm]
        paths[arm] = part.save()
    said = {}
    for factor in factors:
        table = compare_runs(paths["a"], paths["b"], factor=factor)
        said[factor] = {row.case: {SLOWER: SLOWER_B, FASTER: FASTER_B}.get(row.verdict, NONE)
                        for row in table.itertuples()}
    return said


def rate(k: int, n: int) -> str:
    low, high = binomtest(k, n).proportion_ci(method="exact") if n else (math.nan, math.nan)
    return f"{k}/{n} (95% CI {low:.2f}-{high:.2f})"


def rule_line(size: str, rule: str, planted: list[dict[str, str]], null: list[dict[str, str]],
              queries: list[str]) -> str:
    """Power per query (the weakest shown first), false alarms per family, against the goals."""
    n_planted, n_null = len(planted), len(null)
    called = {q: sum(calls.get(q) == SLOWER_B for calls in planted) for q in queries}
    weakest = min(queries, key=lambda q: (called[q], queries.index(q)))
    alarms = sum(any(c != NONE for c in calls.values()) for calls in null)
    power_met = n_planted and called[weakest] / n_planted >= GOAL_POWER
    false_met = n_null and alarms / n_null <= GOAL_FALSE
    missed = [what for what, met in (("power", power_met), ("false alarms", false_met)) if not met]
    each = ", ".join(f"{q} {called[q]}" for q in queries)
    return (f"  {size}, {rule}: power {rate(called[weakest], n_planted)} at its weakest query {weakest} ({each} of "
            f"{n_planted}), false alarms {rate(alarms, n_null)} [goal >= 18/20, <= 1/20: "
            f"{'met' if not missed else 'not met: ' + ', '.join(missed)}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="lab")
    parser.add_argument("--engine", default="trino", help="one engine is enough (trino: the fastest here)")
    parser.add_argument("--sizes", nargs="+", choices=["make-report", "defaults"], default=["make-report", "defaults"])
    parser.add_argument("--trials", type=int, default=20, help="planted trials, and as many null trials, per size")
    parser.add_argument("--network", default="ec2-s3", help="the base network both arms go through (a lab profile)")
    parser.add_argument("--effect", type=float, default=0.10, help="the planted slowdown, a share of a query's time")
    parser.add_argument("--runs", type=int, default=None, help="measured rounds per trial (default: the size's)")
    parser.add_argument("--rows", type=int, default=None, help="taxi rows (default: the size's)")
    parser.add_argument("--files", type=int, default=None, help="files the rows are split into (default: the size's)")
    parser.add_argument("--calibration-runs", type=int, default=8, help="rounds of the calibration")
    parser.add_argument("--seed", type=int, default=70, help="the trials' order and each trial's round order")
    parser.add_argument("--design", choices=["interleaved", "sequential"], default="interleaved",
                        help="a trial's arms: round by round in random order (as a report runs its storages), or "
                             "one after the other (as `perfkit compare` compares two runs: drift between them shows)")
    parser.add_argument("--compare-factors", type=float, nargs="+", default=[DEFAULT_FACTOR],
                        help="the compare rule's noise factors to judge the same trials by (compare's --factor)")
    parser.add_argument("--quick", action="store_true", help=f"the smallest sizes that run every step: {QUICK}")
    args = parser.parse_args()
    if args.quick:  # the quick sizes as defaults: a size given on the command line still wins
        parser.set_defaults(**QUICK)
        args = parser.parse_args()

    lab = Lab()
    proxy = lab.service(S3Network.name)
    before = current_network(lab.home)
    base = network_profile(args.network)
    if not base.emulated:  # both arms must go through the proxy: the base is the proxy with nothing added
        base = network_profile({"rtt_ms": 0})
    sizes = report_sizes()
    lines, version = [], "?"
    # the lab's own messages (a service moved for the network) to stderr: stdout holds the figures alone
    with tempfile.TemporaryDirectory(prefix="perfkit-bench-power-") as scratch, contextlib.redirect_stdout(sys.stderr):
        os.environ["PERFKIT_RESULTS"] = scratch  # the trials' runs are the bench's, not data/results'
        lab.set_network(base)
        try:
            for size in args.sizes:
                given = sizes[size]
                rows, files = args.rows or given["rows"], args.files or given["files"]
                runs, warmup = args.runs or given["runs"], given["warmup"]
                exp = TwoArms(load_profile(args.profile), engines=[args.engine], rows=rows, files=files, runs=runs,
                              warmup=warmup, queries=given["queries"], storages=["hdfs", "s3"], baseline="hdfs")
                exp.base, exp.proxy = base, proxy
                queries = [q.id for q in exp.suite_queries]
                started = time.perf_counter()
                exp.prepare(progress=False)
                placed_s = time.perf_counter() - started
                started = time.perf_counter()
                added, calibration = calibrate_effect(exp, args.effect, args.calibration_runs)
                calibrated_s = time.perf_counter() - started
                kinds = [kind for _ in range(args.trials) for kind in ("planted", "null")]
                random.Random(f"{args.seed}/{size}").shuffle(kinds)
                compare_rules = [f"compare {factor}" for factor in args.compare_factors]
                calls = {rule: {"planted": [], "null": []}
                         for rule in ["report", "family", "paired", "paired family", *compare_rules]}
                failed, trial_s, kept = 0, [], {"planted": [], "null": []}
                for index, kind in enumerate(kinds):
                    exp.arms = {"a": {q: base for q in queries},
                                "b": {q: plus_rtt(base, added[q] if kind == "planted" else 0) for q in queries}}
                    exp.trial_seed = args.seed * 10_000 + index
                    exp.sequential = args.design == "sequential"
                    t0 = time.perf_counter()
                    results = exp.run(progress=False)
                    trial_s.append(time.perf_counter() - t0)
                    failed += len(results.failures)
                    kept[kind].append(results)
                    version = results.config.get("versions", {}).get(args.engine, version)
                    calls["report"][kind].append(report_calls(results, None))
                    calls["family"][kind].append(report_calls(results, FAMILY_CONFIDENCE))
                    calls["paired"][kind].append(paired_calls(results, None))
                    calls["paired family"][kind].append(paired_calls(results, FAMILY_CONFIDENCE))
                    by_factor = compare_calls(results, Path(scratch) / "compare", args.compare_factors)
                    for factor, said in by_factor.items():
                        calls[f"compare {factor}"][kind].append(said)
                level = stats.family_level(FAMILY_CONFIDENCE, len(queries))
                rules = {"report": "report rule (each query's 95% CI of median b / median a excludes 1)",
                         "family": f"report rule, Bonferroni family 95% (each of {len(queries)} "
                                   f"quer{'y' if len(queries) == 1 else 'ies'} at {100 * level:.2f}%)",
                         "paired": "paired rule (each query's 95% CI of the median of the rounds' b / a excludes 1)",
                         "paired family": f"paired rule, Bonferroni family 95% (each query at {100 * level:.2f}%)",
                         **{f"compare {factor}": f"compare rule (ratio outside {factor:.2f}x and Mann-Whitney p < "
                                                 f"{DEFAULT_ALPHA})" for factor in args.compare_factors}}
                lines.append(f"  {size} ({', '.join(queries)}; {rows:,} rows in {files} files, runs={runs}, "
                             f"warmup={warmup}): calibrated {'; '.join(calibration)}")
                lines.append(f"  {size}: median b / median a over all runs, planted trials "
                             f"{realised(kept['planted'], queries)}; null trials {realised(kept['null'], queries)}")
                lines += [rule_line(size, words, calls[rule]["planted"], calls[rule]["null"], queries)
                          for rule, words in rules.items()]
                lines.append(f"  {size}: data placed in {placed_s:.0f} s, calibration {calibrated_s:.0f} s, "
                             f"{len(kinds)} trials in {sum(trial_s):.0f} s ({statistics.median(trial_s):.1f} s a "
                             f"trial), {failed} failed runs")
        finally:
            lab.set_network(before)
    print(f"power: a planted slowdown of S3 (+{args.effect:.0%} of each query's time, Toxiproxy latency) against none, "
          f"{args.trials} planted and {args.trials} null trials per size in random order; {version}, S3 behind "
          f"{base.describe()}; each trial one perfkit run of two arms over the same S3 files, "
          + ("both arms each round in random order" if args.design == "interleaved" else
             "one arm's runs after the other's (as compare's two runs), the first drawn per trial")
          + f" (seed {args.seed})")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
