"""perfkit's Spark plugin (java/IoStatsPlugin.java): the executors' storage counters, for per-run I/O where the
executors are JVMs of their own (YARN). Built once per Spark with the JDK's javac against that Spark's own jars, so
the same source serves the lab's Spark and a cluster's (Scala 2.12 or 2.13: it uses only Spark's Java plugin API)."""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import zipfile
from pathlib import Path

from perfkit.engines.spark_install import spark_home
from perfkit.errors import PerfkitError
from perfkit.locks import fetched_once
from perfkit.paths import tool_cache

SOURCE = Path(__file__).with_name("java") / "IoStatsPlugin.java"
PLUGIN_CLASS = "perfkit.spark.IoStatsPlugin"
BUCKETS = "spark.perfkit.io.buckets"  # IoStatsPlugin.BUCKETS


def plugin_jar(home: Path | None = None) -> Path:
    """The plugin's jar for the Spark at `home` (default spark_home()), built once into the tool cache."""
    jars = (home or spark_home()) / "jars"
    if not jars.is_dir():
        raise PerfkitError(f"Spark's jars are not at {jars}: set SPARK_HOME to the Spark the session runs")
    # the source and the Spark it is compiled against name the build
    digest = hashlib.sha256(SOURCE.read_bytes() + "\n".join(sorted(p.name for p in jars.glob("*.jar"))).encode())
    built = tool_cache() / "spark-plugin" / f"perfkit-io-{digest.hexdigest()[:12]}.jar"
    return fetched_once(built, built, lambda: _build(built, jars))


def _build(built: Path, jars: Path) -> None:
    javac = _javac()
    built.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=built.parent) as work:
        classes = Path(work) / "classes"
        run = subprocess.run([javac, "--release", "8", "-nowarn", "-cp", f"{jars}/*", "-d", str(classes), str(SOURCE)],
                             capture_output=True, text=True)
        if run.returncode != 0:
            raise PerfkitError(f"perfkit's Spark plugin did not compile against {jars}:\n{run.stderr[-1500:]}\n"
                               "Fix: point SPARK_HOME at a Spark 3.1 or later")
        jar = Path(work) / built.name
        with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as out:
            for path in sorted(classes.rglob("*.class")):
                out.write(path, path.relative_to(classes).as_posix())
        jar.rename(built)


def _javac() -> str:
    """The JDK's compiler: JAVA_HOME's, else the one on PATH, else the one beside `java`."""
    candidates = [Path(os.environ["JAVA_HOME"]) / "bin" / "javac"] if os.environ.get("JAVA_HOME") else []
    found = shutil.which("javac")
    java = shutil.which("java")
    candidates += [Path(found)] if found else []
    candidates += [Path(java).resolve().parent / "javac"] if java else []
    for candidate in candidates:
        if candidate.exists():
            return str(candidate)
    raise PerfkitError("perfkit's Spark plugin (the executors' I/O counters) needs a JDK's javac once, and none was "
                       "found. Fix: install a JDK (e.g. apt-get install openjdk-17-jdk-headless) or set JAVA_HOME "
                       "to one")


def loadable_in_this_jvm() -> bool:
    """Whether a session started now can load the plugin in its driver: a JVM that pyspark has not launched yet
    will have spark.jars on its class path; one already running (an earlier session in this process) only if it
    had them then (Spark adds spark.jars to a running driver for its executors only)."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway
    if gateway is None:
        return True
    try:
        gateway.jvm.java.lang.Class.forName(PLUGIN_CLASS)
    except Exception:  # noqa: BLE001 - py4j's error for ClassNotFoundException: not on its class path
        return False
    return True


def plugin_conf(bucket: str | None) -> dict[str, str]:
    """The session settings that load the plugin (on YARN, spark.jars reaches the executors before plugins start)
    and tell it which S3A bucket to watch."""
    return {"spark.plugins": PLUGIN_CLASS, BUCKETS: bucket or ""}
