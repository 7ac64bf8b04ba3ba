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
