"""The Hadoop command line (`hadoop fs`, `hadoop distcp`, `hadoop jar`): the cluster's own, or the lab's jars."""
from __future__ import annotations

import re
import shutil
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

# what `hadoop <sub>` runs, for the lab where there is no `hadoop` script, only jars
MAIN_CLASSES = {"fs": "org.apache.hadoop.fs.FsShell", "distcp": "org.apache.hadoop.tools.DistCp",
                "jar": "org.apache.hadoop.util.RunJar",
                "testdfsio": "org.apache.hadoop.fs.TestDFSIO"}  # in the jobclient tests jar


class HadoopCli:
    def __init__(self, profile: Profile):
        self.profile = profile

    def command(self, sub: str, *args: str) -> list[str]:
        if self.profile.uses_lab:
            from perfkit.lab import tools
            from perfkit.paths import lab_home

            java = tools.java_home() / "bin" / "java"
            from perfkit.lab.alluxio_dist import alluxio_client_jar

            classpath = f"{lab_home() / 'hadoop-conf'}:{tools.hadoop_lib()}/*:{alluxio_client_jar()}"
            return [str(java), "-Xmx512m", "-Dhadoop.root.logger=WARN,stderr", "-cp", classpath,
                    MAIN_CLASSES[sub], *args]
        hadoop = shutil.which("hadoop")
        if not hadoop:
            raise PerfkitError("the `hadoop` command is not on PATH: run on a cluster node, or use the lab profile")
        return [hadoop, sub, *args]

    def run(self, sub: str, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
        """Run; when it fails, raise PerfkitError with one line: e.g. `hadoop fs -put failed (exit 1): <cause>`."""
        what = f"hadoop fs {args[0]}" if sub == "fs" and args else f"hadoop {sub}"
        return run_tool(self.command(sub, *args), what=what, timeout=timeout)

def gohdfs(profile: Profile) -> tuple[str, dict]:
    """The gohdfs binary and its environment: HADOOP_NAMENODE for the lab, the cluster's config otherwise."""
    env = {"HADOOP_USER_NAME": profile.hdfs_user}
    if profile.uses_lab:
        from perfkit.lab import tools

        return str(tools.gohdfs()), {**env, "HADOOP_NAMENODE": profile.hdfs_uri.split("://", 1)[1]}
    found = shutil.which("gohdfs")
    if not found:
        raise PerfkitError("gohdfs is not on PATH: go install github.com/colinmarc/hdfs/v2/cmd/hdfs@v2.4.0 "
                           "and put it on PATH as gohdfs")
    return found, env


def gohdfs_unavailable(profile: Profile) -> str | None:
    try:
        gohdfs(profile)
    except PerfkitError as err:
        return str(err)
    return None
