"""bench/cloudwatch_calls.py in its --quick mode (issue 69): it starts its own moto server on loopback, so it needs no
lab and runs with the AWS tests. It runs to the end and prints its counts in the shape it always has; the counts
themselves are not checked (tests/aws/test_cloudwatch.py checks perfkit's calls). The bench scripts that need the lab:
tests/integration/test_bench.py."""
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "cloudwatch_calls.py"
HUNG_S = 300  # a guard against a hung script, not a timing: the quick run takes seconds


def test_cloudwatch_calls_quick_counts_both_ways_of_fetching():
    done = subprocess.run([sys.executable, str(SCRIPT), "--quick"], cwd=SCRIPT.parents[1], capture_output=True,
                          text=True, timeout=HUNG_S)
    code = done.returncode
    assert code == 0, f"exited {code}\n{done.stdout}\n{done.stderr[-6000:]}"
    lines = done.stdout.splitlines()
    patterns = [
        r"cloudwatch_calls: \d+ volumes x 4 metrics, one day at \d+ s",
        r"  perfkit \(GetMetricData, batched\): +\d+ calls",
        r"  one call per metric and volume \(GetMetricStatistics\): \d+ calls",
        r"  ratio: \d[\d,]*x fewer calls",
    ]
    assert len(lines) == len(patterns), done.stdout
    for line, pattern in zip(lines, patterns):
        assert re.fullmatch(pattern, line), f"line {line!r}\ndoes not match {pattern!r}; the output:\n{done.stdout}"
