from datetime import datetime, timedelta, timezone

import pytest

from perfkit.errors import PerfkitError
from perfkit.metrics import with_throughput
from perfkit.metrics.diskstats import DiskStatsSampler, deltas_to_frame, device_of, read_counters


def _counters(reads, sectors_read, writes, sectors_written, weighted_ms):
    c = [0] * 11
    c[0], c[2], c[4], c[6], c[10] = reads, sectors_read, writes, sectors_written, weighted_ms
    return c


def test_deltas_become_per_period_sums_against_hand_computed_numbers():
    t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
    samples = [(t0, 100.0, _counters(10, 2048, 5, 4096, 1000)),
               (t0 + timedelta(seconds=2), 102.0, _counters(30, 2048 + 40960, 9, 4096 + 8192, 4000))]
    frame = deltas_to_frame("vdz", samples, period=1.0).set_index("metric")["value"]
    assert frame["VolumeReadBytes"] == 40960 * 512 / 2  # 2 s of data, scaled to a 1 s period
    assert frame["VolumeWriteBytes"] == 8192 * 512 / 2
    assert frame["VolumeReadOps"] == 10 and frame["VolumeWriteOps"] == 2
    assert frame["VolumeQueueLength"] == 3000 / 2000  # weighted ms per ms elapsed
    tput = with_throughput(deltas_to_frame("vdz", samples, 1.0), 1).set_index("metric")["value"]
    assert tput["ReadThroughput"] == pytest.approx(40960 * 512 / 2 / 2**20)


def test_the_sampler_sees_real_writes_on_the_disk_under_a_path(tmp_path):
    import os

    with DiskStatsSampler(tmp_path, period=0.2) as sampler:
        with open(tmp_path / "blob", "wb") as f:
            f.write(os.urandom(8 << 20))
            f.flush()
            os.fsync(f.fileno())
    written = sampler.frame().query("metric == 'VolumeWriteBytes'")["value"].sum()
    assert written >= 8 << 20
    assert read_counters(device_of(tmp_path))


def test_a_path_not_on_a_block_device_is_named():
    with pytest.raises(PerfkitError, match="/proc is not on a block device"):
        device_of("/proc")
    with pytest.raises(PerfkitError, match="/no/such/path does not exist"):
        device_of("/no/such/path")


def test_the_testdfsio_parser_reads_the_log_the_lab_wrote():
    from pathlib import Path

    from perfkit.testdfsio import parse_log

    write, read = parse_log((Path(__file__).parents[1] / "data" / "TestDFSIO_results_lab.log").read_text())
    assert (write.operation, write.files, write.total_mb, write.exec_seconds) == ("write", 2, 16.0, 1.57)
    assert (read.throughput_mb_s, read.average_io_rate_mb_s, read.io_rate_std) == (172.04, 181.29, 40.94)
    assert write.cluster_mib_s == pytest.approx(16 / 1.57)


def test_a_log_without_results_is_named():
    from perfkit.testdfsio import parse_log

    with pytest.raises(PerfkitError, match="no TestDFSIO result in the log"):
        parse_log("INFO mapreduce.Job: Job failed\n")
    with pytest.raises(PerfkitError, match="lacks exec_seconds"):
        parse_log("----- TestDFSIO ----- : read\n Number of files: 2\n Total MBytes processed: 16\n"
                  " Throughput mb/sec: 1\n Average IO rate mb/sec: 1\n IO rate std deviation: 0\n")
