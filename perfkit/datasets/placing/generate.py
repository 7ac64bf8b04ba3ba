"""Step 2, generate: the generator writes every table into each storage the plan names."""
from __future__ import annotations

import time

from perfkit.datasets.placing.plan import Plan


def generate(plan: Plan, bar) -> tuple[dict[str, dict], dict[str, float]]:
    """Per storage: table -> [rows, checksum] read back where written, and the seconds it took.

    A storage that is then copied from is only written (its checksums come from the copy's bytes instead).
    """
    gen, sums, seconds = plan.gen, {}, {}
    for where in plan.decision.generate_on:
        folder = plan.folders[where]
        folder.start_marker()
        t0 = time.perf_counter()
        sums[where] = {}
        for table in gen.tables:
            bar.set_postfix_str(f"generating {where} {table}")
            if plan.copying:
                gen.write(table, folder.table_url(table), plan.file_format)
            else:
                sums[where][table] = gen.place(table, folder.table_url(table), plan.file_format)
            bar.update()
        seconds[where] = time.perf_counter() - t0
    return sums, seconds
