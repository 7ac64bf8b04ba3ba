"""The st1 model against the figures of the EBS user guide."""
import math

import pytest

from perfkit.errors import PerfkitError
from perfkit.metrics.st1 import PUBLISHED_CONFIGURATIONS, Configuration, St1Volume, model_table


@pytest.mark.parametrize("gib, baseline, burst", [
    (512, 20, 125),  # 0.5 TiB: the guide's lower bounds, 20 and 125 MiB/s
    (1024, 40, 250),  # 1 TiB: 40 MiB/s fill, 250 MiB/s burst
    (2048, 80, 500),  # burst reaches the 500 MiB/s cap at 2 TiB
    (4096, 160, 500),
    (12.5 * 1024, 500, 500),  # baseline reaches the cap at 12.5 TiB
    (16 * 1024, 500, 500),
])
def test_baseline_and_burst_by_size(gib, baseline, burst):
    v = St1Volume(gib)
    assert v.baseline == pytest.approx(baseline) and v.burst == pytest.approx(burst)


def test_the_bucket_holds_one_tib_of_credits_per_tib():
    assert St1Volume(1024).bucket_mib == 1024 * 1024
    assert St1Volume(512).bucket_mib == 512 * 1024


def test_time_to_drain_a_full_bucket():
    # 1 TiB at full burst: 1,048,576 MiB / (250 - 40) MiB/s
    assert St1Volume(1024).drain_seconds(250) == pytest.approx(1024 * 1024 / 210)
    # demand above burst is served at burst only
    assert St1Volume(1024).drain_seconds(400) == St1Volume(1024).drain_seconds(250)
    assert St1Volume(1024).drain_seconds(30) == math.inf  # below baseline: the bucket never drains


def test_simulation_bursts_then_falls_to_baseline_and_refills():
    v = St1Volume(512)  # burst 125, baseline 20, bucket 524,288 MiB: drains in 4993.2 s at 125 MiB/s
    run = v.simulate([125] * 100 + [0] * 10, step_s=60)
    assert run["delivered_mib_s"].iloc[0] == 125
    assert run["burst_balance_pct"].iloc[0] == pytest.approx(100 * (1 - 105 * 60 / v.bucket_mib))
    drained_at = v.drain_seconds(125)
    step = int(drained_at // 60)
    assert run["delivered_mib_s"].iloc[step] == pytest.approx((125 * (drained_at - step * 60) + 20 * (60 - (drained_at - step * 60))) / 60)
    assert run["delivered_mib_s"].iloc[step + 1] == 20 and run["burst_balance_pct"].iloc[99] == 0
    assert run["burst_balance_pct"].iloc[100] == pytest.approx(100 * 20 * 60 / v.bucket_mib)  # idle refills


def test_seconds_to_move_with_and_without_running_dry():
    v = St1Volume(512)
    assert v.seconds_to_move(1000) == pytest.approx(8.0)  # 1000 MiB at 125 MiB/s
    big = 2_000_000  # more than the bucket can serve at burst
    fast = v.bucket_mib / 105
    assert v.seconds_to_move(big) == pytest.approx(fast + (big - 125 * fast) / 20)


def test_published_configurations_cost_the_same():
    costs = {c.label: round(c.monthly_cost(), 6) for c in PUBLISHED_CONFIGURATIONS}
    assert costs == {"4 × 512 GiB": 460.8, "2 × 1 TiB": 460.8, "1 × 2 TiB": 460.8}  # 10 TiB × 0.045 USD/GB


def test_model_table_divides_the_work_over_every_volume():
    table = model_table([Configuration(2, 1024, nodes=5)], total_mib=10 * 1000, replication=3)
    assert table["read seconds"].item() == pytest.approx(1000 / 250)  # 1000 MiB per volume at 250 MiB/s
    assert table["write seconds"].item() == pytest.approx(3000 / 250)  # three replicas written
    assert table["read MiB/s"].item() == pytest.approx(2500)


def test_a_write_that_drains_the_bucket_leaves_the_read_at_baseline():
    c = Configuration(1, 512, nodes=1)  # burst 125, baseline 20, bucket 524,288 MiB
    write_s, read_s = c.write_then_read(1_000_000, replication=1)
    fast = 512 * 1024 / 105
    assert write_s == pytest.approx(fast + (1_000_000 - 125 * fast) / 20)
    assert read_s == pytest.approx(1_000_000 / 20)  # nothing left to burst with


def test_a_node_cap_shares_the_bandwidth_among_its_volumes():
    c = Configuration(4, 512, nodes=1)
    assert c.write_then_read(4000, replication=1, node_cap_mib_s=200)[1] == pytest.approx(1000 / 50)


def test_sizes_outside_st1_are_refused():
    with pytest.raises(PerfkitError, match="st1 volumes are 125 GiB to 16 TiB"):
        St1Volume(100)
