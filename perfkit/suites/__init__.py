"""Query suites: .sql files plus an optional manifest, one folder per suite.

A built-in suite is named (`taxi`, `tpch`, `hibench`); a user's suite is the path of any folder of .sql
files. Each query names its tables with placeholders: `{table}` for the one table of a single-table suite,
`{table:NAME}` for one of several tables.

One text serves every engine where the dialects allow; `<id>.<engine>.sql` beside `<id>.sql` is that
engine's own text, used only where its dialect forces one. A manifest entry with `writes: NAME` is a write
workload: it fills table NAME (described under the manifest's `targets:` as {like: TABLE} or {columns: [[NAME,
TYPE], ...]}), which the runner creates empty under the run's own prefix before each run. The manifest's
`dataset:` names the built-in data a suite runs on when no `tables` are given (taxi, the default; tpch; hibench).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from perfkit.errors import PerfkitError

SUITES_DIR = Path(__file__).parent
PLACEHOLDER = re.compile(r"\{table(?::([A-Za-z_][A-Za-z0-9_]*))?\}")
DEFAULT_TABLE = "table"  # what the bare {table} names
_TITLE_COMMENT = re.compile(r"^\s*--\s*(.+?)\s*$")


@dataclass(frozen=True)
class Query:
    id: str
    title: str
    sql: str  # with {table} / {table:NAME} placeholders
    variants: dict[str, str] = field(default_factory=dict)  # engine -> its own text, where its dialect forces one
    writes: str | None = None  # the table placeholder a write workload fills; None for a read

    def text(self, engine: str | None = None) -> str:
        return self.variants.get(engine, self.sql) if engine else self.sql

    def table_names(self) -> list[str]:
        """The tables the query uses (every engine's text), in first-use order; the bare {table} is DEFAULT_TABLE."""
        texts = [self.sql, *self.variants.values()]
        names = [m.group(1) or DEFAULT_TABLE for text in texts for m in PLACEHOLDER.finditer(text)]
        return list(dict.fromkeys(names))

    def for_table(self, table: str, engine: str | None = None) -> str:
        return self.for_tables({DEFAULT_TABLE: table}, engine)

    def for_tables(self, tables: dict[str, str], engine: str | None = None) -> str:
        """The SQL (the engine's own text if it has one) with every placeholder replaced by its table in `tables`."""
        missing = [name for name in self.table_names() if name not in tables]
        if missing:
            have = ", ".join(sorted(tables)) or "none"
            raise PerfkitError(f"query {self.id} uses {', '.join(_placeholder(n) for n in missing)}, which the "
                               f"tables map lacks (it has {have}). Fix: add that table to `tables`, or "
                               "change the placeholder")
        return PLACEHOLDER.sub(lambda m: tables[m.group(1) or DEFAULT_TABLE], self.text(engine))


@dataclass(frozen=True)
class Suite:
    name: str
    queries: list[Query]
    dataset: str | None = None  # the built-in dataset it runs on (taxi, tpch, hibench); None: the user's tables
    targets: dict[str, dict] = field(default_factory=dict)  # write tables: NAME -> {like: TABLE} or {columns: [...]}

    @property
    def reads(self) -> list[Query]:
        return [q for q in self.queries if not q.writes]

    @property
    def writes(self) -> list[Query]:
        return [q for q in self.queries if q.writes]


def _placeholder(name: str) -> str:
    return "{table}" if name == DEFAULT_TABLE else f"{{table:{name}}}"


def available_suites() -> list[str]:
    return sorted(p.parent.name for p in SUITES_DIR.glob("*/manifest.yml"))


def load_suite(name: str, only: list[str] | None = None) -> list[Query]:
    """A built-in suite's queries by name, or those of a folder of .sql files."""
    return open_suite(name, only).queries


def open_suite(name: str, only: list[str] | None = None) -> Suite:
    """A built-in suite by name, or the path of a folder of .sql files, with its dataset and write targets."""
    name = str(name)
    if name in available_suites():
        folder = SUITES_DIR / name
        queries = _from_folder(folder, f"suite {name!r}")
    elif "/" in name or name.startswith(".") or Path(name).is_dir():
        folder = Path(name).expanduser()
        if not folder.is_dir():
            raise PerfkitError(f"suite folder {folder} does not exist or is not a folder: give a folder of .sql "
                               f"files, or one of the built-in suites ({', '.join(available_suites())})")
        queries = _from_folder(folder, f"suite folder {folder}")
    else:
        raise PerfkitError(f"unknown query suite {name!r}: choose from {', '.join(available_suites())}, "
                           "or give the path of a folder of .sql files")
    if only:
        known = {q.id for q in queries}
        unknown = [q for q in only if q not in known]
        if unknown:
            raise PerfkitError(f"unknown query {', '.join(unknown)} in suite {name!r}: "
                               f"choose from {', '.join(sorted(known))}")
        queries = [q for q in queries if q.id in only]
    spec = _manifest_spec(folder / "manifest.yml", name)
    targets = spec.get("targets") or {}
    _check_target_specs(targets, name)
    for query in queries:
        if query.writes and query.writes not in targets:
            raise PerfkitError(f"suite {name!r}: query {query.id} writes {query.writes!r}, which the manifest's "
                               "`targets:` does not describe. Fix: add it there ({like: TABLE} or {columns: [...]})")
    return Suite(folder.name if name in available_suites() else str(folder), queries,
                 spec.get("dataset"), targets)


def _check_target_specs(targets, name: str) -> None:
    """Each write target is {like: TABLE} or {columns: [[NAME, TYPE], ...]}: the runner creates it from that."""
    if not isinstance(targets, dict):
        raise PerfkitError(f"suite {name!r}: the manifest's `targets:` is not a mapping: write NAME: {{like: TABLE}} "
                           "or NAME: {columns: [[NAME, TYPE], ...]} under it")
    for target, spec in targets.items():
        columns = spec.get("columns") if isinstance(spec, dict) else None
        pairs = isinstance(columns, list) and columns and all(
            isinstance(c, list) and len(c) == 2 and all(isinstance(part, str) for part in c) for c in columns)
        if not (isinstance(spec, dict) and (isinstance(spec.get("like"), str) or pairs)):
            raise PerfkitError(f"suite {name!r}: write target {target!r} is {spec!r}: describe it as {{like: TABLE}} "
                               "(a table the queries read; the bare {table} is `table`) or as "
                               "{columns: [[NAME, TYPE], ...]}")


def _manifest_spec(manifest: Path, where: str) -> dict:
    if not manifest.exists():
        return {}
    spec = yaml.safe_load(manifest.read_text())  # already read once by _from_folder: its errors are named there
    return spec if isinstance(spec, dict) else {}


def _from_folder(folder: Path, where: str) -> list[Query]:
    """The manifest's queries in its order (id, file, title), or else every .sql file by name, titled by its
    first `-- comment` line."""
    manifest = folder / "manifest.yml"
    if manifest.exists():
        spec = _read_manifest(manifest, where)
        entries = [(str(q["id"]), folder / str(q["file"]), q.get("title"), q.get("writes")) for q in spec]
    else:
        files = [p for p in sorted(folder.glob("*.sql")) if not _variant_of(p)]
        if not files:
            raise PerfkitError(f"{where} has no .sql file: put one query per .sql file there "
                               "(tables as {table}, or {table:NAME} for several)")
        entries = [(path.stem, path, None, None) for path in files]
    queries = []
    for query_id, path, title, writes in entries:
        sql = _read_sql(path, where)
        variants = {engine: _read_sql(other, where) for other in sorted(folder.glob(f"{path.stem}.*.sql"))
                    if (engine := _variant_of(other))}
        for text, name in [(sql, path.name), *((v, f"{path.stem}.{e}.sql") for e, v in variants.items())]:
            if not PLACEHOLDER.search(text):
                raise PerfkitError(f"{where}: query {query_id} ({name}) names no table placeholder: write {{table}} "
                                   "(or {table:NAME}) where the table goes, so each storage's table can be put there")
        first = next((m.group(1) for line in sql.splitlines() if (m := _TITLE_COMMENT.match(line))), None)
        queries.append(Query(query_id, str(title or first or query_id), sql, variants,
                             str(writes) if writes else None))
    ids = [q.id for q in queries]
    if len(set(ids)) != len(ids):
        raise PerfkitError(f"{where}: query ids repeat ({', '.join(sorted({i for i in ids if ids.count(i) > 1}))}): "
                           "give each query its own id")
    return queries


def _variant_of(path: Path) -> str | None:
    """The engine of an engine's own text `<id>.<engine>.sql`, or None for a query's common text."""
    from perfkit.engines import REGISTRY

    parts = path.name.split(".")
    return parts[-2] if len(parts) == 3 and parts[-2] in REGISTRY else None


def _read_manifest(manifest: Path, where: str) -> list[dict]:
    try:
        spec = yaml.safe_load(manifest.read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise PerfkitError(f"{where}: {manifest.name} cannot be read ({' '.join(str(err).split())}): "
                           "fix it or remove it (then every .sql file is a query)") from None
    queries = spec.get("queries") if isinstance(spec, dict) else None
    if not isinstance(queries, list) or not queries or not all(
            isinstance(q, dict) and "id" in q and "file" in q for q in queries):
        raise PerfkitError(f"{where}: {manifest.name} needs a list `queries:` of entries with `id` and `file` "
                           "(and optionally `title`)")
    return queries


def _read_sql(path: Path, where: str) -> str:
    try:
        sql = path.read_text().strip()
    except FileNotFoundError:
        raise PerfkitError(f"{where}: query file {path.name} does not exist: fix the manifest's `file`") from None
    except (OSError, UnicodeDecodeError) as err:
        raise PerfkitError(f"{where}: {path.name} cannot be read as text ({err}): save it as UTF-8") from None
    sql = sql.rstrip(";").strip()  # engines' DB-API clients take one statement without its terminator
    if not sql:
        raise PerfkitError(f"{where}: {path.name} is empty: write one SQL query in it")
    return sql
