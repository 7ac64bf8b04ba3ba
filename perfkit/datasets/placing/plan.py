"""Step 1, plan: what each storage holds already, what is kept, and what must be generated or copied."""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass

from perfkit.datasets.generator import Generator
from perfkit.datasets.placing.folder import MARKER, DatasetFolder
from perfkit.datasets.replicate import SOURCE, TARGET
from perfkit.errors import PerfkitError


@dataclass(frozen=True)
class Decision:
    """Where each storage's copy comes from; every storage is in exactly one of reused, generate_on, copy_to."""
    reused: list[str]  # complete, unchanged copies kept as they are
    generate_on: list[str]  # the generator writes these
    copy_to: list[str]  # byte copies of SOURCE's files ([] or [TARGET])
    clear: list[str]  # perfkit's own complete copies deleted before anything is made (their source is remade)


@dataclass(frozen=True)
class Plan:
    gen: Generator
    file_format: str
    folders: dict[str, DatasetFolder]  # storage -> its folder, in the caller's order
    decision: Decision
    reused_checksums: dict[str, dict]  # storage -> table -> [rows, checksum], from a kept copy's marker

    @property
    def storages(self) -> list[str]:
        return list(self.folders)

    @property
    def todo(self) -> list[str]:
        """The storages whose copy is made now, generated or copied."""
        return [where for where in self.folders if where not in self.decision.reused]

    @property
    def copying(self) -> bool:
        return bool(self.decision.copy_to)


def decide(storages: list[str], complete: dict[str, dict | None], method: str) -> Decision:
    """From each storage's complete marker (None: nothing usable there), where each copy comes from.

    method "copy" with both SOURCE and TARGET (HDFS and S3): SOURCE is generated and TARGET is its byte copy, so a
    new SOURCE copy makes TARGET's stale and two complete copies that are not byte copies (made by "generate") get
    TARGET copied again.
    """
    todo = [where for where in storages if complete[where] is None]
    both = {SOURCE, TARGET} <= set(storages)
    if method == "copy" and both and not todo and complete[SOURCE]["checksums"] != complete[TARGET]["checksums"]:
        todo = [TARGET]
    copying = method == "copy" and both and bool(todo)
    clear = []
    if copying and SOURCE in todo and TARGET not in todo:
        clear = [TARGET]
        todo = [where for where in storages if where in todo or where == TARGET]
    copy_to = [TARGET] if copying else []
    return Decision(reused=[where for where in storages if where not in todo],
                    generate_on=[where for where in todo if where not in copy_to], copy_to=copy_to, clear=clear)


def plan_placement(gen: Generator, file_format: str, storages: list[str], method: str) -> Plan:
    """Look at datasets/<name>/<format>/ on every storage, clear what perfkit must remake, and say what to make."""
    return plan_over(gen, file_format, dataset_folders(gen, file_format, storages), method)


def dataset_folders(gen: Generator, file_format: str, storages: list[str]) -> dict[str, DatasetFolder]:
    """datasets/<name>/<format>/ under the profile's prefix on every storage."""
    identity = {**gen.describe(), "format": file_format, "tables": list(gen.tables)}
    rel = f"datasets/{gen.name}/{file_format}"
    return {where: DatasetFolder.under_prefix(gen.profile, where, rel, identity) for where in storages}


def plan_over(gen: Generator, file_format: str, folders: dict[str, DatasetFolder], method: str) -> Plan:
    """The plan over these folders (the tests give in-memory ones)."""
    complete = {where: reusable_marker(folder, gen.tables) for where, folder in folders.items()}
    decision = decide(list(folders), complete, method)
    for where in decision.clear:
        folders[where].delete()  # perfkit's own complete copy (its marker said so)
    return Plan(gen, file_format, folders, decision,
                {where: complete[where]["checksums"] for where in decision.reused})


def reusable_marker(folder: DatasetFolder, tables) -> dict | None:
    """The marker of a complete, unchanged copy to reuse; None after clearing what perfkit may clear."""
    text = folder.read_marker()
    if text is None:
        if folder.exists():
            raise PerfkitError(f"{folder.root} exists but was not made by perfkit (no {MARKER} there): perfkit "
                               "deletes only what it created. Fix: move that folder away, or use another profile "
                               "prefix")
        return None
    try:
        marker = json.loads(text)
    except ValueError:
        marker = {}
    if (marker.get("complete") and marker.get("identity") == folder.identity
            and all(folder.files(t) == marker.get("files", {}).get(t) for t in tables)):
        damaged = folder.damaged(tables)
        if not damaged:
            return marker
        print(f"perfkit: {folder.root} holds damaged files ({'; '.join(f'{n}: {why}' for n, why in damaged.items())}): "
              "making it again", file=sys.stderr, flush=True)
    folder.delete()  # perfkit's own, incomplete, changed or damaged: made again
    return None
