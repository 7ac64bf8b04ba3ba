"""What a run found, in a few sentences computed from its own records: the first thing every report shows.

A Findings object displays as an HTML section (`section.perfkit-findings`) in notebooks and reports, as plain lines
on a terminal, and carries its sentences as JSON (FINDINGS_MIME) so the reports' index can quote the first one."""
from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

FINDINGS_MIME = "application/vnd.perfkit.findings+json"
NO_DIFFERENCE = "no difference beyond noise"
WITHIN_DRIFT = "within the control's drift: not a verdict"  # a verdict no larger than the drift control's move


@dataclass
class Findings:
    sentences: list[str]
    conditions: str = ""  # where and how it ran: lab or cluster, network, data, runs, warm-up
    undecided: list[str] = field(default_factory=list)  # what this run could not decide, and why

    @property
    def first(self) -> str:
        return self.sentences[0] if self.sentences else (self.undecided[0] if self.undecided else "")

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/html": self.html(), "text/plain": str(self),
                FINDINGS_MIME: {"sentences": self.sentences, "conditions": self.conditions,
                                "undecided": self.undecided}}

    def html(self) -> str:
        items = "".join(f"<li>{html.escape(s)}</li>" for s in self.sentences) or "<li>Nothing was measured.</li>"
        undecided = "".join(f"<li>{html.escape(s)}</li>" for s in self.undecided)
        return ('<section class="perfkit-findings"><h2>Findings</h2>'
                f"<ul>{items}</ul>"
                + (f"<p><b>Not decided by this run:</b></p><ul>{undecided}</ul>" if undecided else "")
                + (f'<p class="perfkit-conditions"><b>Conditions:</b> {html.escape(self.conditions)}</p>'
                   if self.conditions else "")
                + "</section>")

    def __str__(self) -> str:
        lines = ["Findings:", *(f"- {s}" for s in self.sentences)]
        lines += ["Not decided by this run:", *(f"- {s}" for s in self.undecided)] if self.undecided else []
        return "\n".join(lines + ([f"Conditions: {self.conditions}"] if self.conditions else []))

    __repr__ = __str__


def money(value: float) -> str:
    """Two significant digits, in plain decimals: 0.18, 0.00029."""
    if not value or not math.isfinite(value):
        return f"{value:g}"
    decimals = max(2, 1 - math.floor(math.log10(abs(value))))
    return f"{value:.{decimals}f}"


def size(nbytes: float) -> str:
    return f"{nbytes / 1e9:.3g} GB" if nbytes >= 1e9 else f"{nbytes / 1e6:.3g} MB"


def p_value(p: float) -> str:
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def times(ratio: float) -> str:
    return f"{ratio:.2f}×"


def interval_decimals(low: float, high: float, value: float | None = None) -> int:
    """The decimals that mean something in a value with the interval (low, high): two significant digits of the
    interval's width (0.0063 wide: 4 decimals); three significant digits of the value where the interval has no
    width (or none is known)."""
    width = abs(high - low) if finite(low) and finite(high) else 0.0
    if width > 0:
        return max(0, 1 - math.floor(math.log10(width)))
    scale = abs(value) if finite(value) and value else 1.0
    return max(0, 2 - math.floor(math.log10(scale)))


def rounded(value: float, decimals: int) -> str:
    """`value` to `decimals` places, '—' when it is not a number, never '-0.000'."""
    if not finite(value):
        return "—"
    return f"{round(value, decimals) + 0.0:.{decimals}f}"


def ci_span(low: float, high: float, unit: str = "", decimals: int | None = None) -> str:
    """'0.0032–0.0095' (and its unit), '-0.0021 to 0.0007': the interval, to the digits its width means; '—' when
    there is none."""
    if not (finite(low) and finite(high)):
        return "—"
    decimals = interval_decimals(low, high) if decimals is None else decimals
    joint = " to " if min(low, high) < 0 else "–"  # '-0.0021 to 0.0007': a dash beside a minus reads as neither
    return f"{rounded(low, decimals)}{joint}{rounded(high, decimals)}{unit}"


def estimate(value: float, low: float, high: float, unit: str = "", confidence: float = 0.95) -> str:
    """'0.0063 (95% CI 0.0032–0.0095)': a value with its confidence interval, both to the digits the interval's width
    means (interval_decimals); the value alone, to three significant digits, where there is no interval."""
    decimals = interval_decimals(low, high, value)
    said = f"{rounded(value, decimals)}{unit}"
    if finite(low) and finite(high):
        said += f" ({confidence * 100:g}% CI {ci_span(low, high, unit, decimals)})"
    return said


def duration(seconds: float) -> str:
    """'45 s', '83 min', '2.5 h': a span in the unit a reader takes in at once."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def plural(n: int, word: str) -> str:
    """'1 query', '2 queries', '3 days'."""
    if n != 1:
        word = word[:-1] + "ies" if word.endswith("y") and word[-2:-1] not in "aeiou" else word + "s"
    return f"{n:,} {word}"


def storage_verdicts(comparison: pd.DataFrame, baseline: str, who: str = "subject", what: str = "query",
                     drift: float | None = None) -> tuple[list[str], list[str]]:
    """Per (subject, storage) against the baseline, from stats.compare_storages' rows: on how many cases the other
    storage was slower or faster beyond noise (with the median and range of those speed-ups), how many showed no
    difference, and which could not be decided (results differ, too few runs). Returns (sentences, undecided).

    `drift`: the drift control's move where it moved (perfkit.drift.drift_bound, a factor ≥ 1): the cases beyond noise
    whose effect is no larger are counted apart, marked WITHIN_DRIFT."""
    sentences, undecided = [], []
    if comparison.empty:
        return sentences, undecided
    base = baseline.upper()
    for (subject, storage), rows in comparison.groupby([who, "storage"], sort=False):
        other = storage.upper()
        verdicts = rows["verdict"].astype(str)
        ratio = rows["speedup"].astype(float)
        drifted = (np.maximum(ratio, 1 / ratio) <= drift) if drift is not None else pd.Series(False, index=rows.index)
        slower = rows[verdicts.str.startswith(f"{base} ")]
        faster = rows[verdicts.str.startswith(f"{other} ")]
        same = rows[verdicts == NO_DIFFERENCE]
        parts = []
        for cases, word, invert in ((slower, "slower", False), (faster, "faster", True)):
            for marked in (False, True):
                mine = cases[drifted[cases.index] == marked]
                if not len(mine):
                    continue
                spread = _spread(1 / mine["speedup"] if invert else mine["speedup"])
                parts.append(f"{other} {word} than {base} on {len(mine)} of {plural(len(rows), what)} beyond noise "
                             f"({spread}{' ' + word if invert else ''}{f'; {WITHIN_DRIFT}' if marked else ''})")
        if len(same):
            parts.append((f"no difference beyond noise on {len(same)}" if parts else
                          f"no difference between {other} and {base} beyond noise on {len(same)} of "
                          f"{plural(len(rows), what)}") + _unseen(same))
        if parts:
            sentences.append(f"{subject}: " + "; ".join(parts) + ".")
        for verdict, cases in rows[~rows.index.isin(slower.index.union(faster.index).union(same.index))].groupby(
                "verdict"):
            undecided.append(f"{subject} on {other}: {cases_list(cases['case'], what)}: {verdict}")
    return sentences, undecided


def cases_list(cases, what: str = "query", shown: int = 5) -> str:
    """'q1, q3' or, for many, '22 queries (q1, q2, q3, q4, q5, ...)'."""
    names = [str(c) for c in cases]
    if len(names) <= shown:
        return ", ".join(names)
    return f"{plural(len(names), what)} ({', '.join(names[:shown])}, ...)"


def paired_over_cases(ratios, alpha: float = 0.05) -> tuple[str, float]:
    """Whether a ratio per case (other ÷ baseline, e.g. one per query) leans one way beyond noise, the cases taken as
    the replicates: the Wilcoxon signed-rank test on their logarithms. Returns (verdict words, p)."""
    from scipy.stats import wilcoxon

    logs = np.log(np.asarray(ratios, dtype=float))
    logs = logs[np.isfinite(logs)]
    if len(logs) < 6:  # with 5 or fewer cases no outcome reaches p < 0.05 two-sided
        return f"too few cases to judge ({len(logs)}; need 6)", math.nan
    if not np.any(logs):
        return NO_DIFFERENCE, 1.0
    p = float(wilcoxon(logs).pvalue)
    return ("beyond noise" if p < alpha else "within noise"), p


def _unseen(same: pd.DataFrame) -> str:
    """What a "no difference" cannot rule out: the largest change those cases' rounds would have missed more than 1
    time in 10 (stats.detectable_change), '' when not measured (unpaired rows)."""
    found = same["detectable"].astype(float).dropna() if "detectable" in same else pd.Series(dtype=float)
    if found.empty:
        return ""
    return (f" (a change under {100 * (found.max() - 1):.0f}% could hide in this run's noise: its rounds see one that "
            "size 9 times in 10)")


def _spread(ratios: pd.Series) -> str:
    """'1.40×' for one case, 'median 1.40×, range 1.10–2.30×' for several."""
    values = np.asarray(ratios, dtype=float)
    values = values[np.isfinite(values)]
    if not len(values):
        return "?"
    if len(values) == 1:
        return times(values[0])
    return f"median {times(float(np.median(values)))}, range {values.min():.2f}–{times(values.max())}"


def data_size(rows: int | None = None, files: int | None = None, file_format: str = "", suite: str = "",
              scale=None) -> str:
    """'taxi, 1,000,000 rows in 8 ORC files' / 'tpch at scale 0.01'."""
    if suite and suite != "taxi" and scale is not None:
        return f"{suite} at scale {scale}"
    if rows:
        return (f"{suite or 'taxi'}, {rows:,} rows" + (f" in {files} {file_format.upper()} files" if files else ""))
    return suite


def runs_phrase(runs: int, warmup: int) -> str:
    return f"{plural(runs, 'measured run')} each" + (f" after {warmup} warm-up" if warmup else ", no warm-up")


def where(profile, calibration=None, config: dict | None = None) -> str:
    """'lab' or the profile's name (a cluster id when it has one; `profile` may be the name a run recorded), the
    cluster's shape and where each engine ran its work (from the run's records, `config`, when given), and where S3
    sat when it was measured."""
    place = (profile if isinstance(profile, str)  # a profile's name, as a run recorded it
             else getattr(profile, "cluster_id", None) or getattr(profile, "name", "")) or "?"
    place = {"lab": "the embedded lab on this machine",
             "lab-cluster": "the embedded lab in its cluster shape on this machine"}.get(place, place)
    config = config or {}
    parts = [place, *_cluster_phrase(config.get("cluster") or {}), *(
        f"{engine} on {p['master']}, application {p.get('application', '?')}, executors {p['executors']}"
        for engine, p in (config.get("placement") or {}).items() if "executors" in p)]
    if calibration is not None:
        parts.append(calibration.headline())
    return "; ".join(parts)


def _cluster_phrase(cluster: dict) -> list[str]:
    """The cluster's shape, as a run recorded it (perfkit.providers.Provider.cluster)."""
    if not cluster:
        return []
    phrases = []
    if cluster.get("yarn nodemanagers"):
        phrases.append(f"YARN NodeManagers {cluster['yarn nodemanagers']} ({cluster.get('yarn node resources', '?')})")
    if cluster.get("datanodes"):
        phrases.append(f"HDFS DataNodes {cluster['datanodes']}, replication {cluster.get('replication', '?')}")
    return phrases


def finite(value) -> bool:
    return isinstance(value, (int, float, np.floating, np.integer)) and math.isfinite(value)
