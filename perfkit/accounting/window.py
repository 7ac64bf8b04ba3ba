"""An experiment's S3 requests over the window of its runs, as S3 itself counted them, beside the engines' own count.

On a cluster S3 keeps no log perfkit can snapshot per run; CloudWatch's request metrics (perfkit.accounting.
cloudwatch_s3) count per minute, so they count a window: from just before an experiment's first run to just after
its last. The engines' counts of the runs on S3 in that window (each RunIO's engine count) are summed beside them."""
from __future__ import annotations

import contextlib

import pandas as pd

from perfkit.accounting import counters
from perfkit.accounting.cloudwatch_s3 import COUNTED, REQUEST_METRICS, S3RequestWindow, WindowCounts
from perfkit.accounting.concurrent import OtherRunsInWindow
from perfkit.accounting.counted_window import compare_with_engines, counted_window

COMPARED = list(dict.fromkeys(REQUEST_METRICS.values()))  # the counters S3's request metrics have
IN_BYTES = {"s3_bytes_read": "S3 bytes read", "s3_bytes_written": "S3 bytes written"}  # the table keeps bytes, not MB
OVERLAPPED = ("not attributable: another perfkit process measured during the window, and S3 counted its requests "
              "too: S3's count is not compared with the engines'")


def window_vs_engines(counts: WindowCounts, records, attributable: bool = True) -> pd.DataFrame:
    """S3's count of the window beside the engines' sum over the runs on S3 that started in it
    (counted_window.compare_with_engines), per counter S3's request metrics have."""
    return compare_with_engines(
        counts, records, storage=COUNTED, label="S3", server="S3 (CloudWatch)",
        counters={name: IN_BYTES.get(name) or counters.LABELS.get(name, name) for name in COMPARED},
        engine_counts=lambda engine: engine if isinstance(engine, dict) else None, attributable=attributable,
        overlapped=OVERLAPPED, caveat="S3 counts every request on the prefix in the window's minutes: table "
        "registration and other clients too, and (best effort) a request can land in a later minute")


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
    S3's count of them beside the engines' sum, in results.config["s3_request_metrics"] (counted_window)."""
    window = (window or build_window(profile, results.run_id)) if wanted else None
    if window is None:
        yield None
        return
    with counted_window(results, "s3_request_metrics", window, window_vs_engines, others) as opened:
        yield opened
