"""The copy bench's report, from its records alone (perfkit.experiments.tier_copy measures): per reader and try, the
median seconds, MB/s and the tool's start-up, each tier reader against its S3-direct twin; each Alluxio copy with
what its worker served from cache and fetched from S3.

    CopyReport.load(comparison_results)   # the bench that ran with a cache-tier comparison, measuring nothing
"""
from __future__ import annotations

import pandas as pd

from perfkit import drift
from perfkit.experiments.base import RunRecords
from perfkit.experiments.tier_copy import EXPERIMENT, READERS
from perfkit.findings import Findings, plural
from perfkit.presenting.cache_tier_report import SAME, _verdict
from perfkit.protocol import TRIES
from perfkit.results import ResultSet, runs_whose_config

AGAINST = {"alluxio fs copyToLocal": "aws s3 cp", "boto3 via Alluxio's S3 API": "boto3"}  # its S3-direct twin


class CopyReport(RunRecords):
    experiment = EXPERIMENT
    unit = "copies"

    def __init__(self, results: ResultSet | None):
        self.results = results

    @classmethod
    def load(cls, comparison: ResultSet) -> CopyReport | None:
        """The bench recorded as part of this run (its config's part_of), the latest if several; None: none was."""
        parts = runs_whose_config(comparison.folder / EXPERIMENT,
                                  lambda config: config.get("part_of") == comparison.run_id)
        return cls(ResultSet.load(parts[-1])) if parts else None

    # the published shape ------------------------------------------------------------------------------------------
    def copy_table(self) -> pd.DataFrame:
        """Per reader and try: median seconds, MB/s and the tool's start-up; a tier reader's try against the median of
        its S3-direct twin (copyToLocal against aws s3 cp, boto3 through Alluxio against boto3)."""
        frame = self._frame()
        frame = frame[frame["ok"].astype(bool)].copy()
        frame["try"] = [p.get("try") for p in frame["params"]]
        frame["start_up_s"] = [p.get("start_up_s") for p in frame["params"]]
        rows = []
        for reader in [r for r in READERS if (frame["subject"] == r).any()]:
            mine = frame[frame["subject"] == reader]
            twin = frame.loc[frame["subject"] == AGAINST.get(reader), "wall_s"]
            for try_ in TRIES:
                g = mine[mine["try"] == try_]
                if not len(g):
                    continue
                seconds = g["wall_s"].median()
                verdict = ("(reference)" if reader not in AGAINST else
                           _verdict(twin.median() / seconds) if len(twin) else "no S3-direct twin measured")
                rows.append({"reader": reader, "reads": READERS[reader], "try": try_, "seconds": seconds,
                             "MB/s": g["mb_per_s"].median(), "start-up (s)": g["start_up_s"].median(),
                             "vs S3": verdict})
        return pd.DataFrame(rows).round({"seconds": 3, "MB/s": 1, "start-up (s)": 3})

    def counters_table(self) -> pd.DataFrame:
        """Each Alluxio copy with the MB its worker served from cache and read from S3."""
        frame = self._frame()
        frame = frame[(frame["storage"] == "alluxio") & frame["ok"].astype(bool)]
        return pd.DataFrame({
            "reader": frame["subject"], "round": frame["iteration"] + 1, "try": [p.get("try") for p in frame["params"]],
            "seconds": frame["wall_s"].round(3),
            "MB from cache": [round(p.get("cache_bytes", float("nan")) / 1e6, 2) for p in frame["params"]],
            "MB from S3": [round(p.get("s3_bytes", float("nan")) / 1e6, 2) for p in frame["params"]],
        }).reset_index(drop=True)

    # the Findings --------------------------------------------------------------------------------------------------
    def findings(self) -> Findings:
        """Per tier reader, each try against its S3-direct twin (the twin's median ÷ its median, beyond SAME either
        way called faster or slower); its Conditions with the bench's drift control (perfkit.drift). The bench calls
        no ratio beyond noise (medians, no interval): the noise factor is the bar the control is held against, and a
        faster or slower within the control's move is marked."""
        table = self.copy_table()
        bound = drift.drift_bound(self._results().config)
        sentences = []
        for reader, rows in (table[table["reader"].isin(list(AGAINST))].groupby("reader", sort=False)
                             if len(table) else ()):
            twin = table.loc[table["reader"] == AGAINST[reader], "seconds"]
            if not len(twin):
                continue
            parts = []
            for row in rows.to_dict("records"):
                ratio = twin.median() / row["seconds"] if row["seconds"] else float("nan")
                called = ratio > SAME or ratio < 1 / SAME
                parts.append(f"{row['try']} {_verdict(ratio)}" + (f" ({drift.WITHIN_DRIFT})"
                                                                  if called and drift.within(ratio, bound) else ""))
            sentences.append(f"{reader} against {AGAINST[reader]} ({AGAINST[reader]}'s median time ÷ its, per try): "
                             + ", ".join(parts) + ".")
        undecided = []
        if len(failed := self.failures()):
            undecided.append(f"{plural(len(failed), 'failed copy')} (listed under Failures)")
        if note := drift.drift_note(self._results().config):
            undecided.append(note)
        return Findings(sentences, self.conditions(), undecided)

    def conditions(self) -> str:
        """What the bench copied, how often, and its drift control."""
        params = self._results().config.get("parameters") or {}
        copied = (f"{plural(int(params['objects']), 'object')} of {params['object_mb']:g} MB under one S3 prefix, "
                  "copied to local disk" if {"objects", "object_mb"} <= set(params)
                  else "a prefix of objects copied to local disk")
        rounds = f"{plural(int(params.get('rounds', 1)), 'round')} of cold, warm and hot per reader"
        return f"the copy bench: {copied}, {rounds}; {drift.conditions_phrase(self._results().config)}"
