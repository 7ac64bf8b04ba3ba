"""The Spark Thrift Server: Spark SQL behind a HiveServer2 endpoint. It speaks Hive's protocol; Spark runs the query."""
from __future__ import annotations

from perfkit.engines.hive import HiveServer2Engine


class SparkThriftEngine(HiveServer2Engine):
    name = "spark-thrift"
    service = "spark-thrift"
    endpoint_name = "Spark Thrift Server"

    def address(self) -> tuple[str, int]:
        return self.profile.spark_thrift_host, self.profile.spark_thrift_port

    def settings(self) -> str:
        return "spark_thrift_host/spark_thrift_port"

    def versions(self) -> dict[str, str]:
        return {self.name: f"Spark {self.server_version()} (thrift server)"}
