"""Did B get faster or slower than A, case by case, beyond noise? (`perfkit compare A B`)

A and B are each a run id, a run's result file, or a folder of result files (several runs are pooled). A case is
(experiment, subject, storage, case) as the records name it; for copy methods the concurrency is part of the case
("total c=4"), since one method at two concurrencies is two different measurements, not two samples of one.

The verdict rule, asv's factor rule with a rank test beside it (both must agree before a change is called):
- only measured runs that worked are timings; warm-up runs never are, failed runs are counted apart;
- ratio = median(B) / median(A) of wall seconds; above 1 means B took longer;
- 'slower' when ratio > factor and the two-sided Mann-Whitney U p-value < alpha; 'faster' when ratio < 1 / factor
  and p < alpha; otherwise 'no change', with the reason when the ratio alone was outside the band:
  '(within noise)' when the samples overlap too much, '(too few runs to tell)' when no outcome of these sample
  sizes could reach p < alpha: Mann-Whitney's smallest two-sided p is 2 / C(n_a + n_b, n_a), 0.33 for 2 vs 2 and
  0.10 for 3 vs 3, so a 0.05 test needs at least 4 vs 4 (or 3 vs 5) runs;
- a case whose successful runs returned different results in A and B is not comparable (timing two different
  answers says nothing), and a case with no successful run on one side is not compared.
"""
from __future__ import annotations

import glob
import json
from math import comb
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import mannwhitneyu

from perfkit.accounting.counters import S3_REQUESTS
from perfkit.chance import at_least, flag_rate
from perfkit.drift import RunsMove, between_runs
from perfkit.errors import PerfkitError
from perfkit.findings import Findings, plural
from perfkit.paths import results_dir
from perfkit.results import UNAVAILABLE, read_result_file, records_frame
from perfkit.stats import NOISE_FACTOR

DEFAULT_FACTOR = NOISE_FACTOR
DEFAULT_ALPHA = 0.05
KEY = ["experiment", "subject", "storage", "case"]
SETTING_PARAMS = {"concurrency": "c"}  # record params that make another measurement, not another sample
SLOWER, FASTER, NO_CHANGE = "slower", "faster", "no change"
WITHIN_NOISE = "no change (within noise)"
TOO_FEW = "no change (too few runs to tell)"
RESULTS_DIFFER = "not comparable: results differ"
DEFAULT_EXPERIMENT = "hdfs_vs_s3_queries"


def compare_runs(a, b, factor: float = DEFAULT_FACTOR, alpha: float = DEFAULT_ALPHA,
                 folder: Path | str | None = None) -> pd.DataFrame:
    """One row per case measured in both A and B: n, failed runs, medians, ratio B/A, p-value and verdict.

    `folder` is where run ids are looked up (default: data/results, or PERFKIT_RESULTS). The frame's attrs hold
    plain lists: "config_differences" (experiment, setting, a, b), "only_in_a" and "only_in_b" (the cases one side
    lacks), "a" and "b" (the run ids of each side), "factor" and "alpha"; config_frame() and only_in() make frames
    of them."""
    if a is None or b is None:
        raise PerfkitError("give both A and B (run ids, result files or folders of runs)")
    if not (np.isfinite(factor) and factor > 1):
        raise PerfkitError(f"factor {factor} must be a number above 1 (1.10: a change must exceed 10%)")
    if not 0 < alpha < 1:
        raise PerfkitError(f"alpha {alpha} must be between 0 and 1 (0.05 is usual)")
    side_a, side_b = load_side(a, folder), load_side(b, folder)
    both = sorted(set(side_a["run_id"]) & set(side_b["run_id"]))
    if both:
        raise PerfkitError(f"run {both[0]} is in both A ({a}) and B ({b}): give two different sets of runs")
    cases_a, cases_b = _cases(side_a), _cases(side_b)
    common = sorted(set(cases_a) & set(cases_b))
    if not common:
        raise PerfkitError(f"A ({a}) and B ({b}) have no case in common (A: {_some(cases_a)}; B: {_some(cases_b)}): "
                           "compare runs of the same experiment that measured the same subjects, storages and cases")
    rows = [_row(key, cases_a[key], cases_b[key], factor, alpha) for key in common]
    table = pd.DataFrame(rows, columns=[*KEY, "n_a", "n_b", "failed_a", "failed_b", "median_a", "median_b",
                                        "ratio", "p_value", "verdict", *IO_COLUMNS])
    experiments = sorted({key[0] for key in common})
    table.attrs.update({
        "a": sorted(set(side_a["run_id"])), "b": sorted(set(side_b["run_id"])), "factor": factor, "alpha": alpha,
        "config_differences": config_differences(side_a, side_b, experiments),
        "profiles": sorted({((config or {}).get("profile") or {}).get("name", "?") for config in
                            pd.concat([side_a[["run_id", "config"]], side_b[["run_id", "config"]]])
                            .drop_duplicates("run_id")["config"]}),
        "only_in_a": [_only(key, cases_a[key]) for key in sorted(set(cases_a) - set(cases_b))],
        "only_in_b": [_only(key, cases_b[key]) for key in sorted(set(cases_b) - set(cases_a))],
        "control": _control_between(side_a, side_b),
    })
    return table


def _control_between(side_a: pd.DataFrame, side_b: pd.DataFrame) -> list[dict]:
    """The drift control's reads of B's runs against A's, per storage both timed (perfkit.drift.between_runs), as
    plain dicts: storage, ratio, low, high."""
    def configs(side: pd.DataFrame) -> list:
        return list(side[["run_id", "config"]].drop_duplicates("run_id")["config"]) if "config" in side else []

    return [vars(move) for move in between_runs(configs(side_a), configs(side_b))]


# -- the two sides -------------------------------------------------------------------------------------------
def load_side(spec, folder: Path | str | None = None) -> pd.DataFrame:
    """The records of a run id, a result file or a folder of result files, as one frame."""
    text = str(spec).strip()
    path = Path(text).expanduser()
    if path.is_dir():
        files = sorted(f for f in path.rglob("*.jsonl") if not f.name.startswith("."))
        if not files:
            raise PerfkitError(f"folder {path} holds no perfkit result files (*.jsonl): give a folder such as "
                               "data/results/hdfs_vs_s3_queries, a result file or a run id")
    elif path.is_file():
        files = [path]
    elif _looks_like_path(text):
        raise PerfkitError(f"{text} does not exist: give an existing result file or folder, or a run id")
    else:
        files = [_run_file(text, Path(folder) if folder else results_dir())]
    return records_frame([row for f in files for row in read_result_file(f)])


def _looks_like_path(text: str) -> bool:
    # a run id is "<UTC time>-<hex>"; anything with a separator, a dot or ~ was meant as a path
    return not text or any(c in text for c in "/\\~") or text.startswith(".") or text.endswith(".jsonl")


def _run_file(run_id: str, root: Path) -> Path:
    """The result file of a run id, or of the one run whose id starts with it."""
    matches = sorted(root.glob(f"*/{glob.escape(run_id)}*.jsonl"))  # an id is text: a * or [ in it matches itself
    exact = [m for m in matches if m.stem == run_id]
    if exact or len(matches) == 1:
        return (exact or matches)[0]
    if not matches:
        raise PerfkitError(f"run id {run_id} not found under {root} (set PERFKIT_RESULTS for another folder): "
                           f"`ls {root}/*/` lists the runs; or give a result file or a folder")
    names = ", ".join(m.stem for m in matches[:5])
    raise PerfkitError(f"run id {run_id} matches {len(matches)} runs ({names}{', ...' if len(matches) > 5 else ''}): "
                       "give more of the id")


def _case_label(case: str, params: dict) -> str:
    settings = [f"{short}={params[name]}" for name, short in SETTING_PARAMS.items()
                if isinstance(params, dict) and params.get(name) is not None]
    return " ".join([case, *settings])


def _cases(side: pd.DataFrame) -> dict[tuple, pd.DataFrame]:
    """Measured records by case; a subject unavailable here (S3DistCp off EMR) measured nothing: left out."""
    measured = side[(side["phase"] == "measured") & ~side["error"].fillna("").str.startswith(UNAVAILABLE)]
    measured = measured.assign(case=[_case_label(c, p) for c, p in zip(measured["case"], measured["params"])])
    return {key: group for key, group in measured.groupby(KEY, sort=True)}


def _some(cases: dict, limit: int = 3) -> str:
    if not cases:
        return "no measured case"
    keys = sorted(cases)
    shown = "; ".join("/".join(key) for key in keys[:limit])
    return shown + (f" and {len(keys) - limit} more" if len(keys) > limit else "")


def _failed(records: pd.DataFrame) -> int:
    # _cases left the unavailable records out, so every record that is not ok here is a failure (is_failure)
    return int((~records["ok"].astype(bool)).sum())


def _only(key: tuple, records: pd.DataFrame) -> dict:
    return {**dict(zip(KEY, key)), "n": len(records) - _failed(records), "failed": _failed(records)}


# -- one case ------------------------------------------------------------------------------------------------
def _row(key: tuple, records_a: pd.DataFrame, records_b: pd.DataFrame, factor: float, alpha: float) -> dict:
    ok_a, ok_b = records_a[records_a["ok"].astype(bool)], records_b[records_b["ok"].astype(bool)]
    times_a, times_b = ok_a["wall_s"].to_numpy(float), ok_b["wall_s"].to_numpy(float)
    row = {**dict(zip(KEY, key)), "n_a": len(times_a), "n_b": len(times_b),
           "failed_a": _failed(records_a), "failed_b": _failed(records_b),
           "median_a": np.nan, "median_b": np.nan, "ratio": np.nan, "p_value": np.nan}
    if not len(times_a) or not len(times_b):
        sides = " or ".join(s for s, t in (("A", times_a), ("B", times_b)) if not len(t))
        return {**row, "verdict": f"not compared: no successful run in {sides}"}
    for side, ok in (("a", ok_a), ("b", ok_b)):
        row[f"requests_{side}"], row[f"mb_{side}"] = run_io(ok)
    row["median_a"], row["median_b"] = float(np.median(times_a)), float(np.median(times_b))
    row["ratio"] = row["median_b"] / row["median_a"] if row["median_a"] > 0 else np.inf
    row["p_value"] = float(mannwhitneyu(times_a, times_b, alternative="two-sided").pvalue)
    if _hashes(ok_a) and _hashes(ok_b) and _hashes(ok_a) != _hashes(ok_b):
        return {**row, "verdict": RESULTS_DIFFER}
    return {**row, "verdict": verdict(row["ratio"], row["p_value"], len(times_a), len(times_b), factor, alpha)}


IO_COLUMNS = ["requests_a", "requests_b", "mb_a", "mb_b"]


def run_io(ok: pd.DataFrame) -> tuple[float, float]:
    """Median S3 requests and MB read from the storage per run (the server's count, else the engine's); NaN when
    the runs counted none (runs recorded before perfkit counted I/O)."""
    from perfkit.accounting.table import counted, io_frame

    runs = io_frame(ok) if "io" in ok.columns else pd.DataFrame()
    if runs.empty:
        return np.nan, np.nan
    requests = _median(counted(runs, S3_REQUESTS))
    mb = _median(counted(runs, ("s3_bytes_read", "hdfs_bytes_read"))) / 1e6
    return requests, mb


def _median(values: pd.Series) -> float:
    """The median of what was counted; NaN when nothing was (numpy warns on an empty median)."""
    values = values.dropna()
    return float(values.median()) if len(values) else np.nan


def _hashes(ok: pd.DataFrame) -> set:
    return set(ok["result_hash"].dropna())


def verdict(ratio: float, p_value: float, n_a: int, n_b: int, factor: float = DEFAULT_FACTOR,
            alpha: float = DEFAULT_ALPHA) -> str:
    """'slower' / 'faster' only when the ratio is outside [1/factor, factor] AND p < alpha; else why not."""
    if 1 / factor <= ratio <= factor:
        return NO_CHANGE
    if p_value < alpha:
        return SLOWER if ratio > factor else FASTER
    return TOO_FEW if smallest_p(n_a, n_b) >= alpha else WITHIN_NOISE


def smallest_p(n_a: int, n_b: int) -> float:
    """The smallest two-sided p-value the exact Mann-Whitney test can give for these sample sizes: every B run
    beyond every A run is one ordering of C(n_a + n_b, n_a) equally likely ones, counted at both tails."""
    return min(1.0, 2 / comb(n_a + n_b, n_a))


def runs_needed(alpha: float = DEFAULT_ALPHA) -> int:
    """The fewest runs per side (equal on both) with which a change can reach p < alpha."""
    n = 1
    while smallest_p(n, n) >= alpha:
        n += 1
    return n


# -- configurations ------------------------------------------------------------------------------------------
def config_differences(side_a: pd.DataFrame, side_b: pd.DataFrame, experiments: list[str]) -> list[dict]:
    """Each run setting (versions.trino, dataset.name, parameters.runs, profile.name ...) whose values differ
    between A's and B's runs of one experiment; a side with several runs lists every value its runs had."""
    differences = []
    for experiment in experiments:
        a = _settings(side_a[side_a["experiment"] == experiment])
        b = _settings(side_b[side_b["experiment"] == experiment])
        for name in sorted(set().union(*a, *b)):
            values_a = sorted({run.get(name, "(not recorded)") for run in a})
            values_b = sorted({run.get(name, "(not recorded)") for run in b})
            if values_a != values_b and not _measured(name):
                differences.append({"experiment": experiment, "setting": name,
                                    "a": ", ".join(values_a), "b": ", ".join(values_b)})
    return differences


def _measured(setting: str) -> bool:
    """A figure the run measured (the S3 path's calibration), not a setting: it differs between any two runs. The
    network asked (network.network.*) is a setting."""
    return setting.startswith("network.") and not setting.startswith("network.network.")


def _settings(side: pd.DataFrame) -> list[dict]:
    """Each run's configuration flattened to dotted names and text values."""
    return [_flatten(group["config"].iloc[0] or {}) for _, group in side.groupby("run_id")]


def _flatten(config: dict, prefix: str = "") -> dict:
    flat = {}
    for name, value in config.items():
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, f"{prefix}{name}."))
        else:
            flat[f"{prefix}{name}"] = value if isinstance(value, str) else json.dumps(value, default=str)
    return flat


def config_frame(table: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(table.attrs.get("config_differences", []), columns=["experiment", "setting", "a", "b"])


def only_in(table: pd.DataFrame, side: str) -> pd.DataFrame:
    """The cases only A ("a") or only B ("b") measured."""
    return pd.DataFrame(table.attrs.get(f"only_in_{side}", []), columns=[*KEY, "n", "failed"])


# -- the default pair of the notebook ------------------------------------------------------------------------
def latest_pair(experiment: str = DEFAULT_EXPERIMENT, folder: Path | str | None = None) -> tuple[str, str]:
    """(A, B) run ids of `experiment`: the latest two complete runs with the same parameters behind the same S3
    network (the same report rendered twice: only the time differs), else the latest run and the latest earlier one
    sharing a case with it.
    A PerfkitError saying what is missing when there is no such pair (a fresh clone has one run after its first
    `make report`)."""
    root = Path(folder) if folder else results_dir()
    runs = {}
    for path in sorted((root / experiment).glob("*.jsonl")):
        try:
            frame = records_frame(read_result_file(path))
        except PerfkitError:
            continue  # a foreign or half-written file is no candidate; load_results warns about it elsewhere
        config = frame["config"].iloc[0] or {}
        if config.get("interrupted") or not frame["ok"].astype(bool).any():
            continue  # an interrupted or wholly failed run is a poor baseline and a poor candidate
        # the same parameters behind the same S3 network asked: the same report rendered twice
        asked = [config.get("parameters"), (config.get("network") or {}).get("network")]
        runs[path.stem] = (set(_cases(frame)), json.dumps(asked, sort_keys=True, default=str))
    if len(runs) < 2:
        raise PerfkitError(f"{plural(len(runs), 'complete run')} of {experiment} under {root}, and comparing needs "
                           f"two: render notebooks/{experiment}.ipynb again (make report), or give a and b")
    newest_first = sorted(runs, reverse=True)  # run ids begin with their UTC start time
    for i, b in enumerate(newest_first):
        same = [a for a in newest_first[i + 1:] if runs[a][1] == runs[b][1] and runs[a][0] & runs[b][0]]
        if same:
            return same[0], b
    b = newest_first[0]
    sharing = [a for a in newest_first[1:] if runs[a][0] & runs[b][0]]
    if not sharing:
        raise PerfkitError(f"no earlier run of {experiment} shares a case with the latest, {b}: give a and b")
    return sharing[0], b


# -- findings ------------------------------------------------------------------------------------------------
def findings(table: pd.DataFrame) -> Findings:
    """What the comparison found, first in its report: how many cases got slower, faster or showed no change, the
    largest change with its ratio and p-value, how many settings differ; the cases it could not decide."""
    attrs = table.attrs
    factor, alpha = attrs.get("factor", DEFAULT_FACTOR), attrs.get("alpha", DEFAULT_ALPHA)
    verdicts = table["verdict"]
    slower, faster = table[verdicts == SLOWER], table[verdicts == FASTER]
    same = table[verdicts.isin([NO_CHANGE, WITHIN_NOISE])]
    sentences = [f"B against A: {len(slower)} slower, {len(faster)} faster, {len(same)} no change beyond noise, of "
                 f"{plural(len(table), 'case')} measured in both (a change is outside {1 / factor:.3f}–{factor:.3f}× "
                 f"with Mann-Whitney p < {alpha:g})."]
    changed = pd.concat([slower, faster])
    if len(changed):
        sentences.append(f"Largest change: {_change_phrase(_largest(changed))}.")
    elif table["ratio"].notna().any():
        sentences.append(f"No case changed beyond noise; the largest ratio was {_change_phrase(_largest(table))}.")
    if table["ratio"].notna().any():
        sentences.append(_noise_sentence(table, len(changed), alpha))
    differences = attrs.get("config_differences", [])
    sentences.append(f"{plural(len(differences), 'configuration setting')} "
                     f"{'differs' if len(differences) == 1 else 'differ'} between A and B"
                     + (f": {', '.join(d['setting'] for d in differences[:5])}"
                        + (f" and {len(differences) - 5} more" if len(differences) > 5 else "") + "."
                        if differences else "."))
    return Findings(sentences, _conditions(table), _undecided(table, alpha) + _control_moved(table, factor))


def _control_moves(table: pd.DataFrame) -> list[RunsMove]:
    return [RunsMove(**found) for found in table.attrs.get("control") or []]


def _control_moved(table: pd.DataFrame, factor: float) -> list[str]:
    """A storage whose own control read moved between A and B by more than the factor, beyond noise: a change of a
    case on it no larger than that move may be the storage's path, not what was changed between the runs."""
    moved = [m for m in _control_moves(table) if m.beyond(factor)]
    if not moved:
        return []
    cases = table[table["storage"].isin({m.storage for m in moved}) & table["verdict"].isin([SLOWER, FASTER])]
    said = ", ".join(m.phrase() for m in moved)
    where = "that storage" if len(moved) == 1 else "those storages"
    return [f"conditions differed between A and B: the drift control's read took {said} in B against A, so a "
            f"change on {where} no larger than "
            f"that is no verdict on what you changed ({plural(len(cases), 'slower or faster case')} there). Measure "
            "A and B again side by side, or in one run with both settings"]


def _noise_sentence(table: pd.DataFrame, flagged: int, alpha: float) -> str:
    """How many cases noise alone would flag, and how likely this many flags are with nothing changed (perfkit.chance):
    with 4 runs a side p < 0.05 is reached by 2 of the 70 orderings, so 24 cases flag 0.7 on average."""
    compared = table[table["ratio"].notna()]
    rates = [flag_rate(int(n_a), int(n_b), alpha) for n_a, n_b in zip(compared["n_a"], compared["n_b"])]
    said = (f"With nothing changed, noise alone would flag {sum(rates):.2g} of these "
            f"{plural(len(rates), 'case')} on average")
    if not flagged:
        return said + "."
    chance = at_least(flagged, rates)
    verdict = ("more than noise alone gives" if chance < alpha else
               "no more than noise alone gives: measure both again before calling them changes")
    return f"{said}, and {flagged} or more with a chance of {_percent(chance)}: {verdict}."


def _percent(share: float) -> str:
    return "under 0.1%" if share < 0.001 else f"{share:.1%}" if share < 0.1 else f"{share:.0%}"


def nothing_to_compare(reason) -> Findings:
    """The finding of a comparison that could not be made (one run so far): why, as the report's first line."""
    return Findings([f"Nothing to compare yet: {reason}"])


def _largest(rows: pd.DataFrame) -> pd.Series:
    """The row whose ratio is furthest from 1, either way (2× slower and 2× faster are as large)."""
    return rows.loc[np.log(rows["ratio"].astype(float)).abs().idxmax()]


def _change_phrase(row: pd.Series) -> str:
    return (f"{row['subject']} {row['case']} on {row['storage']} {row['ratio']:.2f}× "
            f"({row['median_a']:.3g} s → {row['median_b']:.3g} s, p = {_p(row['p_value'])}, "
            f"{row['n_a']} and {row['n_b']} runs)")


def _undecided(table: pd.DataFrame, alpha: float) -> list[str]:
    undecided = []
    for verdict_text, rows in table[~table["verdict"].isin([SLOWER, FASTER, NO_CHANGE, WITHIN_NOISE])].groupby(
            "verdict", sort=True):
        cases = ", ".join(f"{r.subject} {r.case} on {r.storage}" for r in rows.head(5).itertuples())
        why = f"{verdict_text} (needs {runs_needed(alpha)} runs a side)" if verdict_text == TOO_FEW else verdict_text
        undecided.append(f"{plural(len(rows), 'case')}: {why}: {cases}" + (" ..." if len(rows) > 5 else ""))
    for side in ("a", "b"):
        if only := table.attrs.get(f"only_in_{side}"):
            undecided.append(f"{plural(len(only), 'case')} measured only in {side.upper()}: not compared")
    return undecided


def _conditions(table: pd.DataFrame) -> str:
    attrs = table.attrs
    return (f"A: {_runs(attrs.get('a', []))}; B: {_runs(attrs.get('b', []))}; "
            f"{', '.join(sorted(table['experiment'].unique()))}; {table['n_a'].min()}–{table['n_a'].max()} measured "
            f"runs a case in A, {table['n_b'].min()}–{table['n_b'].max()} in B, warm-up never compared; "
            f"profile {', '.join(attrs.get('profiles', ['?']))}; " + _control_phrase(table))


def _control_phrase(table: pd.DataFrame) -> str:
    moves = _control_moves(table)
    if not moves:
        return "no drift control in both A and B (runs made before perfkit timed one): conditions between them unknown"
    return "drift control, B ÷ A: " + ", ".join(m.phrase() for m in moves)

# -- the terminal --------------------------------------------------------------------------------------------
def render_text(table: pd.DataFrame, width: int = 60) -> str:
    """Configuration differences, the table, the rule, and the cases only one side has: plain text."""
    attrs = table.attrs
    lines = [f"A: {_runs(attrs.get('a', []))}", f"B: {_runs(attrs.get('b', []))}", ""]
    config = config_frame(table)
    if len(config):
        lines.append("Configuration differences (A -> B):")
        for row in config.itertuples():
            lines.append(f"  {row.experiment} {row.setting}: {_cut(row.a, width)} -> {_cut(row.b, width)}")
    else:
        lines.append("Configuration: the same in A and B.")
    lines.append("")
    shown = table.drop(columns=["experiment"]) if table["experiment"].nunique() == 1 else table
    has_io = not shown[IO_COLUMNS].isna().all().all()
    if not has_io:  # runs from before perfkit counted I/O: no empty columns
        shown = shown.drop(columns=IO_COLUMNS)
    formats = {"median_a": _seconds, "median_b": _seconds, "ratio": lambda v: "" if v != v else f"{v:.2f}",
               "p_value": _p, **{c: (lambda v: "" if v != v else f"{v:.4g}") for c in IO_COLUMNS}}
    lines.append(shown.to_string(index=False, formatters=formats))
    factor, alpha = attrs.get("factor", DEFAULT_FACTOR), attrs.get("alpha", DEFAULT_ALPHA)
    lines += ["", f"ratio = median B / median A (seconds). Faster or slower only when the ratio is outside "
                  f"[{1 / factor:.3f}, {factor:.3f}] and the Mann-Whitney p < {alpha};",
              *(["requests, mb: median S3 requests and MB read from the storage per run, A and B (the server's "
                 "count, else the engine's);"] if has_io else []),
              f"'too few runs to tell': those run counts cannot reach p < {alpha} at all "
              f"(needs {runs_needed(alpha)} runs a side).", "", f"Conditions: {_control_phrase(table)}."]
    lines += [f"Not decided: {note}." for note in _control_moved(table, factor)]
    for side in ("a", "b"):
        only = only_in(table, side)
        if len(only):
            lines += ["", f"Only in {side.upper()} ({len(only)}):"]
            lines += [f"  {'/'.join(r[:4])}  ({r[4]} ok, {r[5]} failed)" for r in only.itertuples(index=False)]
    return "\n".join(lines)


def _runs(ids: list[str]) -> str:
    shown = ", ".join(ids[:3]) + (f" and {len(ids) - 3} more" if len(ids) > 3 else "")
    return f"{len(ids)} run{'s' if len(ids) != 1 else ''} ({shown})"


def _seconds(value: float) -> str:
    return "" if value != value else f"{value:.3g} s"


def _p(value: float) -> str:
    return "" if value != value else "<0.001" if value < 0.001 else f"{value:.3f}"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."
