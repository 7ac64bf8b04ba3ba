"""Fetch real Hive into the tool cache, once per version: the standalone metastore, HiveServer2's jars, and
the Hive client jars Spark loads to talk to that metastore."""
from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.lab import tools, versions
from perfkit.locks import fetched_once
from perfkit.paths import tool_cache

_HERE = Path(__file__).parent
# Spark's isolated Hive client shares only org.apache.hadoop.* (pyspark's Hadoop 3.5.0 client), java.*, scala.*,
# logging and Spark itself: these jars bring the rest. hive-exec is a fat jar (the metastore client, Thrift,
# commons-lang, Hive's shims and serdes inside); each other jar was a NoClassDefFoundError without it. No Hadoop jar.
_HIVE_FOR_SPARK = re.compile(
    rf"^(hive-exec-{re.escape(versions.HIVE)}|guava-.*|commons-io-.*|httpclient-.*|httpcore-.*|"
    r"javax\.servlet-api-.*)\.jar$"
)


def copy_dependencies(template: str, target: Path, what: str, finish=None,
                      values: dict[str, str] | None = None) -> Path:
    """`mvn dependency:copy-dependencies` of a pom template (its @NAME@ fields filled from `values`) into `target`,
    once: a staging folder is filled, optionally reshaped by `finish(staging, work)`, marked `.complete`, then
    renamed into place."""
    return fetched_once(target, target / ".complete",
                        lambda: _copy_dependencies(template, target, what, finish, values))


def _copy_dependencies(template: str, target: Path, what: str, finish, values: dict[str, str] | None) -> None:
    mvn = tools.maven(what)
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        pom = Path(work) / "pom.xml"
        text = (_HERE / template).read_text()
        for name, value in {"HIVE_VERSION": versions.HIVE, "COMMONS_COLLECTIONS_VERSION": versions.COMMONS_COLLECTIONS,
                            **(values or {})}.items():
            text = text.replace(f"@{name}@", value)
        pom.write_text(text)
        staging = Path(work) / "out"
        print(f"lab: fetching {what} into {target} (once) ...", flush=True)
        run = subprocess.run([mvn, "-q", "-B", "-f", str(pom), "dependency:copy-dependencies",
                              f"-DoutputDirectory={staging}", "-DincludeScope=runtime"], capture_output=True, text=True)
        if run.returncode != 0:
            raise PerfkitError(f"lab: Maven could not fetch {what}:\n{(run.stdout + run.stderr)[-2000:]}\n"
                               "Fix: check that Maven can reach its repository, then run `perfkit lab up` again")
        if finish:
            staging = finish(staging, Path(work))
        _into_place(staging, target)


def _into_place(staging: Path, target: Path) -> None:
    """A finished folder marked `.complete` and renamed to `target`, replacing a half-made one from a crash."""
    (staging / ".complete").touch()
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)


def _unpack_metastore(staging: Path, work: Path) -> Path:
    """The distribution's folder (bin, conf, lib, scripts), with commons-collections added to lib/."""
    tarball = next(staging.glob("hive-standalone-metastore-server-*-bin.tar.gz"))
    with tarfile.open(tarball) as tar:
        tar.extractall(work / "dist", filter="data")
    home = next((work / "dist").glob("apache-hive-metastore-*-bin"))
    for jar in staging.glob("commons-collections-*.jar"):
        jar.rename(home / "lib" / jar.name)
    return home


def metastore_home() -> Path:
    """The Hive standalone metastore distribution (its lib/ and the schema scripts MetastoreSchemaTool runs)."""
    return copy_dependencies("hive-metastore-pom.xml", tool_cache() / f"hive-metastore-{versions.HIVE}",
                              f"the Hive standalone metastore {versions.HIVE}", _unpack_metastore)


def hive_lib() -> Path:
    """Real Hive's jars (HiveServer2, MapReduce execution, JDBC) without Hadoop: the lab's own Hadoop runs it."""
    return copy_dependencies("hive-pom.xml", tool_cache() / f"hive-{versions.HIVE}" / "lib",
                              f"Hive {versions.HIVE} jars")


def hive_exec_jar() -> Path:
    """Hive's query engine jar: the metastore reads HiveServer2's partition filters with a class of it."""
    return hive_lib() / f"hive-exec-{versions.HIVE}.jar"


def hive_exec_classes() -> Path:
    """hive-exec's classes in a folder, unpacked once, for a HiveServer2 whose MapReduce jobs run in its own JVM.

    Each job's JobConf names the jar its driver class came from, and job submission copies that jar (hive-exec: 83
    MB, checksummed) into the job's staging folder, for every stage of every query, though a local job's tasks load
    nothing from it. From a folder there is no jar to name, so nothing is copied (Hadoop warns that no job jar is
    set: the tasks run in the JVM that has the classes). A join with a sort: 2.4 -> 1.8 s a query on an idle lab."""
    jar = hive_exec_jar()
    target = jar.parent.parent / f"hive-exec-{versions.HIVE}-classes"
    return fetched_once(target, target / ".complete", lambda: _unpack(jar, target))


def _unpack(jar: Path, target: Path) -> None:
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        staging = Path(work) / "classes"
        with zipfile.ZipFile(jar) as archive:
            archive.extractall(staging)
        _into_place(staging, target)


def spark_metastore_jars() -> list[Path]:
    """The Hive client jars Spark loads for `spark.sql.hive.metastore.jars=path` (6 jars, 83 MiB, out of hive_lib)."""
    return sorted(p for p in hive_lib().iterdir() if _HIVE_FOR_SPARK.match(p.name))
