"""Spark settings shared by the lab's Thrift server and perfkit's own Spark sessions."""
from __future__ import annotations

from pathlib import Path

from perfkit.lab.settings import HOST, LabPorts
from perfkit.paths import log_dir

DRIVER_LOG4J2 = """# written by perfkit: the Spark driver logs to a file; the terminal and reports show perfkit's lines
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = %d{{ISO8601}} %p %c{{1}}: %m%n%ex
rootLogger.level = warn
rootLogger.appenderRef.file.ref = file
"""


def lab_spark_conf(ports: LabPorts, creds: dict[str, str]) -> dict[str, str]:
    """Loopback-only Spark that reads the lab's HDFS and S3 (S3A with path-style addressing)."""
    return {
        "spark.driver.host": HOST,
        "spark.driver.bindAddress": HOST,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",  # small lab data; the default 200 tasks would dominate
        # Spark does not read the lab's hdfs-site.xml: one DataNode means one replica
        "spark.hadoop.dfs.replication": "1",
        "spark.hadoop.fs.s3a.endpoint": f"http://{HOST}:{ports.s3}",
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.access.key": creds["access_key"],
        "spark.hadoop.fs.s3a.secret.key": creds["secret_key"],
        "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
    }


def driver_log_conf() -> dict[str, str]:
    """Driver JVM options pointing log4j2 at a file under perfkit's log folder (spark-driver.log)."""
    folder = log_dir()
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "spark-driver-log4j2.properties"
    text = DRIVER_LOG4J2.format(log=folder / "spark-driver.log")
    if not config.exists() or config.read_text() != text:
        config.write_text(text)
    return {"spark.driver.extraJavaOptions": f"-Dlog4j2.configurationFile={Path(config).as_uri()}"}
