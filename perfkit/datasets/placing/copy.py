"""Step 3, copy: the source's files (HDFS's) copied byte for byte into each storage the plan names (S3)."""
from __future__ import annotations

import time

from perfkit.datasets.placing.plan import Plan
from perfkit.datasets.replicate import SOURCE, CopiedFile


def copy(plan: Plan, bar) -> tuple[dict[str, list[CopiedFile]], dict[str, float]]:
    """The copied files per table, and the seconds per storage copied into."""
    tables, copied, seconds = plan.gen.tables, {}, {}
    for where in plan.decision.copy_to:
        folder = plan.folders[where]
        folder.delete()  # perfkit's own (the plan checked): nothing of it is kept
        folder.start_marker()
        t0 = time.perf_counter()
        bar.set_postfix_str(f"copying {SOURCE} -> {where}")
        copied = folder.copy_in(plan.folders[SOURCE], tables)
        bar.update(len(tables))
        seconds[where] = time.perf_counter() - t0
    return copied, seconds
