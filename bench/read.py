"""perfkit's parallel-read runner (posix method) against dd on the same local files, in one run.

    python bench/read.py [--files 8 --mb 256 --jobs 1 4 --rounds 5]

Files are read from the page cache (warmed first) so that both measure the reading path, not the
disk. Each round runs dd and perfkit in alternating order; the medians are compared. Target >= 0.95.
dd's time includes starting its processes, as a shell job's would; perfkit's jobs start together first.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from perfkit.config import load_profile
from perfkit.reads.aggregate import aggregate
from perfkit.reads.runner import run_jobs


def dd_jobs(plan: list[list[str]]) -> float:
    """MB/s of J shell jobs, each dd-ing its files to /dev/null with 8 MiB blocks."""
    start = time.time()
    procs = [subprocess.Popen(["sh", "-c", "; ".join(f"dd if={p} of=/dev/null bs=8M status=none" for p in job)])
             for job in plan]
    for p in procs:
        if p.wait() != 0:
            raise SystemExit("dd failed")
    return sum(Path(p).stat().st_size for job in plan for p in job) / 1e6 / (time.time() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--mb", type=int, default=256)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="perfkit-bench-read-") as folder:
        paths = []
        rng = np.random.default_rng(1)
        for i in range(args.files):
            path = Path(folder, f"f{i}.bin")
            path.write_bytes(rng.bytes(args.mb * 1_000_000))
            paths.append(str(path))
        for p in paths:  # warm the page cache
            Path(p).read_bytes()
        profile = replace(load_profile("lab"), nfs_mount=folder)
        print(f"read: {args.files} files x {args.mb} MB on local disk, page cache warm, {args.rounds} rounds")
        for jobs in args.jobs:
            plan = [paths[j::jobs] for j in range(jobs)]
            dd, kit = [], []
            for round_ in range(args.rounds):
                for which in (("dd", "perfkit") if round_ % 2 == 0 else ("perfkit", "dd")):
                    if which == "dd":
                        dd.append(dd_jobs(plan))
                    else:
                        results = run_jobs("posix", profile, plan)
                        assert all(r["ok"] for r in results), results
                        import pandas as pd

                        kit.append(aggregate(pd.DataFrame(results))["MB/s"])
            d, k = statistics.median(dd), statistics.median(kit)
            print(f"  {jobs} job(s): dd {d:8.0f} MB/s   perfkit posix {k:8.0f} MB/s   ratio {k / d:.2f} (target >= 0.95)")
        if shutil.which("fio"):
            done = subprocess.run(["fio", "--name=read", "--rw=read", "--bs=8M", "--readonly", "--output-format=terse",
                                   *[f"--filename={p}" for p in paths[:1]]], capture_output=True, text=True)
            print(f"  fio (one file, for reference): {done.stdout.split(';')[6]} KB/s" if done.returncode == 0
                  else "  fio failed")
        else:
            print("  fio: not installed (apt-get install fio), skipped")


if __name__ == "__main__":
    main()
