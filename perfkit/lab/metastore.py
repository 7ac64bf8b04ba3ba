"""The Hive standalone metastore (thrift, Derby in the lab home): the one catalog Spark, real Hive and Trino share."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from perfkit.errors import ServiceError
from perfkit.lab import alluxio, alluxio_dist, hive_jars, tools, versions
from perfkit.lab.hdfs import site_xml
from perfkit.lab.process import Daemon, port_in_use
from perfkit.lab.service import Service
from perfkit.lab.settings import HOST, LabPorts, lab_java_options, lab_credentials
from perfkit.lab.spark_conf import lab_spark_conf

# Hive 4 on Java 17: reflection into these packages (Kryo plans, "Error caching map.xml" without java.util.concurrent);
# HiveServer2 needs them, and the metastore too where it reads HiveServer2's partition filters (hive-exec's Kryo)
HIVE_OPENS = ["java.lang", "java.util", "java.util.concurrent", "java.util.concurrent.atomic", "java.nio", "sun.nio.ch",
              "java.net", "java.io", "java.lang.reflect", "java.lang.invoke", "java.text", "java.time", "java.math"]

HEAP = "-Xmx512m"
MAIN = "org.apache.hadoop.hive.metastore.HiveMetaStore"
SCHEMA_TOOL = "org.apache.hadoop.hive.metastore.tools.schematool.MetastoreSchemaTool"
# Hive's own log4j2 files log to /tmp/<user>: the lab's daemons log to stderr, i.e. into their log under <home>/logs
LOG4J2 = """status = warn
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{ISO8601} %p [%t] %c{2}: %m%n
rootLogger.level = INFO
rootLogger.appenderRef.console.ref = console
logger.DataNucleus.name = DataNucleus
logger.DataNucleus.level = ERROR
logger.Datastore.name = Datastore
logger.Datastore.level = ERROR
"""
# the keys come from the environment (below), never from a file Hive could echo or a command line `ps` shows
ENV_CREDENTIALS = "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider"


def s3a_settings(ports: LabPorts) -> dict[str, str]:
    """The lab's S3 for a Hive JVM's core-site.xml: the settings Spark uses, with the keys read from the environment."""
    conf = lab_spark_conf(ports, {"access_key": "", "secret_key": ""})
    s3a = {k.removeprefix("spark.hadoop."): v for k, v in conf.items()
           if k.startswith("spark.hadoop.fs.s3a.") and not k.endswith((".access.key", ".secret.key"))}
    return {**s3a, "fs.s3a.aws.credentials.provider": ENV_CREDENTIALS}


def s3a_env(home: Path) -> dict[str, str]:
    creds = lab_credentials(home=home)
    return {"AWS_ACCESS_KEY_ID": creds["access_key"], "AWS_SECRET_ACCESS_KEY": creds["secret_key"]}


def warehouse(ports: LabPorts) -> str:
    """Managed tables go to the lab's HDFS, as on a real cluster, where Spark, Hive and Trino all read them (a local
    folder would tie them to this machine's file system). Lab tables are external with a LOCATION anyway. The
    default database keeps the location of the first start: a later PERFKIT_LAB_PORT_NAMENODE_RPC does not move it."""
    return f"hdfs://{HOST}:{ports.namenode_rpc}/warehouse"


class HiveMetastore(Service):
    name = "hive-metastore"
    # table locations live there: the metastore checks and creates them (S3 through the network the lab emulates)
    needs = ("hdfs", "s3", "s3-network")

    def __init__(self, home: Path, ports: LabPorts):
        super().__init__(home, ports)
        self.root = home / "metastore"
        self.conf_dir = self.root / "conf"
        self.database = self.root / "metastore_db"
        self.schema_done = self.root / "schema-initialised"  # written only after -initSchema succeeded
        self.daemons = [Daemon(self.name, home, MAIN, ports={"metastore": ports.metastore})]

    @property
    def uri(self) -> str:
        return f"thrift://{HOST}:{self.ports.metastore}"

    def addresses(self) -> dict[str, str]:
        return {self.name: self.uri}

    def site(self) -> dict[str, object]:
        return {
            "metastore.thrift.port": self.ports.metastore,
            "metastore.thrift.bind.host": HOST,  # without it the metastore listens on every interface
            "metastore.thrift.uris": self.uri,
            "javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={self.database};create=true",
            "javax.jdo.option.ConnectionDriverName": "org.apache.derby.jdbc.EmbeddedDriver",
            "metastore.warehouse.dir": warehouse(self.ports),
            "metastore.warehouse.external.dir": f"{warehouse(self.ports)}/external",
            # Hive 4 otherwise rewrites managed tables and schema locations (Trino's CTAS then fails)
            "metastore.metadata.transformer.class": " ",
            # a lab catalog: no background housekeeping, compaction or statistics threads
            "metastore.housekeeping.threads.on": "false",
            "metastore.compactor.initiator.on": "false",
            "metastore.compactor.cleaner.on": "false",
            "metastore.compactor.worker.threads": 0,
            "metastore.acidmetrics.thread.on": "false",
            "metastore.stats.auto.analyze": "none",  # an enum: none, all, existing
            # as in the distribution's metastore-site.xml
            "metastore.task.threads.always": "org.apache.hadoop.hive.metastore.events.EventCleanerTask",
            # HiveServer2 prunes partitions by sending the metastore its filter expression, which only hive-exec's
            # proxy reads (the default one answers UnsupportedOperationException): hive-exec is on the classpath
            "metastore.expression.proxy": "org.apache.hadoop.hive.ql.optimizer.ppr.PartitionExpressionForMetastore",
            "metastore.server.min.threads": 4,
            "metastore.server.max.threads": 64,
            # HiveServer2 reads the notification log at start: "User root is not allowed to perform this API call"
            "hive.metastore.event.db.notification.api.auth": "false",  # its metastore.* name is misspelt
            "metastore.async.log.enabled": "false",  # async log4j2 needs the disruptor jar the dist lacks
        }

    def write_config(self) -> None:
        self.conf_dir.mkdir(parents=True, exist_ok=True)
        (self.conf_dir / "metastore-site.xml").write_text(site_xml(self.site()))
        (self.conf_dir / "core-site.xml").write_text(site_xml({
            "fs.defaultFS": f"hdfs://{HOST}:{self.ports.namenode_rpc}", "hadoop.tmp.dir": self.home / "tmp",
            **s3a_settings(self.ports), **alluxio.hadoop_conf(self.ports)}))
        (self.conf_dir / "metastore-log4j2.properties").write_text(LOG4J2)

    def java(self, main_class: str, *args: str) -> list[str]:
        log4j = self.conf_dir / "metastore-log4j2.properties"
        # the metastore checks and makes table locations: alluxio:// ones through Alluxio's client
        classpath = (f"{self.conf_dir}:{hive_jars.metastore_home() / 'lib'}/*:{tools.hadoop_lib()}/*:"
                     f"{alluxio_dist.alluxio_client_jar()}:{hive_jars.hive_exec_jar()}")
        return [str(tools.java_home() / "bin" / "java"), HEAP, *lab_java_options(self.home), "-Duser.timezone=UTC",
                # hive-exec reads HiveServer2's partition filters with Kryo, which reaches into java.base
                *(f"--add-opens=java.base/{pkg}=ALL-UNNAMED" for pkg in HIVE_OPENS),
                f"-Dlog4j2.configurationFile={log4j.as_uri()}", f"-Dderby.stream.error.file={self.root / 'derby.log'}",
                "-cp", classpath, main_class, *args]

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        return self.java(MAIN)

    def env(self) -> dict[str, str]:
        return {"METASTORE_HOME": str(hive_jars.metastore_home()), **s3a_env(self.home)}

    def init_schema(self) -> None:
        """Create the Derby catalog once; a database left by an interrupted init is removed and made again."""
        if self.schema_done.exists() and self.database.exists():
            return
        self.schema_done.unlink(missing_ok=True)
        shutil.rmtree(self.database, ignore_errors=True)
        log = self.home / "logs" / f"{self.name}-schema.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "w") as out:
            try:  # ~10 s when idle
                run = subprocess.run(self.java(SCHEMA_TOOL, "-dbType", "derby", "-initSchema"), stdout=out,
                                     stderr=subprocess.STDOUT, env={**os.environ, **self.env()}, cwd=self.root,
                                     timeout=600)
            except subprocess.TimeoutExpired:
                run = None
        if run is None or run.returncode != 0:
            raise ServiceError(self.name, "MetastoreSchemaTool -initSchema failed", "read the log, then retry "
                               "`perfkit lab up` (it starts the schema again from scratch)", str(log))
        self.schema_done.write_text(versions.HIVE)

    def start(self) -> None:
        if self.daemon.pid() is None:
            self.write_config()
            self.init_schema()
            self.daemon.start(self.argv(), env=self.env(), cwd=self.root)
        # ~8 s when idle; minutes on a busy 2-core machine (JIT, DataNucleus enhancing its classes)
        self.wait_healthy(self.daemon, 240, "read the log; a busy or short-of-memory machine "
                         "needs more time: run `perfkit lab up` again")

    def health(self) -> tuple[bool, str]:
        """A real thrift call (get_all_databases): a port that merely accepts is not a metastore."""
        if not port_in_use(HOST, self.ports.metastore):
            return False, "port not open"
        try:
            databases = get_all_databases(HOST, self.ports.metastore, timeout_s=10)
        except Exception as err:  # noqa: BLE001 - any failure means "not healthy yet"
            return False, f"get_all_databases failed: {str(err)[:80]}"
        return True, f"{len(databases)} database{'s' if len(databases) != 1 else ''}"


def get_all_databases(host: str, port: int, timeout_s: float) -> list[str]:
    """ThriftHiveMetastore.get_all_databases() by hand with the `thrift` package (PyHive's dependency): the call
    takes no arguments and returns list<string> (field 0) or a MetaException (field 1), so no generated client
    (and no extra package such as hmsclient) is needed."""
    from thrift.protocol.TBinaryProtocol import TBinaryProtocol
    from thrift.Thrift import TApplicationException, TMessageType, TType
    from thrift.transport.TSocket import TSocket
    from thrift.transport.TTransport import TBufferedTransport

    sock = TSocket(host, port)
    sock.setTimeout(timeout_s * 1000)
    transport = TBufferedTransport(sock)
    proto = TBinaryProtocol(transport)
    transport.open()
    try:
        proto.writeMessageBegin("get_all_databases", TMessageType.CALL, 1)
        proto.writeStructBegin("get_all_databases_args")
        proto.writeFieldStop()
        proto.writeStructEnd()
        proto.writeMessageEnd()
        transport.flush()
        _, kind, _ = proto.readMessageBegin()
        if kind == TMessageType.EXCEPTION:
            error = TApplicationException()
            error.read(proto)
            raise error
        names, failure = None, None
        proto.readStructBegin()
        while True:
            _, ftype, fid = proto.readFieldBegin()
            if ftype == TType.STOP:
                break
            if fid == 0 and ftype == TType.LIST:
                _, size = proto.readListBegin()
                names = [proto.readString() for _ in range(size)]
                proto.readListEnd()
            else:
                failure = f"field {fid}"  # the MetaException
                proto.skip(ftype)
            proto.readFieldEnd()
        proto.readStructEnd()
        proto.readMessageEnd()
    finally:
        transport.close()
    if names is None:
        raise RuntimeError(f"the metastore answered with an error ({failure or 'no result'})")
    return names


def spark_metastore_conf(ports: LabPorts, client: str = versions.HIVE,
                         jars: list[Path] | None = None) -> dict[str, str]:
    """Spark settings for the shared metastore. Spark's built-in Hive 2.3 client fails against a Hive 4 metastore
    ("Invalid method name: 'get_table'"): Spark loads the Hive `client` version's jars instead (by default Hive
    4.0.1's, which Spark 4 supports; Spark 3.5 goes up to 3.1.3)."""
    jars = ",".join(p.as_uri() for p in (jars or hive_jars.spark_metastore_jars()))
    return {
        "spark.sql.catalogImplementation": "hive",
        "spark.hadoop.hive.metastore.uris": f"thrift://{HOST}:{ports.metastore}",
        "spark.sql.hive.metastore.version": client,
        "spark.sql.hive.metastore.jars": "path",
        "spark.sql.hive.metastore.jars.path": jars,
        # a database Spark creates without LOCATION goes where Hive and Trino put theirs, not into a local folder
        "spark.sql.warehouse.dir": warehouse(ports),
    }
