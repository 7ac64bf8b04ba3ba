"""TPC-H's answers checked independently: every engine's answer on every storage against DuckDB over tpchgen-cli's
data (perfkit.datasets.tpch_reference), per read query. Engines agreeing across storages shows they read the same
files alike; this shows the answers are TPC-H's."""
from __future__ import annotations

import pandas as pd

from perfkit.errors import PerfkitError
from perfkit.results import ResultSet


def has_reference(source: str, scale) -> bool:
    """TPC-H at a scale small enough for the independent check (it runs on the driver)."""
    from perfkit.datasets.tpch_reference import REFERENCE_MAX_SCALE

    return source == "tpch" and float(scale) <= REFERENCE_MAX_SCALE


def reference_check(results: ResultSet, suite: str, reads: list, source: str, scale,
                    progress: bool = True) -> pd.DataFrame:
    """The check of a run's records (reference_table) on the suite's read queries; its verdicts saved with them."""
    from perfkit.datasets import tpch_reference

    if not has_reference(source, scale):
        raise PerfkitError(f"suite {suite} at scale {scale}: the independent check is for TPC-H up to sf "
                           f"{tpch_reference.REFERENCE_MAX_SCALE:g}")
    answers = tpch_reference.reference_answers(reads, float(scale), progress)
    table = reference_table(results.to_frame(), answers, tpch_reference.reference_by(float(scale)))
    results.config["reference"] = {"by": table.attrs["by"], "verdicts": dict(zip(table["query"], table["verdict"])),
                                   "table": table.to_dict("records")}  # the report's, from the records alone
    results.save()
    return table


def reference_table(frame: pd.DataFrame, answers: dict, by: str) -> pd.DataFrame:
    """Per query: the reference answer's rows and hash, the successful runs compared with it, and a verdict.

    `answers` maps query id -> ReferenceAnswer; `by` (who answered) is kept in the frame's attrs."""
    ok = frame[frame["ok"].astype(bool) & frame["result_hash"].notna()] if len(frame) else frame
    rows = []
    for query, answer in answers.items():
        mine = ok[ok["case"] == query] if len(ok) else ok
        if answer.error:
            verdict = f"no reference: {answer.error}"
        elif mine.empty:
            verdict = "no run returned a result"
        else:
            differ = sorted({f"{r.subject}/{r.storage}"
                             for r in mine.itertuples() if r.result_hash != answer.result_hash})
            verdict = f"DIFFERS ({', '.join(differ)})" if differ else "agrees"
        rows.append({"query": query, "reference rows": answer.rows, "reference hash": answer.result_hash,
                     "runs compared": len(mine), "verdict": verdict})
    table = pd.DataFrame(rows, columns=["query", "reference rows", "reference hash", "runs compared", "verdict"])
    table.attrs["by"] = by
    return table


def raise_for_reference(table: pd.DataFrame) -> None:
    """A batch run fails when any engine's answer differs from the independent reference."""
    differ = table[table["verdict"].str.startswith("DIFFERS")]
    if len(differ):
        listed = "; ".join(f"{r.query} {r.verdict[len('DIFFERS '):]}" for r in differ.itertuples())
        raise PerfkitError(f"TPC-H answers differ from the independent reference ({table.attrs.get('by', '?')}): "
                           f"{listed}. An engine or the data is wrong there: compare that engine's rows with the "
                           "reference's before trusting its times")
