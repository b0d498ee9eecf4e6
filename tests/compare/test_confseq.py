"""The confidence sequence of `vendbench compare`: its interval is exactly where the test
martingale crosses 1/alpha, it agrees with Robbins' known-variance normal mixture as n
grows, and it covers the mean at every n at once at the promised rate."""

from __future__ import annotations

import math
import random

import numpy as np

from vendbench.compare import PRIOR_PRECISION, half_width, interval, ratio


def test_the_interval_is_where_the_martingale_crosses_one_over_alpha():
    rng = random.Random(3)
    for n in (4, 7, 30):
        values = [rng.gauss(2.0, 3.0) for _ in range(n)]
        iv = interval(values, 0.05)
        assert iv.bounded and iv.low < iv.mean < iv.high
        for edge in (iv.low, iv.high):
            assert math.isclose(ratio(values, edge), 20.0, rel_tol=1e-9)
        inside = (iv.low + iv.mean) / 2
        outside = iv.high + (iv.high - iv.low)
        assert ratio(values, inside) < 20 < ratio(values, outside)


def test_one_value_says_nothing_and_three_bound_nothing_at_this_prior():
    assert math.isclose(ratio([5.0], 0.0), 1) and math.isclose(ratio([-2.0], 7.0), 1)  # L_1 = 1
    assert PRIOR_PRECISION == 0.3
    for n in (1, 2, 3):
        assert half_width(n, 1.0, 0.05) == math.inf
    assert math.isfinite(half_width(4, 1.0, 0.05))
    # exactly: bounded once K c < n + c, K = ((n + c)/c)^(1/n) alpha^(-2/n)
    c = PRIOR_PRECISION
    assert ((3 + c) / c) ** (1 / 3) * 0.05 ** (-2 / 3) * c > 3 + c
    assert ((4 + c) / c) ** (1 / 4) * 0.05 ** (-2 / 4) * c < 4 + c


def test_as_n_grows_it_becomes_robbins_known_variance_normal_mixture():
    """Robbins (1970) / Howard et al. (2021): with known sigma and a N(0, sigma^2/c)
    mixture, |mean - mu| < (sigma / n) sqrt((n + c) log((n + c) / (c alpha^2)))."""
    c, alpha, sigma = PRIOR_PRECISION, 0.05, 2.0
    for n in (10_000, 100_000):
        known = sigma / n * math.sqrt((n + c) * math.log((n + c) / (c * alpha**2)))
        ours = half_width(n, n * sigma**2, alpha)
        assert math.isclose(ours, known, rel_tol=0.01), (n, ours, known)


def test_it_covers_the_mean_at_every_n_at_once_at_the_promised_rate():
    """2,000 Gaussian sequences of 100, the interval checked after every value: the
    share that ever excludes the true mean is at most alpha (with 3 binomial standard
    errors of slack), and the time-uniform guarantee is not bought by an interval
    that never narrows."""
    rng = np.random.default_rng(11)
    reps, n, alpha = 2_000, 100, 0.05
    x = rng.normal(5.0, 2.0, (reps, n))
    counts = np.arange(1, n + 1)
    means = np.cumsum(x, axis=1) / counts
    spreads = np.cumsum(x * x, axis=1) - counts * means**2
    missed = 0
    for r in range(reps):
        for k in range(1, n):
            if abs(means[r, k] - 5.0) >= half_width(k + 1, spreads[r, k], alpha):
                missed += 1
                break
    assert missed / reps <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / reps)
    assert half_width(n, n * 4.0, alpha) < 1.2          # about 0.3 sigma after 100 values
