"""The drift control's analysis: did conditions move under a run? (Principle 13.)

A run times a fixed control (a small read of one data file per storage, a few times) at its start, between its steps
when it is long, and at its end (perfkit.experiments.control), and keeps the timings in its config:

    config["control"] = {"what": "a 64 KiB read of one data file per storage, 5 times",
                         "rounds": [{"at": "start", "time": ISO, "seconds": {"hdfs": [0.004, ...], "s3": [...]}},
                                    {"at": "between", ...}, ...,   # zero or more
                                    {"at": "end", ...}],
                         "failed": {"s3": "why"}}                  # a storage whose control could not be timed

Per storage, drift() compares every later round with the first: the ratio of the medians (later ÷ first) with a
bootstrap 95% confidence interval (perfkit.stats.ratio_ci), the last round's ratio being "the" drift of the run and
the largest of them the largest move. A report names the control's drift in its Conditions (conditions_phrase), and
when the control moved more than the smallest effect the report calls beyond noise, says so among what the run did not
decide (drift_note) and marks every verdict smaller than the move with WITHIN_DRIFT (mark): a change smaller than the
change of the conditions themselves is no verdict on the storages.

The rule that calls a move (Drift.moved) is perfkit compare's, asv's factor rule with a significance test beside it:
a move is called only when it is beyond noise (its 95% interval excludes 1) AND larger than the threshold (its ratio
outside [1/threshold, threshold]). The interval alone would call a 2% move of a steady read drift; the factor alone
would call the luck of five reads drift. Both together leave the noise of millisecond reads (±5%, five each) alone
and catch a real move larger than the threshold.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from perfkit.findings import WITHIN_DRIFT, plural
from perfkit.stats import MIN_RUNS, NOISE_FACTOR, ratio_ci

NOT_RECORDED = "no drift control recorded (a run made before perfkit timed one)"
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Move:
    """One later round of a storage's control against its first: median(this round) ÷ median(first), its 95% CI."""
    at: str  # "between" or "end"
    time: str
    ratio: float
    low: float
    high: float

    @property
    def factor(self) -> float:
        """The size of the move, either way: 1.30 for 1.30× and for 0.77×."""
        return _factor(self.ratio)

    def beyond(self, threshold: float) -> bool:
        """Called a move: its interval excludes 1 and its ratio lies outside [1/threshold, threshold]."""
        if not all(math.isfinite(v) for v in (self.ratio, self.low, self.high)):
            return False
        return (self.low > 1 or self.high < 1) and not (1 / threshold <= self.ratio <= threshold)


@dataclass(frozen=True)
class RunsMove:
    """A storage's control in one set of runs against another's (between_runs): median(B) ÷ median(A), its 95% CI."""
    storage: str
    ratio: float
    low: float
    high: float

    def beyond(self, threshold: float) -> bool:
        """Called a move by Move's rule: beyond noise and outside [1/threshold, threshold]."""
        return Move("B ÷ A", "", self.ratio, self.low, self.high).beyond(threshold)

    def phrase(self) -> str:
        """'S3 1.03× (95% CI 0.97–1.10×)'."""
        return f"{self.storage.upper()} {times(self.ratio)} (95% CI {times(self.low, self.high)})"


@dataclass(frozen=True)
class Drift:
    """A storage's control over the run: `ratio` = median of the last round it was timed in ÷ median of the first,
    `low`–`high` its bootstrap 95% confidence interval, `rounds` the rounds it was timed in, `largest` the ratio of
    the round whose median moved furthest from the first's (at `largest_at`), `moves` every later round's."""
    storage: str
    ratio: float
    low: float
    high: float
    rounds: int
    largest: float
    largest_at: str
    first_median: float = math.nan
    last_median: float = math.nan
    reads: int = 0  # the fewest timings in any of its rounds
    last_at: str = "end"  # the last round it was timed in ("between": its read failed before the end)
    moves: tuple[Move, ...] = field(default_factory=tuple)

    @property
    def judged(self) -> bool:
        """Enough timings (perfkit.stats.MIN_RUNS a round) and two rounds to give an interval."""
        return math.isfinite(self.low) and math.isfinite(self.high)

    @property
    def size(self) -> float:
        """The largest move, either way, as a factor ≥ 1 (1.30 for 1.30× and for 0.77×); NaN with one round."""
        return _factor(self.largest)

    def moved(self, threshold: float = NOISE_FACTOR) -> bool:
        """True when some round's median moved beyond noise and by more than `threshold` from the first's: its ratio's
        95% interval excludes 1 and the ratio lies outside [1/threshold, threshold] (the rule of the module's
        docstring, perfkit compare's). Between rounds count too: conditions that moved and came back moved under the
        steps that ran meanwhile."""
        return any(move.beyond(threshold) for move in self.moves)

    def phrase(self) -> str:
        """'S3 1.03× (95% CI 0.97–1.10×)', with the largest move where a between round moved further than the end."""
        name = self.storage.upper()
        if not self.moves:
            return f"{name} timed in one round only: no drift to tell"
        said = f"{name} {times(self.ratio)}" + (f" (95% CI {times(self.low, self.high)})" if self.judged else
                                                  f" (too few reads to judge: {self.reads}; need {MIN_RUNS})")
        if self.last_at != "end":
            said += f" (its last round {self.last_at}: its read failed after)"
        largest = max(self.moves, key=lambda m: m.factor)
        if largest is not self.moves[-1]:
            said += f", largest move {times(largest.ratio)} ({_when(largest)})"
        return said


def drift(config: Mapping | None) -> list[Drift]:
    """Per storage the control timed, in the order the run recorded them: its drift over the run (Drift); [] when the
    run recorded no control."""
    control = (config or {}).get("control") or {}
    rounds = [r for r in control.get("rounds") or [] if isinstance(r, Mapping)]
    storages = list(dict.fromkeys(s for r in rounds for s in (r.get("seconds") or {})))
    found = []
    for where in storages:
        mine = [(r.get("at", "?"), r.get("time", ""), np.asarray(r["seconds"][where], dtype=float))
                for r in rounds if len((r.get("seconds") or {}).get(where) or []) > 0]
        if not mine:
            continue
        first = mine[0][2]
        moves = []
        for seed, (at, time, later) in enumerate(mine[1:], start=1):
            ratio = float(np.median(later) / np.median(first))
            low, high = ratio_ci(later, first, confidence=CONFIDENCE, seed=seed)
            moves.append(Move(at, time, ratio, float(low), float(high)))
        last = moves[-1] if moves else Move(mine[0][0], mine[0][1], math.nan, math.nan, math.nan)
        largest = max(moves, key=lambda m: m.factor) if moves else last
        found.append(Drift(where, last.ratio, last.low, last.high, len(mine), largest.ratio, largest.at,
                           float(np.median(first)), float(np.median(mine[-1][2])), min(len(s) for *_, s in mine),
                           mine[-1][0], tuple(moves)))
    return found


def between_runs(configs_a: Iterable[Mapping | None], configs_b: Iterable[Mapping | None]) -> list[RunsMove]:
    """Per storage both sides timed the control on, B against A (perfkit compare's two sides, each one or more runs):
    the median of every read of B's runs ÷ the median of A's, with its bootstrap 95% interval.
    Two runs made apart meet whatever moved between them; this says whether the storages' own paths did."""
    def pooled(configs) -> dict[str, list[float]]:
        found: dict[str, list[float]] = {}
        for config in configs:
            for round_ in ((config or {}).get("control") or {}).get("rounds") or []:
                for where, seconds in ((round_ or {}).get("seconds") or {}).items():
                    found.setdefault(where, []).extend(float(x) for x in seconds or [])
        return found

    a, b = pooled(configs_a), pooled(configs_b)
    moves = []
    for seed, where in enumerate(w for w in a if b.get(w) and a[w]):
        ratio = float(np.median(b[where]) / np.median(a[where]))
        low, high = ratio_ci(np.asarray(b[where]), np.asarray(a[where]), confidence=CONFIDENCE, seed=seed)
        moves.append(RunsMove(where, ratio, float(low), float(high)))
    return moves


def recorded(config: Mapping | None) -> bool:
    """Whether the run recorded a control (a run of an older perfkit did not)."""
    return bool((config or {}).get("control"))


def conditions_phrase(config: Mapping | None, threshold: float = NOISE_FACTOR) -> str:
    """The control for a report's Conditions: what it read, each storage's end ÷ start with its 95% CI (and the
    largest move where a round between moved further), the storages it could not time, and whether it held steady
    (no move beyond noise and beyond `threshold`, perfkit compare's noise factor unless given).
    e.g. 'control (a 64 KiB read of one data file on HDFS, S3, 5 times at start and end; 2 rounds): HDFS 1.03×
    (95% CI 0.97–1.10×), S3 0.99× (95% CI 0.95–1.04×) end ÷ start: steady'."""
    if not recorded(config):
        return NOT_RECORDED
    control = config["control"]
    found = drift(config)
    rounds = len(control.get("rounds") or [])
    parts = [d.phrase() for d in found]
    failed = [f"{where.upper()} not timed ({why})" for where, why in (control.get("failed") or {}).items()]
    said = f"control ({control.get('what') or 'a fixed read per storage'}; {plural(rounds, 'round')})"
    if not found:
        return f"{said}: " + ("; ".join(failed) if failed else "nothing timed")
    said += ": " + ", ".join(parts) + (" end ÷ start" if any(d.moves for d in found) else "")
    if failed:
        said += "; " + "; ".join(failed)
    return f"{said}: {_verdict(found, threshold)}"


def drift_bound(config: Mapping | None, smallest_effect: float = NOISE_FACTOR) -> float | None:
    """The largest move (a factor ≥ 1) of a storage whose control moved more than `smallest_effect` (Drift.moved);
    None when none did (or no control was recorded). A verdict whose effect is no larger is marked WITHIN_DRIFT."""
    sizes = [d.size for d in drift(config) if d.moved(smallest_effect)]
    return max(sizes) if sizes else None


def drift_note(config: Mapping | None, smallest_effect: float = NOISE_FACTOR) -> str | None:
    """A sentence for the Findings' "Not decided by this run" when the control moved more than `smallest_effect` (the
    smallest ratio the report calls beyond noise; NOISE_FACTOR where it calls none): which storage, how far, and that
    the verdicts smaller than the move are marked. None when the control held (or none was recorded)."""
    moved = [d for d in drift(config) if d.moved(smallest_effect)]
    if not moved:
        return None
    bound = max(d.size for d in moved)
    moves = ", ".join(_move_phrase(d, smallest_effect) for d in moved)
    return (f"The drift control moved during the run: {moves}, more than {_smallest(smallest_effect)}; verdicts on "
            f"effects no larger than {times(bound)} are marked \"{WITHIN_DRIFT}\"")


# ---- a sweep: one run per setting, each with its own control --------------------------------------------------------
def sweep_conditions_phrase(points: Sequence[tuple[str, Mapping]], threshold: float = NOISE_FACTOR) -> str:
    """The control of a sweep's runs (`points`: (setting's name, its run's config)): steady at every setting, or the
    settings where it moved with their moves (a storage's control at two settings reads through two networks, so
    each setting is judged against its own start)."""
    if not points or not any(recorded(config) for _, config in points):
        return NOT_RECORDED
    what = next(config["control"].get("what") for _, config in points if recorded(config))
    unrecorded = [name for name, config in points if not recorded(config)]
    moved = [(name, [d for d in drift(config) if d.moved(threshold)]) for name, config in points]
    moved = [(name, found) for name, found in moved if found]
    said = f"control at each setting ({what}), each setting's end ÷ its start: "
    if not moved:
        said += "steady at every setting" + (" it was timed at" if unrecorded else "")
    else:
        said += "; ".join(f"at {name} {', '.join(_move_phrase(d, threshold) for d in found)}: moved"
                          for name, found in moved)
        said += "; steady at the others" if len(moved) < len(points) - len(unrecorded) else ""
    if unrecorded:
        said += f"; not recorded at {', '.join(unrecorded)}"
    return said


def sweep_drift_bound(points: Sequence[tuple[str, Mapping]], smallest_effect: float = NOISE_FACTOR
                      ) -> dict[str, float | None]:
    """Per setting, its drift_bound."""
    return {name: drift_bound(config, smallest_effect) for name, config in points}


def sweep_drift_note(points: Sequence[tuple[str, Mapping]], smallest_effect: float = NOISE_FACTOR) -> str | None:
    """drift_note over a sweep's settings: the settings where the control moved more than `smallest_effect`."""
    moved = [(name, [d for d in drift(config) if d.moved(smallest_effect)]) for name, config in points]
    moved = [(name, found) for name, found in moved if found]
    if not moved:
        return None
    bound = max(d.size for _, found in moved for d in found)
    return ("The drift control moved during the sweep: "
            + "; ".join(f"at {name} {', '.join(_move_phrase(d, smallest_effect) for d in found)}"
                        for name, found in moved)
            + f", more than {_smallest(smallest_effect)}; verdicts at "
            + ("that setting" if len(moved) == 1 else "those settings")
            + f" on effects no larger than {times(bound)} are marked \"{WITHIN_DRIFT}\"")


# ---- marking a verdict ---------------------------------------------------------------------------------------------
def within(effect: float, bound: float | None) -> bool:
    """A verdict on `effect` (a ratio, either way) is within the control's drift `bound` (drift_bound)."""
    return bound is not None and math.isfinite(effect) and effect > 0 and _factor(effect) <= bound


def mark(sentence: str, effect: float, bound: float | None) -> str:
    """The sentence, marked "(within the control's drift: not a verdict)" before its final stop when its effect is
    within the drift bound; else as it was."""
    if not within(effect, bound):
        return sentence
    body, stop = (sentence[:-1], ".") if sentence.endswith(".") else (sentence, "")
    return f"{body} ({WITHIN_DRIFT}){stop}"


def smallest_effect(ratios: Iterable[float]) -> float:
    """The smallest effect (a factor ≥ 1, either way) among the ratios a report calls beyond noise; NOISE_FACTOR when
    it calls none."""
    factors = [_factor(r) for r in ratios if r is not None and math.isfinite(r) and r > 0]
    return min(factors) if factors else NOISE_FACTOR


# ---- words ---------------------------------------------------------------------------------------------------------
def times(value: float, high: float | None = None) -> str:
    """'1.03×'; with `high`, an interval '0.97–1.10×'."""
    if high is not None:
        return f"{_digits(value)}–{_digits(high)}×"
    return f"{_digits(value)}×"


def _digits(value: float) -> str:
    if not math.isfinite(value):
        return "?"
    return f"{value:.2f}" if value < 10 else f"{value:.0f}"


def _factor(ratio: float) -> float:
    if not (isinstance(ratio, (int, float)) and math.isfinite(ratio) and ratio > 0):
        return math.nan
    return max(ratio, 1 / ratio)


def _move_phrase(d: Drift, threshold: float) -> str:
    """The storage's largest move called beyond `threshold`, with its interval and when."""
    move = max((m for m in d.moves if m.beyond(threshold)), key=lambda m: m.factor)
    return f"{d.storage.upper()} {times(move.ratio)} (95% CI {times(move.low, move.high)}) {_when(move)} ÷ start"


def _when(move: Move) -> str:
    """'end', or 'between steps at 11:20:05' for a round between steps."""
    if move.at == "end":
        return "end"
    clock = move.time[11:19] if len(move.time) >= 19 and move.time[10] == "T" else move.time
    return f"{move.at} steps" + (f" at {clock}" if clock else "")


def _smallest(effect: float) -> str:
    """'1.20×, the smallest effect this report calls beyond noise', or the noise factor where it calls none."""
    if effect == NOISE_FACTOR:
        return f"{times(effect)}, perfkit compare's noise factor (this report calls no ratio of its own beyond noise)"
    return f"{times(effect)}, the smallest effect this report calls beyond noise"


def _verdict(found: list[Drift], threshold: float) -> str:
    moved = [d for d in found if d.moved(threshold)]
    if moved:
        return (f"moved ({', '.join(d.storage.upper() for d in moved)} beyond noise and beyond "
                f"{times(threshold)})")
    if not any(d.judged for d in found):
        return "not judged (too few reads)"
    return "steady"
