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
