"""The Hadoop command line (`hadoop fs`, `hadoop distcp`, `hadoop jar`): the cluster's own, or the lab's jars."""
from __future__ import annotations

import shutil
import subprocess

from perfkit.config import Profile
from perfkit.errors import PerfkitError

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
            classpath = f"{lab_home() / 'hadoop-conf'}:{tools.hadoop_lib()}/*"
            return [str(java), "-Xmx512m", "-Dhadoop.root.logger=WARN,stderr", "-cp", classpath,
                    MAIN_CLASSES[sub], *args]
        hadoop = shutil.which("hadoop")
        if not hadoop:
            raise PerfkitError("the `hadoop` command is not on PATH: run on a cluster node, or use the lab profile")
        return [hadoop, sub, *args]

    def run(self, sub: str, *args: str, timeout: float | None = None) -> subprocess.CompletedProcess:
        """Run and raise PerfkitError with the tool's own last lines when it fails."""
        argv = self.command(sub, *args)
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-6:])
            raise PerfkitError(f"`hadoop {sub} {' '.join(args)[:200]}` failed (exit {done.returncode}):\n{tail}")
        return done


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
