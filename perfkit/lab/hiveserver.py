"""A real HiveServer2 endpoint: the Spark Thrift Server that pyspark ships."""
from __future__ import annotations

import os
from pathlib import Path

from perfkit.lab import tools
from perfkit.lab.process import Daemon, port_in_use
from perfkit.lab.settings import HOST, LabPorts, lab_credentials, write_private
from perfkit.spark_settings import lab_spark_conf, spark_properties


class HiveServer:
    name = "hiveserver2"
    needs: tuple[str, ...] = ()  # it reads HDFS and S3 only when a query does
    answer_within_s = 30.0  # a health probe's limit: the first SELECT of a fresh server takes seconds

    def __init__(self, home: Path, ports: LabPorts):
        self.home, self.ports = home, ports
        self.daemon = Daemon("hiveserver2", home, "HiveThriftServer2", ports={"hiveserver2": ports.hiveserver2})
        self.daemons = [self.daemon]

    def addresses(self) -> dict[str, str]:
        return {"hiveserver2": f"{HOST}:{self.ports.hiveserver2}"}

    def ports_needed(self) -> dict[str, int]:
        return dict(self.daemon.ports)

    @property
    def properties_file(self) -> Path:
        return self.home / "hive" / "spark-thriftserver.properties"

    def argv(self) -> list[str]:
        """spark-submit's command line; the settings, S3 keys among them, go to a 0600 file: argv shows in `ps`."""
        spark_home = tools.spark_home()
        metastore = self.home / "hive" / "metastore_db"
        conf = {
            **lab_spark_conf(self.ports, lab_credentials(home=self.home)),
            "spark.sql.warehouse.dir": str(self.home / "hive" / "warehouse"),
            "spark.hadoop.javax.jdo.option.ConnectionURL": f"jdbc:derby:;databaseName={metastore};create=true",
            "spark.driver.extraJavaOptions": f"-Dderby.system.home={self.home / 'hive'}",
        }
        write_private(self.properties_file, spark_properties(conf))
        return [str(spark_home / "bin" / "spark-submit"),
                "--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
                "--name", "perfkit-lab-hiveserver2", "--master", "local[2]", "--driver-memory", "1g",
                # on the driver's own classpath: the Hive metastore client does not see --jars
                "--driver-class-path", ":".join(str(j) for j in tools.s3a_jars()),
                "--properties-file", str(self.properties_file),
                "spark-internal",
                "--hiveconf", f"hive.server2.thrift.port={self.ports.hiveserver2}",
                "--hiveconf", f"hive.server2.thrift.bind.host={HOST}"]

    def start(self) -> None:
        (self.home / "hive").mkdir(parents=True, exist_ok=True)
        if self.daemon.pid() is None:
            spark_home = tools.spark_home()
            env = {"SPARK_HOME": str(spark_home), "JAVA_HOME": str(tools.java_home()),
                   "SPARK_LOG_DIR": str(self.home / "logs"), "SPARK_LOCAL_IP": HOST, "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", "python3")}
            self.daemon.start(self.argv(), env=env, cwd=self.home / "hive")
        # a taken port gets its own fix from wait_until; what remains is mostly a slow or short-of-memory machine
        self.daemon.wait_until(lambda: self.health()[0], 180, "read the log; the Thrift server (a Spark driver "
                               "with 1 GiB of heap) needs that much free memory and can take minutes on a busy machine")

    def stop(self) -> list[str]:
        return [self.daemon.name] if self.daemon.stop() else []

    def health(self) -> tuple[bool, str]:
        if not port_in_use(HOST, self.ports.hiveserver2):
            return False, "port not open"
        try:
            with self._connect() as conn:
                cursor = conn.cursor()
                cursor.execute("SELECT 1")
                cursor.fetchall()
        except Exception as err:  # noqa: BLE001 - any failure means "not healthy yet"
            return False, f"SELECT 1 failed: {str(err)[:80]}"
        return True, "SELECT 1 ok"

    def _connect(self):
        """pyhive's own connect waits forever on a port that accepts but never answers (another program on it)."""
        import thrift_sasl
        from pyhive import hive
        from thrift.transport.TSocket import TSocket

        sock = TSocket(HOST, self.ports.hiveserver2)
        sock.setTimeout(self.answer_within_s * 1000)
        # what hive.connect(auth="NONE") builds, with the time limit on its socket
        sasl = thrift_sasl.TSaslClientTransport(lambda: hive.get_installed_sasl(
            host=HOST, sasl_auth="PLAIN", username="perfkit", password="x"), "PLAIN", sock)
        return hive.connect(thrift_transport=sasl, username="perfkit")
