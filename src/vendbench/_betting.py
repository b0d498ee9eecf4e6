"""Confidence sequences and intervals for the mean of bounded values, by betting.

Waudby-Smith, I. & Ramdas, A. (2024). Estimating means of bounded random variables by
betting. *Journal of the Royal Statistical Society, Series B* 86(1): 1-27
(arXiv:2010.09686): the hedged capital process with predictable plug-in bets.

Values lie in known bounds [low, high]; rescaled to x in [0, 1]. For each candidate
mean m a gambler starts with 1 and bets, before each value, a fraction of their wealth
on it being above m (the "+" process) and, separately, below m (the "-" process):

    K+_t(m) = prod_{i<=t} (1 + l+_i(m) (x_i - m)),   K-_t(m) = prod (1 - l-_i(m) (x_i - m)),
    K_t(m)  = max(theta K+_t(m), (1 - theta) K-_t(m)),   theta = 1/2.

The bets are predictable (they use x_1 .. x_{i-1} only): l_i = sqrt(2 log(1/alpha) /
(v_{i-1} * i log(1 + i))) for the sequence (or / (v_{i-1} n) for an interval at a fixed
n), with v the running variance shrunk towards 1/4, truncated at c/m (+) and c/(1 - m)
(-) with c = 3/4, so that no factor is below 1/4. If the values' mean is m (whatever
their distribution within the bounds, and whatever the order dependence, as long as each
has conditional mean m given the past), theta K+ + (1 - theta) K- is a nonnegative
martingale starting at 1, and K_t(m) is below it; by Ville's inequality
P(some t has K_t(m) >= 1/alpha) <= alpha. The set {m : K_t(m) < 1/alpha} therefore
covers the mean at every t at once, whatever the stopping rule; the running
intersection of those sets does too. It is computed on a grid of 1,000 candidate
means, each interval widened by one grid step (it never narrows).

The only assumption is the bounds: no shape (Gaussian or other) is assumed of the
values. Heavy tails within the bounds, bimodal scores, failures scored 0 and ties are
all covered. No interval for a mean can be valid for unbounded heavy tails (Bahadur &
Savage 1956); scores here are bounded because they are shares of the oracle's score,
floored at the scenario's floor and capped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

GRID = 1_000            # candidate means on [0, 1]
TRUNCATION = 0.75       # c: the largest bet, as a share of the most a factor can lose
THETA = 0.5             # the weight of the "+" process in the hedge


def sequence(values: Sequence[float], *, bounds: tuple[float, float], alpha: float
             ) -> list[tuple[float, float]]:
    """The confidence sequence for the mean of ``values`` (in ``bounds``) at level
    1 - ``alpha``: after each value, the running intersection of the sets so far, as
    (low, high) in the values' own units. Valid at every step at once. A prefix of
    ``values`` has the prefix of this sequence (the bets look only backwards)."""
    lows, highs = sequences(np.asarray([_checked(values, bounds)], dtype=float),
                            bounds=bounds, alpha=alpha)
    return list(zip(lows[0].tolist(), highs[0].tolist()))


def interval(values: Sequence[float], *, bounds: tuple[float, float], alpha: float
             ) -> tuple[float, float]:
    """A confidence interval for the mean of ``values`` (in ``bounds``) at level
    1 - ``alpha``, for this number of values, fixed in advance (bets sized for it):
    the leaderboard's interval and the trend's test. (The whole bounds before any value.)"""
    if not values:
        return bounds
    lows, highs = sequences(np.asarray([_checked(values, bounds)], dtype=float),
                            bounds=bounds, alpha=alpha, fixed_n=len(values))
    return float(lows[0, -1]), float(highs[0, -1])


def _checked(values: Sequence[float], bounds: tuple[float, float]) -> list[float]:
    low, high = bounds
    if not high > low:
        raise ValueError(f"bounds {bounds}: the upper must be above the lower")
    for v in values:
        if not math.isfinite(v):
            raise ValueError(f"a value of {v} is not a score")
        if not low - 1e-9 <= v <= high + 1e-9:
            raise ValueError(f"a value of {v} lies outside the bounds {bounds}")
    return [min(high, max(low, v)) for v in values]


# a planner's stop rule for ``sequences``: (step, rows followed, lows, highs) -> True
# (stop), False (go on) or the rows to follow on
Until = Callable[[int, np.ndarray, np.ndarray, np.ndarray], "bool | np.ndarray"]


def sequences(values: np.ndarray, *, bounds: tuple[float, float], alpha: float,
              fixed_n: int | None = None, until: Until | None = None
              ) -> tuple[np.ndarray, np.ndarray]:
    """``sequence`` for many series at once (rows of ``values``, all in ``bounds``): the
    lows and the highs, each of ``values``' shape. ``fixed_n``: bets sized for an
    interval at that many values instead (``interval``).

    ``until`` (a planner's): told after each step its number (from 1), the rows still
    followed (indices into ``values``) and their lows and highs; it answers True to stop
    there (the arrays returned end at that step), an array of rows to follow on (a
    subset: the others' later steps are NaN), or False to go on."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha {alpha} must lie in (0, 1)")
    low, high = bounds
    x = np.clip((np.asarray(values, dtype=float) - low) / (high - low), 0.0, 1.0)
    reps, n = x.shape
    m = np.linspace(0.0, 1.0, GRID + 1)
    with np.errstate(divide="ignore"):
        cap_plus = np.where(m > 0, TRUNCATION / m, np.inf)
        cap_minus = np.where(m < 1, TRUNCATION / (1 - m), np.inf)
    log_plus = np.zeros((reps, m.size))
    log_minus = np.zeros((reps, m.size))
    # a step's work in buffers of their own, in place (half the time of fresh arrays, the
    # same numbers to the bit)
    diff, step = np.empty((reps, m.size)), np.empty((reps, m.size))
    inside = np.empty((reps, m.size), dtype=bool)
    threshold = math.log(1 / alpha) - math.log(THETA)       # K_t(m) >= 1/alpha, hedged
    log_budget = 2 * math.log(1 / alpha)
    total = np.zeros(reps)
    squares = np.zeros(reps)
    variance = np.full(reps, 0.25)        # shrunk towards a mean of 1/2, a variance of 1/4
    lo, hi = np.zeros(reps), np.ones(reps)
    lows, highs = np.full((reps, n), np.nan), np.full((reps, n), np.nan)
    rows = np.arange(reps)
    for t in range(1, n + 1):
        xt = x[:, t - 1:t]
        horizon = fixed_n if fixed_n is not None else t * math.log(1 + t)
        bet = np.sqrt(log_budget / (horizon * variance))[:, None]
        np.subtract(xt, m, out=diff)
        # log_plus += log1p(min(bet, cap+) (x - m)); log_minus += log1p(-min(bet, cap-) (x - m))
        np.minimum(bet, cap_plus, out=step)
        step *= diff
        log_plus += np.log1p(step, out=step)
        np.minimum(bet, cap_minus, out=step)
        step *= diff
        np.negative(step, out=step)
        log_minus += np.log1p(step, out=step)
        np.less(np.maximum(log_plus, log_minus, out=step), threshold, out=inside)
        some = inside.any(axis=1)
        first = np.argmax(inside, axis=1)
        last = GRID - np.argmax(inside[:, ::-1], axis=1)
        # one grid step wider each side: never narrower than the set itself
        now_lo = np.where(some, m[np.maximum(first - 1, 0)], lo)
        now_hi = np.where(some, m[np.minimum(last + 1, GRID)], hi)
        both_lo, both_hi = np.maximum(lo, now_lo), np.minimum(hi, now_hi)
        # the running intersection, unless the sets no longer meet (which happens with
        # probability at most alpha): then today's set alone, itself valid
        meet = both_lo <= both_hi
        lo = np.where(meet, both_lo, now_lo)
        hi = np.where(meet, both_hi, now_hi)
        lows[rows, t - 1], highs[rows, t - 1] = lo, hi
        total += xt[:, 0]
        mean = (0.5 + total) / (t + 1)
        squares += (xt[:, 0] - mean) ** 2
        variance = (0.25 + squares) / (t + 1)
        if until is None:
            continue
        answer = until(t, rows, low + lo * (high - low), low + hi * (high - low))
        if answer is True:
            n = t
            break
        if answer is not False:                  # follow only these rows from here on
            keep = np.searchsorted(rows, np.sort(answer))
            rows = rows[keep]
            x, log_plus, log_minus = x[keep], log_plus[keep], log_minus[keep]
            diff, step, inside = diff[keep], step[keep], inside[keep]
            total, squares, variance = total[keep], squares[keep], variance[keep]
            lo, hi = lo[keep], hi[keep]
            if not len(rows):
                n = t
                break
    return low + lows[:, :n] * (high - low), low + highs[:, :n] * (high - low)
