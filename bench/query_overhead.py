"""perfkit's query runner against the bare client: same session, same tables, one process.

    python bench/query_overhead.py [--engine spark|trino] [--rows 1000000 --files 8 --rounds 9 --queries q1 q4]
                                   [--quick]

--quick (what `make test` runs, tests/integration/test_bench.py) goes through every step on the fewest queries, rows
and rounds that do: q1 on 10,000 rows in 2 files, 1 warm-up pass, 3 rounds (the fewest with an interval), the
counters read twice first; its figures say nothing, only that the script still runs. Any size given besides it wins.

The bare path is `spark.sql(q).collect()` for spark, a plain `trino` DB-API cursor fetching all rows
(execute + fetchall on the same connection) for trino.

Three paths: the bare client, perfkit's runner with I/O accounting off, and with it on (the storages' counters
and the engine's read before and after every run: perfkit.accounting). Each round runs the taxi suite on both
storages once through each path, each query through the three paths back to back in an order that goes through all
six from query to query and round to round: drift (the JVM still warming, the machine's load) hits all alike, within
seconds, and no path always follows the same other. The storages' and the engine's counters are first read
--warm-reads times (their daemons' JIT, warm on a cluster whose monitoring polls them), then the warm-up passes go
through all three paths. Prints the
per-round totals and the medians of the per-round ratios: accounting on / off (target <= 1.03) and perfkit with
accounting / bare (target <= 1.05), each with its 95% bootstrap interval and whether the target is met beyond the
rounds' noise, and the same ratios as medians of each query's paired runs; the time a run spends in perfkit outside
the engine's call, in all and by storage (a snapshot costs about the same whatever the query: short queries pay the
larger share); the same two ratios from that own time, each round's engine calls on both sides (the engines' noise,
+-5% between paths on a 2-core machine, then cancels), with a check that accounting leaves the engine's calls alone;
and the times the runs record (wall_s) against bare, which says whether the runner biases its figures. Needs the lab
up; its first line names the S3 network the lab ran behind.
"""
from __future__ import annotations

import argparse
import functools
import itertools
import statistics
import tempfile
import time

from perfkit import stats
from perfkit.accounting.sources import ServerSources
from perfkit.config import load_profile
from perfkit.engines import get_engine
from perfkit.experiments.hdfs_vs_s3_queries import QueryComparison
from perfkit.protocol import Step
from perfkit.results import ResultSet


def _bare_trino(engine, sql: str) -> list:
    cursor = engine.conn.cursor()  # the trino client's own DB-API cursor, on perfkit's connection
    cursor.execute(sql)
    rows = cursor.fetchall()
    cursor.close()
    return rows


BARE = {"spark": lambda engine, sql: engine.spark.sql(sql).collect(), "trino": _bare_trino}
NAMES = {"perfkit+io": "accounting on", "perfkit": "off", "bare": "bare"}
RATIOS = (("perfkit+io", "perfkit", 1.03), ("perfkit+io", "bare", 1.05), ("perfkit", "bare", None))  # with targets
BARE_NAMES = {"spark": "spark.sql().collect()", "trino": "trino cursor execute+fetchall"}
# --quick: every step on one query and the fewest rows and rounds (3: the fewest that give the ratios an interval)
QUICK = {"queries": ["q1"], "rows": 10_000, "files": 2, "rounds": 3, "warmup": 1, "warm_reads": 2}


def _time_the_engine_calls(engine) -> list[float]:
    """engine.execute timed: a one-item list that holds the seconds spent in it so far."""
    spent, execute = [0.0], engine.execute

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return execute(*args, **kwargs)
        finally:
            spent[0] += time.perf_counter() - t0

    engine.execute = timed
    return spent


def _warm_the_counters(sources: ServerSources, engine, storages: list[str], reads: int) -> int:
    """Each storage's counters and the engine's read `reads` times: a daemon's JMX servlet answers twice as slowly until
    its JVM has compiled that path (a DataNode's bean: 3.0 ms at first, 1.6 ms after 2,000 reads, on an idle lab). A
    cluster's daemons, polled by its monitoring for days, answer at their warm speed; the lab's are minutes old. Each
    read waits as a run's does (a metrics period after the last), so the servers refresh what they show each time."""
    readers = [source.read for source in sources.read]
    counts = getattr(engine, "io_counters", None)
    readers += [functools.partial(counts, storage=where) for where in storages] if counts else []
    for _ in range(reads):
        for read in readers:
            read()
    return len(readers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="lab")
    parser.add_argument("--engine", choices=sorted(BARE), default="spark")
    parser.add_argument("--queries", nargs="+", default=None, help="the taxi suite's query ids (default: all)")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured passes first (JIT, caches)")
    parser.add_argument("--warm-reads", type=int, default=1500,
                        help="reads of the storages' and the engine's counters before the warm-up passes (their JIT)")
    parser.add_argument("--quick", action="store_true", help=f"the smallest sizes that run every step: {QUICK}")
    args = parser.parse_args()
    if args.quick:  # the quick sizes as defaults: a size given on the command line still wins
        parser.set_defaults(**QUICK)
        args = parser.parse_args()

    cmp = QueryComparison(load_profile(args.profile), engines=[args.engine], queries=args.queries,
                          rows=args.rows, files=args.files)
    placed = cmp.prepare()  # the taxi files as one table on each storage
    totals: dict[str, list[float]] = {"bare": [], "perfkit": [], "perfkit+io": []}
    with tempfile.TemporaryDirectory() as scratch, get_engine(args.engine, cmp.profile) as engine:
        tables = cmp.register_tables(engine, placed)
        cmp.watch_storages(placed)  # perfkit's runner probes the storages around each run, as in a real run
        results = ResultSet("bench_query_overhead", folder=scratch)
        work = [(q, s) for q in cmp.suite_queries for s in cmp.storages]
        paths = list(totals)
        # every order of the three paths in turn: each path runs first, second and third, and after each other path,
        # equally often (a rotation alone always ran "off" after "bare" and "on" after "off", and a run can be slowed
        # or sped by the one just before it)
        orders = list(itertools.permutations(paths))

        def run(path: str, query, where: str, step: Step, into: ResultSet) -> None:
            cmp.accounting = path == "perfkit+io"
            if path == "bare":
                BARE[args.engine](engine, query.for_tables(tables[where], engine.name))
            else:
                cmp.measure(into, engine, query, step, tables[where])

        # warm the servers' side of the snapshots (JMX, metrics resources), which a lab just started runs slowly at
        # first, then the session, the JIT and the caches through every path
        started = time.perf_counter()
        sources = _warm_the_counters(cmp.io_sources, engine, cmp.storages, args.warm_reads)
        warmed = (f"the storages' and the engine's counters read {args.warm_reads} times first ({sources} sources, "
                  f"{time.perf_counter() - started:.0f} s), as a long-running cluster's daemons have been"
                  if args.warm_reads else "the storages' and the engine's counters not read first (--warm-reads 0)")
        warmup = ResultSet("bench_query_overhead_warmup", folder=scratch)
        for round_ in range(args.warmup):
            for query, where in work:
                for path in paths:
                    run(path, query, where, Step("warmup", round_, where), warmup)
        in_engine = _time_the_engine_calls(engine)  # what is left of a run is perfkit's own time
        own: dict[str, list[float]] = {"perfkit": [], "perfkit+io": []}
        recorded_runs: dict[str, list[float]] = {"perfkit": [], "perfkit+io": []}  # each run's wall_s, by path
        per_run: dict[str, list[float]] = {path: [] for path in totals}  # each query's time, by path, same order
        for round_ in range(args.rounds):
            for path in paths:
                totals[path].append(0.0)
            for i, (query, where) in enumerate(work):
                for path in orders[(round_ + i) % len(orders)]:  # each query and storage: all six in six rounds
                    engine_s, t0 = in_engine[0], time.perf_counter()
                    run(path, query, where, Step("measured", round_, where), results)
                    took = time.perf_counter() - t0
                    totals[path][-1] += took
                    per_run[path].append(took)
                    if path != "bare":
                        own[path].append(took - (in_engine[0] - engine_s))
                        recorded_runs[path].append(results.records[-1].wall_s)
        failed = results.failures + warmup.failures
        assert not failed, [r.error for r in failed]

    network = cmp.profile.provider.network()
    print(f"query_overhead: {len(work)} queries per round "
          f"({len(cmp.suite_queries)} queries x {len(cmp.storages)} storages), "
          f"{args.rounds} rounds, {args.rows} rows in {args.files} files, {engine.versions()[args.engine]}, S3 behind "
          f"{network.describe() if network else 'its real distance'}; {warmed}")
    for path, values in totals.items():
        print(f"  {path:<8} per round (s): " + " ".join(f"{v:.3f}" for v in values))
    bare, kit, io = (statistics.median(totals[path]) for path in ("bare", "perfkit", "perfkit+io"))
    print(f"  median per round: bare {BARE_NAMES[args.engine]} {bare:.3f} s, perfkit runner {kit:.3f} s, "
          f"with I/O accounting {io:.3f} s")
    # each ratio with its 95% bootstrap interval (the rounds resampled): whether it is within its target beyond the
    # rounds' own noise
    for a, b, target in RATIOS:
        ratio, low, high = stats.paired_ratio_ci(totals[a], totals[b])
        goal = f" (target <= {target}: {stats.against_target(low, high, target)})" if target else ""
        print(f"  ratio {NAMES[a]} / {NAMES[b]}, median of the rounds' ratios: {ratio:.3f} "
              f"[95% CI {low:.3f}-{high:.3f}]{goal}")
    # the same ratios run by run: each query's three paths ran back to back, so each run has its own pair; the median
    # of many pairs is less moved by a slow query than a round's total is
    paired = {f"{NAMES[a]} / {NAMES[b]}": stats.paired_ratio_ci(per_run[a], per_run[b]) for a, b, _ in RATIOS}
    print(f"  the same, median of the {len(per_run['bare'])} runs' paired ratios: "
          + ", ".join(f"{name} {r:.3f} [{low:.3f}-{high:.3f}]" for name, (r, low, high) in paired.items()))
    # the same ratios without the engines' noise: each round's engine calls on the accounting path, with perfkit's own
    # time of that path against the off path's (or none: the engine's calls alone). Nothing of the accounting runs
    # during an engine's call (its reads are before the clock starts and after it stops), which the last ratio checks
    per_round = len(work)
    own_round = {path: [sum(values[r * per_round:(r + 1) * per_round]) for r in range(args.rounds)]
                 for path, values in own.items()}
    engine_round = {path: [total - mine for total, mine in zip(totals[path], own_round[path])] for path in own_round}
    with_io, engine_io = totals["perfkit+io"], engine_round["perfkit+io"]
    by_own_time = (
        ("accounting on / off", [e + o for e, o in zip(engine_io, own_round["perfkit"])], 1.03),
        ("accounting on / the engine's calls alone", engine_io, 1.05),
    )
    for name, without, target in by_own_time:
        ratio, low, high = stats.paired_ratio_ci(with_io, without)
        print(f"  from perfkit's own time, the engines' noise left out: {name} {ratio:.3f} "
              f"[95% CI {low:.3f}-{high:.3f}] (target <= {target}: {stats.against_target(low, high, target)})")
    ratio, low, high = stats.paired_ratio_ci(engine_io, engine_round["perfkit"])
    slowed = ("slower with accounting beyond noise: the two ratios above leave that out" if low > 1 else
              "not slower with accounting beyond noise, as the two ratios above take them to be")
    print(f"  the engine's calls alone, accounting on / off: {ratio:.3f} [95% CI {low:.3f}-{high:.3f}]: {slowed}")
    # the same overhead without the queries' own noise (+-20% run to run here): the time a run spends in perfkit
    # outside the engine's call (probes, snapshots, checks, the record), against the bare query's time
    query_s = statistics.median(per_run["bare"])
    for path, values in own.items():
        print(f"  {path}'s own time per run (outside the engine's call): "
              f"median {1000 * statistics.median(values):.1f} ms,"
              f" mean {1000 * statistics.mean(values):.1f} ms = {statistics.mean(values) / query_s:.1%} of the median "
              f"bare query ({1000 * query_s:.0f} ms)")
    # by storage: a run's snapshots cost about the same whatever the query, so the storage whose queries are short
    # pays the larger share
    storage_of_run = [where for _ in range(args.rounds) for _, where in work]  # per_run's order, every path alike
    for where in cmp.storages:
        mine = [j for j, storage in enumerate(storage_of_run) if storage == where]
        on, off = ([per_run[path][j] for j in mine] for path in ("perfkit+io", "perfkit"))
        ratio, low, high = stats.paired_ratio_ci(on, off)
        own_ms = {NAMES[path]: 1000 * statistics.median(values[j] for j in mine) for path, values in own.items()}
        # the queries alone (wall_s): whether the snapshots around a run slow the engine's call on this storage
        queries = stats.paired_ratio_ci(*([recorded_runs[path][j] for j in mine] for path in ("perfkit+io", "perfkit")))
        print(f"  on {where}: median bare query {1000 * statistics.median(per_run['bare'][j] for j in mine):.0f} ms; "
              f"accounting on / off, median of the paired runs, {ratio:.3f} [{low:.3f}-{high:.3f}], the queries alone "
              f"(wall_s) {queries[0]:.3f} [{queries[1]:.3f}-{queries[2]:.3f}]; own time per run "
              + ", ".join(f"{name} {ms:.1f} ms" for name, ms in own_ms.items()))
    # what the runs record (wall_s: the query alone, snapshots and probes outside it), per round, against bare
    recorded = [sum(r.wall_s for r in results.records if r.iteration == round_) / 2 for round_ in range(args.rounds)]
    print(f"  ratio of the times perfkit records (wall_s, per round) / bare: "
          f"{statistics.median(k / b for k, b in zip(recorded, totals['bare'])):.3f} (1 = no bias in the figures)")
    # the same by path, run by run: whether the snapshots around a run slow the query itself (the engine's time)
    split = {path: stats.paired_ratio_ci(values, per_run["bare"]) for path, values in recorded_runs.items()}
    print("  the queries' recorded times (wall_s) / bare, median of the paired runs: "
          + ", ".join(f"{NAMES[path]} {r:.3f} [{low:.3f}-{high:.3f}]" for path, (r, low, high) in split.items()))


if __name__ == "__main__":
    main()
