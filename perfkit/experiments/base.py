"""One shape for every comparison: PerfKit Benchmarker's prepare -> run -> cleanup, and the tables a report shows.

A comparison is a dataclass that subclasses Experiment: its fields (but the profile) are its parameters,
validated in __post_init__ before anything runs; run() fills self.results, one ResultSet.
"""
from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod

import pandas as pd

from perfkit import provenance
from perfkit.parameters import recorded
from perfkit.protocol import run_order
from perfkit.errors import PerfkitError, root_cause
from perfkit.results import ResultSet, is_failure

FAILURE_COLUMNS = ["subject", "storage", "case", "phase", "iteration", "error"]


class RunRecords:
    """What a run's records alone say of its failures: shared by an experiment and the report built from its records
    (perfkit.presenting.query_report)."""
    experiment: str = "?"  # results go to data/results/<experiment>/
    unit: str = "runs"  # what one record is, in failure messages: "query runs", "copies", "read jobs"
    results: ResultSet | None = None

    def _results(self) -> ResultSet:
        if self.results is None:
            raise PerfkitError(f"{self.experiment}: nothing has run yet: call run() first")
        return self.results

    def _frame(self) -> pd.DataFrame:
        """The run's records as a frame, for the tables: before run() a clear error, not an AttributeError."""
        return self._results().to_frame()

    def problems(self) -> pd.DataFrame:
        """Failures that are not records of a failed attempt (e.g. results that differ); rows of FAILURE_COLUMNS."""
        return pd.DataFrame(columns=FAILURE_COLUMNS)

    def failures(self) -> pd.DataFrame:
        """Every failed attempt (a subject unavailable here is not one), then the other problems."""
        results = self._results()
        mask = [is_failure(r) for r in results.records]
        rows = results.to_frame().loc[mask, FAILURE_COLUMNS]
        extra = self.problems()
        return pd.concat([rows, extra], ignore_index=True) if len(extra) else rows.reset_index(drop=True)

    def raise_for_failures(self) -> None:
        """For batch runs: once everything is recorded and shown, fail loudly (non-zero exit) with the causes."""
        results = self._results()
        messages = []
        if results.failures:
            first: dict[str, str] = {}  # the first cause of each failing subject, so the message says why
            for r in results.failures:
                first.setdefault(r.subject, root_cause(r.error or "no reason recorded", 200))
            count = len(results.failures)
            unit = self.unit if count != 1 else {"copies": "copy"}.get(self.unit, self.unit.removesuffix("s"))
            messages.append(f"{count} {unit} failed ("
                            + "; ".join(f"{subject}: {why}" for subject, why in sorted(first.items())) + ")")
        messages += [f"{row.subject}/{row.case}: {row.error}" for row in self.problems().itertuples()]
        if messages:
            raise PerfkitError(f"{'; '.join(messages)}; the records are in {results.path}")


class Experiment(RunRecords, ABC):
    _calibration = None

    def parameters(self) -> dict:
        """What the run was asked to do (recorded with each run): perfkit.parameters.recorded."""
        return recorded(self)

    def environment(self) -> pd.DataFrame:
        return provenance.environment_table(self.profile, self.parameters())

    def s3_network(self):
        """Where S3 sat for this run and what its path measured (perfkit.calibration): once per experiment, before
        its first measured run, and recorded with every run."""
        if self._calibration is None:
            from perfkit.calibration import calibrate

            self._calibration = calibrate(self.profile)
        return self._calibration

    def share_calibration(self, calibration) -> None:
        """Take the calibration of an experiment run just before behind the same network (an experiment that
        measures a part of another's answer, as the break-even's copy): one measurement of the path, not two."""
        from perfkit.calibration import s3_path

        if calibration is not None and (calibration.network, calibration.endpoint) == s3_path(self.profile):
            self._calibration = calibration

    @property
    def measured_network(self):
        """The S3 path's calibration when it was measured (s3_network()), else None."""
        return self._calibration

    def network_headline(self):
        """The report's first line: where S3 sat (the network, emulated or not) and what its path measured."""
        from IPython.display import Markdown

        return Markdown(f"**{self.s3_network().headline()}**")

    def prepare(self, progress: bool = True):
        """Check the services and put the data in place; idempotent."""

    # -- what the runner asks (perfkit.experiments.runner): the loop is its, the steps and one attempt are ours ----
    behind_s3_network = True  # it reads S3: the network lock is held, so the record says what it ran behind
    keep_empty = True  # a run that recorded nothing still leaves its (empty) file; False: no file
    step_unit = "step"  # what one step is, on the progress bar
    run_id: str | None = None  # the run's id when it is made before the run (its folders are named by it)
    order_seed: int | None = None  # the run order's seed: None, drawn for each run by the runner; recorded either way
    order_design = "randomised per round (seeded)"  # how the steps are ordered, in words, recorded with the run

    def run(self, progress: bool = True) -> ResultSet:
        """Measure every step (perfkit.experiments.runner); a failing attempt is recorded, not fatal."""
        from perfkit.experiments import runner

        return runner.run(self, progress)

    def measure_for_report(self, progress: bool = True) -> ResultSet:
        """All a report of this experiment shows, measured: the run (an experiment may add to it, e.g. the
        break-even's copy). The report: perfkit.presenting.run_report(experiment)."""
        return self.run(progress)

    def ready(self, progress: bool = True) -> None:
        """Before the run: the services checked and the data in place, unless prepare() did it already."""
        self.prepare(progress)

    def begin(self) -> dict:
        """What every record of the run carries (its config), made under the network lock before the recording."""
        return provenance.run_config(self.profile, self.parameters())

    def session(self, results: ResultSet):
        """What the run holds open over all its steps (engines, samplers): a context manager."""
        return contextlib.nullcontext()

    def control(self):
        """The drift control of this run (perfkit.experiments.control.DriftControl), timed at its start and end and
        between its steps on a long run; None: the run touches no storage it can read a file of."""
        return None

    def conditions_watch(self):
        """The cluster's conditions watched between this run's steps (perfkit.experiments.conditions), as its
        profile's provider reads them; None: no profile to ask."""
        from perfkit.experiments.conditions import ConditionsWatch

        profile = getattr(self, "profile", None)
        if profile is None:
            return None
        return ConditionsWatch(lambda: profile.provider.conditions(profile), after_loss=self.after_datanode_loss)

    def after_datanode_loss(self, before: dict, after: dict) -> str:
        """Before the next step after a DataNode was lost: HDFS re-replicated, waited for (the profile's provider)."""
        return self.profile.provider.after_datanode_loss(self.profile, before, after)

    def in_run_order(self, items, round_: int, key: str = "") -> list:
        """`items` in this run's order for one round of `key` (perfkit.protocol.run_order, the run's seed)."""
        return run_order(items, round_, key, self.order_seed or 0)

    @abstractmethod
    def steps(self) -> list:
        """Every step of the run, in the order they run: a protocol or a rotation, declared once."""

    @abstractmethod
    def attempt(self, step) -> None:
        """Measure one step into self.results; a failing attempt is recorded, not raised."""

    @abstractmethod
    def record_of(self, step) -> dict:
        """The record fields of the step's attempt (subject, storage, case, phase, iteration, params)."""

    def label(self, step) -> str:
        """The step, as the progress bar shows it."""
        return str(step)

    def progress_label(self) -> str:
        return self.experiment

    def cleanup(self) -> None:
        """Remove what this run created (only that)."""


class Sweep:
    """A run of runs (the S3-distance settings, the pay-off's round trips): each step is a point, an experiment of its
    own that the runner runs in turn (perfkit.experiments.runner.sweep); a sweep records nothing itself."""
    experiment: str = "?"
    step_unit = "setting"
    progress = True  # the points' own progress bars: as the sweep's
    order_seed: int | None = None  # the points' order's seed: None, drawn for each sweep by the runner

    def run(self, progress: bool = True) -> None:
        from perfkit.experiments import runner

        self.progress = progress
        runner.sweep(self, progress)

    def measure_for_report(self, progress: bool = True) -> None:
        """Every point (the report: perfkit.presenting.run_report(sweep))."""
        self.run(progress)

    def ready(self, progress: bool = True) -> None:
        """Before the first point: what every point shares, in place."""

    def session(self, results: None):
        """What the sweep holds over all its points (the network it found, set back at the end)."""
        return contextlib.nullcontext()

    def label(self, step) -> str:
        return getattr(step, "name", str(step))

    def progress_label(self) -> str:
        return self.experiment
