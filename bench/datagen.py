"""perfkit's dataset placement against the plain generator writing the same files to local disk, in one run.

    python bench/datagen.py [--dataset tpch|hibench|all --scale 0.1 --rounds 1 --warmup 1 --format orc] [--quick]

Both paths use the same generator object (TPC-H: Trino CTAS from its tpch connector; HiBench: Spark):
- plain: the generator's own write of every table into a fresh local folder (file:///tmp/...), nothing else;
  MB = the data files on disk (Hadoop's .crc and _SUCCESS files left out).
- perfkit: place_generated into a fresh bench prefix on hdfs and s3 (--method copy, the default: every table
  generated into HDFS, its files copied to S3 and checked byte for byte by both storages' checksums, each
  table's rows summed from the footers against the generator's count; --method generate: every table
  generated into each storage and read back there, row count and checksum of every row), then schemas read
  and markers written; MB = one copy's data files (hdfs).
Rates are rows (and MB) / seconds; perfkit's seconds are the whole placement call. Each round runs both paths
once, in alternating order, after one unmeasured plain pass (--warmup: engine and JIT warm, connector loaded); with
several rounds the rates are medians and the ratio is the median of the rounds' own ratios.
Target: perfkit's rate (generate + put on both storages + verify) >= 0.5 of the plain generator's rate to
local disk alone. The bench prefix (perfkit-bench/datagen-<uuid>) is deleted on both storages after every
round, the local folders after every write. Needs the lab up.
--quick (what `make test` runs, tests/integration/test_bench.py): both datasets at their smallest scales (TPC-H 0.01,
HiBench tiny), one round, no warm-up pass; its figures say nothing, only that the script still runs. Any size given
besides it wins.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path

from hdfs.util import HdfsError

from perfkit.storages import hdfs as hdfs_storage
from perfkit.config import load_profile
from perfkit.datasets import locations
from perfkit.datasets.generate import METHODS, Placement, place_generated
from perfkit.datasets.generator import get_generator

DEFAULT_SCALE = {"tpch": "0.1", "hibench": "small"}
QUICK_SCALE = {"tpch": "0.01", "hibench": "tiny"}  # --quick: each dataset's smallest scale (TPC-H's is Trino's tiny)
QUICK = {"rounds": 1, "warmup": 0}  # --quick: and one round, no warm-up pass
STORAGES = ["hdfs", "s3"]
TARGET = 0.5


def plain(gen, file_format: str) -> tuple[float, int]:
    """Seconds for the generator to write every table into a fresh local folder, and the data files' bytes."""
    folder = tempfile.mkdtemp(prefix="perfkit-datagen-")
    try:
        t0 = time.perf_counter()
        for table in gen.tables:
            gen.write(table, f"file://{folder}/{table}", file_format)
        seconds = time.perf_counter() - t0
        return seconds, sum(f.stat().st_size for f in Path(folder).rglob("*")
                            if f.is_file() and not locations.HIDDEN.match(f.name))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def place(gen, file_format: str, method: str) -> tuple[float, Placement, int, int]:
    """Seconds of perfkit's whole placement, its parts, rows, and one copy's bytes; then the prefix is deleted."""
    pl = Placement()
    try:
        t0 = time.perf_counter()
        placed = place_generated(gen, file_format, STORAGES, progress=False, placement=pl, method=method)
        seconds = time.perf_counter() - t0
        assert not pl.reused, "a fresh prefix must not hold a copy to reuse"
        return (seconds, pl, sum(placed.details["rows"].values()),
                sum(t.bytes for t in placed.tables["hdfs"].values()))
    finally:
        clear(gen.profile)


def clear(profile) -> None:
    """The bench prefix on both storages (delete_tree of the profile's own root: nothing outside it)."""
    for where in STORAGES:
        locations.delete_tree(profile, locations.profile_location(profile, where, ""))
    try:  # the shared parent folder on HDFS, only if empty (a non-recursive delete refuses otherwise)
        hdfs_storage.webhdfs_client(profile).delete(profile.hdfs_path("").rsplit("/", 1)[0], recursive=False)
    except HdfsError:
        pass


def bench(dataset: str, scale: str, args, profile) -> dict:
    with get_generator(dataset, profile, scale) as gen:
        for _ in range(args.warmup):  # unmeasured
            plain(gen, args.format)
        rounds = []
        for round_ in range(args.rounds):
            order = ("plain", "perfkit") if round_ % 2 == 0 else ("perfkit", "plain")
            got = {path: plain(gen, args.format) if path == "plain" else place(gen, args.format, args.method)
                   for path in order}
            (plain_s, plain_bytes), (kit_s, pl, rows, kit_bytes) = got["plain"], got["perfkit"]
            rounds.append({"plain_s": plain_s, "plain_bytes": plain_bytes, "kit_s": kit_s, "rows": rows,
                           "kit_bytes": kit_bytes, "ratio": plain_s / kit_s})
            parts = " + ".join([f"generate {w} {s:.2f} s" for w, s in pl.generated_s.items()]
                               + [f"copy to {w} {s:.2f} s" for w, s in pl.copied_s.items()])
            other = kit_s - sum(pl.generated_s.values()) - sum(pl.copied_s.values()) - pl.verify_s
            print(f"  {gen.name} round {round_ + 1} ({' first, '.join(order)} second): plain {plain_s:.2f} s; "
                  f"perfkit {kit_s:.2f} s = {parts} + verify {pl.verify_s:.2f} s + markers {other:.2f} s")
        engine = next(iter(gen.engine.versions().values()))
    med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    rows = rounds[0]["rows"]
    return {"dataset": dataset, "scale": scale, "engine": engine, "rows": rows, "MB": med["plain_bytes"] / 1e6,
            "plain rows/s": statistics.median(rows / r["plain_s"] for r in rounds),
            "plain MB/s": statistics.median(r["plain_bytes"] / 1e6 / r["plain_s"] for r in rounds),
            "perfkit rows/s": statistics.median(rows / r["kit_s"] for r in rounds),
            "perfkit MB/s": statistics.median(r["kit_bytes"] / 1e6 / r["kit_s"] for r in rounds),
            "ratio": med["ratio"], "copy MB": med["kit_bytes"] / 1e6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="lab")
    parser.add_argument("--dataset", choices=["tpch", "hibench", "all"], default="all")
    parser.add_argument("--scale", default=None,
                        help="tpch: a scale factor (default 0.1); hibench: a size (default small)")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=1, help="unmeasured plain passes first (engine, JIT)")
    parser.add_argument("--format", choices=["orc", "parquet"], default="orc")
    parser.add_argument("--method", choices=list(METHODS), default="copy", help="how perfkit places the copies")
    parser.add_argument("--quick", action="store_true",
                        help=f"each dataset at its smallest scale {QUICK_SCALE}, {QUICK}")
    args = parser.parse_args()
    if args.quick:  # the quick sizes as defaults: a size given on the command line still wins
        parser.set_defaults(**QUICK)
        args = parser.parse_args()
    scales = QUICK_SCALE if args.quick else DEFAULT_SCALE  # a --scale given wins

    profile = replace(load_profile(args.profile), prefix=f"perfkit-bench/datagen-{uuid.uuid4().hex[:12]}")
    datasets = ["tpch", "hibench"] if args.dataset == "all" else [args.dataset]
    print(f"datagen: {', '.join(datasets)}, {args.format}, {args.rounds} round(s) after {args.warmup} "
          f"unmeasured plain pass(es); plain = the generator to local "
          f"disk; perfkit = place_generated ({args.method}) on {' + '.join(STORAGES)} with verify, "
          f"under {profile.prefix}")
    try:
        results = [bench(d, args.scale or scales[d], args, profile) for d in datasets]
    finally:
        clear(profile)
    print(f"  {'dataset':<8} {'scale':>6} {'rows':>10} {'MB':>7} {'plain rows/s':>13} {'MB/s':>6} "
          f"{'perfkit rows/s':>15} {'MB/s':>6} {'ratio':>6}  target >= {TARGET}")
    for r in results:
        print(f"  {r['dataset']:<8} {r['scale']:>6} {r['rows']:>10} {r['MB']:>7.1f} {r['plain rows/s']:>13,.0f} "
              f"{r['plain MB/s']:>6.1f} {r['perfkit rows/s']:>15,.0f} {r['perfkit MB/s']:>6.1f} {r['ratio']:>6.2f}  "
              f"{'yes' if r['ratio'] >= TARGET else 'no'}")
    for r in results:
        print(f"  {r['dataset']}: {r['engine']}; MB = the local copy's data files (one placed copy: "
              f"{r['copy MB']:.1f} MB); ratio = plain seconds / perfkit seconds (same rows)")


if __name__ == "__main__":
    main()
