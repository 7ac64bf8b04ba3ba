"""The one record type of every measurement, and ResultSet: append, persist atomically, load.

One run of one experiment is one JSON-lines file: data/results/<experiment>/<run_id>.jsonl.
"""
from __future__ import annotations

import glob
import json
import uuid
import warnings
from dataclasses import MISSING, asdict, dataclass, field, fields
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from perfkit import atomic
from perfkit.compat import fromisoformat
from perfkit.errors import PerfkitError, shorten
from perfkit.keep import keep_elsewhere
from perfkit.paths import results_dir

PHASES = ("warmup", "measured")
UNAVAILABLE = "unavailable: "  # error prefix of a subject that cannot run here: recorded, not a failure


@dataclass
class Record:
    run_id: str
    experiment: str  # e.g. hdfs_vs_s3_queries
    subject: str  # what did the work: an engine, a copy method, a read method
    storage: str  # where the data sat: hdfs, s3, ...
    case: str  # which work: a query id, a file set, ...
    phase: str  # warmup (recorded, never summarised) | measured
    iteration: int
    started_at: str
    wall_s: float | None
    ok: bool = True
    error: str | None = None
    rows: int | None = None
    bytes: int | None = None
    mb_per_s: float | None = None
    result_hash: str | None = None
    params: dict = field(default_factory=dict)  # this record's own settings, e.g. concurrency, file
    io: dict = field(default_factory=dict)  # what the run asked of the storages (perfkit.accounting.run_io)
    config: dict = field(default_factory=dict)  # the run's: versions, profile, dataset, host, parameters

    def __post_init__(self):
        if self.phase not in PHASES:
            raise ValueError(f"phase must be one of {PHASES}, not {self.phase!r}")
        if self.ok and self.wall_s is None:
            raise ValueError("a successful record needs wall_s")
        if self.mb_per_s is None and self.ok and self.bytes and self.wall_s:
            self.mb_per_s = self.bytes / 1e6 / self.wall_s


RECORD_FIELDS = [f.name for f in fields(Record)]


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def new_run_id() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ") + "-" + uuid.uuid4().hex[:6]


# A run of several recordings (the matrix's suites, the S3-distance settings) records in each the same group: its id
# and its parts in order, so that one file finds the others and a report rebuilds them all
RUN_GROUP = "run_group"


def run_group(parts: list[str]) -> list[dict]:
    """A new group of recordings, what each records: {"id": ..., "parts": [...], "part": its own} (the parts: suites,
    settings)."""
    group = {"id": new_run_id(), "parts": list(parts)}
    return [{**group, "part": part} for part in parts]


def grouped_files(path: Path | str) -> list[Path]:
    """The result files of the run group `path` belongs to, in the group's order (those beside it in its folder), or
    [path] when it belongs to none."""
    path = Path(path)
    group = (first_config(path) or {}).get(RUN_GROUP)
    if not group:
        return [path]
    members = runs_whose_config(path.parent, lambda config: (config.get(RUN_GROUP) or {}).get("id") == group["id"])
    return sorted(members, key=lambda member: _part_index(first_config(member), group))


def _part_index(config: dict, group: dict) -> int:
    part = config[RUN_GROUP].get("part")
    return group["parts"].index(part) if part in group["parts"] else len(group["parts"])


class ResultSet:
    """The records of one run. `save()` replaces the run's file atomically: never half-written."""

    def __init__(self, experiment: str, config: dict | None = None, run_id: str | None = None,
                 folder: Path | None = None):
        self.experiment, self.config = experiment, dict(config or {})
        self.run_id = run_id or new_run_id()
        self.folder = Path(folder) if folder else results_dir()
        self.records: list[Record] = []

    @classmethod
    def load(cls, path: Path | str) -> ResultSet:
        """A saved run read back whole (read_result_file's checks), its records sharing one config as when it ran."""
        rows = read_result_file(path)
        first = rows[0]
        results = cls(first["experiment"], first["config"], run_id=first["run_id"], folder=Path(path).parent.parent)
        for row in rows:
            results.records.append(Record(**{**row, "config": results.config}))
        return results

    @property
    def path(self) -> Path:
        return self.folder / self.experiment / f"{self.run_id}.jsonl"

    def add(self, **values) -> Record:
        record = Record(run_id=self.run_id, experiment=self.experiment, config=self.config, **values)
        self.records.append(record)
        return record

    def add_unavailable(self, subject: str, storage: str, case: str, reason: str, **values) -> Record:
        """Record that `subject` cannot run here, and why (e.g. S3DistCp off EMR)."""
        return self.add(subject=subject, storage=storage, case=case, phase="measured", iteration=0,
                        started_at=now(), wall_s=None, ok=False, error=UNAVAILABLE + reason, **values)

    def save(self) -> Path:
        """Write every record to the run's file; if it cannot be written, to a fallback folder, then raise
        ResultsNotSaved naming both (a run that stops there keeps what it measured)."""
        text = "".join(json.dumps(asdict(record), default=str) + "\n" for record in self.records)
        try:
            return atomic.write_text(self.path, text)  # the user's umask, as any file they make: results are shared
        except OSError as err:
            relative = self.path.relative_to(self.folder)
            raise keep_elsewhere(self.path, relative, text, len(self.records), err) from err

    def to_frame(self) -> pd.DataFrame:
        return records_frame([asdict(r) for r in self.records])

    @property
    def failures(self) -> list[Record]:
        """Runs that failed; a subject that is unavailable here is not a failure."""
        return [r for r in self.records if is_failure(r)]


def is_failure(record: Record) -> bool:
    """A run that failed; a subject that is unavailable here is not a failure."""
    return not record.ok and not (record.error or "").startswith(UNAVAILABLE)


def records_frame(rows: list[dict]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=RECORD_FIELDS)
    frame["started_at"] = pd.to_datetime(frame["started_at"], utc=True, format="ISO8601")  # any ISO form, mixed
    return frame


REQUIRED = [f.name for f in fields(Record) if f.default is MISSING and f.default_factory is MISSING]


def load_results(experiment: str | None = None, folder: Path | None = None) -> pd.DataFrame:
    """Every saved record (of one experiment, or all) across runs, as one frame.

    A file that is not wholly perfkit records (a half-written copy, a foreign file) is left out
    with a warning naming it, so that one bad file does not hide every other run.
    """
    root = Path(folder) if folder else results_dir()
    pattern = f"{glob.escape(experiment)}/*.jsonl" if experiment else "*/*.jsonl"  # a name, not a pattern
    rows = []
    for path in sorted(root.glob(pattern)):
        try:
            rows += _records_of(path)
        except _NotRecords as err:
            warnings.warn(f"result file {path} {err}: left out (move it aside to silence this)", stacklevel=2)
    return records_frame(rows)


def runs_whose_config(folder: Path, matches) -> list[Path]:
    """The result files of `folder` (one experiment's) whose run config (their first record's) `matches`, oldest
    first; a file that is not perfkit's records is not one of them."""
    found = []
    for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else ():
        config = first_config(path)
        if config is not None and matches(config):
            found.append(path)
    return found


def first_config(path: Path) -> dict | None:
    """The run config a result file's records share, read from its first line alone; None: not perfkit's records."""
    with open(path, encoding="utf-8") as lines:
        first = lines.readline()
    try:
        config = json.loads(first)["config"]
    except (ValueError, KeyError, TypeError):
        return None
    return config if isinstance(config, dict) else None


def read_result_file(path: Path | str) -> list[dict]:
    """The records of one result file; a PerfkitError naming the file and what is wrong when it is not wholly
    perfkit's records (asked for by name, a foreign file is an error, not a warning as in load_results)."""
    try:
        rows = _records_of(Path(path))
    except _BadValue as err:
        raise PerfkitError(f"result file {path}: {err}: correct that value, or move the file aside and give "
                           "another run") from None
    except _NotRecords as err:
        raise PerfkitError(f"{path} is not a perfkit result file ({err}): give a run's .jsonl file (perfkit saves "
                           "them under data/results/<experiment>/), a folder of them, or a run id") from None
    if not rows:
        raise PerfkitError(f"{path} holds no records: give a run's .jsonl file with measurements in it")
    return rows


class _NotRecords(Exception):
    pass


class _BadValue(_NotRecords):
    """A perfkit record (every field there) with a value of the wrong type: one field named, with its type."""


# what each annotation of Record allows in JSON; a JSON true or false is no number
_JSON_TYPES = {"str": (str,), "int": (int,), "float": (int, float), "bool": (bool,), "dict": (dict,)}
_JSON_NAMES = {"str": "text", "int": "a whole number", "float": "a number", "bool": "true or false",
               "dict": "a mapping {...}", "None": "null"}
_FIELD_TYPES = {f.name: [part.strip() for part in str(f.type).split("|")] for f in fields(Record)}


def _check_values(row: dict, number: int) -> None:
    """Every field of the record has its type: a wrong one is named here, not as a traceback from pandas later."""
    for name, types in _FIELD_TYPES.items():
        if name in row and not _is_of(row[name], types):
            wanted = " or ".join(_JSON_NAMES[t] for t in types)
            raise _BadValue(f"line {number}, field {name} is {shorten(json.dumps(row[name], default=str), 60)}, "
                            f"not {wanted}")
    if row["phase"] not in PHASES:
        raise _BadValue(f"line {number}, field phase is {row['phase']!r}, not one of {', '.join(PHASES)}")


def _is_of(value, types: list[str]) -> bool:
    if value is None:
        return "None" in types
    if isinstance(value, bool):
        return "bool" in types
    return any(isinstance(value, _JSON_TYPES[t]) for t in types if t != "None")


def _records_of(path: Path) -> list[dict]:
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise _NotRecords(f"cannot be read ({err})") from None
    rows = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            raise _NotRecords(f"line {number} is not JSON") from None
        missing = [name for name in REQUIRED if name not in row] if isinstance(row, dict) else REQUIRED
        if missing:
            raise _NotRecords(f"line {number} is not a perfkit record (no {', '.join(missing)})")
        _check_values(row, number)
        try:
            fromisoformat(row["started_at"])  # one bad time would make the whole frame fail to convert
        except (TypeError, ValueError):
            raise _BadValue(f"line {number} has no valid started_at ({row['started_at']!r})") from None
        rows.append(row)
    return rows
