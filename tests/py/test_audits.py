"""Tests of dpdeck.audits: every bound keeps its false-alarm rate, checked against scipy's exact distributions.

scipy is an independent reference here (the browser has no scipy: that is why
the bounds are written out in dpdeck.audits). Each test also checks that the
bound is not far looser than the exact quantile, so a test that uses it still
has power.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpdeck import audits

ALPHA = 1e-6


@pytest.mark.parametrize("samples", [50, 200, 4000])
def test_the_kolmogorov_distance_bound_keeps_its_false_alarm(samples):
    bound = audits.distance_bound(samples, false_alarm=ALPHA)
    assert stats.kstwo.sf(bound, samples) <= ALPHA
    assert stats.kstwo.sf(bound * 0.9, samples) > ALPHA / 100   # close to the exact quantile


def test_the_uniform_distance_is_scipys_statistic():
    sample = np.random.default_rng(0).uniform(size=300) ** 1.1
    assert audits.uniform_distance(sample) == pytest.approx(stats.kstest(sample, "uniform").statistic, abs=1e-12)
    assert audits.uniform_distance([0.5]) == 0.5
    with pytest.raises(ValueError):
        audits.uniform_distance([])


@pytest.mark.parametrize("degrees", [90, 600, 5000])
def test_the_chi_square_bounds_keep_their_false_alarm(degrees):
    low, high = audits.chi_square_bounds(degrees, false_alarm=ALPHA)
    assert stats.chi2.cdf(low, degrees) <= ALPHA / 2
    assert stats.chi2.sf(high, degrees) <= ALPHA / 2
    # Laurent–Massart is a little loose, not a lot: the exact quantiles sit inside, within 40 %.
    assert stats.chi2.ppf(ALPHA / 2, degrees) - low < 0.4 * degrees
    assert high - stats.chi2.isf(ALPHA / 2, degrees) < 0.4 * degrees


@pytest.mark.parametrize("trials, probability", [(100, 0.25), (4000, math.exp(-5.25)), (8000, 0.5), (30, 0.01)])
def test_the_binomial_bounds_are_the_exact_quantiles(trials, probability):
    low, high = audits.binomial_bounds(trials, probability, false_alarm=ALPHA)
    assert stats.binom.cdf(low - 1, trials, probability) <= ALPHA / 2 < stats.binom.cdf(low, trials, probability)
    assert stats.binom.sf(high, trials, probability) <= ALPHA / 2 < stats.binom.sf(high - 1, trials, probability)


def test_the_normal_bound_is_the_exact_quantile():
    for alpha in (1e-6, 1e-3, 0.05):
        assert 2 * stats.norm.sf(audits.normal_bound(false_alarm=alpha)) == pytest.approx(alpha, rel=1e-9)


@pytest.mark.parametrize("samples", [200, 4000, 14000])
def test_the_exponential_mean_bounds_keep_their_false_alarm(samples):
    low, high = audits.exponential_mean_bounds(samples, false_alarm=ALPHA)
    assert stats.gamma.cdf(samples * low, samples) <= ALPHA / 2
    assert stats.gamma.sf(samples * high, samples) <= ALPHA / 2
    assert stats.gamma.cdf(samples * low * 1.02, samples) > ALPHA / 100


def occupancy_probabilities(draws: int, outcomes: int) -> list:
    """P(D = d), d = 0 … draws: C(N, d)·d!·S(R, d)/N^R with Stirling numbers of the second kind, exact."""
    stirling = [[0] * (draws + 1) for _ in range(draws + 1)]
    stirling[0][0] = 1
    for r in range(1, draws + 1):
        for d in range(1, r + 1):
            stirling[r][d] = d * stirling[r - 1][d] + stirling[r - 1][d - 1]
    return [Fraction(math.perm(outcomes, d) * stirling[draws][d], outcomes ** draws) for d in range(draws + 1)]


@pytest.mark.parametrize("draws, outcomes", [(100, 1820), (40, 50)])
def test_the_occupancy_bound_is_the_exact_quantile(draws, outcomes):
    minimum = audits.occupancy_bound(draws, outcomes, false_alarm=ALPHA)
    probabilities = occupancy_probabilities(draws, outcomes)
    assert sum(probabilities) == 1
    assert float(sum(probabilities[:minimum])) <= ALPHA < float(sum(probabilities[:minimum + 1]))


def test_bad_false_alarm_rates_are_named():
    for bad in (0, 1, -0.1, 2.0, float("nan")):
        with pytest.raises(ValueError, match="false_alarm"):
            audits.chi_square_bounds(10, false_alarm=bad)
