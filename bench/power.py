"""Power and false alarms of perfkit's verdicts, measured with a planted slowdown whose truth is known (issue 70).

    python bench/power.py [--sizes defaults make-report] [--trials 20] [--engine trino] [--network ec2-s3]
                          [--runs N] [--effect 0.10] [--seed 70] [--design interleaved|sequential]
                          [--compare-factors 1.10 1.05] [--keep DIR] [--judge-rounds 12 24] [--quick]
    python bench/power.py --judge DIR [--judge-rounds 12 24] [--compare-factors ...]

The decision rules under test are perfkit's own, imported, not re-implemented:
- the report rule: the HDFS vs S3 report's verdict per engine and query (perfkit.stats.compare), as the report reads
  it: paired by round (both storages are timed in every round, in a random order: the typical round's ratio b / a
  with its exact Wilcoxon signed-rank interval, stats.round_ratio_ci) and corrected as one family over the report's
  verdicts at that size (Bonferroni over every engine's queries: 3 engines x the queries, though the bench runs one
  engine); beside it the same rule with each query at 95%, and the unpaired rule it replaced (median b / median a,
  bootstrap), to show what pairing buys;
- the compare rule: `perfkit compare A B` (perfkit.compare.compare_runs on two result files: "slower" / "faster" only
  when median(B) / median(A) is outside [1/F, F] and the Mann-Whitney p < 0.05), per query, uncorrected as compare
  reads it, at each factor F of `--compare-factors` (compare's --factor; its default 1.10 sits on a 10% change).

The design. S3 is compared with S3 itself, so that the truth is known: two arms, `a` and `b`, read the same S3 files
through the same engine session, both through the lab's Toxiproxy (S3Network, the lab's own client: its apply() sets
a network profile's toxics) at the base network (`--network`, default ec2-s3: the network `make report` puts the lab
behind). In a planted trial, arm b's runs have a latency toxic on top: the round trip of the base network plus X ms,
X such that b's query time is +10% of a's (`--effect`). The calibration (after a settling pass at the base, each query
timed at the base and at +10 and +40 ms in interleaved rounds) gives each query's seconds per added millisecond (a
straight line through its three medians); X = 10% of the query's time at the base now / that slope, to a tenth of a
millisecond, the time at the base following the engine's drift: the median of arm a's runs over the last
EFFECT_HOLD_TRIALS trials. Each of arm b's runs gets whole milliseconds (Toxiproxy's resolution) around X, drawn per
run so that their mean is X (4.2 ms: 5 ms one run in five). Both are printed, and so is the effect as it was: median
b / median a over all the planted trials' runs pooled (and over the null trials', which should be 1), and the null
trials' ratios one by one (their range, the SD of their log: what moves between two sets of identical runs, the band
compare's factor must clear). In a null trial both arms run at the base network, identical. Arm b's toxic is set
just before each of its runs and the base put back just after, so nothing else (the engine's warm-up, the drift
control, arm a) ever runs behind it.

A trial is one perfkit run (QueryComparison's runner: the data placed once and verified, the engine opened with its
tables registered, warm-up runs, accounting and health probes around each run, the records saved) whose steps are,
per query, `warmup` then `runs` rounds, each round both arms in a random order (seeded per trial, query and round);
each record carries its arm. The report rules read the trial's records with the arm as the storage (baseline a); the
compare rule gets them as two result files, one per arm, as two runs. Planted and null trials alternate in a random
order, so a drift of the machine hits both kinds alike.

Power: the share of planted trials whose verdict says b slower (the right direction), per query; a size with several
queries shows its weakest query and each one. False alarm: the share of null trials with any "beyond noise" verdict
(slower or faster) among the trial's queries (a trial's queries are one family). Each rate with its exact binomial
(Clopper-Pearson) 95% interval, and the issue's goal: at least 18 of 20 planted trials called, at most 1 of 20 null
trials with a false alarm, per rule.

Judging is apart from running: `--keep DIR` keeps every trial's records with a manifest (power-trials.json), and
`--judge DIR` judges them again, running nothing. `--judge-rounds N ...` judges each trial on its first N measured
rounds too: smaller designs on the same runs (the power curve by rounds). When only the defaults' trials were run,
make-report's design is judged on them as well (the same rows, files and warm-up: its queries, its first rounds).

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
import pandas as pd
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
EFFECT_HOLD_TRIALS = 3  # the planted delay follows the median of arm a's runs over this many last trials
MANIFEST = "power-trials.json"  # what --keep writes beside the trials' records: the run, each trial's kind and file
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
    runs = re.search(r"runs=(\d+)", overrides.group(1)) if overrides else None
    report = {**{name: QueryComparison.REPORT_DEFAULTS.get(name, default_of(QueryComparison, name))
                 for name in ("rows", "files", "runs", "warmup")},
              "queries": [q.strip() for q in queries.group(1).split(",")] if queries else ["q1"],
              **({"runs": int(runs.group(1))} if runs else {})}
    # the report judges every engine's queries as one family: its correction counts them all, though the bench runs one
    engines = len(values["engines"])
    return {"make-report": {**report, "engines": engines}, "defaults": {**defaults, "engines": engines}}


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
        self.arms: dict[str, dict[str, float]] = {}  # arm -> query id -> ms its runs add to the base's round trip
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
        added = self.arms[step.arm][step.query.id]
        network = plus_rtt(self.base, dithered_ms(added, f"{self.trial_seed}/{step.query.id}/{step.step.phase}/"
                                                          f"{step.step.iteration}"))
        self.proxy.apply(network)
        try:
            self.measure(self.results, engine, step.query, step.step, tables["s3"],
                         params={"arm": step.arm, "added_rtt_ms": network.rtt_ms - self.base.rtt_ms})
        finally:
            self.proxy.apply(self.base)


def plus_rtt(base: NetworkProfile, added_ms: int) -> NetworkProfile:
    """The base network with `added_ms` more round trip (Toxiproxy's latency toxics: whole milliseconds)."""
    return base if not added_ms else replace(base, name=f"{base.name} +{added_ms} ms", rtt_ms=base.rtt_ms + added_ms)


def medians(results: ResultSet, rounds: int | None = None) -> dict[tuple[str, str], float]:
    """(query, arm) -> the median of its measured, successful runs (the first `rounds` rounds only, when given)."""
    frame = stats.samples(results.to_frame())
    if rounds is not None:
        frame = frame[frame["iteration"] < rounds]
    arms = frame["params"].map(lambda p: p.get("arm"))
    return {(case, arm): float(group.median()) for (case, arm), group in frame.groupby([frame["case"], arms])["wall_s"]}


def calibrate_effect(exp: TwoArms, runs: int) -> tuple[dict[str, float], dict[str, float], list[str]]:
    """Per query, its median time at the base and the seconds one added millisecond of round trip adds to it (the
    slope of a straight line through its medians at the base and at CALIBRATION_RTT_MS more; the engine's JIT settled
    first by a pass at the base). Returns (base seconds, slope, the fit in words)."""
    queries = [q.id for q in exp.suite_queries]
    saved = exp.runs
    exp.runs = runs
    try:
        exp.arms, exp.trial_seed = {"a": {q: 0.0 for q in queries}}, -2
        exp.run(progress=False)  # settling: not used
        exp.arms = {"a": {q: 0.0 for q in queries},
                    **{f"b{ms}": {q: float(ms) for q in queries} for ms in CALIBRATION_RTT_MS}}
        exp.trial_seed = -1
        timed = medians(exp.run(progress=False))
    finally:
        exp.runs = saved
    base_s, slope, words = {}, {}, []
    for q in queries:
        xs = np.array([0, *CALIBRATION_RTT_MS], float)
        ys = np.array([timed[(q, "a")], *(timed[(q, f"b{ms}")] for ms in CALIBRATION_RTT_MS)])
        base_s[q], slope[q] = float(ys[0]), float(np.polyfit(xs, ys, 1)[0])  # seconds per added ms of round trip
        words.append(f"{q} {ys[0]:.3f} s at the base, {1000 * slope[q]:.1f} ms per added ms")
    return base_s, slope, words


def added_ms(effect: float, base_s: float, slope: float) -> float:
    """The added round trip that makes a query of `base_s` seconds `effect` slower, to a tenth of a millisecond (each
    run gets whole milliseconds around it, dithered_ms): at least 1, at most twice the calibration's widest point (a
    flat fit: a query not bound by latency)."""
    ceiling = 2 * max(CALIBRATION_RTT_MS)
    return min(ceiling, max(1.0, round(effect * base_s / slope, 1))) if slope > 0 else float(ceiling)


def dithered_ms(added: float, seed: str) -> int:
    """Whole milliseconds (Toxiproxy's resolution) for one run, whose mean over runs is `added`: 4.2 ms is 5 ms on
    one run in five, 4 ms on the others, drawn per run (seeded). Rounding every run to 4 ms would plant 9.5% where 10%
    was asked (q4 here: 8.1% at 44 rounds), and power would be measured against a smaller change than said."""
    whole = math.floor(added)
    return whole + (random.Random(seed).random() < added - whole)


def recent_base(kept: list[ResultSet], query: str, fallback: float) -> float:
    """A query's time at the base now: the median of arm a's runs (always at the base) over the last
    EFFECT_HOLD_TRIALS trials of either kind, so that the planted delay follows the engine's drift."""
    times = [r.wall_s for results in kept[-EFFECT_HOLD_TRIALS:] for r in results.records
             if r.case == query and r.phase == "measured" and r.ok and (r.params or {}).get("arm") == "a"]
    return statistics.median(times) if times else fallback


def realised(results: list[ResultSet], queries: list[str], rounds: int | None = None) -> str:
    """Per query, median b / median a over all the trials' runs pooled: the effect as it was."""
    pooled = ResultSet("pooled")
    pooled.records = [r for each in results for r in each.records]
    timed = medians(pooled, rounds)
    return ", ".join(f"{q} {timed[(q, 'b')] / timed[(q, 'a')]:.3f}" if (q, "b") in timed else f"{q} -" for q in queries)


def trial_drift(results: list[ResultSet], queries: list[str]) -> str:
    """Per query, the null trials' own median b / median a, trial by trial: its range and the standard deviation of
    its log. Both arms are identical, so this is what moves between two sets of runs by chance (and, with
    --design sequential, by drift between them): the band a factor rule such as compare's must clear."""
    parts = []
    for q in queries:
        ratios = []
        for each in results:
            timed = medians(each)
            if (q, "a") in timed and (q, "b") in timed:
                ratios.append(timed[(q, "b")] / timed[(q, "a")])
        if len(ratios) >= 2:
            spread = statistics.stdev(math.log(r) for r in ratios)
            parts.append(f"{q} {min(ratios):.3f}-{max(ratios):.3f} (SD of log {spread:.3f})")
    return ", ".join(parts) or "-"


def first_rounds(results: ResultSet, queries: list[str], rounds: int) -> ResultSet:
    """The trial as if it had run `rounds` measured rounds of `queries` only (warm-ups kept): a smaller design judged
    on the same runs."""
    part = ResultSet(results.experiment, results.config, run_id=results.run_id, folder=results.folder)
    part.records = [r for r in results.records
                    if r.case in queries and (r.phase != "measured" or r.iteration < rounds)]
    return part


def arms_frame(results: ResultSet) -> pd.DataFrame:
    frame = results.to_frame()
    return frame.assign(storage=frame["params"].map(lambda p: p.get("arm")))


def report_table(results: ResultSet, family_size: int | None, paired: bool = True) -> pd.DataFrame:
    """The HDFS vs S3 report's comparison of the trial, the arms as its storages (baseline a): each query at 95% when
    `family_size` is None, else corrected as the report does over a family of that many rows."""
    return stats.compare(arms_frame(results), baseline="a", other="b", paired=paired,
                         family_confidence=FAMILY_CONFIDENCE if family_size else None, family_size=family_size)


def report_calls(results: ResultSet, family_size: int | None, paired: bool = True) -> dict[str, str]:
    """Per query, the report's verdict on the trial (report_table), in one word."""
    said = {}
    for row in report_table(results, family_size, paired).itertuples():
        words = row.verdict
        said[row.case] = (SLOWER_B if words.startswith(f"{stats.label('a')} ") else
                          FASTER_B if words.startswith(f"{stats.label('b')} ") else NONE)
    return said


def detectable(trials: list[ResultSet], family_size: int) -> str:
    """What the report's Findings would say its run could miss (stats.detectable_change at the report's level): the
    median over the trials and queries, and its range, as a change in percent."""
    found = pd.concat([report_table(r, family_size)["detectable"] for r in trials]).dropna() if trials else []
    if not len(found):
        return "not measured (too few rounds to pair)"
    return (f"median {100 * (found.median() - 1):.1f}% (range {100 * (found.min() - 1):.1f}-"
            f"{100 * (found.max() - 1):.1f}%)")


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


def collect(args, size: str, given: dict, base: NetworkProfile, proxy: S3Network, trials_dir: Path,
            on_trial=None) -> dict:
    """Place the data, calibrate, run the size's planted and null trials in random order; each trial's records saved
    under `trials_dir` and listed, with how the run went, in the returned manifest entry (given to `on_trial` after
    each trial too, so that a run stopped early can still be judged)."""
    rows, files = args.rows or given["rows"], args.files or given["files"]
    runs, warmup = args.runs or given["runs"], given["warmup"]
    exp = TwoArms(load_profile(args.profile), engines=[args.engine], rows=rows, files=files, runs=runs,
                  warmup=warmup, queries=given["queries"], storages=["hdfs", "s3"], baseline="hdfs")
    exp.base, exp.proxy, exp.sequential = base, proxy, args.design == "sequential"
    queries = [q.id for q in exp.suite_queries]
    started = time.perf_counter()
    exp.prepare(progress=False)
    placed_s = time.perf_counter() - started
    started = time.perf_counter()
    base_s, slope, calibration = calibrate_effect(exp, args.calibration_runs)
    calibrated_s = time.perf_counter() - started
    kinds = [kind for _ in range(args.trials) for kind in ("planted", "null")]
    random.Random(f"{args.seed}/{size}").shuffle(kinds)
    kept, trials, trial_s = [], [], []

    def entry(trials: list[dict], trial_s: list[float], kept: list[ResultSet]) -> dict:
        return {"rows": rows, "files": files, "runs": runs, "warmup": warmup, "queries": queries,
                "calibration": calibration, "placed_s": placed_s, "calibrated_s": calibrated_s, "trial_s": trial_s,
                "trials": trials, "version": kept[-1].config.get("versions", {}).get(args.engine, "?")}

    for index, kind in enumerate(kinds):
        planted = {q: added_ms(args.effect, recent_base(kept, q, base_s[q]), slope[q]) for q in queries}
        exp.arms = {"a": {q: 0.0 for q in queries}, "b": {q: planted[q] if kind == "planted" else 0.0 for q in queries}}
        exp.trial_seed = args.seed * 10_000 + index
        t0 = time.perf_counter()
        results = exp.run(progress=False)
        trial_s.append(time.perf_counter() - t0)
        kept.append(results)
        trials.append({"kind": kind, "path": str(results.path.relative_to(trials_dir)),
                       "added_ms": {q: planted[q] if kind == "planted" else 0 for q in queries},
                       "failed": len(results.failures)})
        if on_trial:
            on_trial(entry(trials, trial_s, kept))
        print(f"power: {size} trial {index + 1}/{len(kinds)} ({kind}) in {trial_s[-1]:.0f} s; "
              f"planted delay now {', '.join(f'{q} +{ms:g} ms' for q, ms in planted.items())}", file=sys.stderr)
    return entry(trials, trial_s, kept)


def judged_designs(manifest: dict, sizes: dict[str, dict], rounds: list[int] | None) -> list[tuple]:
    """(label, collected size, queries, rounds, the report's family size) for each design to judge: every collected
    size at its own rounds (or each of `rounds`), and make-report's design judged on the defaults' trials when only
    those were collected (the same rows, files and warm-up: its queries and first rounds of them)."""
    designs = []
    for size, entry in manifest["sizes"].items():
        for n in rounds or [entry["runs"]]:
            if n <= entry["runs"]:
                designs.append((f"{size}, {n} rounds", size, entry["queries"], n,
                                sizes[size]["engines"] * len(entry["queries"])))
    report, entry = sizes["make-report"], manifest["sizes"].get("defaults")
    if "make-report" not in manifest["sizes"] and entry and set(report["queries"]) <= set(entry["queries"]) and all(
            report[k] == entry[k] for k in ("rows", "files", "warmup")) and report["runs"] <= entry["runs"]:
        designs.append((f"make-report ({', '.join(report['queries'])}, first {report['runs']} rounds of the defaults' "
                        "trials)", "defaults", report["queries"], report["runs"],
                        report["engines"] * len(report["queries"])))
    return designs


def judge(manifest: dict, trials_dir: Path, sizes: dict[str, dict], rounds: list[int] | None,
          factors: list[float]) -> list[str]:
    """Every design's rules over the saved trials: the lines the bench prints."""
    lines = []
    loaded = {size: [(t["kind"], ResultSet.load(trials_dir / t["path"])) for t in entry["trials"]]
              for size, entry in manifest["sizes"].items()}
    for size, entry in manifest["sizes"].items():
        lines.append(f"  {size} ({', '.join(entry['queries'])}; {entry['rows']:,} rows in {entry['files']} files, "
                     f"runs={entry['runs']}, warmup={entry['warmup']}): calibrated {'; '.join(entry['calibration'])}; "
                     f"planted delay per trial (following the base time) "
                     + ", ".join(f"{q} {min(d):g}-{max(d):g} ms" for q in entry["queries"]
                                 for d in [[t['added_ms'][q] for t in entry['trials'] if t['kind'] == 'planted']]))
        lines.append(f"  {size}: data placed in {entry['placed_s']:.0f} s, calibration {entry['calibrated_s']:.0f} s, "
                     f"{len(entry['trials'])} trials in {sum(entry['trial_s']):.0f} s "
                     f"({statistics.median(entry['trial_s']):.1f} s a trial), "
                     f"{sum(t['failed'] for t in entry['trials'])} failed runs")
    with tempfile.TemporaryDirectory(prefix="perfkit-bench-power-judge-") as scratch:
        for label, size, queries, n, family_size in judged_designs(manifest, sizes, rounds):
            trials = [(kind, first_rounds(results, queries, n)) for kind, results in loaded[size]]
            planted = [results for kind, results in trials if kind == "planted"]
            null = [results for kind, results in trials if kind == "null"]
            lines.append(f"  {label}: median b / median a over all runs, planted trials {realised(planted, queries)}; "
                         f"null trials {realised(null, queries)}; null trials one by one "
                         f"{trial_drift(null, queries)}; the smallest change the report rule sees 9 times in "
                         f"10, predicted from each null trial's rounds: {detectable(null, family_size)}")
            level = stats.family_level(FAMILY_CONFIDENCE, family_size)
            rules = {
                "report": (f"report rule as the report reads it (paired by round; Bonferroni family 95% over the "
                           f"report's {family_size} verdicts at this size, each at {100 * level:.2f}%)",
                           family_size, True),
                "each": ("report rule, each query at 95% (no family correction)", None, True),
                "unpaired": (f"unpaired rule (median b / median a, bootstrap; Bonferroni over {family_size})",
                             family_size, False),
            }
            calls = {rule: {kind: [report_calls(r, family, paired) for r in group]
                            for kind, group in (("planted", planted), ("null", null))}
                     for rule, (_, family, paired) in rules.items()}
            for kind, group in (("planted", planted), ("null", null)):
                for results in group:
                    for factor, said in compare_calls(results, Path(scratch), factors).items():
                        calls.setdefault(f"compare {factor}", {"planted": [], "null": []})[kind].append(said)
            words = {rule: text for rule, (text, _, _) in rules.items()}
            words.update({f"compare {f}": f"compare rule (ratio outside {f:.2f}x and Mann-Whitney p < {DEFAULT_ALPHA})"
                          for f in factors})
            lines += [rule_line(label, words[rule], calls[rule]["planted"], calls[rule]["null"], queries)
                      for rule in words]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="lab")
    parser.add_argument("--engine", default="trino", help="one engine is enough (trino: the fastest here)")
    parser.add_argument("--sizes", nargs="+", choices=["make-report", "defaults"], default=["defaults"])
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
    parser.add_argument("--keep", type=Path, default=None,
                        help="a folder to keep the trials' records in (with power-trials.json), to judge them again")
    parser.add_argument("--judge", type=Path, default=None,
                        help="judge the trials kept in this folder by --keep again, running nothing")
    parser.add_argument("--judge-rounds", type=int, nargs="+", default=None,
                        help="judge each trial on its first N measured rounds too (a smaller design, same runs)")
    parser.add_argument("--quick", action="store_true", help=f"the smallest sizes that run every step: {QUICK}")
    args = parser.parse_args()
    if args.quick:  # the quick sizes as defaults: a size given on the command line still wins
        parser.set_defaults(**QUICK)
        args = parser.parse_args()
    sizes = report_sizes()
    if args.judge:
        manifest_path = args.judge / MANIFEST
        if not manifest_path.is_file():
            sys.exit(f"bench/power.py: {manifest_path} not found: give --judge the folder a run with --keep wrote")
        manifest = json.loads(manifest_path.read_text())
        print_figures(manifest, judge(manifest, args.judge, sizes, args.judge_rounds, args.compare_factors))
        return

    lab = Lab()
    proxy = lab.service(S3Network.name)
    before = current_network(lab.home)
    base = network_profile(args.network)
    if not base.emulated:  # both arms must go through the proxy: the base is the proxy with nothing added
        base = network_profile({"rtt_ms": 0})
    with contextlib.ExitStack() as stack:
        trials_dir = args.keep or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="perfkit-bench-power-")))
        trials_dir.mkdir(parents=True, exist_ok=True)
        # the lab's own messages (a service moved for the network) to stderr: stdout holds the figures alone
        stack.enter_context(contextlib.redirect_stdout(sys.stderr))
        os.environ["PERFKIT_RESULTS"] = str(trials_dir)  # the trials' runs are the bench's, not data/results'
        manifest = {"network": base.describe(), "design": args.design, "seed": args.seed, "effect": args.effect,
                    "engine": args.engine, "sizes": {}}
        lab.set_network(base)
        try:
            for size in args.sizes:
                def save(entry: dict, size: str = size) -> None:
                    manifest["sizes"][size] = entry
                    (trials_dir / MANIFEST).write_text(json.dumps(manifest, indent=1))
                save(collect(args, size, sizes[size], base, proxy, trials_dir, on_trial=save))
        finally:
            lab.set_network(before)
        lines = judge(manifest, trials_dir, sizes, args.judge_rounds, args.compare_factors)
    print_figures(manifest, lines)


def print_figures(manifest: dict, lines: list[str]) -> None:
    versions = sorted({entry["version"] for entry in manifest["sizes"].values()})
    kinds = [[t["kind"] for t in e["trials"]] for e in manifest["sizes"].values()]  # a run stopped early: fewer
    planted = max((k.count("planted") for k in kinds), default=0)
    null = max((k.count("null") for k in kinds), default=0)
    print(f"power: a planted slowdown of S3 (+{manifest['effect']:.0%} of each query's time, Toxiproxy latency) "
          f"against none, {planted} planted and {null} null trials per size in random order; "
          f"{', '.join(versions)}, S3 behind {manifest['network']}; "
          "each trial one perfkit run of two arms over the same S3 files, "
          + ("both arms each round in random order" if manifest["design"] == "interleaved" else
             "one arm's runs after the other's (as compare's two runs), the first drawn per trial")
          + f" (seed {manifest['seed']})")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
