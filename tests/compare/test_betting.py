"""The betting confidence sequence and interval (``vendbench._betting``, Waudby-Smith &
Ramdas 2024): they cover the mean at the promised rate on the shapes scores have, a
prefix of the values has the prefix of the sequence, and bad input is refused."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vendbench._betting import interval, sequence, sequences
from vendbench.leaderboard import mean_interval

SHAPES = {
    "uniform": lambda rng, size: rng.random(size),
    "failures scored 0": lambda rng, size: 0.6 * (rng.random(size) >= 0.1),
    "heavy tail": lambda rng, size: np.clip(0.05 * np.exp(1.5 * rng.standard_normal(size)),
                                            0, 1.25),
    "coins": lambda rng, size: 1.25 * (rng.random(size) < 0.3),
}
TRUE_MEAN = {"uniform": 0.5, "failures scored 0": 0.54, "coins": 0.375}


@pytest.mark.parametrize("shape", sorted(TRUE_MEAN))
def test_the_sequence_covers_the_mean_at_every_step_at_once(shape):
    """300 sequences of 60 values each: the share that ever misses the mean stays
    within alpha (5 %); its binomial 99 % bound is 8.5 %."""
    rng = np.random.default_rng(11)
    x = SHAPES[shape](rng, (300, 60))
    lows, highs = sequences(x, bounds=(0.0, 1.25), alpha=0.05)
    mean = TRUE_MEAN[shape]
    ever = ((lows > mean) | (highs < mean)).any(axis=1).mean()
    assert ever <= 0.085, ever
    assert (highs[:, -1] - lows[:, -1]).mean() < (highs[:, 9] - lows[:, 9]).mean()  # narrows


@pytest.mark.parametrize("n", [3, 5, 10])
def test_the_fixed_n_interval_covers_a_heavy_tail(n):
    rng = np.random.default_rng(5)
    big = SHAPES["heavy tail"](rng, 400_000)
    x = SHAPES["heavy tail"](rng, (400, n))
    lows, highs = sequences(x, bounds=(0.0, 1.25), alpha=0.05, fixed_n=n)
    assert ((lows[:, -1] <= big.mean()) & (big.mean() <= highs[:, -1])).mean() >= 0.95


def test_a_prefix_has_the_prefix_of_the_sequence_and_the_interval_is_the_leaderboards():
    rng = np.random.default_rng(2)
    values = list(rng.random(40))
    whole = sequence(values, bounds=(0, 1), alpha=0.05)
    assert sequence(values[:17], bounds=(0, 1), alpha=0.05) == whole[:17]
    assert all(lo <= hi for lo, hi in whole)
    assert all(a[0] <= b[0] and b[1] <= a[1] for a, b in zip(whole, whole[1:]))  # nested
    assert mean_interval(values, bounds=(0, 1)) == interval(values, bounds=(0, 1),
                                                            alpha=0.05)
    assert interval([], bounds=(0, 1.25), alpha=0.05) == (0, 1.25)     # nothing known
    lo, hi = mean_interval([0.39, 0.40, 0.38], bounds=(0, 1.25))      # three seeds: wide
    assert lo < 0.39 < hi and hi - lo > 0.5


@pytest.mark.parametrize("values,message", [
    ([0.5, math.nan], "not a score"), ([0.5, math.inf], "not a score"),
    ([1.5], "outside the bounds"), ([-0.01], "outside the bounds")])
def test_bad_values_are_refused(values, message):
    with pytest.raises(ValueError, match=message):
        sequence(values, bounds=(0.0, 1.25), alpha=0.05)
    with pytest.raises(ValueError, match="alpha"):
        sequence([0.5], bounds=(0.0, 1.0), alpha=1.5)
    with pytest.raises(ValueError, match="upper must be above"):
        sequence([0.5], bounds=(1.0, 1.0), alpha=0.05)
