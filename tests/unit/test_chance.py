"""perfkit.chance: how often noise alone flags a case, checked against scipy's own exact test over every ordering."""
from itertools import combinations
from math import comb

import pytest
from scipy.stats import mannwhitneyu

from perfkit.chance import at_least, flag_rate


def _flagged_by_scipy(n_a: int, n_b: int, alpha: float) -> float:
    """Every way the A and B runs can interleave (all equally likely with no change), through scipy's exact test."""
    n = n_a + n_b
    flagged = 0
    for a_ranks in combinations(range(n), n_a):
        a = [float(r) for r in a_ranks]
        b = [float(r) for r in range(n) if r not in a_ranks]
        flagged += mannwhitneyu(a, b, alternative="two-sided", method="exact").pvalue < alpha
    return flagged / comb(n, n_a)


@pytest.mark.parametrize("n_a, n_b", [(2, 2), (3, 3), (4, 4), (3, 5), (5, 5), (6, 7)])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_the_flag_rate_is_scipys_over_every_ordering(n_a, n_b, alpha):
    assert flag_rate(n_a, n_b, alpha) == pytest.approx(_flagged_by_scipy(n_a, n_b, alpha))


def test_four_runs_a_side_flag_two_orderings_of_seventy():
    assert flag_rate(4, 4, 0.05) == pytest.approx(2 / 70)
    assert flag_rate(2, 2, 0.05) == 0  # p is never below 0.33
    assert flag_rate(10, 12, 0.05) == 0.05  # scipy's normal approximation: alpha itself


def test_at_least_k_of_many_cases():
    rates = [2 / 70] * 24
    assert at_least(0, rates) == 1.0
    assert at_least(1, rates) == pytest.approx(1 - (1 - 2 / 70) ** 24)
    exactly_one = 24 * (2 / 70) * (1 - 2 / 70) ** 23
    assert at_least(2, rates) == pytest.approx(1 - (1 - 2 / 70) ** 24 - exactly_one)
    assert at_least(25, rates) == 0.0
    assert at_least(2, [0.5, 0.2]) == pytest.approx(0.1)
