"""The lab's addresses and credentials: shared by the lab services and the `lab` profile."""
from __future__ import annotations

import json
import os
import secrets
from dataclasses import dataclass, fields
from pathlib import Path

from perfkit.errors import PerfkitError
from perfkit.paths import lab_home

HOST = "127.0.0.1"  # every lab service listens on loopback only
BUCKET = "perfkit-lab"


@dataclass(frozen=True)
class LabPorts:
    """Default ports of the lab; each can be moved with PERFKIT_LAB_PORT_<NAME>, e.g. PERFKIT_LAB_PORT_S3=7171."""

    namenode_rpc: int = 9000
    namenode_http: int = 9870
    datanode: int = 9866
    datanode_http: int = 9864
    datanode_ipc: int = 9867
    s3: int = 7070
    hiveserver2: int = 10000
    nfs: int = 12049  # unprivileged: the lab runs no portmapper

    @classmethod
    def from_env(cls) -> "LabPorts":
        values = {}
        for f in fields(cls):
            var = f"PERFKIT_LAB_PORT_{f.name.upper()}"
            raw = os.environ.get(var)
            if raw is None:
                continue
            if not raw.isdigit() or not 0 < int(raw) < 65536:
                raise PerfkitError(f"{var}={raw!r} is not a port number: set it to an integer between 1 and 65535")
            values[f.name] = int(raw)
        return cls(**values)


def lab_credentials(create: bool = False, home: Path | None = None) -> dict[str, str]:
    """The S3 keys of the lab's server: made once per lab home, kept out of notebooks and reports."""
    path = (home or lab_home()) / "credentials.json"
    if path.exists():
        return json.loads(path.read_text())
    if not create:
        raise PerfkitError(f"the lab has no credentials yet ({path}): run `perfkit lab up` first")
    creds = {"access_key": "perfkit-lab", "secret_key": secrets.token_hex(16)}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(creds))
    tmp.chmod(0o600)
    tmp.replace(path)
    return creds
