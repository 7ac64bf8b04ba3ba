"""S3 -> HDFS copy methods behind one interface, registered by name and imported lazily.

A method copies every file of a Manifest into one HDFS folder. A method that cannot run here
(S3DistCp off EMR) says why through `unavailable()` instead of failing the whole run.
"""
from __future__ import annotations

import functools
import os
import re
from abc import ABC, abstractmethod
from pathlib import Path

from perfkit.config import Profile
from perfkit.errors import PerfkitError, root_cause
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

    def __init_subclass__(cls, **kwargs):
        # every method's failure is recorded as one line with its root cause, whatever raised it
        # (a Java trace from `hadoop fs`, a WebHDFS error body, a boto error): wrap each `copy` here
        super().__init_subclass__(**kwargs)
        if "copy" in cls.__dict__:
            cls.copy = _one_line_errors(cls.__dict__["copy"])

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
    """Environment for the aws CLI: the keys the profile's provider gives (the lab's), else the caller's AWS chain."""
    env = dict(os.environ)
    creds = profile.provider.s3_credentials()
    if creds:
        env.update(AWS_ACCESS_KEY_ID=creds["access_key"], AWS_SECRET_ACCESS_KEY=creds["secret_key"],
                   AWS_DEFAULT_REGION=profile.s3_region)
    return {**env, **(extra or {})}


def error_line(err: BaseException) -> str:
    """One line for a failed copy: what failed, then why (the root cause), never stack frames."""
    message = getattr(err, "message", None)  # hdfs.HdfsError keeps a WebHDFS error body as bytes
    text = (message.decode(errors="replace") if isinstance(message, bytes) else str(err)).strip()
    if text.startswith("<"):  # an HTML error page (Jetty's, from a DataNode): its text, not its tags
        text = re.sub(r"<[^>]*>", "", text).strip()
    if not text:  # e.g. ConnectionResetError(): its type is all there is
        return type(err).__name__
    head, cause = root_cause(text.splitlines()[0]), root_cause(text)
    line = cause if head in ("no message", cause) or cause in head else f"{head.rstrip(':')}: {cause}"
    return line if isinstance(err, PerfkitError) else f"{type(err).__name__}: {line}"


def _one_line_errors(copy):
    @functools.wraps(copy)
    def wrapped(self, *args, **kwargs):
        try:
            return copy(self, *args, **kwargs)
        except Exception as err:
            raise PerfkitError(error_line(err)) from err
    return wrapped
