"""Trino's server, fetched once with Maven into the tool cache: only the parts the lab runs.

The full server tarball (821 MB) is the one artifact that has everything: the hive plugin's own zip lacks its
hdfs/ folder. Its plugin folders hard-link shared jars to one another (plugin/hive's jars link into
plugin/delta-lake, lib/...), so members are copied from their link targets' data, not extracted as links.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.lab import tools, versions
from perfkit.locks import fetched_once
from perfkit.paths import tool_cache

KEEP = ("NOTICE", "bin/", "lib/", "plugin/hive/", "plugin/tpch/", "plugin/jmx/")  # bin: the launcher


def trino_home() -> Path:
    """The installed server (bin/, lib/, plugin/{hive,tpch,jmx}), fetched and extracted once per version."""
    home = tool_cache() / f"trino-server-{versions.TRINO}"
    return fetched_once(home, home / ".complete", lambda: _fetch(home))


def _fetch(home: Path) -> None:
    mvn = tools.maven("Trino")
    home.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=home.parent, prefix=".trino-fetch-") as work:
        print(f"lab: fetching Trino {versions.TRINO} (821 MB, once) into {home} ...", flush=True)
        began = time.monotonic()
        # resolved into a throw-away local repository (no copy made): the tarball must not stay behind in ~/.m2
        repo = Path(work) / "m2"
        run = subprocess.run([mvn, "-q", "-B", f"-Dmaven.repo.local={repo}", "dependency:get", "-Dtransitive=false",
                              f"-Dartifact=io.trino:trino-server:{versions.TRINO}:tar.gz"],
                             capture_output=True, text=True, cwd=work)
        tarball = repo / "io/trino/trino-server" / versions.TRINO / f"trino-server-{versions.TRINO}.tar.gz"
        if run.returncode != 0 or not tarball.exists():
            output = (run.stdout + run.stderr)[-2000:]
            raise PerfkitError(f"lab: Maven could not fetch Trino {versions.TRINO}:\n{output}\nFix: check that "
                               "Maven can reach its repository, then run `perfkit lab up` again")
        staging = Path(work) / "trino"
        extract(tarball, staging)
        shutil.rmtree(repo)  # the tarball and Maven's own plugin jars
        (staging / ".complete").touch()
        shutil.rmtree(home, ignore_errors=True)
        staging.rename(home)
        print(f"lab: Trino {versions.TRINO} ready in {time.monotonic() - began:.0f} s", flush=True)


def extract(tarball: Path, dest: Path) -> None:
    """The KEEP parts of the server tarball into dest, hard links resolved to copies of their targets' data."""
    with tarfile.open(tarball, "r:gz") as tar:
        members = tar.getmembers()  # one pass over the archive; the reads below then only seek forward
        by_name = {m.name: m for m in members}
        root = members[0].name.split("/")[0]
        outputs: dict[str, list[str]] = {}  # the member holding the data -> where it goes
        for member in members:
            rel = member.name.removeprefix(root + "/")
            if not any(rel == keep or rel.startswith(keep) for keep in KEEP):
                continue
            if member.isdir():
                (dest / rel).mkdir(parents=True, exist_ok=True)
                continue
            source = member
            while source.islnk():
                source = by_name[source.linkname]
            if source.isfile():  # links to links resolved; no symlinks or devices are wanted
                outputs.setdefault(source.name, []).append(rel)
        for name in sorted(outputs, key=lambda n: by_name[n].offset_data):
            first, *others = outputs[name]
            _write(tar, by_name[name], dest / first)
            for rel in others:  # the same jar in two kept folders: one copy on disk
                (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                os.link(dest / first, dest / rel)


def _write(tar: tarfile.TarFile, member: tarfile.TarInfo, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tar.extractfile(member) as src, open(path, "wb") as out:
        shutil.copyfileobj(src, out, 1 << 20)
    os.chmod(path, 0o755 if member.mode & 0o111 else 0o644)
