"""The query-time model validated on data sizes and networks its fit never saw (issue 71).

    python bench/scale_model.py [--engines trino] [--rows 1000000 10000000 100000000] [--file-mb 400]
                                [--fit-networks onprem-10gbe ec2-s3] [--unseen near far] [--runs 3] [--seed 71]
                                [--keep DIR] [--quick]

The design. The taxi table at each size of --rows (the largest in files of about --file-mb MB, the studies' were
1.6 GB; smaller sizes in as many files of proportionally fewer rows, so a size differs by its bytes, not its file
count) is placed on HDFS and S3 and queried by each engine: the taxi suite's four queries and an all-column scan (a
max() of each of the 51 columns: every byte is read and decoded). Each cell, a (size, network) pair, is one perfkit
run (QueryComparison: warm-up, --runs measured runs a storage, the storages in random order, the records with their
counters and the network's calibration), the cells in a seeded random order. The fit (perfkit.model.query_time, read
from the records by perfkit.model.observations) uses the smaller sizes behind the --fit-networks; every other cell is
predicted (the largest size behind every network, and every size behind the --unseen networks) and measured.

What a prediction is given: the cell's network as its calibration measured it (a small GET's time, one connection's
MB/s), and the cell's bytes and S3 requests as the records counted them. So the figures test the model's terms, not a
guess of the bytes a size will read; a line per query says how far bytes and requests grew from the fit's largest size
(linear in the rows, if the files scale as they do here).

The goals (the issue's): per engine and query, the median |predicted - measured| / measured over the predicted cells
at most 15%; the verdict (S3 slower, faster, or no different from HDFS beyond noise, stats.compare's rule on the
measured runs; the predicted one from the two predictions' 95% intervals: slower where S3's lies wholly above HDFS's)
the same on at least 90% of the (cell, engine, query) triples. --quick (tests/integration/test_bench.py) runs every
step at tiny sizes: its figures say nothing, only that the script still runs. `--keep DIR` keeps every cell's run
(its records) in DIR, for `perfkit decide DIR ...` to fit on. Needs the lab up; it leaves the lab's network as it
found it.
"""
from __future__ import annotations

import argparse
import contextlib
import math
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from perfkit import stats
from perfkit.config import load_profile
from perfkit.datasets.taxi import SCHEMA
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.lab import Lab
from perfkit.lab.s3_network import current_network
from perfkit.model.observations import observations
from perfkit.model.query_time import fit
from perfkit.network import NetworkProfile, network_profile
from perfkit.results import ResultSet
from perfkit.suites import SUITES_DIR

BYTES_PER_ROW = 87  # the taxi table in ORC (zlib): 86.8 MB for 1,000,000 rows
NETWORKS = {  # besides the lab's own profiles (local, ec2-s3, onprem-10gbe)
    "near": NetworkProfile("near", rtt_ms=5, per_connection_mb_s=500, source="issue 71's near S3"),
    "far": NetworkProfile("far", rtt_ms=60, per_connection_mb_s=30, source="issue 71's far S3"),
}
SCAN_ID = "scan"
QUICK = {"rows": [20_000, 60_000, 120_000], "file_mb": 1, "runs": 2, "queries": ["q1", SCAN_ID],
         "unseen": ["far"]}
GOAL_ERROR, GOAL_VERDICTS = 0.15, 0.90
SLOWER, FASTER, SAME = "S3 slower", "S3 faster", "no different"


def suite_folder(folder: Path, queries: list[str] | None) -> Path:
    """The taxi suite's queries and the all-column scan, as a suite of the bench's own."""
    manifest = yaml.safe_load((SUITES_DIR / "taxi" / "manifest.yml").read_text())
    entries = manifest["queries"] + [{"id": SCAN_ID, "file": "scan_all_columns.sql",
                                      "title": "max() of every column: every byte read"}]
    entries = [e for e in entries if queries is None or e["id"] in queries]
    for entry in entries:
        if entry["id"] != SCAN_ID:
            shutil.copy(SUITES_DIR / "taxi" / entry["file"], folder / entry["file"])
    columns = ",\n       ".join(f"max({name}) AS max_{name}" for name, _, _ in SCHEMA)
    (folder / "scan_all_columns.sql").write_text(f"SELECT {columns}\nFROM {{table}}\n")
    (folder / "manifest.yml").write_text(yaml.safe_dump({"name": "taxi-and-scan", "dataset": "taxi",
                                                         "queries": entries}, sort_keys=False))
    return folder


def files_for(largest: int, file_mb: float) -> int:
    """Files of about file_mb at the largest size; every size is split into as many (a smaller one's are smaller)."""
    return max(1, round(largest * BYTES_PER_ROW / (file_mb * 1e6)))


def verdict_of_predictions(s3, hdfs) -> str:
    if s3.low > hdfs.high:
        return SLOWER
    if s3.high < hdfs.low:
        return FASTER
    return SAME


def measured_verdicts(records: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(engine, query) -> the HDFS vs S3 report's verdict on the cell's runs (stats.compare), in three words."""
    table = stats.compare(records, baseline="hdfs", other="s3")
    hdfs_faster, s3_faster = f"{stats.label('hdfs')} ", f"{stats.label('s3')} "
    return {(row.subject, row.case): (SLOWER if row.verdict.startswith(hdfs_faster) else
                                      FASTER if row.verdict.startswith(s3_faster) else SAME)
            for row in table.itertuples()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="lab")
    parser.add_argument("--engines", nargs="+", default=["trino"])
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000, 100_000_000],
                        help="taxi sizes; the largest is predicted, the others fitted")
    parser.add_argument("--file-mb", type=float, default=400, help="the largest size's file size (MB)")
    # both behind the proxy, whose byte counts are the S3 server's (with no network emulated the lab counts none)
    parser.add_argument("--fit-networks", nargs="+", default=["onprem-10gbe", "ec2-s3"])
    parser.add_argument("--unseen", nargs="+", default=["near", "far"], help="networks predicted, never fitted")
    parser.add_argument("--runs", type=int, default=3, help="measured runs per query and storage in a cell")
    parser.add_argument("--queries", nargs="+", default=None, help=f"of the taxi suite and {SCAN_ID} (default: all)")
    parser.add_argument("--seed", type=int, default=71, help="the cells' order and each cell's run order")
    parser.add_argument("--keep", type=Path, default=None,
                        help="a folder to keep the cells' runs in (perfkit decide fits on them)")
    parser.add_argument("--quick", action="store_true", help=f"the smallest sizes that run every step: {QUICK}")
    args = parser.parse_args()
    if args.quick:  # the quick sizes as defaults: a size given on the command line still wins
        parser.set_defaults(**QUICK)
        args = parser.parse_args()
    if len(args.rows) < 3:
        parser.error("--rows: give three or more sizes (two to fit, the largest to predict)")

    networks = {name: NETWORKS.get(name) or network_profile(name) for name in [*args.fit_networks, *args.unseen]}
    largest, sizes = max(args.rows), sorted(args.rows)
    files = files_for(largest, args.file_mb)
    cells = [(rows, name) for rows in sizes for name in networks]
    random.Random(args.seed).shuffle(cells)
    fitted_cells = {(rows, name) for rows, name in cells if rows != largest and name in args.fit_networks}

    lab = Lab()
    before = current_network(lab.home)
    frames, took = {}, {}
    with tempfile.TemporaryDirectory(prefix="perfkit-bench-scale-") as scratch, \
            contextlib.redirect_stdout(sys.stderr):
        # the cells' runs are the bench's, kept where --keep says
        os.environ["PERFKIT_RESULTS"] = str(args.keep.resolve() if args.keep else Path(scratch) / "results")
        suite = suite_folder(Path(scratch), args.queries)
        try:
            for index, (rows, name) in enumerate(cells):
                started = time.perf_counter()
                exp = QueryComparison(load_profile(args.profile, network=networks[name]), engines=args.engines,
                                      rows=rows, files=files, runs=args.runs, warmup=1, suite=str(suite),
                                      storages=["hdfs", "s3"], baseline="hdfs")
                exp.order_seed = args.seed * 1000 + index
                results = exp.run(progress=False)
                frames[(rows, name)] = ResultSet.load(results.path).to_frame()  # the records with their run's config
                took[(rows, name)] = time.perf_counter() - started
        finally:
            lab.set_network(before)

    fit_frame = pd.concat([frames[cell] for cell in fitted_cells])
    fit_rows, left_out = observations(fit_frame)
    model = fit(fit_rows)
    lines, errors, agree = [], {}, []
    largest_fitted = max(rows for rows, _ in fitted_cells)
    for rows, name in sorted(set(cells) - fitted_cells, key=lambda c: (c[0], list(networks).index(c[1]))):
        frame = frames[(rows, name)]
        cell_rows, _ = observations(frame)
        verdicts = measured_verdicts(frame)
        for (engine, query), runs in cell_rows.groupby(["engine", "query"]):
            predicted, measured = {}, {}
            for storage in ("hdfs", "s3"):
                on = runs[runs["storage"].eq(storage)]
                measured[storage] = float(on["wall_s"].median())
                predicted[storage] = model.predict(
                    engine, query, storage, bytes=float(on["bytes"].median()),
                    requests=float(on["requests"].median()) if storage == "s3" else 0.0,
                    g_s=float(on["g_s"].median()) if storage == "s3" else 0.0,
                    w_bytes_s=float(on["w_bytes_s"].median()) if storage == "s3" else math.inf)
                error = (predicted[storage].seconds - measured[storage]) / measured[storage]
                errors.setdefault((engine, query), []).append(abs(error))
                lines.append(f"  {rows:,} rows, {name}, {engine} {query} on {storage}: predicted "
                             f"{predicted[storage].seconds:.3f} s (95% PI {predicted[storage].low:.3f}-"
                             f"{predicted[storage].high:.3f}), measured {measured[storage]:.3f} s (median of "
                             f"{len(on)}), error {100 * error:+.0f}%, {predicted[storage].regime}")
            said = verdict_of_predictions(predicted["s3"], predicted["hdfs"])
            truth = verdicts.get((engine, query), SAME)
            agree.append(said == truth)
            lines.append(f"  {rows:,} rows, {name}, {engine} {query}: verdict predicted {said}, measured {truth}")
    print(f"scale model: fitted on {', '.join(f'{r:,}' for r in sizes if r != largest)} rows behind "
          f"{', '.join(args.fit_networks)} ({len(fit_rows)} runs, {left_out} without counters); predicted "
          f"{largest:,} rows behind every network and every size behind {', '.join(args.unseen)}; "
          f"{', '.join(args.engines)}; {files} files a size; seed {args.seed}")
    for engine, fitted in model.engines.items():
        # u in ms a request; rt and bw are shares: plain decimals, never exponents
        u, rt, bw = (fitted.term(name) for name in ("u", "rt", "bw"))
        terms = (f"u {1000 * u[0]:.3f} ms a request (95% CI {1000 * u[1]:.3f}-{1000 * u[2]:.3f}), "
                 + ", ".join(f"{name} {value:.3f} (95% CI {low:.3f}-{high:.3f})"
                             for name, (value, low, high) in (("rt", rt), ("bw", bw))))
        lines.insert(0, f"  {engine}: {terms}; fitted over {largest_fitted:,} rows at most")
    print("\n".join(lines))
    worst = {key: statistics.median(values) for key, values in errors.items()}
    met_error = all(value <= GOAL_ERROR for value in worst.values())
    share = sum(agree) / len(agree) if agree else float("nan")
    print("  median |error| per engine and query: " + ", ".join(f"{e} {q} {100 * v:.0f}%"
                                                              for (e, q), v in sorted(worst.items()))
          + f" [goal <= {100 * GOAL_ERROR:.0f}%: {'met' if met_error else 'not met'}]")
    print(f"  verdicts right: {sum(agree)}/{len(agree)} ({100 * share:.0f}%) [goal >= {100 * GOAL_VERDICTS:.0f}%: "
          f"{'met' if share >= GOAL_VERDICTS else 'not met'}]")
    print(f"  cells: {len(cells)} in {sum(took.values()):.0f} s ("
          + ", ".join(f"{r:,} rows {np.median([s for (rr, _), s in took.items() if rr == r]):.0f} s a cell"
                      for r in sizes) + ")")


if __name__ == "__main__":
    main()
