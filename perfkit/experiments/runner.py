"""The one loop every experiment runs through (PerfKit Benchmarker's driver): an experiment says what its steps are
and what one step measures; the runner does the rest, the same way for all.

    results = runner.run(experiment)   # what Experiment.run() calls

    experiment.ready(progress)         # services checked and data in place (before the network lock: placing waits)
    with network_in_use():             # an experiment behind S3's network: the network cannot change under it
        experiment.order_seed = seed   # the run order's seed: drawn for each run unless given, and recorded
        config = experiment.begin()    # what every record carries; the run's own checks before any file is made
        with recording(...) as results, experiment.session(results):  # saved whatever happens; engines held open
            control.time("start")                    # the drift control (perfkit.experiments.control)
            for step in experiment.steps():          # randomised or rotated per round, seeded
                experiment.attempt(step)             # one measurement: its records added to results
                results.save()                       # after each step: a run stopped later keeps it
                control.time("between") if due
            control.time("end")

On Ctrl-C or SIGTERM the attempt in flight is recorded as interrupted (not a sample), the file is saved and marked
interrupted (perfkit.experiments.recording), and the experiment's cleanup runs. A sweep (a run of runs: the
S3-distance settings, the pay-off's round trips) goes through the same loop with no recording of its own: each of its
steps is a point, an experiment run by this runner in turn.
"""
from __future__ import annotations

import contextlib
import random
import time
from collections.abc import Iterator
from typing import Protocol

from perfkit.experiments.recording import recording
from perfkit.locks import network_in_use
from perfkit.paths import results_dir_checked
from perfkit.progress import progress_bar
from perfkit.results import ResultSet, now


class Stepped(Protocol):
    """What the runner asks of an experiment (perfkit.experiments.base.Experiment gives every default but two)."""

    experiment: str  # results go to data/results/<experiment>/
    step_unit: str  # what one step is, on the progress bar
    results: ResultSet | None

    def steps(self) -> list:
        """Every step of the run, in the order they run."""

    def attempt(self, step) -> None:
        """Measure one step; its records go to self.results. A failure is recorded, not raised."""

    def label(self, step) -> str:
        """The step on the progress bar."""

    def record_of(self, step) -> dict:
        """The record fields (subject, storage, case, phase, iteration, params) of the step's attempt: what the
        runner records when the run stops in the middle of it."""


def run(experiment, progress: bool = True) -> ResultSet:
    """Run every step of `experiment` in its own recording; the ResultSet, saved."""
    results_dir_checked(experiment.experiment)  # a results folder that cannot be written fails now, not after work
    experiment.ready(progress)
    with network_in_use() if experiment.behind_s3_network else contextlib.nullcontext():
        given = experiment.order_seed
        experiment.order_seed = given if given is not None else random.SystemRandom().randrange(2 ** 31)
        try:
            config = experiment.begin()
            config["order"] = {"seed": experiment.order_seed, "design": experiment.order_design}
            with recording(experiment.experiment, config, run_id=experiment.run_id,
                           keep_empty=experiment.keep_empty, cleanup=experiment.cleanup) as results:
                experiment.results = results
                with experiment.session(results):
                    control = experiment.control()
                    _control(control, "start", results)
                    watch = experiment.conditions_watch()
                    if watch is not None:
                        watch.start()
                    loop(experiment, progress, results, control, watch)
                    _control(control, "end", results)
        finally:
            experiment.order_seed = given  # the next run() draws its own
    return results


def sweep(experiment, progress: bool = True) -> None:
    """Run every point of a sweep (each step an experiment of its own, recorded by run()), in the sweep's session."""
    experiment.ready(progress)
    given = experiment.order_seed
    experiment.order_seed = given if given is not None else random.SystemRandom().randrange(2 ** 31)
    try:
        with experiment.session(None):
            loop(experiment, progress, None)
    finally:
        experiment.order_seed = given


def _control(control, at: str, results: ResultSet) -> None:
    """A round of the drift control, kept in the run's config (saved with its records)."""
    if control is not None:
        control.time(at)
        results.config["control"] = control.record()
        results.save()


def loop(experiment, progress: bool, results: ResultSet | None, control=None, watch=None) -> None:
    """Every step in order, with a progress bar; after each, the cluster's conditions checked (`watch`: a change is on
    the step's records and in the config), the records saved and, on a long run, the drift control timed when a
    round is due."""
    steps = list(experiment.steps())
    with progress_bar(total=len(steps), desc=experiment.progress_label(), unit=experiment.step_unit,
                      disable=not progress or not steps) as bar:
        for step in steps:
            bar.set_postfix_str(experiment.label(step))
            first_new = len(results.records) if results is not None else 0
            with _in_flight(experiment, step, results):
                experiment.attempt(step)
            if watch is not None:
                watch.check(results, first_new)
                if results is not None:
                    results.config["conditions"] = watch.record()
            if results is not None:
                results.save()
            if control is not None and control.due() and step is not steps[-1]:
                _control(control, "between", results)
            bar.update()


@contextlib.contextmanager
def _in_flight(experiment, step, results: ResultSet | None) -> Iterator[None]:
    """Ctrl-C or SIGTERM during a step: the attempt in flight recorded as interrupted, then the stop goes on."""
    started, t0 = now(), time.perf_counter()
    try:
        yield
    except KeyboardInterrupt as stop:
        if results is not None:
            results.add(**experiment.record_of(step), started_at=started, wall_s=None, ok=False,
                        error=f"interrupted ({str(stop) or 'Ctrl-C'}) after {time.perf_counter() - t0:.1f} s: "
                              "not a sample")
        raise
