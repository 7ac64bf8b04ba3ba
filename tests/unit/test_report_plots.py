"""The st1 notebook's measured plots when the run measured nothing (run_testdfsio=false)."""
import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from perfkit import plots
from perfkit.config import load_profile
from perfkit.experiments.st1_throughput_burst import St1Study
from perfkit.presenting import run_report


@pytest.mark.parametrize("frame", [pd.DataFrame(), pd.DataFrame(columns=["volume", "metric", "timestamp", "value"])])
def test_an_empty_frame_draws_an_empty_axis_that_says_so(frame):
    fig = plots.measured_throughput(frame, "TestDFSIO write then read")
    (ax,) = fig.axes
    assert [t.get_text() for t in ax.texts] == [plots.NO_MEASUREMENTS] and not ax.lines
    assert plots.measured_burst_balance(frame) is None
    plt.close(fig)


def test_measurements_are_drawn_one_line_per_volume_and_direction():
    t = pd.date_range("2026-01-01", periods=3, freq="min", tz="UTC")
    frame = pd.concat([pd.DataFrame({"volume": "vol-1", "metric": m, "timestamp": t, "value": [1.0, 2.0, 3.0]})
                       for m in ("ReadThroughput", "WriteThroughput", "VolumeReadBytes")])
    fig = plots.measured_throughput(frame, "x")
    assert sorted(line.get_label() for line in fig.axes[0].lines) == ["vol-1 read", "vol-1 write"]
    assert not fig.axes[0].texts
    plt.close(fig)


def test_the_notebook_path_without_testdfsio_runs_to_the_end(tmp_path, monkeypatch):
    """The st1 notebook's cells with run_testdfsio=false on the lab: nothing measured, the model still shown."""
    monkeypatch.setenv("PERFKIT_RESULTS", str(tmp_path))
    monkeypatch.setenv("PERFKIT_LAB_HOME", str(tmp_path / "lab"))
    study = St1Study(load_profile("lab"), run_testdfsio=False)
    report = run_report(study)
    results = study.results
    assert results.records == [] and not results.path.exists()  # nothing measured: no empty result file
    metrics = report.metrics()
    assert metrics.empty
    fig = plots.measured_throughput(metrics, "TestDFSIO write then read, per volume")
    assert plots.measured_burst_balance(metrics) is None
    table = report.table()
    assert len(table) == len(report.configs) and table["source"].str.startswith("modelled").all()
    plots.modelled_st1(report.modelled_series())
    plt.close("all")
    assert fig.axes[0].texts[0].get_text() == plots.NO_MEASUREMENTS
