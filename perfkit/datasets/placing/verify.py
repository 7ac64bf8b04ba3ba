"""Step 4, verify: the rows the generator makes, on every storage, the same everywhere; then the markers.

Generated copies are compared by the checksums read back where they were written; a byte copy and its
source by the rows in the files' footers and a digest of the copied files' MD5s (the same bytes on both).
"""
from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor

from perfkit.compat import zip_strict
from perfkit.datasets.placing.folder import FOOTER_THREADS
from perfkit.datasets.placing.plan import Plan
from perfkit.datasets.replicate import SOURCE, CopiedFile
from perfkit.datasets.tables import Table
from perfkit.errors import PerfkitError


def verify(plan: Plan, generated: dict[str, dict], copied: dict[str, list[CopiedFile]]
           ) -> tuple[dict[str, dict], dict[str, dict[str, Table]]]:
    """Every storage's table -> [rows, checksum], checked; and each storage's tables as the engines will read them."""
    gen = plan.gen
    sums = {**plan.reused_checksums, **generated}
    if plan.copying:
        rows = plan.folders[SOURCE].footer_rows(gen.tables, plan.file_format)
        shared = {t: [rows[t], fingerprint(copied[t])] for t in gen.tables}
        sums.update({where: shared for where in (SOURCE, *plan.decision.copy_to)})
    for where in plan.todo:
        short = {t: (sums[where][t][0], n) for t in gen.tables if sums[where][t][0] != (n := gen.expected_rows(t))}
        if short:
            raise PerfkitError(f"dataset {gen.name} on {where}: {', '.join(short)} hold other row counts than the "
                               f"generator makes (read back, expected: {short}). Fix: check that nothing else writes "
                               f"under {plan.folders[where].root}, then run again (perfkit remakes it)")
    storages = plan.storages
    differ = [where for where in storages if sums[where] != sums[storages[0]]]
    if differ:
        raise PerfkitError(f"dataset {gen.name}: {', '.join(differ)} holds other rows than {storages[0]} "
                           f"(by their recorded checksums). Fix: delete "
                           f"{', '.join(str(plan.folders[w].root) for w in differ)} and run again")
    pairs = [(where, t) for where in storages for t in gen.tables]
    with ThreadPoolExecutor(FOOTER_THREADS) as pool:  # one listing and one footer per table and storage
        found = pool.map(lambda p: plan.folders[p[0]].inspect(p[1], plan.file_format), pairs)
        inspected = dict(zip_strict(pairs, found))
    return sums, {where: {t: inspected[where, t] for t in gen.tables} for where in storages}


def mark_complete(plan: Plan, sums: dict[str, dict]) -> None:
    """The markers of what was made, with its checksums and files; a copy's source keeps its files but records
    the checksums it now shares with the copy (the same bytes)."""
    for where in [w for w in plan.storages if w in plan.todo or plan.copying and w == SOURCE]:
        folder = plan.folders[where]
        folder.finish_marker(sums[where], {t: folder.files(t) for t in plan.gen.tables})


def fingerprint(files: list[CopiedFile]) -> str:
    """One digest of a table's files: their names, sizes and MD5s (equal on both storages for byte copies)."""
    return hashlib.md5("".join(f"{f.name} {f.size} {f.md5}\n" for f in sorted(files, key=lambda f: f.name))
                       .encode()).hexdigest()
