"""What a verdict will cost, before (or while) it is bought (design §28): the pairs a
comparison is likely to need to decide a given difference, and their dollars.

A pure function of the difference, the spread of the paired differences, and the
comparison's own rules: paired differences drawn from a normal with that mean and
spread (clipped to the bounds, as shares are), decided batch by batch by the very
betting sequence ``assess`` uses, ``reps`` times; the pairs it took are read off as a
median and a 90th percentile, with the share decided within the cap. The spread is a
prior guess, or what a pilot (a comparison so far) observed; the pairs already paired
are kept and only what follows is simulated. It is a forecast under that assumption,
not a guarantee: the verdict's validity does not depend on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from .. import _betting

PRIOR_SPREAD = 0.25        # SD of paired differences of oracle shares when nothing is known
PLAN_REPS = 400            # simulated comparisons
HORIZON = 1_000            # pairs simulated at most (beyond the cap too: what it would take)
TAIL_FROM, TAIL_REPS = 250, 100   # past this many pairs, at most this many undecided followed


@dataclass(frozen=True, slots=True)
class Plan:
    difference: float          # B - A, a share of the oracle's score
    spread: float              # SD of the paired differences
    pairs_so_far: int
    median: int | None         # pairs (in all) to a verdict; None: beyond HORIZON
    p90: int | None
    decided_within: float      # share of simulations decided within ``max_pairs``
    max_pairs: int
    usd_per_pair: Decimal | None = None
    simulated: int = HORIZON   # pairs simulated at most (beyond: the shares are bounds)

    def usd(self, pairs: int | None) -> Decimal | None:
        """What ``pairs`` pairs in all cost from here (the ones still to play)."""
        if pairs is None or self.usd_per_pair is None:
            return None
        return self.usd_per_pair * max(0, pairs - self.pairs_so_far)

    def as_json(self) -> dict[str, Any]:
        return {"difference": self.difference, "spread": self.spread,
                "pairs_so_far": self.pairs_so_far, "median_pairs": self.median,
                "p90_pairs": self.p90, "decided_within_max_pairs": self.decided_within,
                "max_pairs": self.max_pairs, "simulated_pairs": self.simulated,
                "decided_within_is_lower_bound": self.lower_bound,
                "usd_per_pair": None if self.usd_per_pair is None else str(self.usd_per_pair),
                "median_usd": _text(self.usd(self.median)),
                "p90_usd": _text(self.usd(self.p90))}

    def line(self) -> str:
        """The forecast to a verdict in one line."""
        if self.median is None:
            return (f"a verdict is not in sight within {self.simulated:,} pairs (difference "
                    f"{self.difference:+.1%}, spread {self.spread:.2f}); decided within "
                    f"--max-pairs {self.max_pairs:,} in {self._within()} of simulations")
        cost = self.usd(self.median)
        dollars = "" if cost is None else \
            f", about ${cost:,.2f} more (90 %: ${self.usd(self.p90) or 0:,.2f})"
        p90 = f"{self.p90:,}" if self.p90 is not None else f"over {self.simulated:,}"
        return (f"a verdict after about {self.median:,} pairs in all (90 %: {p90}){dollars}; "
                f"decided within --max-pairs {self.max_pairs:,} in {self._within()} of "
                "simulations")

    @property
    def lower_bound(self) -> bool:
        """Whether ``decided_within`` counts only those decided within the pairs
        simulated, short of ``max_pairs`` (some undecided there might decide later)."""
        return self.max_pairs > self.simulated and self.decided_within < 1

    def _within(self) -> str:
        if not self.lower_bound:
            return f"{self.decided_within:.0%}"
        return (f"at least {self.decided_within:.0%} (those decided within the "
                f"{self.simulated:,} pairs a plan simulates)")


def _text(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


def plan(difference: float, spread: float, *, alpha: float, bounds: tuple[float, float],
         max_pairs: int, batch: int, observed: Sequence[float] = (), reps: int = PLAN_REPS,
         seed: int = 0, usd_per_pair: Decimal | None = None,
         started_with: int = 2, margin: float | None = None) -> Plan:
    """The pairs a comparison of paired differences with mean ``difference`` and SD
    ``spread`` is likely to take to a verdict: a winner, or (with ``margin``) equivalent
    within it, as ``assess`` decides (``observed``: the differences paired so far, kept
    as they are). ``alpha`` is split as ``assess`` splits it."""
    if not math.isfinite(difference) or not math.isfinite(spread) or spread < 0:
        raise ValueError(f"a difference of {difference} and a spread of {spread} plan "
                         "nothing")
    width = bounds[1] - bounds[0]
    level = alpha / max(1, started_with * (started_with - 1) // 2)
    done = len(observed)
    horizon = max(HORIZON, done + batch)
    rng = np.random.default_rng(seed)
    future = difference + spread * rng.standard_normal((reps, horizon - done))
    took, weight, simulated = _pairs_taken(observed, future, width, level, batch, margin,
                                           need=min(max_pairs, horizon), rng=rng)
    median = _quantile(took, weight, 0.5)
    p90 = _quantile(took, weight, 0.9)
    within = float(np.sum(weight[(took <= simulated) & (took <= max_pairs)]) / weight.sum())
    return Plan(difference, spread, done, None if median > simulated else median,
                None if p90 > simulated else p90, within, max_pairs, usd_per_pair,
                simulated)


def _quantile(values: np.ndarray, weight: np.ndarray, q: float) -> int:
    """The smallest value at or below which at least ``q`` of the weight lies."""
    order = np.argsort(values, kind="stable")
    cumulative = np.cumsum(weight[order])
    return int(values[order][np.searchsorted(cumulative, q * cumulative[-1] - 1e-9)])


def _pairs_taken(observed: Sequence[float], future: np.ndarray, width: float, level: float,
                 batch: int, margin: float | None = None, need: int = HORIZON,
                 rng: np.random.Generator | None = None
                 ) -> tuple[np.ndarray, np.ndarray, int]:
    """The pairs (in all) each simulated comparison takes to a verdict (a winner, or
    within ``margin``: equivalent), or the pairs simulated + 1; each one's weight; and
    the pairs simulated.

    One pass, checked at each batch's end as ``assess`` checks, that follows only the
    comparisons not yet decided, and stops once ``need`` pairs are simulated and 90 %
    have decided (or all), or at the last pair of ``future``. Past ``TAIL_FROM`` pairs
    it follows at most ``TAIL_REPS`` of the undecided, drawn at random, each standing
    for its share of them (weighted): a plan is arithmetic, answered in about a second
    whatever it is asked (--max-pairs 10000 at a difference of 0 once ran past two
    minutes)."""
    rng = rng or np.random.default_rng(0)
    reps, done = future.shape[0], len(observed)
    d = np.clip(np.concatenate([np.tile(np.asarray(observed, float), (reps, 1)), future],
                               axis=1), -width, width)
    first = max(batch, done + batch)
    decided_at = np.zeros(reps, dtype=int)            # 0: not yet
    weight = np.ones(reps)
    followed = np.ones(reps, dtype=bool)              # False: dropped from the tail
    last = [0]

    def until(t: int, rows: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> bool | np.ndarray:
        last[0] = t
        keep = rows
        if t >= first and (t - first) % batch == 0:          # a batch's end: assessed
            now = (lo > 0) | (hi < 0)
            if margin is not None:
                now |= (lo > -margin) & (hi < margin)
            decided_at[rows[now]] = t
            share = np.sum(weight[decided_at > 0]) / np.sum(weight[followed])
            if share >= 1 or (t >= need and share >= 0.9):
                return True
            keep = rows[~now]
        if t >= TAIL_FROM and len(keep) > TAIL_REPS:
            kept = rng.choice(keep, TAIL_REPS, replace=False)
            weight[kept] *= len(keep) / TAIL_REPS
            followed[np.setdiff1d(keep, kept)] = False
            keep = kept
        return keep if len(keep) < len(rows) else False

    _betting.sequences(d, bounds=(-width, width), alpha=level, until=until)
    simulated = last[0]
    took = np.where(decided_at > 0, decided_at, simulated + 1)[followed]
    return took, weight[followed], simulated
