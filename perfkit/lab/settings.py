"""The lab's addresses and credentials: shared by the lab services and the `lab` profile."""
from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
from dataclasses import dataclass, fields
from pathlib import Path

from perfkit import atomic
from perfkit.errors import PerfkitError

HOST = "127.0.0.1"  # every lab service listens on loopback only
BUCKET = "perfkit-lab"
DATANODE_PORT_STEP = 10  # DataNode i (and NodeManager i) listens on its ports + 10 * i
MAX_DATANODES = 8
MAX_NODE_MANAGERS = 2  # the cluster shape's (perfkit.lab.shape)
PER_NODE = {"datanode": MAX_DATANODES, "nodemanager": MAX_NODE_MANAGERS}  # port fields stepped per node, and how far


def lab_home() -> Path:
    """Lab data, logs, configs and pid files: one folder."""
    return Path(os.environ.get("PERFKIT_LAB_HOME", Path.home() / ".local/state/perfkit/lab"))


def _whole_number(raw: str) -> int | None:
    """ASCII digits only: str.isdigit() also takes '²' (int() then fails) and '٩٨' (int() takes it silently)."""
    return int(raw) if raw.isascii() and raw.isdigit() else None


def datanode_count() -> int:
    raw = os.environ.get("PERFKIT_LAB_DATANODES", "1")
    count = _whole_number(raw)
    if count is None or not 1 <= count <= MAX_DATANODES:
        raise PerfkitError(f"PERFKIT_LAB_DATANODES={raw!r}: give a number of DataNodes from 1 to {MAX_DATANODES}")
    return count


def checked_home(home: Path | None = None) -> Path:
    """The lab home, refused in one line when it (or the nearest existing folder above it) is a file."""
    home = Path(home) if home else lab_home()
    existing = next((p for p in (home, *home.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        what = "" if existing == home else f" ({existing} is a file)"
        raise PerfkitError(f"PERFKIT_LAB_HOME {home} is not a folder{what}: the lab keeps its data, logs and pid "
                           "files there. Fix: set PERFKIT_LAB_HOME to a folder path (or unset it)")
    return home


# The lab's daemons stop writing on a nearly full disk: YARN's NodeManagers mark a local folder bad above
# yarn.nodemanager.disk-health-checker.max-disk-utilization-per-disk-percentage (99 here, perfkit.lab.yarn), and then
# no container starts; HDFS refuses new blocks with too little room. Refused at `lab up` before either happens.
MIN_FREE_BYTES = 2 * 1024**3
MAX_USED_SHARE = 0.97


def check_room(home: Path) -> None:
    """Refuse to start the lab on a disk too full for its daemons, in one line with the fix."""
    home = Path(home).absolute()
    existing = next(p for p in (home, *home.parents) if p.exists())
    usage = shutil.disk_usage(existing)
    used = 1 - usage.free / usage.total if usage.total else 1.0
    if usage.free >= MIN_FREE_BYTES and used <= MAX_USED_SHARE:
        return
    from perfkit.keep import mount_point

    raise PerfkitError(
        f"the lab home {home} is on a disk with {usage.free / 1024**3:.1f} GiB free ({100 * used:.1f}% used): YARN's "
        f"NodeManagers stop starting containers above 99% and HDFS refuses blocks without room, so the lab needs "
        f"{MIN_FREE_BYTES / 1024**3:.0f} GiB free and at most {100 * MAX_USED_SHARE:.0f}% used. Fix: free space on "
        f"{mount_point(existing)} (uv's cache of old builds: `.venv/bin/uv cache prune`) or set PERFKIT_LAB_HOME to "
        "a folder on a roomier disk")


@dataclass(frozen=True)
class LabPorts:
    """Default ports of the lab; each can be moved with PERFKIT_LAB_PORT_<NAME>, e.g. PERFKIT_LAB_PORT_S3=7171."""

    namenode_rpc: int = 9000
    namenode_http: int = 9870
    datanode: int = 9866
    datanode_http: int = 9864
    datanode_ipc: int = 9867
    s3: int = 7070  # where every S3 client of the lab sends requests: the S3 server, or the network's proxy before it
    metastore: int = 9083  # the Hive metastore (thrift) that Spark, Hive and Trino share
    hiveserver2: int = 10000  # real Hive's HiveServer2
    hiveserver2_http: int = 10002  # its web UI, for its JMX servlet (the S3A statistics of its JVM)
    spark_thrift: int = 10001  # the Spark Thrift Server (a HiveServer2 endpoint run by Spark), as on EMR
    trino: int = 8889  # Trino's HTTP port, as on EMR
    nfs: int = 12049  # unprivileged: the lab runs no portmapper
    alluxio_master: int = 19998  # Alluxio's defaults: master RPC and web, worker RPC and web
    alluxio_master_web: int = 19999
    alluxio_worker: int = 29999
    alluxio_worker_web: int = 30000
    alluxio_proxy: int = 39999  # Alluxio's S3 API
    s3_behind_proxy: int = 7071  # the S3 server's own port while an emulated network's proxy takes the s3 port
    toxiproxy: int = 8474  # Toxiproxy's HTTP API (its default port)
    # YARN, in the cluster shape only (perfkit.lab.shape): YARN's default ports
    yarn_resourcemanager: int = 8032  # where clients (Spark, Hive's MapReduce) submit applications
    yarn_scheduler: int = 8030
    yarn_resource_tracker: int = 8031
    yarn_admin: int = 8033
    yarn_web: int = 8088  # its REST API: applications, nodes
    nodemanager: int = 8041
    nodemanager_localizer: int = 8040
    nodemanager_web: int = 8042
    nodemanager_shuffle: int = 13562  # MapReduce's shuffle service inside each NodeManager
    livy: int = 8998  # the Livy stand-in (perfkit.lab.livy), cluster shape only: Livy's default port
    emr_notebooks: int = 8996  # the stand-in for EMR's notebook executions (perfkit.lab.emr_notebooks), the same

    @classmethod
    def from_env(cls) -> "LabPorts":
        values = {}
        for f in fields(cls):
            var = f"PERFKIT_LAB_PORT_{f.name.upper()}"
            raw = os.environ.get(var)
            if raw is None:
                continue
            port = _whole_number(raw)
            if port is None or not 0 < port < 65536:
                raise PerfkitError(f"{var}={raw!r} is not a port number: set it to an integer between 1 and 65535")
            values[f.name] = port
        ports = cls(**values)
        ports.check_distinct(datanode_count())
        return ports

    def check_distinct(self, datanodes: int) -> None:
        """Two daemons on one port: the second dies at start-up after a long wait, so refuse it here.

        DataNode i (from 0) listens on each DataNode port + 10 * i: those count too, as NodeManager i's.
        """
        seen: dict[int, str] = {}
        for f in fields(self):
            var = f"PERFKIT_LAB_PORT_{f.name.upper()}"
            name = var if var in os.environ else f"{var} (default {getattr(self, f.name)})"
            node = next((kind for kind in PER_NODE if f.name.startswith(kind)), None)
            count = datanodes if node == "datanode" else PER_NODE.get(node, 1)
            for i in range(count):
                port = getattr(self, f.name) + DATANODE_PORT_STEP * i
                who = f"{name} + {DATANODE_PORT_STEP * i} ({node}{i})" if i else name
                if port > 65535:
                    why = f" with PERFKIT_LAB_DATANODES={datanodes}" if node == "datanode" else ""
                    raise PerfkitError(f"lab ports: {who} = {port} is beyond 65535{why}. Fix: set {var} lower")
                if port in seen:
                    raise PerfkitError(f"lab ports: {seen[port]} and {who} are both port {port}; two lab services "
                                       "cannot share a port. Fix: give each PERFKIT_LAB_PORT_<NAME> its own port "
                                       f"(DataNode and NodeManager ports step by {DATANODE_PORT_STEP} per extra node)")
                seen[port] = who


def node_ports(ports: LabPorts, names: tuple[str, ...], i: int) -> dict[str, int]:
    """Node i's ports of these LabPorts fields: each field's port + 10 * i (DataNode i, NodeManager i)."""
    return {name: getattr(ports, name) + DATANODE_PORT_STEP * i for name in names}


def java_tmpdir(home: Path | None = None) -> str:
    """The JVM option that keeps a lab JVM's temporary files (Hive's <session>_resources, Jetty's folders, Hadoop's
    *.tmp) under the lab home: everything a lab process writes belongs there, not in /tmp."""
    folder = checked_home(home) / "tmp"
    folder.mkdir(parents=True, exist_ok=True)
    return f"-Djava.io.tmpdir={folder}"


JAVA_OPTIONS_ENV = "PERFKIT_LAB_JAVA_OPTIONS"
JAVA_OPTIONS_FILE = "java-options"  # in the lab home: the extra options a running daemon of the lab was started with


def extra_java_options() -> list[str]:
    """What PERFKIT_LAB_JAVA_OPTIONS adds to every JVM the lab starts: the integration tests run their labs
    C1-only (-XX:TieredStopAtLevel=1), a third less CPU for the same work (they check behaviour, not speed)."""
    text = os.environ.get(JAVA_OPTIONS_ENV, "")
    try:
        options = shlex.split(text)
    except ValueError as err:
        raise PerfkitError(f"{JAVA_OPTIONS_ENV}={text!r}: {err}. Fix: quote it as a shell would, or unset it") from None
    if bad := [option for option in options if not option.startswith("-")]:
        raise PerfkitError(f"{JAVA_OPTIONS_ENV}={text!r}: {bad[0]!r} is not a JVM option. Fix: give options that "
                           "start with '-' (e.g. -XX:TieredStopAtLevel=1), or unset it")
    return options


def lab_java_options(home: Path | None = None) -> list[str]:
    """The options every JVM of the lab gets: its temporary folder under the lab home, then PERFKIT_LAB_JAVA_OPTIONS."""
    return [java_tmpdir(home), *extra_java_options()]


def note_java_options(home: Path, whole_lab_down: bool) -> None:
    """Before daemons start: keep the extra options they start with, for the runs' records (java_options_in_use).
    Started without any, the note stays while a daemon started with them may still run."""
    note = home / JAVA_OPTIONS_FILE
    if extra := extra_java_options():
        atomic.write_text(note, shlex.join(extra) + "\n")
    elif whole_lab_down:
        note.unlink(missing_ok=True)


def java_options_in_use(home: Path | None = None) -> str:
    """The extra JVM options of this lab's daemons (their note) or of the JVMs this process starts; "" when none."""
    note = (home or lab_home()) / JAVA_OPTIONS_FILE
    noted = shlex.split(note.read_text()) if note.is_file() else []
    return shlex.join(dict.fromkeys([*noted, *extra_java_options()]))


S3_ENDPOINT_FILE = "s3-endpoint"  # in the lab home: where the lab's S3 clients send requests, when not direct


def default_s3_endpoint(ports: LabPorts) -> str:
    """The s3 port: the lab's S3 server itself, or the emulated network's proxy in front of it (perfkit.lab.s3)."""
    return f"http://{HOST}:{ports.s3}"


def lab_s3_endpoint(ports: LabPorts, home: Path | None = None) -> str:
    """Where every S3 client of the lab (each engine, tool and tier) sends its requests: the lab's s3 port, or
    the endpoint `perfkit lab up --s3-endpoint URL` put in front of it (a proxy of the user's)."""
    path = checked_home(home) / S3_ENDPOINT_FILE
    return path.read_text(encoding="utf-8").strip() if path.is_file() else default_s3_endpoint(ports)


def set_lab_s3_endpoint(url: str | None, home: Path | None = None) -> None:
    """Record where the lab's S3 clients send requests (None: the lab's own s3 port)."""
    from perfkit import atomic

    path = checked_home(home) / S3_ENDPOINT_FILE
    if url is None:
        path.unlink(missing_ok=True)
    else:
        atomic.write_text(path, url + "\n")


def lab_credentials(create: bool = False, home: Path | None = None) -> dict[str, str]:
    """The S3 keys of the lab's server: made once per lab home, kept out of notebooks and reports."""
    path = checked_home(home) / "credentials.json"
    if path.exists():
        return json.loads(path.read_text())
    if not create:
        raise PerfkitError(f"the lab has no credentials yet ({path}): run `perfkit lab up` first")
    creds = {"access_key": "perfkit-lab", "secret_key": secrets.token_hex(16)}
    write_private(path, json.dumps(creds))
    return creds


def write_private(path: Path, text: str) -> None:
    """Replace a file that holds secrets: created 0600, so never readable by others, not even for an instant."""
    atomic.write_text(path, text, mode=atomic.PRIVATE)
