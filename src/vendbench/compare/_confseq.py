"""An anytime-valid confidence sequence for the mean of paired differences.

The differences are taken as Gaussian with unknown mean and variance. The sequence is
the set of means a test martingale has not rejected: the likelihood ratio of the
scale-invariant statistic (x_1, ..., x_n) / |x_1|, with a right-Haar mixture over the
scale and a Gaussian N(0, 1/c) mixture over the standardized effect, which Wang & Ramdas
(2023, "Anytime-valid t-tests and confidence sequences for Gaussian means with unknown
variance", arXiv:2310.03722, §3) obtain by swapping the flat mixture of Lai (1976, "On
confidence sequences", Ann. Statist. 4(2), 265-280) for a Gaussian one. For a candidate
mean m, with y_i = x_i - m, Q = sum y_i^2 and T = sum y_i, the ratio is

    L_n(m) = sqrt(c / (n + c)) * (Q / (Q - T^2 / (n + c)))^(n / 2),

L_1 = 1, and under the true mean it is a nonnegative martingale whatever the variance,
so by Ville's inequality P(some n has L_n >= 1/alpha) <= alpha: the sequence covers the
mean at every n at once, so any stopping rule, however it looks at the data, keeps the
error rate. Solving L_n(m) < 1/alpha for m gives an interval around the sample mean,

    |mean - m| < sqrt((K - 1) * S / (n * (1 - K * c / (n + c)))),
    K = ((n + c) / c)^(1/n) * alpha^(-2/n),  S = sum (x_i - mean)^2,

and the whole line while K * c >= n + c (with c = 0.3 and alpha = 0.05, up to 3 pairs).

c = 0.3 puts the prior's spread (1.8 standard deviations of the differences) between the
5 % and 10 % differences of the paper's world, where seed-to-seed CV is 2.7 %; measured
by ``benchmarks/bench_compare.py`` against c = 0.5 and 1 (docs/compare.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PRIOR_PRECISION = 0.3     # c: the effect-size prior N(0, 1/c), in standard deviations


@dataclass(frozen=True, slots=True)
class Interval:
    n: int
    mean: float
    low: float
    high: float

    @property
    def bounded(self) -> bool:
        return math.isfinite(self.low) and math.isfinite(self.high)


def half_width(n: int, spread: float, alpha: float, c: float = PRIOR_PRECISION) -> float:
    """The half-width at ``n`` observations whose squared deviations from their mean sum
    to ``spread`` (inf while the sequence is the whole line)."""
    if n < 2:
        return math.inf
    k = ((n + c) / c) ** (1 / n) * alpha ** (-2 / n)
    room = 1 - k * c / (n + c)
    if room <= 0:
        return math.inf
    return math.sqrt((k - 1) * spread / (n * room))


def interval(values: list[float], alpha: float, c: float = PRIOR_PRECISION,
             min_sd: float = 0.0) -> Interval:
    """The sequence's interval after ``values`` (all of them, in any order), their
    spread taken as at least ``min_sd`` per value: ties and discrete outcomes (four
    equal differences) must not make an interval of zero width."""
    n = len(values)
    mean = sum(values) / n if n else 0.0
    spread = max(sum((v - mean) ** 2 for v in values), max(0, n - 1) * min_sd**2)
    width = half_width(n, spread, alpha, c)
    return Interval(n, mean, mean - width, mean + width)


def ratio(values: list[float], m: float, c: float = PRIOR_PRECISION) -> float:
    """L_n(m): the test martingale against the mean ``m`` (1 before two values)."""
    n = len(values)
    y = [v - m for v in values]
    q, t = sum(v * v for v in y), sum(y)
    rest = q - t * t / (n + c)
    if rest <= 0:
        return math.inf
    return math.sqrt(c / (n + c)) * float((q / rest) ** (n / 2))
