"""Spark settings of the lab: its Thrift server, its metastore's Spark client and perfkit's own sessions share them."""
from __future__ import annotations

from perfkit.lab.alluxio import hadoop_conf
from perfkit.lab.shape import lab_replication
from perfkit.lab.settings import HOST, LabPorts, lab_s3_endpoint
from perfkit.s3_retries import s3a_retry_conf


def lab_spark_conf(ports: LabPorts, creds: dict[str, str], s3_endpoint: str | None = None) -> dict[str, str]:
    """Loopback-only Spark that reads the lab's HDFS and S3 (S3A with path-style addressing) at `s3_endpoint`
    (default: where the lab's S3 clients send requests)."""
    return {
        "spark.driver.host": HOST,
        "spark.driver.bindAddress": HOST,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.shuffle.partitions": "4",  # small lab data; the default 200 tasks would dominate
        # Spark does not read the lab's hdfs-site.xml: the lab's shape says how many replicas
        "spark.hadoop.dfs.replication": str(lab_replication()),
        "spark.hadoop.fs.s3a.endpoint": s3_endpoint or lab_s3_endpoint(ports),
        "spark.hadoop.fs.s3a.endpoint.region": "us-east-1",
        "spark.hadoop.fs.s3a.path.style.access": "true",
        "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
        "spark.hadoop.fs.s3a.access.key": creds["access_key"],
        "spark.hadoop.fs.s3a.secret.key": creds["secret_key"],
        "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
        # a throttled request gives up within a minute (perfkit.s3_retries): the Thrift Server, Hive and DistCp
        # share these; perfkit's own Spark sessions bound them by the run's time limit instead
        **{f"spark.hadoop.{k}": v for k, v in s3a_retry_conf().items()},
        # alluxio:///<bucket>/...: the lab's Alluxio (the client jar: perfkit.lab.alluxio_dist)
        **{f"spark.hadoop.{k}": v for k, v in hadoop_conf(ports).items()},
    }
