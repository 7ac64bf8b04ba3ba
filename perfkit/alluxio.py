"""Talk to an Alluxio cluster as a client: its shell (`alluxio fs ...`) and its byte counters.

In the lab the shell is Alluxio's own FileSystemShell class run on the lab's Java with a client configuration
(the master's address, no keys); on a cluster it is the `alluxio` command on PATH.
"""
from __future__ import annotations

import shutil
import subprocess

from perfkit.config import Profile
from perfkit.errors import PerfkitError, root_cause


class AlluxioClient:
    def __init__(self, profile: Profile):
        self.profile = profile

    def _lab_server(self):
        if not self.profile.uses_lab:
            return None
        from perfkit.lab.alluxio import AlluxioServer
        from perfkit.lab.settings import LabPorts
        from perfkit.paths import lab_home

        return AlluxioServer(lab_home(), LabPorts.from_env())

    def command(self, *args: str) -> list[str]:
        server = self._lab_server()
        if server is not None:
            from perfkit.lab.alluxio import SHELL_MAIN

            return server.java(SHELL_MAIN, *args, conf_dir=server.client_conf_dir)
        alluxio = shutil.which("alluxio")
        if not alluxio:
            raise PerfkitError("the `alluxio` command is not on PATH: run on a node of the Alluxio cluster, "
                               "or use the lab profile")
        return [alluxio, "fs", *args]

    def fs(self, *args: str, timeout: float = 600) -> str:
        """`alluxio fs ARGS`; its output, or PerfkitError with the shell's own reason in one line."""
        run = subprocess.run(self.command(*args), capture_output=True, text=True, timeout=timeout,
                             env=_quiet_env())
        if run.returncode != 0:
            said = "\n".join(line for line in (run.stderr + run.stdout).splitlines() if not line.startswith("SLF4J"))
            raise PerfkitError(f"alluxio fs {' '.join(args)} failed (exit {run.returncode}): "
                               f"{root_cause(said or 'no output', 300)}. Fix: check the Alluxio master at "
                               f"{self.profile.alluxio_master} (`perfkit lab status` in the lab)")
        return run.stdout

    def version(self) -> str:
        """The version the Alluxio master reports (lab), or `alluxio version` (cluster)."""
        server = self._lab_server()
        if server is not None:
            info = server.master_info()
            if not info:
                raise PerfkitError("the lab's Alluxio master does not answer: `perfkit lab up alluxio`")
            return str(info["version"])
        run = subprocess.run([self.command()[0], "version"], capture_output=True, text=True, timeout=120)
        return run.stdout.strip().splitlines()[-1] if run.returncode == 0 and run.stdout.strip() else "unknown"

    def free(self, path: str) -> None:
        """Evict every cached block under `path` from the workers (the data stays on S3)."""
        self.fs("free", "-f", path)

    def store(self) -> tuple[int, int] | None:
        """(bytes cached, bytes the workers' stores can hold) from the lab's master; None on a cluster."""
        server = self._lab_server()
        info = server.master_info() if server is not None else None
        if not info:
            return None
        return int(info["capacity"]["used"]), int(info["capacity"]["total"])

    def worker_counters(self) -> tuple[int, int] | None:
        """(bytes the workers served from their cache, bytes they read from under-filesystems); None on a cluster,
        where the counters are per worker (read them from each worker's web /metrics/json/)."""
        server = self._lab_server()
        if server is None:
            return None
        metrics = server.metrics()
        if not metrics:
            raise PerfkitError("the lab's Alluxio worker gives no metrics: is it running? (`perfkit lab status`)")
        from_ufs = sum(v for k, v in metrics.items() if k.startswith("Worker.BytesReadPerUfs."))
        return int(metrics.get("Worker.BytesReadCache", 0)), int(from_ufs)

    def caching_tasks(self) -> int | None:
        """Cache requests the lab's worker is still working on (running or queued): a read through Alluxio asks
        the worker to fetch the whole blocks it touched, in the background. None on a cluster."""
        server = self._lab_server()
        if server is None:
            return None
        metrics = server.metrics()
        return int(metrics.get("Worker.CacheManagerThreadActiveCount", 0)
                   + metrics.get("Worker.CacheManagerThreadQueueWaitingTaskCount", 0))


def _quiet_env() -> dict:
    import os

    return {**os.environ, "AWS_EC2_METADATA_DISABLED": "true"}
