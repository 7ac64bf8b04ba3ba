"""What noise alone gives a comparison of many cases: how often the two-sided Mann-Whitney test flags a case that did
not change, and how likely that many flags are across all of them.

A comparison calls a case changed when p < alpha (and its ratio leaves the noise band, which only makes a flag
rarer: the rates here are upper bounds). With no real change every ordering of the A and B runs is equally likely,
so for the exact test the chance of a flag is the share of orderings whose p is below alpha. With few runs that is
well under alpha (4 and 4 runs: 2 of the 70 orderings, 2.9%), since p can only take a few values; with more runs,
where scipy uses the normal approximation, it is alpha. Over many cases the flags add up: 24 cases at 2.9% flag
0.7 on average, and at least one half the time."""
from __future__ import annotations

from functools import lru_cache
from math import comb

# scipy.stats.mannwhitneyu's method="auto" is exact below this many runs on both sides (and without ties)
EXACT_BELOW = 8


@lru_cache(maxsize=None)
def _u_counts(n_a: int, n_b: int) -> tuple[int, ...]:
    """How many of the C(n_a + n_b, n_a) orderings give each value of U (0 .. n_a * n_b)."""
    if n_a == 0 or n_b == 0:
        return (1,)
    # the largest run belongs to A (it beats all n_b of B) or to B (it adds nothing to U)
    with_a, with_b = _u_counts(n_a - 1, n_b), _u_counts(n_a, n_b - 1)
    counts = [0] * (n_a * n_b + 1)
    for u, count in enumerate(with_a):
        counts[u + n_b] += count
    for u, count in enumerate(with_b):
        counts[u] += count
    return tuple(counts)


def flag_rate(n_a: int, n_b: int, alpha: float) -> float:
    """The chance that a case with no real change gets p < alpha (two-sided), for these numbers of runs."""
    if n_a < 1 or n_b < 1:
        return 0.0
    if n_a >= EXACT_BELOW or n_b >= EXACT_BELOW:
        return alpha
    counts = _u_counts(n_a, n_b)
    total = comb(n_a + n_b, n_a)
    flagged, at_or_below = 0, 0
    for count in counts:
        at_or_above = total - at_or_below  # orderings with U at least this one's
        at_or_below += count
        if 2 * min(at_or_below, at_or_above) / total < alpha:  # the exact two-sided p of this U
            flagged += count
    return flagged / total


def at_least(k: int, rates: list[float]) -> float:
    """The chance that k or more of independent cases, each flagged with its own rate, are flagged."""
    if k <= 0:
        return 1.0
    chances = [1.0] + [0.0] * len(rates)  # chances[j]: exactly j flagged among the cases so far
    for rate in rates:
        for j in range(len(chances) - 1, 0, -1):
            chances[j] = chances[j] * (1 - rate) + chances[j - 1] * rate
        chances[0] *= 1 - rate
    return sum(chances[k:])
