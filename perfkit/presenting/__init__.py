"""Every report, built from a run's records alone (asv's way: results are stored first, and every report is rendered
from them, so it can be rebuilt without measuring again). The experiments measure and import nothing from here.

    report = run_report(QueryComparison(profile, ...))  # measure all the report shows, then the report
    report = run_report(QueryReport.load(path))          # a stored run: itself, measuring nothing
    report = report_of(experiment)                       # an experiment that has run: its report

One module per report; each reads the run's records and the config they share, never a live object.
"""
from __future__ import annotations

from perfkit.experiments.base import Sweep
from perfkit.presenting.cache_tier_report import CacheTierReport
from perfkit.presenting.distance_report import DistanceReport
from perfkit.presenting.matrix_report import MatrixReport
from perfkit.presenting.payoff_report import PayoffReport
from perfkit.presenting.query_report import QueryReport
from perfkit.presenting.reads_report import ReadReport
from perfkit.presenting.st1_report import St1Report
from perfkit.presenting.tier_copy_report import CopyReport
from perfkit.presenting.transfer_report import TransferReport

# experiment name -> the report of one of its runs, from that run's records (a sweep's point is a query comparison)
RECORDS_REPORTS = {"hdfs_vs_s3_queries": QueryReport, "engine_storage_matrix": MatrixReport,
                   "cache_tier": CacheTierReport, "s3_to_hdfs_transfer": TransferReport,
                   "nfs_vs_hdfs_reads": ReadReport, "st1_throughput_burst": St1Report, "tier_copy": CopyReport,
                   "s3_distance": QueryReport, "cache_tier_payoff": QueryReport}
# sweep name -> the report of all its points
SWEEP_REPORTS = {"s3_distance": DistanceReport, "cache_tier_payoff": PayoffReport}


def report_of(experiment):
    """The report of an experiment (or a sweep) that has run, from its records."""
    if isinstance(experiment, Sweep):
        return SWEEP_REPORTS[experiment.experiment].of(experiment)
    return RECORDS_REPORTS[experiment.experiment](experiment._results())


def run_report(subject, *args, progress: bool = True, **options):
    """Measure all an experiment's report shows (its measure_for_report: e.g. the runs and the break-even's copy),
    then its report; a stored run's report (QueryReport.load(path), ...) is returned as it is, measuring nothing."""
    if not hasattr(subject, "measure_for_report"):
        return subject
    subject.measure_for_report(*args, progress=progress, **options)
    return report_of(subject)
