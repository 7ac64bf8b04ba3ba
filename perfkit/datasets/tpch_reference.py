"""TPC-H answers from an independent generator and engine: tpchgen-cli's Parquet files queried by DuckDB.

The engines under test read data made by Trino's tpch connector; agreeing with each other across storages
proves they read the same files the same way, not that the answers are right. This second opinion shares
neither the generator's code (tpchgen-cli is a separate implementation of dbgen) nor any engine's, and is
run on the driver: it is meant for the small scale factors a check needs (up to sf 1, about 1 GB).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from perfkit.datasets.tpch import TABLES
from perfkit.engines import result_hash
from perfkit.errors import PerfkitError
from perfkit.extras import require
from perfkit.progress import progress_bar

REFERENCE_MAX_SCALE = 1.0  # the driver generates and queries the data: keep it to what one machine does in minutes


@dataclass(frozen=True)
class ReferenceAnswer:
    query: str
    rows: int | None
    result_hash: str | None
    error: str | None = None


def reference_by(scale: float) -> str:
    """Who answered: the versions of both tools, recorded beside the verdicts."""
    return f"DuckDB {_version('duckdb')} over tpchgen-cli {_version('tpchgen-cli')} data at sf {scale:g}"


def check_scale(scale: float) -> float:
    if not 0 < scale <= REFERENCE_MAX_SCALE:
        raise PerfkitError(f"scale {scale:g}: the independent TPC-H check runs on the driver, up to sf "
                           f"{REFERENCE_MAX_SCALE:g}. Fix: check at sf 0.01 to 1 (the answers' correctness does "
                           "not depend on the scale), or skip the check")
    return scale


def reference_answers(queries, scale: float, progress: bool = True) -> dict[str, ReferenceAnswer]:
    """Each query's answer over freshly generated data in a temporary folder, deleted afterwards."""
    check_scale(scale)
    with tempfile.TemporaryDirectory(prefix="perfkit-tpch-reference-") as folder:
        generate(scale, Path(folder))
        return answers_over(Path(folder), queries, progress)


def generate(scale: float, folder: Path) -> None:
    """tpchgen-cli writes one Parquet file per table into `folder`."""
    cli = _tpchgen_cli()
    done = subprocess.run([cli, "parquet", "--scale-factor", f"{scale:g}", f"--output-dir={folder}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise PerfkitError(f"tpchgen-cli failed (exit {done.returncode}): "
                           f"{(done.stderr or done.stdout).strip()[-500:]}")
    missing = [t for t in TABLES if not (folder / f"{t}.parquet").is_file()]
    if missing:
        raise PerfkitError(f"tpchgen-cli wrote no {', '.join(missing)} in {folder}: is it tpchgen-cli 4 or later?")


def answers_over(folder: Path, queries, progress: bool = True) -> dict[str, ReferenceAnswer]:
    """DuckDB runs each query's common text over the Parquet files in `folder`; a failure is that query's answer.

    Decimal columns are read as DOUBLE, the type the engines under test see (the tpch connector's prices are
    doubles), so sums and averages agree within result_hash's float tolerance."""
    duckdb = require("duckdb", "the independent TPC-H check")
    answers = {}
    with duckdb.connect() as con:
        for table in TABLES:
            path = str(folder / f"{table}.parquet").replace("'", "''")
            columns = con.execute(f"DESCRIBE SELECT * FROM read_parquet('{path}')").fetchall()
            select = ", ".join(f'CAST("{name}" AS DOUBLE) AS "{name}"' if kind.startswith("DECIMAL") else f'"{name}"'
                               for name, kind, *_ in columns)
            con.execute(f"CREATE VIEW {table} AS SELECT {select} FROM read_parquet('{path}')")
        for query in progress_bar(queries, desc="reference answers", unit="query", disable=not progress):
            try:
                rows = con.execute(query.for_tables({t: t for t in TABLES})).fetchall()
            except duckdb.Error as err:
                answers[query.id] = ReferenceAnswer(query.id, None, None, f"DuckDB: {str(err).splitlines()[0]}")
                continue
            answers[query.id] = ReferenceAnswer(query.id, len(rows), result_hash(rows))
    return answers


def _tpchgen_cli() -> str:
    """The tpchgen-cli installed beside this Python (the venv's bin), else on PATH."""
    beside = Path(sys.executable).parent / "tpchgen-cli"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("tpchgen-cli")
    if not found:
        raise PerfkitError("tpchgen-cli is not installed: the independent TPC-H check needs it. "
                           "Fix: pip install 'perfkit[tools]' (make install does)")
    return found


def _version(package: str) -> str:
    try:
        return version(package)
    except PackageNotFoundError:
        return "?"
