"""What every report built from one run's records shares: the run's records and their failures (RunRecords, the
experiments' too), its parameters checked, load(path): a stored run's report (perfkit.presenting.run_report
returns it as it is), and what its drift control says (perfkit.drift)."""
from __future__ import annotations

from perfkit import drift
from perfkit.errors import PerfkitError
from perfkit.experiments import conditions
from perfkit.experiments.base import RunRecords
from perfkit.results import ResultSet


class StoredReport(RunRecords):
    """A report built from one run's records alone (the query comparison's, the transfers', the reads', st1's): the
    same from a live run and from its results file, anywhere. A subclass names the parameters it reads (NEEDED) and
    the run it needs (WHAT), said when a file of another experiment is given."""
    NEEDED: tuple[str, ...] = ()
    WHAT = "a run of this experiment"

    def __init__(self, results: ResultSet):
        self.results, self.experiment = results, results.experiment
        self.parameters = results.config.get("parameters") or {}
        missing = [name for name in self.NEEDED if name not in self.parameters]
        if missing:
            raise PerfkitError(f"{results.path}: its records name no {', '.join(missing)} in their parameters: give "
                               f"{self.WHAT}")

    @classmethod
    def load(cls, path):
        """The report of a saved run (a results .jsonl file), measuring nothing."""
        return cls(ResultSet.load(path))

    # ---- the drift control (perfkit.drift): the same words in every report's Findings ----------------------------
    def control_phrase(self) -> str:
        """The run's drift control, for the Conditions (or that none was recorded), and the cluster's conditions
        watched between its runs (perfkit.experiments.conditions) where they were."""
        watched = conditions.watched_phrase(self.results.config)
        return drift.conditions_phrase(self.results.config) + (f"; {watched}" if watched else "")

    def drift_note(self, smallest_effect: float = drift.NOISE_FACTOR) -> str | None:
        """For "Not decided by this run": the control moved more than `smallest_effect` (the smallest ratio the report
        calls beyond noise), or the cluster changed under the run (its verdicts pool runs from before and after);
        None when both held."""
        notes = [drift.drift_note(self.results.config, smallest_effect),
                 conditions.changed_sentence(self.results.config)]
        return " ".join(n for n in notes if n) or None

    def drift_bound(self, smallest_effect: float = drift.NOISE_FACTOR) -> float | None:
        """The control's move where it moved more than `smallest_effect`: verdicts no larger are marked."""
        return drift.drift_bound(self.results.config, smallest_effect)
