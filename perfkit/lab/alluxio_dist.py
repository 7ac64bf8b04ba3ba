"""Fetch Alluxio into the tool cache, once per version: the servers' jars and the shaded client engines load."""
from __future__ import annotations

import hashlib
import shutil
import subprocess
import tempfile
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.lab import tools, versions
from perfkit.lab.hive_jars import copy_dependencies
from perfkit.locks import fetched_once
from perfkit.paths import tool_cache

CLIENT = f"org.alluxio:alluxio-shaded-client:{versions.ALLUXIO}"


def alluxio_lib() -> Path:
    """Master, worker, proxy, S3 and local under-filesystems, shell and Hadoop client (~290 jars, ~180 MB); the
    folder is named by the pom's contents too, so a changed pom fetches again."""
    pom = hashlib.sha256((Path(__file__).parent / "alluxio-pom.xml").read_bytes()).hexdigest()[:8]
    return copy_dependencies("alluxio-pom.xml", tool_cache() / f"alluxio-{versions.ALLUXIO}" / f"lib-{pom}",
                             f"Alluxio {versions.ALLUXIO}", values={"ALLUXIO_VERSION": versions.ALLUXIO})


def alluxio_client_jar() -> Path:
    """alluxio-shaded-client (98 MB): what Spark, Hive and Hadoop's CLI put on their class path for alluxio://.
    Fetched alone with dependency:copy: as a dependency its parent pom (alluxio-shaded) is not published."""
    folder = tool_cache() / f"alluxio-{versions.ALLUXIO}" / "client"
    return next(fetched_once(folder, folder / ".complete", lambda: _fetch_client(folder))
                .glob("alluxio-shaded-client-*.jar"))


def _fetch_client(folder: Path) -> None:
    mvn = tools.maven(f"the Alluxio {versions.ALLUXIO} client")
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as work:
        staging = Path(work) / "out"
        print(f"lab: fetching the Alluxio {versions.ALLUXIO} client into {folder} (once) ...", flush=True)
        run = subprocess.run([mvn, "-q", "-B", "dependency:copy", f"-Dartifact={CLIENT}",
                              f"-DoutputDirectory={staging}"], capture_output=True, text=True, cwd=work)
        if run.returncode != 0:
            raise PerfkitError(f"lab: Maven could not fetch {CLIENT}:\n{(run.stdout + run.stderr)[-2000:]}\n"
                               "Fix: check that Maven can reach its repository, then run `perfkit lab up` again")
        (staging / ".complete").touch()
        shutil.rmtree(folder, ignore_errors=True)
        staging.rename(folder)
