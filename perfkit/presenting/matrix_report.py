"""The engine x storage matrix's report, from its records alone (perfkit.presenting.query_report): the cells
ranked by the geometric mean of their median times over the read queries every cell completed, the heat map, the
speed-ups against the baseline cell, and the queries an engine could not run, listed apart."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from perfkit.findings import Findings, p_value, paired_over_cases, plural
from perfkit.experiments.engine_storage_matrix import cell_name
from perfkit.presenting.query_report import QueryReport, result_mismatches
from perfkit.results import grouped_files



class MatrixReport(QueryReport):
    """The report of an EngineStorageMatrix run."""
    ORDERED = "cells"

    def __init__(self, results):
        super().__init__(results)
        self.baseline_cell = self.parameters.get("baseline_cell") or cell_name(self.engines[0], self.baseline)

    def cells(self) -> list[str]:
        return [cell_name(e, s) for e in self.engines for s in self.storages]

    def cell_times(self) -> pd.DataFrame:
        """One row per (query, cell): median and min of the measured runs, runs ok, the first error if any."""
        frame = self._frame()
        frame = frame[frame["case"] != "register tables"]
        rows = []
        for (case, subject, where), group in frame.groupby(["case", "subject", "storage"], sort=False):
            measured = group[group["phase"] == "measured"]
            ok = measured[measured["ok"].astype(bool)]["wall_s"].to_numpy(dtype=float)
            errors = group.loc[~group["ok"].astype(bool), "error"].dropna()
            rows.append({"query": case, "engine": subject, "storage": where, "cell": cell_name(subject, where),
                         "kind": "write" if case in self.write_queries else "read",
                         "median_s": float(np.median(ok)) if len(ok) else np.nan,
                         "min_s": float(ok.min()) if len(ok) else np.nan,
                         "runs_ok": len(ok), "runs": len(measured),
                         "error": errors.iloc[0] if len(errors) else ""})
        return pd.DataFrame(rows)

    @property
    def write_queries(self) -> list[str]:
        """The suite's write workloads, measured apart from its reads."""
        return self._results().config.get("write_queries", [])

    def _complete(self, kind: str) -> tuple[pd.DataFrame, list[str]]:
        """The cell times of `kind` queries, and the queries every cell completed (with equal results)."""
        times = self.cell_times()
        times = times[times["kind"] == kind]
        differ = set(self.problems()["case"]) if len(self.problems()) else set()
        wide = times.pivot(index="query", columns="cell", values="median_s").reindex(columns=self.cells())
        done = [q for q in wide.index if wide.loc[q].notna().all() and q not in differ]
        return times, done

    def ranking(self, kind: str = "read") -> pd.DataFrame:
        """Cells best to worst by the geometric mean of median times over the queries every cell completed."""
        times, done = self._complete(kind)
        rows = []
        for cell in self.cells():
            mine = times[(times["cell"] == cell) & times["query"].isin(done)]
            geo = geometric_mean(mine["median_s"])
            failed = times[(times["cell"] == cell) & times["median_s"].isna()]
            rows.append({"cell": cell, "engine": cell.split("/")[0], "storage": cell.split("/")[1],
                         "geomean (s)": round(geo, 3) if geo == geo else np.nan, "queries": len(mine),
                         "failed": ", ".join(failed["query"]) or "none"})
        table = pd.DataFrame(rows).sort_values("geomean (s)", na_position="last").reset_index(drop=True)
        best = table["geomean (s)"].min()
        table["× best"] = (table["geomean (s)"] / best).round(2)
        table.insert(0, "rank", range(1, len(table) + 1))
        return table

    def findings(self) -> Findings:
        """The ranking first (best cell, each other cell's factor over it), then per engine how the storages compared
        beyond noise, the queries an engine could not run, and the S3 requests per query; all prefixed by the suite."""
        found = super().findings()
        found.undecided = [f"{self.suite}: {u}" for u in found.undecided]
        ranked = self.ranking().dropna(subset=["geomean (s)"])
        sentences = []
        if len(ranked):
            best, rest = ranked.iloc[0], ranked.iloc[1:]
            sentences.append(
                f"{self.suite}: fastest is {best['cell']} ({best['geomean (s)']:.3f} s geometric mean over the "
                f"{plural(int(best['queries']), 'read query')} every cell completed)"
                + ("; then " + ", ".join(f"{r['cell']} {r['× best']:.2f}× slower" for _, r in rest.iterrows())
                   if len(rest) else "")
                + (f" ({plural(self.runs, 'run')} per query and cell: an order of medians, not a verdict beyond "
                   "noise; the storages' verdicts follow)" if self.runs < 3 and len(rest) else "") + ".")
        else:
            found.undecided.insert(0, f"{self.suite}: no ranking: no read query completed in every cell")
        over_queries, too_few = self._storages_over_queries()
        sentences += over_queries
        for engine, group in self.unsupported().groupby("engine", sort=True):
            found.undecided.append(f"{self.suite}: {engine} failed {', '.join(group['query'])}: "
                                   f"{group['message'].iloc[0][:160]}")
        found.sentences = sentences + [f"{self.suite}: {s}" for s in found.sentences]
        found.undecided += too_few
        return found

    def _storages_over_queries(self) -> tuple[list[str], list[str]]:
        """Per engine, each storage against the baseline storage with the queries as the replicates (each query's
        median ratio; the Wilcoxon signed-rank test over them): a verdict even when too few runs per query allow one
        query by query."""
        times, done = self._complete("read")  # the queries every cell completed, with equal results
        wide = times[times["query"].isin(done)].pivot(index="query", columns="cell", values="median_s")
        versions = self.versions()
        found, undecided = [], []
        for engine in self.engines:
            base = wide.get(cell_name(engine, self.baseline))
            for where in self.storages:
                other = wide.get(cell_name(engine, where))
                if where == self.baseline or base is None or other is None:
                    continue
                ratios = (other / base).dropna()
                if not len(ratios):
                    continue
                label = f"{self.suite}, {versions.get(engine, engine)}: {where.upper()} ÷ {self.baseline.upper()}"
                signs = self.order_signs(engine, where).reindex(ratios.index)
                if len(ratios) >= 2 and signs.notna().all() and signs.nunique() == 1 and signs.iloc[0] != 0:
                    first, then = ((where, self.baseline) if signs.iloc[0] > 0 else (self.baseline, where))
                    undecided.append(
                        f"{label}: no verdict: {first.upper()} ran before {then.upper()} in every round of all "
                        f"{plural(len(ratios), 'query')}, so the run order (a first run's cold caches) cannot be told "
                        "from the storage")
                    continue
                if signs.notna().all() and signs.nunique() > 1:
                    verdict, p, order = order_adjusted(ratios, signs)
                    test = (f"a regression over the queries with the run order as a covariate (order effect "
                            f"{order:.2f}× when {where.upper()} ran first)")
                else:  # the order balanced within every query (or not recorded): the storages' ratios alone
                    (verdict, p), test = paired_over_cases(ratios), "Wilcoxon signed-rank over the queries"
                if p != p:  # too few queries to tell
                    undecided.append(f"{label}: {verdict}")
                    continue
                found.append(
                    f"{label} per query, geometric mean {geometric_mean(ratios):.2f}× ({where.upper()} slower on "
                    f"{int((ratios > 1).sum())} of {plural(len(ratios), 'query')}); {test}: {p_value(p)}, "
                    f"{verdict}.")
        return found, undecided

    def order_signs(self, engine: str, where: str) -> pd.Series:
        """Per query, how the two cells (engine on the baseline, engine on `where`) were ordered over the measured
        rounds, from the records' start times: +1 where `where` always ran first, -1 where the baseline did, between
        for a mix (0: balanced). NaN where a round lacks either start."""
        frame = self._frame()
        frame = frame[(frame["subject"] == engine) & (frame["phase"] == "measured")
                      & frame["storage"].isin([self.baseline, where])]
        signs = {}
        for case, group in frame.groupby("case", sort=False):
            starts = group.pivot_table(index="iteration", columns="storage", values="started_at", aggfunc="first")
            if where not in starts or self.baseline not in starts or starts.isna().any().any():
                signs[case] = np.nan
                continue
            mine, theirs = pd.to_datetime(starts[where]), pd.to_datetime(starts[self.baseline])
            if (mine == theirs).any():  # no order to tell (records made together)
                signs[case] = np.nan
                continue
            signs[case] = float(np.where(mine < theirs, 1.0, -1.0).mean())
        return pd.Series(signs, dtype=float)

    def heatmap_frame(self, kind: str = "read") -> pd.DataFrame:
        """Median seconds, one row per query and one column per cell (NaN: failed or unsupported)."""
        times = self.cell_times()
        times = times[times["kind"] == kind]
        order = [q for q in dict.fromkeys([*self.titles, *times["query"]]) if q in set(times["query"])]  # suite order
        return times.pivot(index="query", columns="cell", values="median_s").reindex(index=order, columns=self.cells())

    def speedups(self, kind: str = "read") -> pd.DataFrame:
        """Per query, every cell's speed-up against the baseline cell (its median / the cell's median: >1 faster)."""
        wide = self.heatmap_frame(kind)
        base = wide[self.baseline_cell]
        table = wide.rdiv(base, axis=0).round(2)
        table.insert(0, f"{self.baseline_cell} median (s)", base.round(3))
        return table

    def unsupported(self) -> pd.DataFrame:
        """Per engine, each query it failed on every storage or some, with its first message."""
        times = self.cell_times()
        failed = times[times["error"] != ""]
        rows = []
        for (engine, query), group in failed.groupby(["engine", "query"], sort=False):
            rows.append({"engine": engine, "query": query, "storages": ", ".join(group["storage"]),
                         "runs failed": int((group["runs"] - group["runs_ok"]).sum()),
                         "message": group["error"].iloc[0][:300]})
        frame = self._frame()
        for row in frame[frame["case"] == "register tables"].itertuples():
            rows.append({"engine": row.subject, "query": "all", "storages": "all", "runs failed": 0,
                         "message": f"could not register the tables: {row.error}"})
        return pd.DataFrame(rows, columns=["engine", "query", "storages", "runs failed", "message"])

    def problems(self) -> pd.DataFrame:
        """A query whose results differ between storages or engines: not comparable, listed as a failure."""
        frame = self._frame()
        across_storages = result_mismatches(frame)
        ok = frame[frame["ok"].astype(bool) & frame["result_hash"].notna()]
        rows = []
        for case, group in ok.groupby("case", sort=False):
            if group["result_hash"].nunique() > 1 and case not in set(across_storages["case"]):
                seen = "; ".join(f"{e} {','.join(sorted(set(g)))}" for e, g in group.groupby("subject")["result_hash"])
                rows.append({"subject": "all", "storage": "all", "case": case, "phase": "measured", "iteration": None,
                             "error": f"not comparable: engines return different results ({seen})"})
        return pd.concat([across_storages, pd.DataFrame(rows, columns=across_storages.columns)], ignore_index=True)




def order_adjusted(ratios, signs, alpha: float = 0.05) -> tuple[str, float, float]:
    """Whether other ÷ baseline leans one way beyond noise once the run order is accounted for: the least-squares fit
    log(ratio) = storage + order × sign over the queries (sign: +1 where the other storage ran first, -1 where the
    baseline did), and the t test of the storage term (n - 2 degrees of freedom). A first-run penalty that fell on
    one storage in some queries and on the other in the rest is the order term, not the storage's. Returns (verdict
    words, p of the storage term, the order's factor exp(2 × order): the ratio when the other storage ran first over
    when it ran second)."""
    from scipy import stats as sps

    logs, x = np.log(np.asarray(ratios, dtype=float)), np.asarray(signs, dtype=float)
    keep = np.isfinite(logs) & np.isfinite(x)
    logs, x = logs[keep], x[keep]
    if len(logs) < 6:
        return f"too few cases to judge ({len(logs)}; need 6)", math.nan, math.nan
    fit = sps.linregress(x, logs)
    if fit.intercept_stderr < 1e-9:  # the points on a line: no noise to judge by, the storage term is what it is
        exact = abs(fit.intercept) < 1e-9
        return ("no difference beyond noise" if exact else "beyond noise"), float(exact), float(np.exp(2 * fit.slope))
    t = fit.intercept / fit.intercept_stderr
    p = float(2 * sps.t.sf(abs(t), len(logs) - 2))
    return ("beyond noise" if p < alpha else "within noise"), p, float(np.exp(2 * fit.slope))


def geometric_mean(values) -> float:
    values = np.asarray(values, dtype=float)
    return float(np.exp(np.log(values).mean())) if len(values) else float("nan")


def matrix_findings(matrices: list[MatrixReport]) -> Findings:
    """One Findings for every suite's matrix report, their conditions joined."""
    parts = [m.findings() for m in matrices]
    conditions = "; ".join(dict.fromkeys(
        f"{m.suite}{f' at scale {m.scale}' if m.scale is not None else ''}" for m in matrices))
    shared = parts[0].conditions.split("; ", 1)[1] if parts and "; " in parts[0].conditions else ""
    if len(matrices) > 1:  # each suite ran on its own: each its own drift control
        shared = shared.replace(f"; {matrices[0].control_phrase()}", "")
        shared += "".join(f"; {m.suite}'s {m.control_phrase()}" for m in matrices)
    return Findings([s for p in parts for s in p.sentences], f"{conditions}; {shared}".strip("; "),
                    [u for p in parts for u in p.undecided])


def stored_reports(results: str | list[str]) -> list[MatrixReport]:
    """The reports of stored matrix runs: one results file (.jsonl) per suite, or one file (with the other suites of
    its run, found beside it: perfkit.results.grouped_files)."""
    return [MatrixReport.load(path) for path in (grouped_files(results) if isinstance(results, str) else results)]
