"""The Hadoop command line (`hadoop fs`, `hadoop distcp`, `hadoop jar`), as the profile's provider runs it."""
from __future__ import annotations

import re
import subprocess

from perfkit.config import Profile
from perfkit.errors import PerfkitError, root_cause

# a log4j line of the Hadoop tools: "2024-05-01 10:00:00,123 WARN fs.FileSystem: ..."
_LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d[ T][\d:,.]+ +(TRACE|DEBUG|INFO|WARN|ERROR|FATAL) +")


def tool_cause(output: str) -> str:
    """The reason a tool failed, in one line, from its whole output: the last lines of a Java trace
    are stack frames (the cause sits above them), and the log lines ahead of it are not the reason."""
    lines = output.strip().splitlines()
    plain = [line for line in lines if not _LOG_LINE.match(line)]
    if any(line.strip() for line in plain):
        return root_cause("\n".join(plain))
    logged = [line for line in lines if _LOG_LINE.match(line).group(1) in ("ERROR", "FATAL")] or lines
    return root_cause(_LOG_LINE.sub("", logged[-1]) if logged else "")


def run_tool(argv: list[str], env: dict | None = None, what: str = "",
             timeout: float | None = None) -> subprocess.CompletedProcess:
    """Run a tool; when it fails, raise one line: what failed and why."""
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    if done.returncode != 0:
        why = tool_cause(done.stderr or done.stdout)
        raise PerfkitError(f"{what or argv[0]} failed (exit {done.returncode}): {why}")
    return done

class HadoopCli:
    def __init__(self, profile: Profile):
        self.profile = profile

    def command(self, sub: str, *args: str) -> list[str]:
        """`hadoop SUB ARGS` as the profile's provider runs it (the cluster's script, or the lab's jars)."""
        return self.profile.provider.hadoop_command(sub, *args)

    def run(self, sub: str, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
        """Run; when it fails, raise PerfkitError with one line: e.g. `hadoop fs -put failed (exit 1): <cause>`."""
        what = f"hadoop fs {args[0]}" if sub == "fs" and args else f"hadoop {sub}"
        return run_tool(self.command(sub, *args), what=what, timeout=timeout)

def gohdfs(profile: Profile) -> tuple[str, dict]:
    """The gohdfs binary and its environment, from the profile's provider."""
    return profile.provider.gohdfs(profile)


def gohdfs_unavailable(profile: Profile) -> str | None:
    try:
        gohdfs(profile)
    except PerfkitError as err:
        return str(err)
    return None
