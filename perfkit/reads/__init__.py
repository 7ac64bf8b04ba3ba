"""Read access methods behind one interface, and the N-parallel-jobs runner.

A method reads whole files to nowhere, with large buffers, and returns the bytes it read. A
method that cannot run here says why through `unavailable()` instead of failing the run.
"""
from __future__ import annotations

import subprocess
from abc import ABC, abstractmethod

from perfkit.config import Profile
from perfkit.errors import PerfkitError
from perfkit.registry import Registry

BUFFER = 8 << 20  # bytes per read call

REGISTRY = Registry("read method", {
    "posix": "perfkit.reads.methods:Posix",
    "libnfs": "perfkit.reads.methods:LibNfs",
    "hdfs-cli": "perfkit.reads.methods:HdfsCli",
    "webhdfs": "perfkit.reads.methods:WebHdfs",
    "gohdfs": "perfkit.reads.methods:GoHdfs",
    "fuse-hdfs": "perfkit.reads.methods:FuseHdfs",
})


def method_class(name: str) -> type["ReadMethod"]:
    return REGISTRY.load(name)


def get_method(name: str, profile: Profile) -> "ReadMethod":
    return method_class(name)(profile)


class ReadMethod(ABC):
    name: str = "?"
    storage: str = "?"  # nfs | hdfs: where the files it reads live

    def __init__(self, profile: Profile):
        self.profile = profile

    def unavailable(self) -> str | None:
        return None

    def prepare(self) -> None:
        """Set up in the job's own process before the clock starts (buffers, connections)."""

    @abstractmethod
    def location(self, relative: str) -> str:
        """What this method opens for a file of the set (a path, an hdfs:// URL, an nfs:// URL)."""

    @abstractmethod
    def read(self, location: str) -> int:
        """Read the whole file to nowhere; return the bytes read. Raise PerfkitError when it cannot."""


def drain_command(argv: list[str], what: str, env: dict | None = None) -> int:
    """Run a tool that writes a file to stdout; count and discard its bytes; fail with its own words."""
    total = 0
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
        while chunk := proc.stdout.read(BUFFER):
            total += len(chunk)
        err = proc.stderr.read().decode(errors="replace")
    if proc.returncode != 0:
        tail = " ".join(err.strip().splitlines()[-2:])[:400]
        raise PerfkitError(f"{what} failed (exit {proc.returncode}): {tail}")
    return total
