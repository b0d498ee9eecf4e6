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

    def usd(self, pairs: int | None) -> Decimal | None:
        """What ``pairs`` pairs in all cost from here (the ones still to play)."""
        if pairs is None or self.usd_per_pair is None:
            return None
        return self.usd_per_pair * max(0, pairs - self.pairs_so_far)

    def as_json(self) -> dict[str, Any]:
        return {"difference": self.difference, "spread": self.spread,
                "pairs_so_far": self.pairs_so_far, "median_pairs": self.median,
                "p90_pairs": self.p90, "decided_within_max_pairs": self.decided_within,
                "max_pairs": self.max_pairs,
                "usd_per_pair": None if self.usd_per_pair is None else str(self.usd_per_pair),
                "median_usd": _text(self.usd(self.median)),
                "p90_usd": _text(self.usd(self.p90))}

    def line(self) -> str:
        """The forecast to a verdict in one line."""
        if self.median is None:
            return (f"a verdict is not in sight within {HORIZON:,} pairs (difference "
                    f"{self.difference:+.1%}, spread {self.spread:.2f})")
        cost = self.usd(self.median)
        dollars = "" if cost is None else \
            f", about ${cost:,.2f} more (90 %: ${self.usd(self.p90) or 0:,.2f})"
        p90 = f"{self.p90:,}" if self.p90 is not None else f"over {HORIZON:,}"
        return (f"a verdict after about {self.median:,} pairs in all (90 %: {p90}){dollars}; "
                f"decided within --max-pairs {self.max_pairs:,} in "
                f"{self.decided_within:.0%} of simulations")


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
    rng = np.random.default_rng(seed)
    future = difference + spread * rng.standard_normal((reps, max(HORIZON, max_pairs)))
    # simulated over a longer and longer horizon until 90 % have decided (or the last)
    for horizon in sorted({*(h for h in (100, 250, HORIZON) if h > done), HORIZON,
                           max(HORIZON, max_pairs)}):
        took = _pairs_taken(observed, future, horizon, width, level, batch, margin)
        if np.mean(took <= horizon) >= 0.9:
            break
    median = float(np.median(took))
    p90 = float(np.percentile(took, 90))
    return Plan(difference, spread, done, None if median > horizon else math.ceil(median),
                None if p90 > horizon else math.ceil(p90),
                float(np.mean(took <= max_pairs)), max_pairs, usd_per_pair)


def _pairs_taken(observed: Sequence[float], future: np.ndarray, horizon: int, width: float,
                 level: float, batch: int, margin: float | None = None) -> np.ndarray:
    """The pairs (in all) each simulated comparison takes to a verdict (a winner, or
    within ``margin``: equivalent), or horizon + 1."""
    reps, done = future.shape[0], len(observed)
    d = np.clip(np.concatenate([np.tile(np.asarray(observed, float), (reps, 1)),
                                future[:, :horizon - done]], axis=1), -width, width)
    lo, hi = _betting.sequences(d, bounds=(-width, width), alpha=level)
    steps = np.arange(max(batch, done + batch), horizon + 1, batch) - 1
    if not len(steps):
        return np.full(reps, horizon + 1)
    decided = (lo[:, steps] > 0) | (hi[:, steps] < 0)
    if margin is not None:
        decided |= (lo[:, steps] > -margin) & (hi[:, steps] < margin)
    return np.where(decided.any(1), steps[decided.argmax(1)] + 1, horizon + 1)
