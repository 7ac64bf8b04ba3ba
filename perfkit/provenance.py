"""What a result or report must say about where it came from: versions and host."""
from __future__ import annotations

import platform
import socket
import subprocess
import sys
from importlib import metadata

PACKAGES = ("perfkit", "pyspark", "pandas", "pyarrow", "pyhive", "trino", "boto3", "papermill")
# a run's versions also hold each engine's server version under the engine's name: clients keep apart
CLIENT_NAMES = {"trino": "trino (python client)"}


def versions(profile=None) -> dict[str, str]:
    """perfkit's, its clients' and (given a profile) its provider's versions, e.g. the lab's Hadoop."""
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[CLIENT_NAMES.get(name, name)] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return {**found, **(profile.provider.versions() if profile is not None else {})}


def host() -> dict[str, str]:
    return {"hostname": socket.gethostname(), "platform": platform.platform(), "cpus": str(_cpus()),
            "python_executable": sys.executable}


def run_config(profile, parameters: dict, network=None, **extra) -> dict:
    """The configuration every record of a run carries: versions, host, profile, parameters, where S3 sat (a
    perfkit.calibration.Calibration, for runs that use S3) (+ extra)."""
    shown = {"network": network.as_dict()} if network is not None else {}
    cluster = profile.provider.cluster()
    shown.update({"cluster": cluster} if cluster else {})
    return {"versions": versions(profile), "host": host(), "profile": profile.describe(), "parameters": parameters,
            **shown, **extra}


def record_engine(config: dict, engine) -> None:
    """What a run's records say of an engine it opened: the true version of its server, and where it ran its work
    (Spark's master, executors and YARN application)."""
    config["versions"].update(engine.versions())
    placement = engine.placement() if hasattr(engine, "placement") else {}  # a stand-in engine may not say
    if placement:
        config.setdefault("placement", {})[engine.name] = placement


def environment_table(profile, parameters: dict):
    """Versions, host, profile and parameters as one two-column table (no credentials)."""
    return recorded_environment({"versions": versions(profile), "host": host(), "profile": profile.describe(),
                                 "parameters": parameters})


def recorded_environment(config: dict):
    """environment_table's table from what a run recorded (run_config): its versions, host, profile, parameters."""
    import pandas as pd

    sections = {"version": config.get("versions", {}), "host": config.get("host", {}),
                "profile": config.get("profile", {}), "parameter": config.get("parameters", {})}
    return pd.DataFrame([(f"{section}: {key}", str(value)) for section, values in sections.items()
                         for key, value in values.items()], columns=["setting", "value"])


def git_commit() -> str | None:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
                             cwd=__file__.rsplit("/", 2)[0])
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 0
