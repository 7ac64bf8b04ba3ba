"""S3 -> HDFS copy methods behind one interface, registered by name and imported lazily.

A method copies every file of a Manifest into one HDFS folder. A method that cannot run here
(S3DistCp off EMR) says why through `unavailable()` instead of failing the whole run.
"""
from __future__ import annotations

import os
from abc import ABC, abstractmethod
from pathlib import Path

from perfkit.config import Profile
from perfkit.errors import PerfkitError
from perfkit.registry import Registry
from perfkit.transfer.manifest import Manifest

REGISTRY = Registry("transfer method", {
    "cli-sequential": "perfkit.transfer.cli:CliSequential",
    "gohdfs-sequential": "perfkit.transfer.cli:GohdfsSequential",
    "hdfs-cp": "perfkit.transfer.cli:HdfsCp",
    "distcp": "perfkit.transfer.distcp:DistCp",
    "s3-dist-cp": "perfkit.transfer.distcp:S3DistCp",
    "awscli": "perfkit.transfer.cli:AwsCli",
    "stream": "perfkit.transfer.stream:Stream",
})


def method_class(name: str) -> type["TransferMethod"]:
    return REGISTRY.load(name)


def get_method(name: str, profile: Profile, concurrency: int = 1, **options) -> "TransferMethod":
    return method_class(name)(profile, concurrency, **options)


class TransferMethod(ABC):
    name: str = "?"
    parallel: bool = False  # True: `concurrency` changes how it works (processes, requests, maps)

    def __init__(self, profile: Profile, concurrency: int = 1, **options):
        if concurrency < 1:
            raise PerfkitError(f"{self.name}: concurrency must be at least 1 (got {concurrency})")
        self.profile, self.concurrency, self.options = profile, concurrency, options

    def unavailable(self) -> str | None:
        """Why this method cannot run here, or None when it can."""
        return None

    @abstractmethod
    def copy(self, manifest: Manifest, dest: str, scratch: Path) -> dict[str, float]:
        """Copy every manifest file into HDFS folder `dest` (a path, which exists and is empty).

        `scratch` is a local folder for methods that go through local disk. Returns seconds per
        file where the method can tell them, else an empty dict.
        """

    def source_url(self, manifest: Manifest, name: str = "") -> str:
        return manifest.url(self.profile.s3_scheme, name)

    def dest_url(self, dest: str, name: str = "") -> str:
        return self.profile.hdfs_url_of(f"{dest}/{name}" if name else dest)


def aws_env(profile: Profile, extra: dict | None = None) -> dict[str, str]:
    """Environment for the aws CLI: the lab's keys for the lab, the caller's AWS chain otherwise."""
    env = dict(os.environ)
    if profile.uses_lab:
        from perfkit.lab.settings import lab_credentials

        creds = lab_credentials()
        env.update(AWS_ACCESS_KEY_ID=creds["access_key"], AWS_SECRET_ACCESS_KEY=creds["secret_key"],
                   AWS_DEFAULT_REGION=profile.s3_region)
    return {**env, **(extra or {})}
