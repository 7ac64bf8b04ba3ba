"""perfkit's parallel-read runner (posix method) against dd on the same local files, in one run.

    python bench/read.py [--files 4 --mb 128 --jobs 1 4 --rounds 9 --passes 4 --cache warm|cold|both --buffer-mib 8]
                         [--quick]

For each jobs level J the files are dealt to J jobs (file i to job i mod J); perfkit runs them as
J processes of its runner, dd as J bash jobs, each dd-ing its files one after the other to
/dev/null. Both read the same files, the same bytes, with the same J, and the same block size
(dd's bs = perfkit's posix buffer), and both are timed the same way:

- every job is set up before the clock: perfkit's job processes are forked, the method imported
  and its buffer allocated; each dd job's bash is started and runs one empty dd (dd's binary and
  libraries loaded, as perfkit's code is). Process starts are outside both timings. (Before, dd's
  clock started before its shell jobs were spawned, ~3-5 ms ahead of its first read, while
  perfkit's jobs stamped their start after their process was up: now neither includes it.)
- the jobs then start together (perfkit: a barrier; dd: a "go" line written to every job once all
  have said "ready"), each stamps its own start and end (perfkit: time.time(); dd: bash's
  $EPOCHREALTIME, no process), and both aggregates are perfkit.reads.aggregate's:
  bytes / (last end - first start).
- inside the clock, a dd job starts one dd process per file (that is how a shell job reads a list
  of files with dd), which then faults in its fresh 8 MiB buffer; perfkit's job opens each file and
  reuses one buffer, faulted in on its first read. Measured here (perf stat, warm cache): ~1.6 ms
  of CPU per dd start plus ~4 ms per buffer, against ~17 ms to copy 128 MB from the page cache,
  which is most of why perfkit leads dd at 1 job with a warm cache (4 files, 16 dd processes).

Cache: "warm" reads every file through once before each measured run, so both read the page
cache, and each job reads its list --passes times over (so that a timed run lasts long enough to
rise above the scheduling noise of a loaded machine); "cold" syncs and drops the page cache (and
dentries, inodes) before each measured run, so both read the disk, each job its list once (on a VM
the host may still cache that disk). Each round runs dd and perfkit once each, in alternating
order; the MB/s columns are medians over the rounds, and perfkit/dd is the median of the rounds' own
ratios (each taken within one round, so that a load drifting between rounds cancels out), with a
bootstrap 95% confidence interval of that median and the rounds' range. Target >= 0.95.

--quick (what `make test` runs, tests/integration/test_bench.py): 2 files of 4 MB, 1 and 2 jobs, both caches, 3
rounds (the fewest with an interval), each file read once; its figures say nothing, only that the script still runs.
Any size given besides it wins (--cache warm where the page cache cannot be dropped).
"""
from __future__ import annotations

import argparse
import mmap
import os
import shlex
import shutil
import statistics
import subprocess
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from perfkit.config import load_profile
from perfkit.protocol import drop_page_cache
from perfkit.reads.aggregate import aggregate
from perfkit.reads.methods import Posix
from perfkit.reads.runner import run_jobs


# --quick: every step (1 job and more, warm and cold) on the fewest bytes and rounds (3: the fewest with an interval)
QUICK = {"files": 2, "mb": 4, "jobs": [1, 2], "rounds": 3, "passes": 1}


def dd_jobs(plan: list[list[str]], block: int) -> list[dict]:
    """J bash jobs, each dd-ing its files to /dev/null with `block`-byte blocks, timed as perfkit's jobs."""
    env = {**os.environ, "LC_ALL": "C"}  # $EPOCHREALTIME with a decimal point
    procs = []
    for job in plan:
        dds = " && ".join(f"dd if={shlex.quote(p)} of=/dev/null bs={block} status=none" for p in job)
        script = (f"dd if=/dev/null of=/dev/null status=none && echo ready && read -r go && "
                  f's=$EPOCHREALTIME && {dds} && echo "$s $EPOCHREALTIME"')
        procs.append(subprocess.Popen(["bash", "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, env=env))
    for p in procs:
        if p.stdout.readline() != "ready\n":
            raise SystemExit("dd job failed to start")
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    jobs = []
    for p, files in zip(procs, plan):
        out, _ = p.communicate()
        if p.returncode != 0:
            raise SystemExit(f"dd failed on {files}")
        start, end = map(float, out.split())
        jobs.append({"start": start, "end": end, "bytes": sum(Path(f).stat().st_size for f in files), "ok": True})
    return jobs


def perfkit_jobs(plan: list[list[str]], profile) -> list[dict]:
    jobs = run_jobs("posix", profile, plan)
    for job, files in zip(jobs, plan):
        if not job["ok"] or job["bytes"] != sum(Path(f).stat().st_size for f in files):
            raise SystemExit(f"perfkit job failed or read the wrong bytes: {job}")
    return jobs


def median_ci(samples: list[float]) -> tuple[float, float]:
    """Bootstrap (percentile) 95% confidence interval of the median."""
    if len(samples) < 3 or np.ptp(samples) == 0:
        return (np.nan, np.nan) if len(samples) < 3 else (samples[0], samples[0])
    res = stats.bootstrap((np.asarray(samples),), np.median, vectorized=True, n_resamples=2000,
                          method="percentile", rng=np.random.default_rng(0))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def warm(paths: list[str]) -> None:
    buffer = mmap.mmap(-1, 1 << 20)
    for path in paths:
        with open(path, "rb", buffering=0) as f:
            while f.readinto(buffer):
                pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--mb", type=int, default=128)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--passes", type=int, default=4, help="times each job reads its files, warm cache")
    parser.add_argument("--cache", choices=["warm", "cold", "both"], default="both")
    parser.add_argument("--buffer-mib", type=float, default=Posix.buffer_size / 2**20,
                        help="bytes per read call, for perfkit's posix method and dd's bs alike")
    parser.add_argument("--quick", action="store_true", help=f"the smallest sizes that run every step: {QUICK}")
    args = parser.parse_args()
    if args.quick:  # the quick sizes as defaults: a size given on the command line still wins
        parser.set_defaults(**QUICK)
        args = parser.parse_args()
    block = int(args.buffer_mib * 2**20)
    Posix.buffer_size = block  # the forked jobs inherit it
    caches = ["warm", "cold"] if args.cache == "both" else [args.cache]

    with tempfile.TemporaryDirectory(prefix="perfkit-bench-read-") as folder:
        paths = []
        rng = np.random.default_rng(1)
        for i in range(args.files):
            path = Path(folder, f"f{i}.bin")
            path.write_bytes(rng.bytes(args.mb * 1_000_000))
            paths.append(str(path))
        if "cold" in caches:
            note = drop_page_cache()
            if note != "page cache dropped":
                raise SystemExit(f"cold cache impossible here: {note}")
        profile = replace(load_profile("lab"), nfs_mount=folder)
        print(f"read: {args.files} files x {args.mb} MB on local disk (warm: read {args.passes} times over), "
              f"{args.rounds} rounds, {block / 2**20:g} MiB per read for both; "
              f"MB/s = bytes / (last job end - first job start)")
        print(f"  {'jobs':>4}  {'cache':5}  {'dd MB/s':>8}  {'perfkit MB/s':>12}  {'perfkit/dd':>10}  95% CI"
              f"         rounds' range   (target perfkit/dd >= 0.95)")
        for jobs in args.jobs:
            for cache in caches:
                plan = [paths[j::jobs] * (args.passes if cache == "warm" else 1) for j in range(jobs)]
                rates = {"dd": [], "perfkit": []}
                for round_ in range(args.rounds):
                    for which in (("dd", "perfkit") if round_ % 2 == 0 else ("perfkit", "dd")):
                        if cache == "warm":
                            warm(paths)
                        else:
                            drop_page_cache()
                        done = dd_jobs(plan, block) if which == "dd" else perfkit_jobs(plan, profile)
                        rates[which].append(aggregate(pd.DataFrame(done))["MB/s"])
                d, k = statistics.median(rates["dd"]), statistics.median(rates["perfkit"])
                per_round = [a / b for a, b in zip(rates["perfkit"], rates["dd"])]
                low, high = median_ci(per_round)
                print(f"  {jobs:>4}  {cache:5}  {d:8.0f}  {k:12.0f}  {statistics.median(per_round):10.2f}  "
                      f"{low:.2f}-{high:.2f}      {min(per_round):.2f}-{max(per_round):.2f}")
        if shutil.which("fio"):
            done = subprocess.run(["fio", "--name=read", "--rw=read", f"--bs={block}", "--readonly",
                                   "--output-format=terse", *[f"--filename={p}" for p in paths[:1]]],
                                  capture_output=True, text=True)
            print(f"  fio (one file, for reference): {done.stdout.split(';')[6]} KB/s" if done.returncode == 0
                  else "  fio failed")
        else:
            print("  fio: not installed (apt-get install fio), skipped")


if __name__ == "__main__":
    main()
