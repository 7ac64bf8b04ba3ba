"""A query comparison's report, built from its records alone.

    report = run_report(QueryComparison(profile, ...))  # measures, then reports
    report = QueryReport.load("data/results/hdfs_vs_s3_queries/RUN.jsonl")  # the same report again, measuring nothing

Everything a report shows comes from the run's records and the config they share: the parameters, the engines'
versions, where S3 sat and what its path measured, the dataset, S3's and HDFS's windows, the break-even's copy. So a
results file renders the same Findings and tables anywhere, with no lab and no cluster.
"""
from __future__ import annotations


import pandas as pd

from perfkit import stats
from perfkit.accounting.table import DIRECT, HDFS, io_frame, io_table
from perfkit.calibration import Calibration
from perfkit.errors import PerfkitError
from perfkit.experiments.base import FAILURE_COLUMNS
from perfkit.presenting.base import StoredReport
from perfkit.experiments.copy_cost import CopyCost
from perfkit.experiments.query_data import placed_storages
from perfkit.findings import Findings, money, plural, size
from perfkit.storages.pricing import price_table
from perfkit.provenance import recorded_environment
from perfkit.results import ResultSet
from perfkit.storages import break_even_pair
from perfkit.storages.pricing import monthly_storage_table

DEFAULT_REPLICATION = 3  # HDFS's, where none of the data is on HDFS


class QueryReport(StoredReport):
    """The tables, plots' frames and Findings of one run of a query comparison (or a subclass: see `Report` there)."""
    NEEDED = ("engines", "storages", "baseline")
    WHAT = "a run of a query comparison (hdfs_vs_s3_queries, engine_storage_matrix, cache_tier)"
    unit = "query runs"

    def __init__(self, results: ResultSet):
        super().__init__(results)
        config, params = results.config, self.parameters
        self.engines, self.storages, self.baseline = params["engines"], params["storages"], params["baseline"]
        self.include_throttled = bool(params.get("include_throttled", False))
        self.accounting = bool(params.get("accounting", True))
        self.runs, self.warmup = params.get("runs", 0), params.get("warmup", 0)
        self.suite, self.scale, self.tables = params.get("suite", ""), params.get("scale"), params.get("tables")
        self.rows, self.files, self.file_format = params.get("rows"), params.get("files"), params.get("file_format", "")
        self.price_table = price_table(params.get("prices"))
        self.titles: dict[str, str] = config.get("query_titles", {})
        self.dataset: dict = config.get("dataset", {})
        self.measured_network = Calibration.from_dict(config["network"]) if config.get("network") else None
        self.copy_cost = CopyCost(**config["copy"]) if config.get("copy") else None

    @property
    def placed_storages(self) -> list[str]:
        """The compared storages that hold files, and S3 behind any cache tier."""
        return placed_storages(self.storages)

    def _others(self) -> list[str]:
        return [s for s in self.storages if s != self.baseline]

    def network_headline(self):
        """The report's first line: where S3 sat (the network, emulated or not) and what its path measured."""
        from IPython.display import Markdown

        if self.measured_network is None:
            return Markdown("**S3's path was not measured in this run.**")
        return Markdown(f"**{self.measured_network.headline()}**")

    def versions(self) -> dict[str, str]:
        return self._results().config.get("versions", {})

    @property
    def profile_name(self) -> str:
        """The profile the run measured on, as it recorded it (findings.where)."""
        return self._results().config.get("profile", {}).get("name", "")

    # ---- the tables ----------------------------------------------------------------------------------------
    FAMILY_CONFIDENCE = 0.95  # every verdict of the report is one family: a false "beyond noise" in 1 of 20 reports

    def comparison(self) -> pd.DataFrame:
        """Every other storage against the baseline, per engine and query, the verdicts corrected as one family
        (stats.compare_storages: Bonferroni, each interval at 1 - 0.05 / m; bench/power.py measured the rule); runs the
        S3 server throttled are left out unless include_throttled."""
        return stats.compare_storages(self._frame(), self.storages, self.baseline,
                                      include_throttled=self.include_throttled,
                                      family_confidence=self.FAMILY_CONFIDENCE)

    def family_phrase(self, comparison: pd.DataFrame) -> str:
        """What the verdicts judged and how they were corrected for their number, for the Conditions ('' when
        nothing was judged)."""
        judged = stats.judged_words(comparison) if len(comparison) else ""
        paired = ("verdicts on the typical round's ratio (the storages of a round paired: what drifted moved both; "
                  "Wilcoxon signed-rank intervals); " if judged == "typical round" else
                  "verdicts on the typical round's ratio where a query had the rounds for it, else the medians' "
                  "ratio; " if judged == "as judged" else "")
        family = comparison.attrs.get("family") or {}
        size = family.get("size") or 0
        if size < 2:
            return paired
        correction = family.get("correction", "Bonferroni")
        return paired + (f"verdicts corrected for their number ({correction} over {size}: each interval at "
                         f"{ci_level(comparison)}, so a false \"beyond noise\" anywhere in the report has at most a "
                         f"{1 - family['confidence']:.0%} chance); ")

    def recap(self) -> pd.DataFrame:
        """One row per engine and query; each engine labelled with the version that executed it; a verdict beyond
        noise no larger than the drift control's move marked (perfkit.drift.WITHIN_DRIFT), as in the Findings."""
        comparison = self.comparison()
        bound = self.drift_bound(self.smallest_effect(comparison))
        if bound is not None and len(comparison):
            from perfkit.drift import WITHIN_DRIFT, within

            verdicts = comparison["verdict"].astype(str)
            marked = verdicts.str.endswith(" faster") & comparison["speedup"].map(lambda r: within(r, bound))
            comparison = comparison.assign(verdict=verdicts.where(~marked, verdicts + f" ({WITHIN_DRIFT})"))
        if len(self.storages) == 2:
            table = recap_table(comparison, self.titles, self.baseline, self._others()[0])
        else:
            table = recap_wide(comparison, self.titles, self.baseline, self._others())
        versions = self.versions()
        table.insert(1, "version", [versions.get(engine, "?") for engine in table["engine"]])
        return table

    def storage_io(self) -> pd.DataFrame:
        """What each run asked of the storage, per engine, storage and query (medians over its runs): S3 requests by
        type and MB, HDFS MB, as the storages counted them beside the engine's own count, and what 1,000 runs cost in
        requests at the price table's prices (the frame's attrs["basis"] says which)."""
        table = io_table(self._frame(), self.price_table)
        table.attrs["basis"] = self.price_table.basis()
        return table

    def io_runs(self) -> pd.DataFrame:
        """Every measured run with its I/O counters, for plots.time_vs_requests."""
        return io_frame(self._frame())

    def s3_window(self):
        """On a cluster that counts S3's requests per window (CloudWatch request metrics), S3's count of the whole
        experiment beside the engines' sum; elsewhere a sentence saying how S3 was counted instead."""
        config = self._results().config
        counted_otherwise = ("S3's requests were counted run by run (above), not per window: no CloudWatch request "
                             "metrics asked." if config.get("s3_counted_run_by_run") else
                             "S3's own count was not asked for: this profile asks for no CloudWatch request metrics "
                             "(s3_request_metrics: true counts each experiment's window); the engines' count is above.")
        return _window(config.get("s3_request_metrics"), "S3's request metrics for this run", counted_otherwise)

    def hdfs_window(self):
        """Where HDFS's daemons refresh their JMX too seldom to be read around each run (a cluster at Hadoop's default
        metrics period), HDFS's count of the whole experiment beside the engines' sum; elsewhere a sentence, or
        nothing ("") when no run read HDFS or nothing was counted."""
        if HDFS not in self.placed_storages or not self.accounting:
            return ""
        return _window(self._results().config.get("hdfs_window"), "HDFS's count for this run",
                       "HDFS's reads were counted run by run (above), not per window.")

    def storage_cost(self) -> pd.DataFrame:
        """A month of this run's dataset on each storage at the price table's prices: S3 Standard, and HDFS with every
        replica on EBS (st1 and gp3), at the replication its files on HDFS had; attrs["basis"] says the prices."""
        if "one_copy_bytes" not in self.dataset:
            raise PerfkitError(f"{self._results().path}: its records do not say the dataset's size: a run of an "
                               "older perfkit; run it again for the storage cost")
        one_copy = self.dataset["one_copy_bytes"]
        replication = self.dataset.get("hdfs_replication") or DEFAULT_REPLICATION
        table = monthly_storage_table(self.price_table, one_copy, replication, volume_types=("st1", "gp3"))
        table.attrs["replication"], table.attrs["bytes"] = replication, one_copy
        return table

    def dataset_table(self) -> pd.DataFrame:
        """One row per storage and table: where it sat, its files and size, whether it was verified equal."""
        return pd.DataFrame(self.dataset.get("summary", []))

    def engines_table(self) -> pd.DataFrame:
        """What executed the queries: each engine with the version its server reported during the run."""
        versions = self.versions()
        return pd.DataFrame([{"engine": name, "version": versions.get(name, "? (did not start)")}
                             for name in self.engines])

    def environment(self) -> pd.DataFrame:
        """Versions, host, profile and parameters, as the run recorded them, as one two-column table."""
        return recorded_environment(self._results().config)

    def break_even_frame(self) -> pd.DataFrame:
        """After how many runs of each query copying the data to HDFS once, then querying HDFS, beats querying S3
        directly (the first study's trade): the measured copy time over each query's measured S3 penalty; the columns
        of perfkit.breakeven.break_even_table (runs, runs_low, ...), as code reads them."""
        from perfkit.breakeven import break_even_table

        pair = break_even_pair(self.storages)
        if pair is None:
            raise PerfkitError("break-even compares querying S3 with copying to HDFS: give storages hdfs and s3")
        cost = self.copy_cost
        if cost is None:
            return pd.DataFrame({"finding": ["The copy to HDFS was not measured in this run: no break-even."]})
        if cost.fastest is None:
            return pd.DataFrame({"finding": [cost.sentence()]})
        table = break_even_table(self._frame(), cost.fastest[1], *pair)
        table.insert(2, "copied by", cost.fastest[0])
        return table

    def break_even(self) -> pd.DataFrame:
        """break_even_frame as a reader sees it: plain headers, each interval in one cell under a header that says it
        is a 95% CI, "never" where copying never pays off."""
        return break_even_shown(self.break_even_frame())

    def reference_table(self) -> pd.DataFrame | None:
        """TPC-H's independent check as the run recorded it (perfkit.experiments.query_reference), its `by` in attrs;
        None when the run was not checked."""
        found = self._results().config.get("reference")
        if not found or "table" not in found:
            return None
        table = pd.DataFrame(found["table"])
        table.attrs["by"] = found["by"]
        return table

    def problems(self) -> pd.DataFrame:
        """Every query whose results differ between storages: listed as a failure, never compared."""
        return result_mismatches(self._frame())

    # ---- the Findings --------------------------------------------------------------------------------------
    def findings(self) -> Findings:
        """What this run found, first in its report: per engine, how the storages compared beyond noise; when copying
        to HDFS paid off (when the copy was measured); the S3 requests each engine made per query; the conditions."""
        from perfkit.findings import data_size, runs_phrase, storage_verdicts, where

        comparison = self.comparison()
        versions = self.versions()
        if not comparison.empty:
            comparison = comparison.assign(subject=[versions.get(e, e) for e in comparison["subject"]])
        smallest = self.smallest_effect(comparison)
        sentences, undecided = storage_verdicts(comparison, self.baseline, drift=self.drift_bound(smallest))
        if self.copy_cost is not None and break_even_pair(self.storages):
            sentences.append(self._break_even_sentence())
        sentences += self._request_sentences()
        sentences += self._locality_sentences()
        if "one_copy_bytes" in self.dataset:
            sentences.append(self._storage_cost_sentence())
        if len(failed := self.failures()):
            undecided.append(f"{_failed(len(failed))} (listed under Failures): "
                             + "; ".join(sorted({f"{r.subject} {r.case} on {r.storage}"
                                                 for r in failed.itertuples()})[:6]))
        if note := self.drift_note(smallest):
            undecided.append(note)
        data = (f"your tables ({self.suite})" if self.tables else
                data_size(self.rows, self.files, self.file_format, self.suite, self.scale))
        conditions = (f"{data}; {runs_phrase(self.runs, self.warmup)}; {self.order_phrase()}"
                      f"{self.family_phrase(comparison)}"
                      f"{where(self.profile_name, self.measured_network, self._results().config)}; "
                      f"{self.control_phrase()}")
        return Findings(sentences, conditions, undecided)

    ORDERED = "storages"  # what the run's order shuffles (the matrix: its cells)

    def order_phrase(self) -> str:
        """How the runs were ordered and the engines warmed, as the run recorded it ('' for a run of an older
        perfkit), ending in '; '."""
        config = self._results().config
        said = []
        if "engine_warm_up" in config:
            said.append("each engine read every table once on each storage before its first timed run")
        if order := config.get("order"):
            said.append(f"{self.ORDERED} in a random order per query, rotated each round (seed {order['seed']})")
        return "".join(f"{s}; " for s in said)

    def smallest_effect(self, comparison: pd.DataFrame | None = None) -> float:
        """The smallest ratio (either way, a factor ≥ 1) this run calls beyond noise, storage against baseline; the
        noise factor (perfkit.drift.NOISE_FACTOR) when it calls none: what the drift control is held against."""
        from perfkit.drift import smallest_effect

        comparison = self.comparison() if comparison is None else comparison
        if comparison.empty:
            return smallest_effect([])
        verdicts = comparison["verdict"].astype(str)
        beyond = verdicts.str.endswith(" faster") & ~verdicts.str.startswith("too few")
        return smallest_effect(comparison.loc[beyond, "speedup"])

    def _break_even_sentence(self) -> str:
        cost = self.copy_cost
        if cost.fastest is None:
            return cost.sentence()
        table = self.break_even_frame()
        pays = table["runs"].dropna()
        if pays.empty:
            return f"Copying to HDFS never paid off here: {cost.sentence()}, and no query was slower on S3."
        runs = f"{plural(int(pays.min()), 'run')} of a query" + (
            "" if pays.min() == pays.max() else f" at the earliest, {int(pays.max())} at the latest")
        return (f"Copying to HDFS pays off after {runs} "
                f"({len(pays)} of {plural(len(table), 'engine-query pair')}; {cost.sentence()}).")

    def _storage_cost_sentence(self) -> str:
        cost = self.storage_cost()
        column = cost.columns[-1]
        each = "; ".join(f"{row['storage']} {money(row[column])}" for _, row in cost.iterrows())
        return (f"A month of keeping the {size(cost.attrs['bytes'])} of data, in {column.split()[0]}: {each} "
                f"({cost.attrs['basis'].split(' (')[0]}).")

    def _locality_sentences(self) -> list[str]:
        """On a cluster (a run that recorded one), how much of what the DataNodes sent went to a reader on their own
        node: what replication and placement gave each engine's readers, part of why HDFS beats S3 on a cluster."""
        if not self.accounting or HDFS not in self.storages or not self._results().config.get("cluster"):
            return []
        from perfkit.accounting.table import hdfs_locality

        found = hdfs_locality(self._frame())
        if not found:
            return []
        parts = [f"{engine} {100 * local / sent:.0f}% of {sent / 1e6:.1f} MB"
                 for engine, (local, sent) in found.items()]
        return ["HDFS locality (the DataNodes' count over the measured runs on HDFS): the share of the bytes they sent "
                "that went to a reader on their own node: " + "; ".join(parts) + "."]

    def _request_sentences(self) -> list[str]:
        """One sentence: per engine, the S3 requests and MB of its median run of each query on S3 (the server's count,
        else the engine's), so an engine that asks S3 for much more than another shows on the first screen."""
        if not self.accounting or DIRECT not in self.storages:
            return []
        from perfkit.accounting.counters import S3_REQUESTS
        from perfkit.accounting.table import counted

        runs = io_frame(self._frame())
        if runs.empty:  # runs recorded without their I/O
            return []
        runs = runs[runs["storage"] == DIRECT]
        parts = []
        for engine, group in runs.groupby("engine", sort=True):
            per_query = group.assign(requests=counted(group, S3_REQUESTS),
                                     mb=counted(group, ("s3_bytes_read",)) / 1e6).groupby("query")[["requests", "mb"]]
            medians = per_query.median().dropna(subset=["requests"])
            if len(medians):
                mb = medians["mb"].dropna()
                parts.append(f"{engine} {_range(medians['requests'], '{:.0f}', 'query')}"
                             + (f" ({_range(mb, '{:.1f}')} MB)" if len(mb) else ""))
        return [f"S3 requests per query (median run of each): {'; '.join(parts)}."] if parts else []


def _failed(n: int) -> str:
    """'1 failed run or problem', '3 failed runs or problems' (plural() would make the last word alone plural)."""
    return f"{n:,} failed run or problem" if n == 1 else f"{n:,} failed runs or problems"


def result_mismatches(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per (engine, query) whose successful runs returned different results across storages."""
    ok = frame[frame["ok"].astype(bool) & frame["result_hash"].notna()]
    rows = []
    for (subject, case), group in ok.groupby(["subject", "case"], sort=True):
        by_storage = group.groupby("storage")["result_hash"].agg(lambda h: ",".join(sorted(set(h))))
        if group["result_hash"].nunique() > 1:
            seen = "; ".join(f"{where} {hashes}" for where, hashes in by_storage.items())
            rows.append({"subject": subject, "storage": "all", "case": case, "phase": "measured",
                         "iteration": None, "error": f"not comparable: results differ ({seen})"})
    return pd.DataFrame(rows, columns=FAILURE_COLUMNS)


def break_even_shown(table: pd.DataFrame) -> pd.DataFrame:
    """perfkit.breakeven.break_even_table's frame (with "copied by") with plain headers; a frame of one "finding"
    (nothing to break even) as it is."""
    if "runs" not in table:
        return table
    from perfkit.findings import ci_span, rounded

    def runs(n) -> str:
        return "never" if n is None or n is pd.NA or n != n or n == float("inf") else f"{int(n):,}"

    return pd.DataFrame({
        "engine": table["engine"], "query": table["query"], "copied by": table.get("copied by", ""),
        "copy (s)": table["copy_s"].round(1), "S3 mean (s)": [rounded(v, 3) for v in table["s3_mean_s"]],
        "HDFS mean (s)": [rounded(v, 3) for v in table["hdfs_mean_s"]],
        "S3 penalty (s per run)": [rounded(v, 3) for v in table["penalty_s"]],
        "penalty's 95% CI (s)": [ci_span(lo, hi, decimals=3) for lo, hi in zip(table["penalty_low"],
                                                                               table["penalty_high"])],
        "copying pays off after (runs)": [runs(n) if penalty == penalty else "—"  # no penalty: cannot tell
                                          for n, penalty in zip(table["runs"], table["penalty_s"])],
        "runs' 95% CI": ["—" if lo != lo else f"{runs(lo)} to {runs(hi)}".replace("never", "∞")
                         for lo, hi in zip(table["runs_low"], table["runs_high"])],
        "finding": table["finding"],
    })


def recap_table(comparison: pd.DataFrame, titles: dict[str, str], baseline: str = "hdfs",
                other: str = "s3") -> pd.DataFrame:
    """The published shape: HDFS | S3 | S3 ÷ HDFS time | query, by median and by minimum, in seconds; the ratio the
    verdict judged (the typical round's, when paired) with its CI. A ratio above 1: the other storage slower (named
    for what it holds, not a "speed-up")."""
    c, b, o = comparison, stats.label(baseline), stats.label(other)
    judged = stats.judged_words(c)
    return pd.DataFrame({
        "engine": c["subject"],
        f"{b} median (s)": c[f"{baseline}_median"].round(3),
        f"{o} median (s)": c[f"{other}_median"].round(3),
        f"{o} ÷ {b} time (median)": c["speedup_median"].round(2),
        f"{b} min (s)": c[f"{baseline}_min"].round(3),
        f"{o} min (s)": c[f"{other}_min"].round(3),
        f"{o} ÷ {b} time (min)": c["speedup_min"].round(2),
        **({f"{o} ÷ {b} time ({judged})": c["speedup"].round(2)} if judged != "medians" else {}),
        f"{ci_level(c)} CI ({judged})": [_ci(lo, hi) for lo, hi in zip(c["ci_low"], c["ci_high"])],
        "verdict": c["verdict"],
        "query": [f"{case}: {titles.get(case, case)}" for case in c["case"]],
        "check": [_check(row) for row in c.itertuples()],
    }).reset_index(drop=True)


def recap_wide(comparison: pd.DataFrame, titles: dict[str, str], baseline: str, others: list[str]) -> pd.DataFrame:
    """More than two storages: the baseline's median, then per other storage its median, its time ÷ the baseline's
    (the ratio judged: the typical round's when paired, else the medians'; with its CI) and verdict."""
    rows, judged = [], stats.judged_words(comparison)
    for (subject, case), group in comparison.groupby(["subject", "case"], sort=True):
        first = group.iloc[0]
        row = {"engine": subject, f"{stats.label(baseline)} median (s)": round(first[f"{baseline}_median"], 3)}
        for other in others:
            mine = group[group["storage"] == other]
            if mine.empty:
                continue
            r = mine.iloc[0]
            name = stats.label(other)
            row[f"{name} median (s)"] = round(r[f"{other}_median"], 3)
            row[f"{name} ÷ {stats.label(baseline)} time ({judged})"] = round(r["speedup"], 2)
            row[f"{name} {ci_level(comparison)} CI"] = _ci(r["ci_low"], r["ci_high"])
            row[f"{name} verdict"] = r["verdict"]
        row["query"] = f"{case}: {titles.get(case, case)}"
        row["check"] = "; ".join(sorted({_check(r) for r in group.itertuples()} - {"ok"})) or "ok"
        rows.append(row)
    return pd.DataFrame(rows)


def ci_level(comparison: pd.DataFrame) -> str:
    """The confidence of each row's interval: '95%', or a family's corrected level ('98.75%')."""
    level = (comparison.attrs.get("family") or {}).get("row_confidence", stats.CONFIDENCE)
    return f"{100 * level:.4g}%"


def _ci(low: float, high: float) -> str:
    """A ratio's 95% CI as a table cell ('1.10–2.30×', the column's header says it is the CI); '—' for none."""
    return f"{low:.2f}–{high:.2f}×" if low == low else "—"


def _check(row) -> str:
    notes = []
    if not row.results_match:
        notes.append("RESULTS DIFFER between storages: not compared")
    if row.failed_runs:
        notes.append(plural(row.failed_runs, "failed run"))
    if row.noisy:
        notes.append("noisy (CV > 10%)")
    if getattr(row, "throttled_runs", 0):
        kept = "kept in the verdict" if row.throttled_kept else "left out of the verdict"
        notes.append(f"throttled: {plural(row.throttled_requests, 'request')} ({plural(row.throttled_runs, 'run')}, "
                     f"{kept})")
    return "; ".join(notes) or "ok"


def _range(values, fmt: str, what: str | None = None) -> str:
    """'12' when every value prints the same; else 'range 10–12', and with `what` 'range 10–12 over 3 queries': a
    range labelled as one, never to be read as an interval (perfkit.presenting.intervals)."""
    values = list(values)
    low, high = fmt.format(min(values)), fmt.format(max(values))
    if low == high:
        return low
    return f"range {low}–{high}" + (f" over {plural(len(values), what)}" if what else "")


def _window(found: dict | None, whose: str, counted_otherwise: str) -> pd.DataFrame | str:
    """A window's stored comparison (results.config) as a table, its notes in attrs; or a sentence: how the storage
    was counted instead when there is no window, or why `whose` count is missing."""
    if not found:
        return counted_otherwise
    if found.get("missing") and not found.get("compared"):
        return f"{whose}: {found['missing']}"
    table = pd.DataFrame(found.get("compared", []))
    table.attrs["notes"] = found.get("notes", [])
    return table
