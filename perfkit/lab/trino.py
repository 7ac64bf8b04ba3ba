"""A real Trino: one coordinator that is also its own worker, on 127.0.0.1 only.

Catalogs: `hive` (the lab's thrift metastore; HDFS through Hadoop's client, S3 through Trino's native client,
alluxio:// through Alluxio's client),
`tpch` (generated data to copy from) and `jmx` (the server's own counters, e.g. its file-system cache's).
`hive_cache` reads the hive catalog's tables through Trino's file-system cache; catalogs are dynamic, so an empty
cache is a fresh catalog of that kind (fresh_cache_catalog) rather than a restart.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from perfkit import atomic
from perfkit.lab import java, trino_dist
from perfkit.lab.alluxio import AlluxioServer
from perfkit.lab.hdfs import site_xml
from perfkit.lab.shape import lab_replication
from perfkit.lab.process import Daemon, port_in_use
from perfkit.lab.service import Service
from perfkit.lab.settings import HOST, LabPorts, lab_java_options, lab_credentials, lab_s3_endpoint, write_private
from perfkit.s3_retries import trino_s3_retries

HEAP = "-Xmx2G"  # the notes' small-node memory settings below assume 2 GiB: 768 MB per query + 512 MB headroom
JVM_OPTIONS = [
    "-server", HEAP, "-XX:+UseG1GC", "-XX:G1HeapRegionSize=32M", "-XX:+ExplicitGCInvokesConcurrent",
    "-XX:+ExitOnOutOfMemoryError", "-XX:-OmitStackTraceInFastThrow", "-XX:ReservedCodeCacheSize=256M",
    "-XX:PerMethodRecompilationCutoff=10000", "-XX:PerBytecodeRecompilationCutoff=10000",
    "-Djdk.attach.allowAttachSelf=true", "-Djdk.nio.maxCachedBufferSize=2000000", "-XX:+EnableDynamicAgentLoading",
    "-Dfile.encoding=UTF-8", "-Duser.timezone=UTC",
    # allowed anyway on Java 24/25; saying so keeps four WARNING lines per start out of the log
    "--enable-native-access=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
]
# INFO: plugins and catalogs loaded, "SERVER STARTED"; not the ~1000-line configuration table, nor a line per query
LOG_LEVELS = {"io.trino": "INFO", "Bootstrap": "WARN", "io.trino.event.QueryMonitor": "WARN", "io.airlift": "WARN",
              "org.hibernate": "WARN", "org.apache.hadoop": "WARN", "org.eclipse.jetty": "WARN"}


def properties(values: dict[str, object]) -> str:
    return "".join(f"{k}={v}\n" for k, v in values.items())


CACHE_CATALOG = "hive_cache"  # the hive catalog's tables read through Trino's file-system cache
CACHE_SIZE = "2GB"  # at most this much local disk for the cache


class TrinoServer(Service):
    name = "trino"
    needs = ("hive-metastore",)
    answer_within_s = 10.0  # a health probe's limit, so a port that never answers cannot hang `lab up`

    def __init__(self, home: Path, ports: LabPorts):
        super().__init__(home, ports)
        self.etc, self.data = home / "trino" / "etc", home / "trino" / "data"
        self.cache_dir = home / "trino" / "cache"  # the file-system cache of catalog CACHE_CATALOG
        self.fresh_cache_dirs = home / "trino" / "fresh-caches"  # one per fresh cache catalog, until the next start
        self.cache_catalog_file = home / "trino" / "cache-catalog"  # the cache catalog in use, when not CACHE_CATALOG
        self.daemons = [Daemon("trino", home, "io.trino.server.TrinoServer", ports={"trino": ports.trino})]

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.ports.trino}"

    def addresses(self) -> dict[str, str]:
        return {"trino": f"{self.url} (catalogs hive, {CACHE_CATALOG}, tpch, jmx)"}

    def config(self) -> dict[str, dict[str, object]]:
        """Every file under etc/ (by relative path) and its properties; the S3 keys only in the hive catalogs."""
        p, creds = self.ports, lab_credentials(create=True, home=self.home)
        hive = {
            "connector.name": "hive",
            "hive.metastore.uri": f"thrift://{HOST}:{p.metastore}",
            "hive.non-managed-table-writes-enabled": "true",  # write workloads write to external tables
            "fs.hadoop.enabled": "true",  # hdfs://127.0.0.1:<namenode_rpc>/...
            # what Trino writes to HDFS keeps the lab's replication (its HDFS client's default is 3: on one DataNode,
            # every block it wrote was under-replicated)
            "hive.config.resources": self.etc / "hdfs-site.xml",
            "fs.native-s3.enabled": "true",  # s3:// and s3a:// to the lab's S3 server
            "fs.alluxio.enabled": "true",  # alluxio:///<bucket>/...: the lab's Alluxio (its address: jvm.config)
            "s3.endpoint": lab_s3_endpoint(p, self.home), "s3.region": "us-east-1", "s3.path-style-access": "true",
            "s3.aws-access-key": creds["access_key"], "s3.aws-secret-key": creds["secret_key"],
            # a throttled request gives up within a minute (perfkit.s3_retries); a run's own time limit is
            # query_max_run_time, which Trino enforces on the server
            **trino_s3_retries(),
        }
        return {
            "node.properties": {
                "node.environment": "perfkit_lab", "node.id": "perfkit-lab-trino", "node.data-dir": self.data,
                # the HTTP server binds to node.bind-ip (0.0.0.0 by default); the address the node announces
                # is its internal address (else the machine's first non-loopback IP)
                "node.bind-ip": HOST, "node.internal-address": HOST,
            },
            "config.properties": {
                "coordinator": "true", "node-scheduler.include-coordinator": "true",
                "http-server.http.port": p.trino, "discovery.uri": self.url,
                "http-server.log.enabled": "false",  # no request log growing under data/
                "query.max-memory": "1GB", "query.max-memory-per-node": "768MB",
                "memory.heap-headroom-per-node": "512MB", "task.concurrency": 2,
                "plugin.dir": trino_dist.trino_home() / "plugin",
                "catalog.management": "dynamic", "catalog.store": "file",
            },
            "catalog-store.properties": {"catalog.config-dir": self.etc / "catalog"},
            "log.properties": LOG_LEVELS,
            "catalog/hive.properties": hive,
            # the same tables through Trino's file-system cache (Alluxio's caching library, on local disk): the
            # cache tier "trino-cache"; a catalog of its own, so the plain catalog still reads S3 every time
            f"catalog/{CACHE_CATALOG}.properties": {
                **hive, "fs.cache.enabled": "true", "fs.cache.directories": self.cache_dir,
                "fs.cache.max-sizes": CACHE_SIZE},
            # TPC-H's own column names (l_orderkey, not orderkey): the suite's SQL is the standard text
            "catalog/tpch.properties": {"connector.name": "tpch", "tpch.column-naming": "STANDARD"},
            "catalog/jmx.properties": {"connector.name": "jmx"},
        }

    def write_config(self) -> None:
        # the fresh cache catalogs of the last run end with it: a start has the catalogs written here only
        for stale in (self.etc / "catalog").glob(f"{CACHE_CATALOG}_*.properties"):
            stale.unlink()
        shutil.rmtree(self.fresh_cache_dirs, ignore_errors=True)
        self.cache_catalog_file.unlink(missing_ok=True)
        for rel, values in self.config().items():
            path = self.etc / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if rel in ("catalog/hive.properties", f"catalog/{CACHE_CATALOG}.properties"):
                write_private(path, properties(values))  # it holds the S3 keys
            else:
                path.write_text(properties(values))
        (self.etc / "hdfs-site.xml").write_text(site_xml({"dfs.replication": lab_replication(self.home)}))
        # Alluxio's client finds its master in alluxio-site.properties of this folder (no keys in it)
        alluxio = AlluxioServer(self.home, self.ports)
        alluxio.write_client_config()
        alluxio_conf = f"-Dalluxio.conf.dir={alluxio.client_conf_dir}"
        options = [*JVM_OPTIONS, *lab_java_options(self.home), alluxio_conf]
        (self.etc / "jvm.config").write_text("\n".join(options) + "\n")

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        """The launcher exec's java itself: the pid the lab records is the server's JVM."""
        jdk = java.java_for_trino()  # first: a missing Java fails in a second, not after an 821 MB download
        return [str(trino_dist.trino_home() / "bin" / "launcher"), "-etc-dir", str(self.etc),
                "-data-dir", str(self.data), "-jvm-dir", str(jdk), "run"]

    def start(self) -> None:
        if self.daemon.pid() is None:
            argv = self.argv()  # fetches Trino and a Java 24+ first, if need be
            self.write_config()
            self.data.mkdir(parents=True, exist_ok=True)
            # the launcher keeps a pid file of its own and refuses to start while that pid exists, even as a
            # zombie not yet reaped or as another process reusing the number: the lab tracks the server itself
            (self.data / "var" / "run" / "launcher.pid").unlink(missing_ok=True)
            # no AWS SDK look-ups of the cloud's instance metadata: the keys are in the catalog
            self.daemon.start(argv, env={"AWS_EC2_METADATA_DISABLED": "true"}, cwd=self.data)
        self.wait_healthy(self.daemon, 300, "read the log; Trino takes 15-30 s to start here, "
                          "minutes on a busy 2-core machine, and needs ~2.5 GiB of free memory")

    def cache_catalog(self) -> str:
        """The catalog that reads through the file-system cache now: CACHE_CATALOG, or the last fresh one."""
        try:
            return self.cache_catalog_file.read_text().strip() or CACHE_CATALOG
        except FileNotFoundError:
            return CACHE_CATALOG

    def fresh_cache_catalog(self) -> tuple[str, int]:
        """A new catalog like CACHE_CATALOG with an empty cache folder of its own, in use from now on; the previous
        fresh one dropped and its pages deleted. Returns the new catalog and the bytes of pages the previous one held.

        Trino's cache manager keeps its list of cached pages in memory: pages deleted under a running Trino are neither
        read nor cached again (measured: hot reads then still fetched half their bytes from S3), so a cold cache is a
        new catalog (under a second) or a restart (15-30 s here). A catalog dropped and created again under the same
        name keeps the first one's JMX counters (measured): each fresh catalog has a name of its own."""
        previous = self.cache_catalog()
        number = int(previous.rsplit("_", 1)[1]) + 1 if previous != CACHE_CATALOG else 2
        name = f"{CACHE_CATALOG}_{number}"
        folder = self.fresh_cache_dirs / name
        folder.mkdir(parents=True)
        values = {**self.config()[f"catalog/{CACHE_CATALOG}.properties"], "fs.cache.directories": folder}
        connector = values.pop("connector.name")
        quoted = {key: str(value).replace("'", "''") for key, value in values.items()}
        with_ = ", ".join(f'"{key}" = \'{value}\'' for key, value in quoted.items())
        self.query(f"CREATE CATALOG {name} USING {connector} WITH ({with_})")
        created = self.etc / "catalog" / f"{name}.properties"
        if created.exists():
            created.chmod(0o600)  # the file catalog store wrote the S3 keys in it
        atomic.write_text(self.cache_catalog_file, name + "\n")
        if previous == CACHE_CATALOG:  # the configured catalog stays (a restart uses it again), unread until then
            return name, _bytes_under(self.cache_dir)
        self.query(f"DROP CATALOG {previous}")
        old = self.fresh_cache_dirs / previous
        held = _bytes_under(old)
        shutil.rmtree(old, ignore_errors=True)
        return name, held

    def query(self, sql: str) -> list[tuple]:
        from trino.dbapi import connect

        conn = connect(host=HOST, port=self.ports.trino, user="perfkit", http_scheme="http",
                       request_timeout=self.answer_within_s, max_attempts=1)
        try:
            cursor = conn.cursor()
            cursor.execute(sql)
            return cursor.fetchall()
        finally:
            conn.close()

    def health(self) -> tuple[bool, str]:
        """Healthy once the node has announced itself: before that every query fails with NO_NODES_AVAILABLE."""
        if not port_in_use(HOST, self.ports.trino):
            return False, "port not open"
        try:
            active = self.query("SELECT count(*) FROM system.runtime.nodes WHERE state = 'active'")[0][0]
        except Exception as err:  # noqa: BLE001 - any failure means "not healthy yet"
            return False, f"nodes query failed: {str(err)[:80]}"
        return (active >= 1), f"{active} active node{'s' if active != 1 else ''}"

    @property
    def version(self) -> str:
        return str(self.query("SELECT node_version FROM system.runtime.nodes LIMIT 1")[0][0])


def _bytes_under(folder: Path) -> int:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
