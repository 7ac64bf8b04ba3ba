from dataclasses import replace

import pytest

from perfkit.storages import hdfs as hdfs_storage
from perfkit.storages import s3 as s3_storage
from perfkit.errors import ServiceError


def test_status_lists_every_service_on_loopback_with_pid_and_health(lab):
    rows = {row.service: row for row in lab.status()}
    assert {"namenode", "datanode", "s3", "nfs", "hive-metastore", "hiveserver2", "spark-thrift", "trino",
            "fuse-hdfs"} <= set(rows)
    for row in rows.values():
        assert row.healthy, row
        assert row.pid and ("127.0.0.1" in row.address or row.service == "fuse-hdfs")


def test_up_is_idempotent(lab):
    before = sorted(lab.pids())
    lab.up()
    assert sorted(lab.pids()) == before


def test_a_missing_bucket_gives_one_clear_message(profile):
    with pytest.raises(ServiceError,
                       match="S3 bucket 'no-such-bucket' at http://127.0.0.1:.*the bucket does not exist"):
        s3_storage.check_s3(replace(profile, s3_bucket="no-such-bucket"))


def test_hdfs_and_s3_answer(profile):
    hdfs_storage.check_hdfs(profile)
    s3_storage.check_s3(profile)


def test_up_with_service_names_reports_those_services_and_what_they_need(lab):
    rows = lab.up(["fuse-hdfs"])
    assert [r.service for r in rows] == ["namenode", *[d.name for d in lab.services[0].datanodes], "fuse-hdfs"]
    assert all(r.healthy for r in rows)


def test_trino_needs_the_metastore_which_needs_the_storages(lab):
    # S3 through the network the lab emulates (its proxy)
    assert [s.name for s in lab.select(["trino"])] == ["hdfs", "s3", "s3-network", "hive-metastore", "trino"]
    assert [s.name for s in lab.select(["hiveserver2"])] == ["hdfs", "s3", "s3-network", "hive-metastore",
                                                              "hiveserver2"]


def test_each_new_service_listens_on_loopback_only(lab):
    """Every port a lab JVM listens on is on 127.0.0.1: no wildcard, no second address (read from /proc)."""
    from perfkit.lab.process import listening_addresses

    for service in lab.services:
        if service.name not in ("hive-metastore", "hiveserver2", "trino", "spark-thrift"):
            continue
        for daemon in service.daemons:
            addresses = listening_addresses(daemon.pid())
            assert addresses and all(host == "127.0.0.1" for host, _ in addresses), (daemon.name, addresses)


def test_every_lab_jvm_keeps_its_temporary_files_under_the_lab_home(lab):
    """Hive's <session>_resources, Jetty's folders and Hadoop's *.tmp files go where java.io.tmpdir says."""
    import psutil

    lab.up()
    jvms = {}
    for service in lab.services:
        for name, pid in service.pids().items():
            if pid and (line := psutil.Process(pid).cmdline()) and line[0].endswith("java"):
                jvms[f"{service.name}/{name}"] = line
    assert {s.split("/")[0] for s in jvms} >= {"hdfs", "hiveserver2", "hive-metastore", "trino", "alluxio",
                                               "spark-thrift"}, sorted(jvms)
    wrong = {name for name, line in jvms.items() if f"-Djava.io.tmpdir={lab.home / 'tmp'}" not in line}
    assert not wrong, f"JVMs writing temporary files outside the lab home: {sorted(wrong)}"
