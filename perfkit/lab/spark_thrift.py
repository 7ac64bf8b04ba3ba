"""The Spark Thrift Server that pyspark ships: Spark SQL behind a HiveServer2 endpoint (not Hive)."""
from __future__ import annotations

import os
from pathlib import Path

from perfkit.lab import alluxio_dist, tools
from perfkit.lab import hs2
from perfkit.lab.metastore import spark_metastore_conf
from perfkit.lab.process import Daemon
from perfkit.lab.service import Service
from perfkit.lab.settings import HOST, LabPorts, lab_java_options, lab_credentials, write_private
from perfkit.lab.spark_conf import lab_spark_conf
from perfkit.engines.spark_settings import spark_properties


class SparkThriftServer(Service):
    name = "spark-thrift"
    needs = ("hive-metastore",)  # its tables live in the metastore Hive and Trino share
    answer_within_s = 30.0  # a health probe's limit: the first SELECT of a fresh server takes seconds

    def __init__(self, home: Path, ports: LabPorts):
        super().__init__(home, ports)
        self.daemons = [Daemon("spark-thrift", home, "HiveThriftServer2", ports={"spark_thrift": ports.spark_thrift})]

    def addresses(self) -> dict[str, str]:
        return {"spark-thrift": f"{HOST}:{self.ports.spark_thrift}"}

    @property
    def properties_file(self) -> Path:
        return self.home / "spark-thrift" / "spark-thriftserver.properties"

    def argv(self, daemon: Daemon | None = None) -> list[str]:
        """spark-submit's command line; the settings, S3 keys among them, go to a 0600 file: argv shows in `ps`."""
        spark_home = tools.spark_home()
        conf = {
            **lab_spark_conf(self.ports, lab_credentials(home=self.home)),
            **spark_metastore_conf(self.ports),
            "spark.driver.extraJavaOptions": " ".join(["-Duser.timezone=UTC", *lab_java_options(self.home)]),
            "spark.local.dir": str(self.home / "tmp"),  # shuffle and block files
        }
        write_private(self.properties_file, spark_properties(conf))
        return [str(spark_home / "bin" / "spark-submit"),
                "--class", "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2",
                "--name", "perfkit-lab-spark-thrift", "--master", "local[2]", "--driver-memory", "1g",
                # on the driver's own classpath: the Hive metastore client does not see --jars
                "--driver-class-path", ":".join(str(j) for j in [*tools.s3a_jars(), alluxio_dist.alluxio_client_jar()]),
                "--properties-file", str(self.properties_file),
                "spark-internal",
                "--hiveconf", f"hive.server2.thrift.port={self.ports.spark_thrift}",
                "--hiveconf", f"hive.server2.thrift.bind.host={HOST}"]

    def start(self) -> None:
        (self.home / "spark-thrift").mkdir(parents=True, exist_ok=True)
        if self.daemon.pid() is None:
            spark_home = tools.spark_home()
            env = {"SPARK_HOME": str(spark_home), "JAVA_HOME": str(tools.java_home()),
                   "SPARK_LOG_DIR": str(self.home / "logs"), "SPARK_LOCAL_IP": HOST,
                   "PYSPARK_PYTHON": os.environ.get("PYSPARK_PYTHON", "python3")}
            self.daemon.start(self.argv(), env=env, cwd=self.home / "spark-thrift")
        # a taken port gets its own fix from wait_until; what remains is mostly a slow or short-of-memory machine
        self.wait_healthy(self.daemon, 180, "read the log; the Thrift server (a Spark driver "
                          "with 1 GiB of heap) needs that much free memory and can take minutes on a busy machine")

    def health(self) -> tuple[bool, str]:
        return hs2.select_one(self.ports.spark_thrift, self.answer_within_s)
