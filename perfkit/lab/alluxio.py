"""Alluxio 2.9 on 127.0.0.1: one master and one worker whose namespace mounts the lab's S3 bucket at /<bucket>,
a cache tier in front of S3 (`alluxio:///<bucket>/<key>` is the object s3://<bucket>/<key>).

The worker caches blocks in a folder of the lab home, at most PERFKIT_LAB_ALLUXIO_STORE (default 1GB), or in a tiered
store, memory over disk (PERFKIT_LAB_ALLUXIO_TIERS=MEM:64MB,SSD:1GB). The S3 keys live only in the servers' private site
file; engines get a client configuration without them.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

from perfkit import atomic
from perfkit.tiers.alluxio_client import get_json
from perfkit.errors import PerfkitError, ServiceError
from perfkit.lab import alluxio_dist, tools
from perfkit.lab.process import Daemon, port_in_use
from perfkit.lab.service import Service
from perfkit.lab.settings import (BUCKET, HOST, LabPorts, lab_java_options, lab_credentials, lab_s3_endpoint,
                                  write_private)

HEAP = "-Xmx512m"
MASTER_MAIN, WORKER_MAIN = "alluxio.master.AlluxioMaster", "alluxio.worker.AlluxioWorker"
PROXY_MAIN = "alluxio.proxy.AlluxioProxy"  # Alluxio's S3 API: boto3 reads through the tier
SHELL_MAIN, FORMAT_MAIN = "alluxio.cli.fs.FileSystemShell", "alluxio.cli.Format"
STORE_SIZE = "1GB"
SHM = Path("/dev/shm")  # memory the kernel shares as files: the worker's MEM store, in a folder per lab home
# Java 17 closes these to Alluxio's gRPC/netty and its memory accounting
ADD_OPENS = [f"--add-opens={m}=ALL-UNNAMED" for m in (
    "java.base/java.lang", "java.base/java.nio", "java.base/sun.nio.ch", "java.base/java.util",
    "java.base/java.util.concurrent", "java.base/java.lang.reflect", "java.base/jdk.internal.misc")]
# log4j2 (Alluxio 2.9 logs through it): to stderr, i.e. the daemon's log; start-up lines and problems only
LOG4J2 = """status = warn
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{ISO8601} %p [%t] %c{1}: %m%n
rootLogger.level = WARN
rootLogger.appenderRef.console.ref = console
logger.process.name = alluxio.ProcessUtils
logger.process.level = INFO
logger.master.name = alluxio.master.AlluxioMaster
logger.master.level = INFO
logger.worker.name = alluxio.worker.AlluxioWorker
logger.worker.level = INFO
"""
_SIZE = re.compile(r"^\d+(\.\d+)?\s*(B|KB|MB|GB|TB)$", re.IGNORECASE)


def store_size() -> str:
    raw = os.environ.get("PERFKIT_LAB_ALLUXIO_STORE", STORE_SIZE).strip()
    if not _SIZE.match(raw) or float(re.match(r"[\d.]+", raw).group()) <= 0:
        raise PerfkitError(f"PERFKIT_LAB_ALLUXIO_STORE={raw!r} is not a size: give one such as 512MB or 2GB "
                           "(the Alluxio worker's cache on local disk)")
    return raw.upper().replace(" ", "")


def size_bytes(size: str) -> int:
    """Alluxio's reading of a size store_size() checked, such as 12MB: powers of 1024 (FormatUtils.parseSpaceSize)."""
    unit = _SIZE.match(size).group(2).upper()
    return int(float(size[:-len(unit)]) * 1024 ** ["B", "KB", "MB", "GB", "TB"].index(unit))


def store_medium() -> str:
    """Where the worker keeps its blocks: MEM (a folder of its own in /dev/shm, memory) as a cluster co-locating
    Alluxio with its compute does, or SSD (the lab home's disk) where there is no /dev/shm to write, or when
    PERFKIT_LAB_ALLUXIO_MEDIUM=SSD asks for it."""
    asked = os.environ.get("PERFKIT_LAB_ALLUXIO_MEDIUM", "").strip().upper()
    if asked not in ("", "MEM", "SSD"):
        raise PerfkitError(f"PERFKIT_LAB_ALLUXIO_MEDIUM={asked!r}: give MEM (the worker's store in /dev/shm) or SSD "
                           "(on the lab home's disk)")
    if asked:
        return asked
    return "MEM" if SHM.is_dir() and os.access(SHM, os.W_OK) else "SSD"


TIERS_SETTING = "PERFKIT_LAB_ALLUXIO_TIERS"
ALIGN_RESERVED = "16MB"  # per folder of a tiered store: room to swap a block of the taxi data (about 11 MB)
MEDIA = ("MEM", "SSD")  # Alluxio's tier aliases the lab can give a folder, fastest first


def store_levels() -> list[tuple[str, str]]:
    """(medium, size) of each level of the worker's store, the fastest first. PERFKIT_LAB_ALLUXIO_TIERS gives a tiered
    store such as MEM:64MB,SSD:1GB (memory over disk, as the cache-tier study ran Alluxio: blocks the memory cannot
    hold stay on disk, and a read moves them up); else one level, store_medium() of store_size()."""
    raw = os.environ.get(TIERS_SETTING, "").strip()
    if not raw:
        return [(store_medium(), store_size())]
    fix = ("give each level as MEDIUM:SIZE, the fastest first, each medium once: MEM:64MB,SSD:1GB (MEM in /dev/shm, "
           "SSD on the lab home's disk)")
    levels = []
    for part in raw.split(","):
        medium, _, size = (x.strip().upper().replace(" ", "") for x in part.partition(":"))
        if medium not in MEDIA or not _SIZE.match(size) or float(re.match(r"[\d.]+", size).group()) <= 0:
            raise PerfkitError(f"{TIERS_SETTING}={raw!r}: {part.strip()!r} is not a level: {fix}")
        levels.append((medium, size))
    media = [medium for medium, _ in levels]
    if media != sorted(set(media), key=MEDIA.index):
        raise PerfkitError(f"{TIERS_SETTING}={raw!r}: {fix}")
    if "MEM" in media and not (SHM.is_dir() and os.access(SHM, os.W_OK)):
        raise PerfkitError(f"{TIERS_SETTING}={raw!r}: MEM needs {SHM} to write to, which this machine does not give: "
                           "use SSD alone (SSD:1GB)")
    return levels


def client_properties(ports: LabPorts) -> dict[str, object]:
    """What a client (an engine, the shell) needs: where the master is. No keys."""
    return {
        "alluxio.master.hostname": HOST, "alluxio.master.rpc.port": ports.alluxio_master,
        "alluxio.user.hostname": HOST,
        # reads go through the worker's RPC, not straight to its block files: its counters then see every byte.
        # Short-circuit works here with "alluxio.locality.node" set to HOST on both sides (the client finds its worker
        # local by that name): measured on hot q1 through Trino 476, its drivers read in 0.55 s instead of 1.24 s,
        # the query took the same 0.90 s, and the worker counted none of the bytes
        "alluxio.user.short.circuit.enabled": "false",
        "alluxio.user.metrics.collection.enabled": "false",
    }


def hadoop_conf(ports: LabPorts) -> dict[str, str]:
    """alluxio:// for a Hadoop client (Spark, Hive, the metastore, Hadoop's CLI), with the shaded client jar on its
    class path (perfkit.lab.alluxio_dist.alluxio_client_jar)."""
    return {"fs.alluxio.impl": "alluxio.hadoop.FileSystem",
            "fs.AbstractFileSystem.alluxio.impl": "alluxio.hadoop.AlluxioFileSystem",
            **{k: str(v) for k, v in client_properties(ports).items()}}


class AlluxioServer(Service):
    name = "alluxio"
    needs = ("s3", "s3-network")  # the under-filesystem, reached through the S3 network the lab emulates

    def __init__(self, home: Path, ports: LabPorts):
        super().__init__(home, ports)
        self.root = home / "alluxio"
        self.conf_dir = self.root / "conf"  # the servers' configuration, with the S3 keys (0600)
        self.client_conf_dir = self.root / "client-conf"  # for engines and the shell: no keys
        self.memory_store = SHM / f"perfkit-alluxio-{hashlib.sha1(str(home).encode()).hexdigest()[:12]}"
        self.medium = store_levels()[0][0]  # the top level's (the whole store's, with one level)
        self.store = self.folder(self.medium)
        self.root_ufs = self.root / "underFSStorage"  # the namespace's root (local): S3 is mounted below it
        self.formatted = self.root / "journal-formatted"
        self.master = Daemon("alluxio-master", home, MASTER_MAIN,
                             ports={"alluxio_master": ports.alluxio_master,
                                    "alluxio_master_web": ports.alluxio_master_web})
        self.worker = Daemon("alluxio-worker", home, WORKER_MAIN,
                             ports={"alluxio_worker": ports.alluxio_worker,
                                    "alluxio_worker_web": ports.alluxio_worker_web})
        self.proxy = Daemon("alluxio-proxy", home, PROXY_MAIN, ports={"alluxio_proxy": ports.alluxio_proxy})
        self.daemons = [self.master, self.worker, self.proxy]

    def folder(self, medium: str) -> Path:
        """Where the worker keeps the blocks of the level on `medium`: memory in a folder of its own per lab home, or
        the lab home's disk."""
        return self.memory_store if medium == "MEM" else self.root / "worker-store"

    @property
    def mount_point(self) -> str:
        return f"/{BUCKET}"

    def addresses(self) -> dict[str, str]:
        return {"alluxio-master": f"alluxio://{HOST}:{self.ports.alluxio_master} (s3://{BUCKET} at "
                                  f"alluxio://{HOST}:{self.ports.alluxio_master}{self.mount_point})",
                "alluxio-worker": f"{HOST}:{self.ports.alluxio_worker} (store "
                                  + " over ".join(f"{size} {medium} in {self.folder(medium)}"
                                                  for medium, size in store_levels()) + ")",
                "alluxio-proxy": f"{self.s3_endpoint} (S3 API; bucket {BUCKET})"}

    @property
    def s3_endpoint(self) -> str:
        return f"http://{HOST}:{self.ports.alluxio_proxy}/api/v1/s3"

    def site(self) -> dict[str, object]:
        p, creds = self.ports, lab_credentials(create=True, home=self.home)
        return {
            **client_properties(p),
            "alluxio.home": self.root, "alluxio.work.dir": self.root,
            # never probe the internet: the update check otherwise asks cloud metadata addresses off this machine
            "alluxio.master.update.check.enabled": "false",
            # one user's lab: S3 objects load as root-owned 0700 inodes, which the S3 API's caller (named by its
            # access key) could not list
            "alluxio.security.authorization.permission.enabled": "false",
            "alluxio.master.daily.backup.enabled": "false",
            # each stop otherwise leaves a metrics dump and a jstack in the lab's logs: two files per restart, 446
            # in one lab home after three days of tests, read by nobody
            "alluxio.exit.collect.info": "false",
            # the worker's data server waits for 2 s without new work, twice (its two Netty event-loop groups), before
            # it stops: 4.2 of a 5.2 s Alluxio stop, paid at each S3 network change
            "alluxio.worker.network.netty.shutdown.quiet.period": "0ms",
            # the master refuses every request for 5 s after it starts, waiting for workers to register; start()
            # waits for the lab's one worker itself
            "alluxio.master.worker.connect.wait.time": "0sec",
            "alluxio.master.bind.host": HOST, "alluxio.master.web.bind.host": HOST,
            "alluxio.master.web.hostname": HOST,
            "alluxio.master.web.port": p.alluxio_master_web,
            "alluxio.master.journal.type": "UFS", "alluxio.master.journal.folder": self.root / "journal",
            "alluxio.master.metastore": "HEAP",
            "alluxio.master.mount.table.root.ufs": self.root_ufs,
            "alluxio.worker.hostname": HOST, "alluxio.worker.bind.host": HOST,
            "alluxio.worker.web.bind.host": HOST, "alluxio.worker.web.hostname": HOST,
            "alluxio.worker.rpc.port": p.alluxio_worker, "alluxio.worker.web.port": p.alluxio_worker_web,
            "alluxio.proxy.web.bind.host": HOST, "alluxio.proxy.web.hostname": HOST,
            "alluxio.proxy.web.port": p.alluxio_proxy,
            # the proxy's v1 REST service: the S3 API and the paths API beside it (free, in 0.1 s instead of the
            # shell's 3 s JVM). The v2 S3 service (2.9's default) takes every /api/v1/* URI and answers any other than
            # /api/v1/s3 with an empty 200: a free asked of it does nothing
            "alluxio.proxy.s3.v2.version.enabled": "false",
            # a freed block leaves the worker at its next heartbeat, and the master hears of it at the one after:
            # 1 s each by default, 2 s of every emptying of the tier; a lab of one worker can afford 5 a second
            "alluxio.worker.block.heartbeat.interval": "200ms",
            **self.store_properties(),
            "alluxio.underfs.s3.endpoint": lab_s3_endpoint(p, self.home),
            "alluxio.underfs.s3.endpoint.region": "us-east-1",
            "alluxio.underfs.s3.disable.dns.buckets": "true",
            "alluxio.underfs.s3.inherit.acl": "false",
            # listing a prefix would otherwise write a folder marker object into it: the tier writes nothing to S3
            "alluxio.underfs.object.store.breadcrumbs.enabled": "false",
            "s3a.accessKeyId": creds["access_key"], "s3a.secretKey": creds["secret_key"],
        }

    def store_properties(self) -> dict[str, object]:
        """The worker's store, level by level (store_levels): each level's medium, folder and size."""
        levels = store_levels()
        found: dict[str, object] = {
            "alluxio.worker.tieredstore.levels": len(levels),
            # Alluxio's default reviewer refuses a new block in a folder with under 64 MB free: the lab's small levels
            # (a memory level below the data, a store planted too small) would never take one
            "alluxio.worker.reviewer.class": "alluxio.worker.block.reviewer.AcceptingReviewer"}
        if len(levels) > 1:
            # with two levels or more, each folder keeps this much aside for swapping blocks between levels (1GB
            # by default, counted as used): a level of 1GB or less would take no block at all
            found["alluxio.worker.management.tier.align.reserved.bytes"] = ALIGN_RESERVED
        for i, (medium, size) in enumerate(levels):
            found.update({f"alluxio.worker.tieredstore.level{i}.alias": medium,
                          f"alluxio.worker.tieredstore.level{i}.dirs.mediumtype": medium,
                          f"alluxio.worker.tieredstore.level{i}.dirs.path": self.folder(medium),
                          f"alluxio.worker.tieredstore.level{i}.dirs.quota": size})
        return found

    def write_client_config(self) -> None:
        """The configuration clients read (Trino through -Dalluxio.conf.dir, the shell): where the master is."""
        self.client_conf_dir.mkdir(parents=True, exist_ok=True)
        # atomically: Alluxio and Trino write it at their starts, which the lab runs side by side
        atomic.write_text(self.client_conf_dir / "log4j2.properties", LOG4J2)
        atomic.write_text(self.client_conf_dir / "alluxio-site.properties", _properties(client_properties(self.ports)))

    def write_config(self) -> None:
        self.write_client_config()
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        (self.conf_dir / "log4j2.properties").write_text(LOG4J2)
        write_private(self.conf_dir / "alluxio-site.properties", _properties(self.site()))
        self.root_ufs.mkdir(parents=True, exist_ok=True)  # the S3 API keeps its metadata folder there

    def java(self, main: str, *args: str, conf_dir: Path | None = None) -> list[str]:
        conf = conf_dir or self.conf_dir
        return [str(tools.java_home() / "bin" / "java"), HEAP, *lab_java_options(self.home), *ADD_OPENS,
                f"-Dalluxio.conf.dir={conf}",
                f"-Dalluxio.logs.dir={self.home / 'logs'}",  # a JVM property only: Alluxio refuses it in the site file
                f"-Dlog4j2.configurationFile={(conf / 'log4j2.properties').as_uri()}", "-Duser.timezone=UTC",
                "-cp", f"{conf}:{alluxio_dist.alluxio_lib()}/*", main, *args]

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        return self.java((daemon or self.master).marker)  # each daemon's marker is its main class

    def env(self) -> dict[str, str]:
        return {"AWS_EC2_METADATA_DISABLED": "true"}  # the SDK never asks the cloud's metadata service

    def format_journal(self) -> None:
        """Format the master's journal once (a new namespace: the mount is made again after)."""
        if self.formatted.exists():
            return
        run = subprocess.run(self.java(FORMAT_MAIN, "master"), capture_output=True, text=True, env=self._env(),
                             timeout=300)
        if run.returncode != 0:
            raise ServiceError("alluxio-master", f"formatting the journal failed: {(run.stdout + run.stderr)[-400:]}",
                               "read the message; `perfkit lab up alluxio` formats again", str(self.master.log))
        self.formatted.write_text("formatted\n")

    def _env(self) -> dict[str, str]:
        return {**os.environ, **self.env()}

    def stop(self) -> list[str]:
        """The daemons stopped, then a store in memory given back: its blocks die with the worker, as on a node."""
        stopped = super().stop()
        self._give_back_memory()
        return stopped

    def stop_worker(self) -> bool:
        """The worker alone stopped (and its memory given back): `start` brings a worker again, with the store size
        set then, against the master and the proxy that kept running. True if a worker was stopped."""
        stopped = self.worker.stop()
        self._give_back_memory()
        return stopped

    def _give_back_memory(self) -> None:
        if self.worker.pid() is None:  # also after a switch to SSD: the memory of the worker that stopped
            shutil.rmtree(self.memory_store, ignore_errors=True)

    def start(self) -> None:
        self.write_config()
        if self.master.pid() is None:
            self.format_journal()
            self.master.start(self.argv(self.master), env=self.env(), cwd=self.root)
        self.master.wait_until(lambda: self.master_info() is not None, 240,
                               "read the log; a busy 2-core machine needs more time: `perfkit lab up alluxio`")
        levels = store_levels()
        for medium, _ in levels:  # here, not with the configuration: memory only when it runs
            self.folder(medium).mkdir(parents=True, exist_ok=True)
        # the worker and the proxy need only the master: both start now, beside the mount
        new_worker = self.worker.pid() is None
        for daemon in (self.worker, self.proxy):
            if daemon.pid() is None:
                daemon.start(self.argv(daemon), env=self.env(), cwd=self.root)
        self.mount_bucket()
        # the master lists a worker that died until its heartbeat times out (minutes): a worker started now is
        # waited for until it answers and the master lists the store it was given
        store = sum(size_bytes(size) for _, size in levels)

        def worker_ready() -> bool:
            workers, registered = self._registered(self.master_info())
            return self._worker_answers() and registered == store if new_worker else workers > 0

        self.worker.wait_until(worker_ready, 240, "read the log; `perfkit lab up alluxio` starts the missing worker")
        self.proxy.wait_until(self._proxy_answers, 240, "read the log; `perfkit lab up alluxio` starts it again")

    def _proxy_answers(self) -> bool:
        """Any HTTP answer from the S3 API (an error status is still an answer)."""
        try:
            urllib.request.urlopen(f"{self.s3_endpoint}/", timeout=5).close()
        except urllib.error.HTTPError:
            return True
        except Exception:  # noqa: BLE001 - not listening (yet)
            return False
        return True

    # --- the namespace --------------------------------------------------------------------------------------

    def shell(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        """`alluxio fs ARGS` as a client (no keys in its configuration)."""
        return subprocess.run(self.java(SHELL_MAIN, *args, conf_dir=self.client_conf_dir), capture_output=True,
                              text=True, env=self._env(), timeout=timeout)

    def mounts(self) -> dict[str, str]:
        """Alluxio path -> under-filesystem URI of every mount point, from the master's REST API (`alluxio fs mount`
        would start a JVM for it: 3 s of each Alluxio start)."""
        points = (self.master_info() or {}).get("mountPoints") or {}
        return {path: point.get("ufsUri", "") for path, point in points.items()}

    def mount_bucket(self) -> None:
        """The lab's bucket at /<bucket>, once (the mount table is journaled: it survives restarts)."""
        if self.mounts().get(self.mount_point, "").rstrip("/") == f"s3://{BUCKET}":
            return
        run = self.shell("mount", self.mount_point, f"s3://{BUCKET}/")
        if run.returncode != 0:
            raise ServiceError("alluxio-master", f"mounting s3://{BUCKET} failed: {(run.stdout + run.stderr)[-400:]}",
                               "check that the lab's S3 server is up (`perfkit lab status`)", str(self.master.log))

    # --- health ---------------------------------------------------------------------------------------------

    def _get(self, port: int, path: str) -> dict | None:
        return get_json(f"http://{HOST}:{port}{path}", timeout=5)  # None while not answering (yet)

    def master_info(self) -> dict | None:
        if not port_in_use(HOST, self.ports.alluxio_master):
            return None
        return self._get(self.ports.alluxio_master_web, "/api/v1/master/info")

    @staticmethod
    def _registered(info: dict | None) -> tuple[int, int]:
        """From the master's info: the workers it lists, and the bytes their stores registered with."""
        info = info or {}
        return len(info.get("workers") or []), int((info.get("capacity") or {}).get("total") or 0)

    def _worker_answers(self) -> bool:
        return self._get(self.ports.alluxio_worker_web, "/metrics/json/") is not None

    def health(self) -> tuple[bool, str]:
        info = self.master_info()
        if info is None:
            return False, "master not answering"
        workers, store = self._registered(info)
        if workers < 1:
            return False, "no live worker"
        if self.proxy.pid() is not None and not self._proxy_answers():
            return False, "the S3 API does not answer"
        return True, f"{workers} worker{'s' if workers != 1 else ''}, store {store / 2**20:g} MB"


def _properties(values: dict[str, object]) -> str:
    return "".join(f"{k}={v}\n" for k, v in values.items())
