"""perfkit's `stream` copy against sequential `hadoop fs -cp` and against DistCp, on the same files.

    python bench/transfer.py [--files 24 --mean-mb 16 --maps 4 --concurrency 8] [--quick]

One run, one manifest; each method copies it into a fresh folder, verified, then removed.
Prints MB/s and the ratios (targets: stream >= 1.5x sequential CLI and >= DistCp). Needs the lab up.
--quick (what `make test` runs, tests/integration/test_bench.py): every method on 2 files of about 1 MB, 2 at once;
its figures say nothing, only that the script still runs. Any size given besides it wins.
"""
from __future__ import annotations

import argparse

from perfkit.config import load_profile
from perfkit.experiments.s3_to_hdfs_transfer import TransferComparison
from perfkit.presenting.transfer_report import summarise_transfers

# --quick: every method on the smallest file set that still has more than one file to copy at once
QUICK = {"files": 2, "mean_mb": 1, "maps": 2, "concurrency": 2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="lab")
    parser.add_argument("--files", type=int, default=24)
    parser.add_argument("--mean-mb", type=float, default=16)
    parser.add_argument("--maps", type=int, default=4, help="DistCp maps")
    parser.add_argument("--concurrency", type=int, default=8, help="stream's files at once")
    parser.add_argument("--quick", action="store_true", help=f"the smallest sizes that run every method: {QUICK}")
    args = parser.parse_args()
    if args.quick:  # the quick sizes as defaults: a size given on the command line still wins
        parser.set_defaults(**QUICK)
        args = parser.parse_args()

    profile = load_profile(args.profile)
    runs = {}
    for method, level in (("hdfs-cp", 1), ("distcp", args.maps), ("stream", args.concurrency)):
        cmp = TransferComparison(profile, methods=[method], concurrency=[level], files=args.files,
                                 mean_mb=args.mean_mb, order="given")
        cmp.run(progress=False)
        cmp.raise_for_failures()
        runs[method] = summarise_transfers(cmp.results.to_frame()).iloc[0]
    manifest = cmp.manifest
    print(f"transfer: {len(manifest.files)} files, {manifest.total_bytes / 1e6:.0f} MB, s3 -> hdfs, verified")
    for method, row in runs.items():
        print(f"  {method:<8} concurrency {row['concurrency']:>2}: {row['seconds']:7.2f} s  {row['MB/s']:7.1f} MB/s")
    stream = runs["stream"]["MB/s"]
    print(f"  stream / sequential hadoop fs -cp: {stream / runs['hdfs-cp']['MB/s']:.2f}x (target >= 1.5)")
    print(f"  stream / DistCp:                   {stream / runs['distcp']['MB/s']:.2f}x (target >= 1.0)")


if __name__ == "__main__":
    main()
