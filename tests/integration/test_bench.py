"""Every bench/ script that needs the lab, in its --quick mode (issue 69): it runs to the end and prints its figures in
the shape it always has, line by line. The figures themselves are not checked (a quick run's say nothing about
perfkit's speed): what fails here is an API change that breaks a script, as `ServerSources` once broke
query_overhead. bench/cloudwatch_calls.py needs no lab: tests/aws/test_bench_cloudwatch_calls.py."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # scripts are named by their path in the repository: bench/...
# a guard against a hung script (it fails its test, not CI's whole job), not a timing: a quick run takes under a minute
HUNG_S = 900
NUM = r"(?:-?\d[\d,]*(?:\.\d+)?|nan|-?inf)"  # one figure, whatever its value
CI = rf"\[{NUM}-{NUM}\]"
CI95 = rf"\[95% CI {NUM}-{NUM}\]"
VERDICT = r"(?:met|not met|not decided: the interval spans the target|too few rounds to judge \(need \d+\))"


def quick(script: str, *args: str) -> list[str]:
    """`python SCRIPT --quick ARGS` (SCRIPT: bench/NAME.py) on this worker's lab (its environment names the lab's ports
    and home): the lines it printed, after checking that it exited 0 (else its output and the end of its log are the
    message)."""
    done = subprocess.run([sys.executable, str(ROOT / script), "--quick", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=HUNG_S)
    code = done.returncode
    assert code == 0, f"{script} --quick {' '.join(args)} exited {code}\n{done.stdout}\n{done.stderr[-6000:]}"
    return done.stdout.splitlines()


def assert_shape(lines: list[str], patterns: list[str]) -> None:
    """As many lines as patterns, each line matched whole by its pattern: the labels, names and counts the script
    prints, with a figure wherever one goes."""
    shown = "\n".join(lines)
    assert len(lines) == len(patterns), f"{len(lines)} lines, {len(patterns)} expected:\n{shown}"
    for line, pattern in zip(lines, patterns):
        assert re.fullmatch(pattern, line), f"line {line!r}\ndoes not match {pattern!r}; the output:\n{shown}"


def header(pattern: str, lines: list[str]) -> re.Match:
    assert lines and (match := re.fullmatch(pattern, lines[0])), f"no header {pattern!r}:\n" + "\n".join(lines)
    return match


@pytest.mark.parametrize("engine, name", [("spark", "Spark"), ("trino", "Trino")])
def test_query_overhead_quick_compares_the_three_paths_on_every_storage(profile, engine, name):
    lines = quick("bench/query_overhead.py", "--engine", engine)
    top = header(rf"query_overhead: (\d+) queries per round \((\d+) queries x (\d+) storages\), (\d+) rounds, "
                 rf"\d+ rows in \d+ files, {name} .+, S3 behind .+; the storages' and the engine's counters read \d+ "
                 rf"times first \(\d+ sources, \d+ s\), as a long-running cluster's daemons have been", lines)
    work, queries, storages, rounds = map(int, top.groups())
    assert work == queries * storages and storages >= 2 and rounds >= 1
    runs = f" {NUM}" * rounds
    assert_shape(lines, [
        top.re.pattern,
        *(rf"  {re.escape(f'{path:<8}')} per round \(s\):{runs}" for path in ("bare", "perfkit", "perfkit+io")),
        rf"  median per round: bare .+ {NUM} s, perfkit runner {NUM} s, with I/O accounting {NUM} s",
        rf"  ratio accounting on / off, median of the rounds' ratios: {NUM} {CI95} \(target <= 1.03: {VERDICT}\)",
        rf"  ratio accounting on / bare, median of the rounds' ratios: {NUM} {CI95} \(target <= 1.05: {VERDICT}\)",
        rf"  ratio off / bare, median of the rounds' ratios: {NUM} {CI95}",
        rf"  the same, median of the {rounds * work} runs' paired ratios: accounting on / off {NUM} {CI}, "
        rf"accounting on / bare {NUM} {CI}, off / bare {NUM} {CI}",
        rf"  from perfkit's own time, the engines' noise left out: accounting on / off {NUM} {CI95} "
        rf"\(target <= 1.03: {VERDICT}\)",
        rf"  from perfkit's own time, the engines' noise left out: accounting on / the engine's calls alone {NUM} "
        rf"{CI95} \(target <= 1.05: {VERDICT}\)",
        rf"  the engine's calls alone, accounting on / off: {NUM} {CI95}: (?:not )?slower with accounting beyond "
        r"noise(?:: the two ratios above leave that out|, as the two ratios above take them to be)",
        *(rf"  {re.escape(path)}'s own time per run \(outside the engine's call\): median {NUM} ms, mean {NUM} ms = "
          rf"{NUM}% of the median bare query \({NUM} ms\)" for path in ("perfkit", "perfkit+io")),
        *[rf"  on [\w-]+: median bare query {NUM} ms; accounting on / off, median of the paired runs, {NUM} {CI}, the "
          rf"queries alone \(wall_s\) {NUM} {CI}; own time per run off {NUM} ms, accounting on {NUM} ms"] * storages,
        rf"  ratio of the times perfkit records \(wall_s, per round\) / bare: {NUM} \(1 = no bias in the figures\)",
        rf"  the queries' recorded times \(wall_s\) / bare, median of the paired runs: off {NUM} {CI}, accounting on "
        rf"{NUM} {CI}",
    ])
    on = [line.split(":")[0].split()[1] for line in lines if line.startswith("  on ")]
    assert len(set(on)) == storages  # each storage once


def test_transfer_quick_copies_with_every_method(profile):
    lines = quick("bench/transfer.py")
    assert_shape(lines, [
        rf"transfer: \d+ files, {NUM} MB, s3 -> hdfs, verified",
        *(rf"  {re.escape(f'{method:<8}')} concurrency +\d+: +{NUM} s +{NUM} MB/s"
          for method in ("hdfs-cp", "distcp", "stream")),
        rf"  stream / sequential hadoop fs -cp: {NUM}x \(target >= 1.5\)",
        rf"  stream / DistCp: +{NUM}x \(target >= 1.0\)",
    ])


def test_read_quick_reads_with_dd_and_perfkit_at_each_jobs_level_and_cache(profile):
    # a cold cache needs /proc/sys/vm/drop_caches (root, a writable /proc/sys): the script stops without it
    caches = ["warm", "cold"] if os.access("/proc/sys/vm/drop_caches", os.W_OK) else ["warm"]
    lines = quick("bench/read.py", *([] if len(caches) == 2 else ["--cache", "warm"]))
    row = rf"  +(\d+)  (warm |cold )  +{NUM}  +{NUM}  +{NUM}  {NUM}-{NUM}  +{NUM}-{NUM}"  # jobs, cache, figures
    assert_shape(lines, [
        rf"read: \d+ files x \d+ MB on local disk \(warm: read \d+ times over\), \d+ rounds, {NUM} MiB per read for "
        r"both; MB/s = bytes / \(last job end - first job start\)",
        r"  jobs  cache   dd MB/s  perfkit MB/s  perfkit/dd  95% CI +rounds' range +\(target perfkit/dd >= 0.95\)",
        *[row] * (len(lines) - 3),
        r"  fio \(one file, for reference\): \d+ KB/s|  fio failed|"
        r"  fio: not installed \(apt-get install fio\), skipped",
    ])
    rows = [re.fullmatch(row, line) for line in lines[2:-1]]
    levels = sorted({int(row[1]) for row in rows})
    assert len(levels) >= 2, "one job and more"
    assert [(int(row[1]), row[2].strip()) for row in rows] == [(j, cache) for j in levels for cache in caches]


def test_datagen_quick_places_both_datasets_against_the_plain_generator(profile):
    lines = quick("bench/datagen.py")
    top = header(r"datagen: tpch, hibench, orc, (\d+) round\(s\) after \d+ unmeasured plain pass\(es\); plain = the "
                 r"generator to local disk; perfkit = place_generated \(copy\) on hdfs \+ s3 with verify, under "
                 r"perfkit-bench/datagen-[0-9a-f]{12}", lines)
    rounds = int(top[1])
    assert rounds >= 1
    assert_shape(lines, [
        top.re.pattern,
        *(rf"  {dataset}-\S+ round {r + 1} \((?:plain first, perfkit|perfkit first, plain) second\): plain {NUM} s; "
          rf"perfkit {NUM} s = generate hdfs {NUM} s \+ copy to s3 {NUM} s \+ verify {NUM} s \+ markers {NUM} s"
          for dataset in ("tpch", "hibench") for r in range(rounds)),
        r"  dataset +scale +rows +MB +plain rows/s +MB/s +perfkit rows/s +MB/s +ratio  target >= 0.5",
        *(rf"  {dataset} +\S+ +\d+ +{NUM} +{NUM} +{NUM} +{NUM} +{NUM} +{NUM}  (?:yes|no)"
          for dataset in ("tpch", "hibench")),
        *(rf"  {dataset}: {engine} .+; MB = the local copy's data files \(one placed copy: {NUM} MB\); ratio = plain "
          r"seconds / perfkit seconds \(same rows\)" for dataset, engine in (("tpch", "Trino"), ("hibench", "Spark"))),
    ])


def test_power_quick_plants_a_slowdown_and_judges_it_with_perfkit_s_rules(profile, tmp_path):
    # compare's two runs as it meets them (one arm after the other), judged at two noise factors; the trials kept
    kept = tmp_path / "trials"
    lines = quick("bench/power.py", "--sizes", "make-report", "defaults", "--design", "sequential",
                  "--compare-factors", "1.10", "1.05", "--keep", str(kept))
    top = header(r"power: a planted slowdown of S3 \(\+10% of each query's time, Toxiproxy latency\) against none, "
                 r"(\d+) planted and (\d+) null trials per size in random order; Trino .+, S3 behind .+; each trial "
                 r"one perfkit run of two arms over the same S3 files, one arm's runs after the other's \(as "
                 r"compare's two runs\), the first drawn per trial \(seed \d+\)",
                 lines)
    planted, null = map(int, top.groups())
    assert planted == null >= 1
    queries = {}
    for size in ("make-report", "defaults"):  # each size's queries, as its first line names them
        found = next((re.match(rf"  {size} \(([^;]+);", line) for line in lines if line.startswith(f"  {size} (")),
                     None)
        assert found, f"no line for {size}:\n" + "\n".join(lines)
        queries[size] = found[1].split(", ")
    assert queries["make-report"] == ["q1"] and len(queries["defaults"]) > 1  # the report's q1; the notebook's all
    query = r"q\d+"
    fit = rf"{query} {NUM} s at the base, {NUM} ms per added ms"
    delay = rf"{query} {NUM}-{NUM} ms"  # a tenth of a ms: each run gets whole ms around it (dithered)
    each = rf"{query} {NUM}"
    drift = rf"{query} {NUM}-{NUM} \(SD of log {NUM}\)"
    rate = rf"\d+/\d+ \(95% CI {NUM}-{NUM}\)"
    rules = [r"report rule as the report reads it \(paired by round; Bonferroni family 95% over the report's \d+ "
             rf"verdicts at this size, each at {NUM}%\)",
             r"report rule, each query at 95% \(no family correction\)",
             r"unpaired rule \(median b / median a, bootstrap; Bonferroni over \d+\)",
             r"compare rule \(ratio outside 1.10x and Mann-Whitney p < 0.05\)",
             r"compare rule \(ratio outside 1.05x and Mann-Whitney p < 0.05\)"]
    sizes = ("make-report", "defaults")
    assert_shape(lines, [
        top.re.pattern,
        *(pattern for size in sizes for pattern in [
            rf"  {size} \({', '.join(queries[size])}; {NUM} rows in \d+ files, runs=\d+, warmup=\d+\): calibrated "
            rf"{fit}(?:; {fit}){{{len(queries[size]) - 1}}}; planted delay per trial \(following the base time\) "
            rf"{delay}(?:, {delay}){{{len(queries[size]) - 1}}}",
            rf"  {size}: data placed in {NUM} s, calibration {NUM} s, {planted + null} trials in {NUM} s \({NUM} s a "
            r"trial\), \d+ failed runs"]),
        *(pattern for size in sizes for pattern in [
            rf"  {size}, \d+ rounds: median b / median a over all runs, planted trials {each}(?:, {each})*; null "
            rf"trials {each}(?:, {each})*; null trials one by one (?:{drift}(?:, {drift})*|-); the smallest change the "
            r"report rule sees 9 times in 10, predicted from "
            rf"each null trial's rounds: (?:median {NUM}% \(range {NUM}-{NUM}%\)|not measured \(too few rounds to "
            r"pair\))",
            *(rf"  {size}, \d+ rounds, {rule}: power {rate} at its weakest query {query} \({query} \d+(?:, {query} "
              rf"\d+)* of {planted}\), false alarms {rate} \[goal >= 18/20, <= 1/20: (?:met|not met: (?:power|"
              r"false alarms|power, false alarms))\]" for rule in rules)]),
    ])
    # the kept trials judged again, running nothing: the same figures
    again = subprocess.run([sys.executable, str(ROOT / "bench/power.py"), "--judge", str(kept), "--compare-factors",
                            "1.10", "1.05"], cwd=ROOT, capture_output=True, text=True, timeout=HUNG_S)
    assert again.returncode == 0 and again.stdout.splitlines() == lines, again.stderr[-3000:]


def test_scale_model_quick_fits_small_sizes_and_predicts_the_cells_it_never_saw(profile, tmp_path):
    kept = tmp_path / "runs"
    lines = quick("bench/scale_model.py", "--keep", str(kept))
    top = header(r"scale model: fitted on ([\d,]+), ([\d,]+) rows behind onprem-10gbe, ec2-s3 \((\d+) runs, (\d+) "
                 r"without counters\); predicted ([\d,]+) rows behind every network and every size behind far; trino; "
                 r"\d+ files a size; seed 71", lines)
    small, middle, fitted_runs, without, largest = (int(g.replace(",", "")) for g in top.groups())
    assert small < middle < largest and fitted_runs > 0 and without == 0  # the lab counts every run's I/O
    # the predicted cells: the largest size behind all three networks, the two smaller ones behind `far`
    networks = ["onprem-10gbe", "ec2-s3", "far"]
    cells = [(largest, "onprem-10gbe"), (largest, "ec2-s3"), (largest, "far"), (small, "far"), (middle, "far")]
    cells.sort(key=lambda c: (c[0], networks.index(c[1])))
    regime = r"(?:latency-bound|bandwidth-bound|no S3 network terms)"
    verdict = r"(?:S3 slower|S3 faster|no different)"
    per_cell = [
        pattern for rows, network in cells for query in ("q1", "scan") for pattern in [
            *(rf"  {rows:,} rows, {network}, trino {query} on {storage}: predicted {NUM} s \(95% PI {NUM}-{NUM}\), "
              rf"measured {NUM} s \(median of \d+\), error [+-]\d+%, {regime}" for storage in ("hdfs", "s3")),
            rf"  {rows:,} rows, {network}, trino {query}: verdict predicted {verdict}, measured {verdict}"]]
    term = rf"{NUM} \(95% CI {NUM}-{NUM}\)"
    assert_shape(lines, [
        top.re.pattern,
        rf"  trino: u {NUM} ms a request \(95% CI {NUM}-{NUM}\), rt {term}, bw {term}; fitted over {middle:,} rows "
        r"at most",
        *per_cell,
        r"  median \|error\| per engine and query: trino q1 \d+%, trino scan \d+% \[goal <= 15%: (?:met|not met)\]",
        r"  verdicts right: \d+/10 \(\d+%\) \[goal >= 90%: (?:met|not met)\]",
        rf"  cells: 9 in {NUM} s \({small:,} rows {NUM} s a cell, {middle:,} rows {NUM} s a cell, {largest:,} rows "
        rf"{NUM} s a cell\)",
    ])
    # the path to S3 calibrated from here, as on a cluster's node; perfkit decide fits on the kept runs and answers for
    # a cluster of 1 TB on that path
    calibration = tmp_path / "calibration.json"
    calibrated = subprocess.run([sys.executable, "-m", "perfkit", "calibrate", "--save", str(calibration)], cwd=ROOT,
                                capture_output=True, text=True, timeout=HUNG_S)
    assert calibrated.returncode == 0 and f"saved: {calibration}" in calibrated.stdout, calibrated.stderr[-3000:]
    decided = subprocess.run([sys.executable, "-m", "perfkit", "decide", str(kept), "--data-gb", "1000",
                              "--calibration", str(calibration), "--copy-mb-s", "300"], cwd=ROOT, capture_output=True,
                             text=True, timeout=HUNG_S)
    assert decided.returncode == 0, decided.stderr[-3000:]
    said = decided.stdout.splitlines()
    assert [line.split(":")[0] for line in said[:2]] == ["trino q1", "trino scan"], decided.stdout
    assert all(re.search(r"S3 .* \(95% PI .*\), HDFS .*; S3 (?:latency|bandwidth)-bound", line) for line in said[:2])
    assert said[2].startswith("A month on S3 Standard: $") and said[3].startswith("A month on HDFS on EBS st1")
    assert re.match(r"inputs: data 1 TB one copy \(given\); round trip [\d.]+ ms \(calibrated on profile lab at ",
                    said[4]), said[4]
