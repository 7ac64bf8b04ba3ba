"""Query suites: .sql files plus a small manifest, one folder per suite."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from perfkit.errors import PerfkitError

SUITES_DIR = Path(__file__).parent


@dataclass(frozen=True)
class Query:
    id: str
    title: str
    sql: str  # with a {table} placeholder

    def for_table(self, table: str) -> str:
        return self.sql.replace("{table}", table)


def available_suites() -> list[str]:
    return sorted(p.parent.name for p in SUITES_DIR.glob("*/manifest.yml"))


def load_suite(name: str, only: list[str] | None = None) -> list[Query]:
    manifest = SUITES_DIR / name / "manifest.yml"
    if not manifest.exists():
        raise PerfkitError(f"unknown query suite {name!r}: choose from {', '.join(available_suites())}")
    spec = yaml.safe_load(manifest.read_text())
    queries = [Query(q["id"], q["title"], (manifest.parent / q["file"]).read_text().strip())
               for q in spec["queries"]]
    if only:
        known = {q.id for q in queries}
        unknown = [q for q in only if q not in known]
        if unknown:
            raise PerfkitError(f"unknown query {', '.join(unknown)} in suite {name!r}: choose from {', '.join(sorted(known))}")
        queries = [q for q in queries if q.id in only]
    return queries
