"""The S3 path's calibration, shared between experiments that run behind the same path."""
from perfkit.calibration import Calibration


def test_an_experiment_takes_the_calibration_of_the_same_path_and_only_that():
    """The break-even's copy reuses the query runs' measurement of the S3 path, unless the path changed since."""
    from dataclasses import replace

    from perfkit.config import load_profile
    from perfkit.experiments.s3_to_hdfs_transfer import TransferComparison

    profile = load_profile("lab")
    network = profile.provider.network()
    same = Calibration(network=network.as_dict() if network else None, endpoint=profile.s3_endpoint,
                       small_get_ms=1.0, small_get_direct_ms=None, one_connection_mb_s=100.0, parallel_mb_s=300.0,
                       connections=4)
    copy = TransferComparison(profile, methods=["stream"])
    copy.share_calibration(same)
    assert copy.s3_network() is same
    for other in (replace(same, endpoint="http://127.0.0.1:1"), replace(same, network={"name": "elsewhere"})):
        copy = TransferComparison(profile, methods=["stream"])
        copy.share_calibration(other)
        assert copy.measured_network is None


def test_the_small_gets_through_the_network_and_straight_to_the_server_alternate(monkeypatch):
    """A moment of load lands on both paths alike: their GETs alternate, so the difference of their medians is what
    the network adds (22 ms through it, 2 ms direct: 20 ms added, whatever came before or after)."""
    import io

    from perfkit import calibration

    log, clock = [], [0.0]
    cost = {"through": 0.022, "direct": 0.002}

    class Client:
        def __init__(self, name):
            self.name = name

        def get_object(self, Bucket, Key):
            log.append(self.name)
            clock[0] += cost[self.name]
            return {"Body": io.BytesIO(b"x")}

    monkeypatch.setattr(calibration.time, "perf_counter", lambda: clock[0])
    through, direct = calibration._small_get_ms(Client("through"), "b", "k", Client("direct"))
    assert (round(through, 6), round(direct, 6)) == (22.0, 2.0)
    assert log[:2] == ["through", "direct"]  # each connection opened first, then the timed GETs alternate
    assert log[2:] == ["through", "direct"] * calibration.SMALL_GETS
    alone, none = calibration._small_get_ms(Client("through"), "b", "k")
    assert (round(alone, 6), none) == (22.0, None)
