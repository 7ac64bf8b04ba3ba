"""An experiment's S3 requests over the window of its runs, as S3 itself counted them, beside the engines' own count.

On a cluster S3 keeps no log perfkit can snapshot per run; CloudWatch's request metrics (perfkit.accounting.
cloudwatch_s3) count per minute, so they count a window: from just before an experiment's first run to just after
its last. The engines' counts of the runs on S3 in that window (each record's io["engine"]) are summed beside them."""
from __future__ import annotations

import contextlib
import math
from datetime import datetime, timedelta

import pandas as pd

from perfkit.accounting import counters
from perfkit.accounting.cloudwatch_s3 import REQUEST_METRICS, S3RequestWindow, WindowCounts
from perfkit.accounting.concurrent import OtherRunsInWindow
from perfkit.storages import backing_of

COMPARED = list(dict.fromkeys(REQUEST_METRICS.values()))  # the counters S3's request metrics have
COUNTED = "s3"  # the storage whose requests CloudWatch's request metrics count (a tier's fetches land there too)
IN_BYTES = {"s3_bytes_read": "S3 bytes read", "s3_bytes_written": "S3 bytes written"}  # the table keeps bytes, not MB
OVERLAPPED = ("not attributable: another perfkit process measured during the window, and S3 counted its requests "
              "too: S3's count is not compared with the engines'")


def window_vs_engines(counts: WindowCounts, records, attributable: bool = True) -> pd.DataFrame:
    """One row per counter: what S3 counted in the window, the engines' sum over the runs on S3 that started in it,
    and S3's minus the engines' (none when another perfkit process measured in the window: not `attributable`). A
    side that cannot be summed is NaN, never 0; attrs["notes"] says why, and what else S3 counted in the window
    that no engine saw."""
    notes = list(counts.notes) + ([] if attributable else [OVERLAPPED])
    in_window = [r for r in records if counts.start <= started(r) < counts.end]
    on_s3 = [r for r in in_window if r.storage == COUNTED]
    engine_counts = [r.io["engine"] for r in on_s3 if isinstance((r.io or {}).get("engine"), dict)]
    if len(engine_counts) < len(on_s3):
        notes.append(f"{len(on_s3) - len(engine_counts)} of {len(on_s3)} runs on S3 in the window have no engine "
                     "count: the engines' sum is not shown")
    elif not on_s3:
        notes.append("no run on S3 started in the window")
    complete = on_s3 and len(engine_counts) == len(on_s3)
    if counts.missing:
        notes.append(f"S3's count: {counts.missing}")
    through_tier = sum(1 for r in in_window if r.storage != COUNTED and backing_of(r.storage) == COUNTED)
    if through_tier:
        notes.append(f"{through_tier} runs through a cache tier in the window: the tier's own S3 requests are in S3's "
                     "count, not in any engine's")
    notes.append("S3 counts every request on the prefix in the window's minutes: table registration and other "
                 "clients too, and (best effort) a request can land in a later minute")
    rows = []
    for name in COMPARED:
        server = math.nan if counts.missing else counts.totals.get(name, math.nan)
        # summed only when every run counted it: a counter some engine does not keep is unknown, not 0
        engine = math.fsum(c[name] for c in engine_counts) if complete and all(name in c for c in engine_counts) \
            else math.nan
        what = IN_BYTES.get(name) or counters.LABELS.get(name, name)
        rows.append({"counter": name, "what": what, "S3 (CloudWatch)": server, "engines": engine,
                     "difference": server - engine if attributable else math.nan})
    table = pd.DataFrame(rows)
    table.attrs["notes"] = notes
    return table


def build_window(profile, run_id: str) -> S3RequestWindow | None:
    """S3's own count of an experiment's requests, per window of its runs, where the profile's provider says where it
    comes from (a cluster whose profile asks for CloudWatch's request metrics); None where it does not (the lab's S3
    server counts every run)."""
    settings = profile.provider.s3_request_window(profile)
    return None if settings is None else S3RequestWindow(**settings, run_id=run_id)


@contextlib.contextmanager
def s3_request_window(profile, results, wanted: bool = True, others: OtherRunsInWindow | None = None,
                      window: S3RequestWindow | None = None):
    """Around an experiment's runs: where the provider counts S3's requests per window (build_window, or `window`),
    open the window before the runs and store its counts, beside the engines' sum, in
    results.config["s3_request_metrics"] after them; with whether another perfkit process measured in the window
    (`others`), which makes S3's count not this experiment's alone."""
    window = (window or build_window(profile, results.run_id)) if wanted else None
    if window is None:
        yield None
        return
    others = others or OtherRunsInWindow()
    window.open()  # a filter perfkit may not create fails here, before any run
    others.open()
    try:
        yield window
    except BaseException:
        problem = window.abandon()
        results.config["s3_request_metrics"] = {"missing": "not counted: the experiment stopped before its last run",
                                                "notes": [problem] if problem else []}
        raise
    attributable = not others.close()
    counts = window.close(last_s3_request(results.records))
    compared = window_vs_engines(counts, results.records, attributable)
    results.config["s3_request_metrics"] = {
        **counts.describe(), "attributable": attributable, "notes": compared.attrs["notes"],
        "compared": stored_rows(compared)}


def last_s3_request(records) -> datetime | None:
    """When the last run that reads S3 (directly or through a tier) ended: the minute CloudWatch must have reached."""
    ends = [started(r).to_pydatetime() + timedelta(seconds=r.wall_s or 0) for r in records
            if backing_of(r.storage) == COUNTED]
    return max(ends) if ends else None


def stored_rows(table: pd.DataFrame) -> list[dict]:
    """A window's comparison as results.config keeps it (JSON): an unknown figure is null, not NaN."""
    return [{k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
            for row in table.to_dict("records")]


def started(record) -> pd.Timestamp:
    """When a run started, as a timestamp (records keep ISO text)."""
    return pd.to_datetime(record.started_at, utc=True)
