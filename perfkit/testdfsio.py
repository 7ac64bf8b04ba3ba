"""TestDFSIO (Hadoop's HDFS throughput benchmark): run write then read, parse the log it writes.

In the lab it runs in local MapReduce mode from the jobclient tests jar; on a cluster through
`hadoop jar ...-tests.jar TestDFSIO`. Its files live under the run's own HDFS prefix.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

from perfkit.config import Profile
from perfkit.errors import PerfkitError

FIELDS = {
    "Number of files": ("files", int),
    "Total MBytes processed": ("total_mb", float),
    "Throughput mb/sec": ("throughput_mb_s", float),
    "Average IO rate mb/sec": ("average_io_rate_mb_s", float),
    "IO rate std deviation": ("io_rate_std", float),
    "Test exec time sec": ("exec_seconds", float),
}


@dataclass(frozen=True)
class DfsioResult:
    operation: str  # write | read
    files: int
    total_mb: float  # TestDFSIO's "MBytes" are MiB (2^20 bytes)
    throughput_mb_s: float  # per map task, as TestDFSIO reports it
    average_io_rate_mb_s: float
    io_rate_std: float
    exec_seconds: float

    @property
    def cluster_mib_s(self) -> float:
        """The cluster throughput as the st1 study computed it: total MiB / execution seconds."""
        return self.total_mb / self.exec_seconds


def parse_log(text: str) -> list[DfsioResult]:
    """Every result block of a TestDFSIO result log, in order."""
    results = []
    for block in re.split(r"-+ TestDFSIO -+ :", text)[1:]:
        lines = block.splitlines()
        values = {"operation": lines[0].strip().split()[0].lower()}
        for line in lines[1:]:
            label, _, value = line.partition(":")
            if label.strip() in FIELDS:
                name, kind = FIELDS[label.strip()]
                values[name] = kind(value.strip().replace(",", ""))
        missing = [name for name, _ in FIELDS.values() if name not in values]
        if missing:
            raise PerfkitError(f"TestDFSIO log block '{values['operation']}' lacks {', '.join(missing)}: "
                               "is this a TestDFSIO result log?")
        results.append(DfsioResult(**values))
    if not results:
        raise PerfkitError("no TestDFSIO result in the log: the run did not finish (see its output)")
    return results


class TestDfsio:
    __test__ = False  # not a pytest class

    def __init__(self, profile: Profile, files: int = 4, size_mb: int = 64, workdir: Path | None = None,
                 run_id: str | None = None):
        if files < 1 or size_mb < 1:
            raise PerfkitError(f"TestDFSIO needs files >= 1 and size_mb >= 1 (got {files}, {size_mb})")
        self.profile, self.files, self.size_mb = profile, files, size_mb
        self.run_id = run_id or time.strftime("%Y%m%dT%H%M%S")
        self.base = profile.hdfs_path("testdfsio", self.run_id)
        self.workdir = Path(workdir or ".")

    def command(self, operation: str, result_file: Path) -> list[str]:
        options = [f"-Dtest.build.data={self.base}"]
        if self.profile.provider.local_mapreduce:  # let the maps run side by side (on the lab's two cores)
            options.append("-Dmapreduce.local.map.tasks.maximum=2")
        args = [*options, f"-{operation}", "-nrFiles", str(self.files), "-size", f"{self.size_mb}MB",
                "-resFile", str(result_file)]
        return self.profile.provider.testdfsio_command(*args)

    def run(self, operation: str) -> tuple[DfsioResult, float, float]:
        """Run one operation; return its result with the wall-clock start and end (epoch seconds)."""
        import subprocess

        if operation not in ("write", "read"):
            raise PerfkitError(f"TestDFSIO operation must be write or read, not {operation!r}")
        self.workdir.mkdir(parents=True, exist_ok=True)
        result_file = self.workdir / f"TestDFSIO_{operation}.log"
        result_file.unlink(missing_ok=True)
        start = time.time()
        done = subprocess.run(self.command(operation, result_file), capture_output=True, text=True, cwd=self.workdir)
        end = time.time()
        if done.returncode != 0:
            tail = "\n".join(done.stderr.strip().splitlines()[-8:])
            raise PerfkitError(f"TestDFSIO -{operation} failed (exit {done.returncode}):\n{tail}")
        return parse_log(result_file.read_text())[-1], start, end

    def cleanup(self) -> None:
        """Remove this run's TestDFSIO folder (its own prefix only)."""
        from perfkit.storages import hdfs as hdfs_storage

        hdfs_storage.webhdfs_client(self.profile).delete(self.base, recursive=True)
