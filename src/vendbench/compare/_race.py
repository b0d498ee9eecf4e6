"""Deciding between models from paired scores: every pairwise confidence sequence,
eliminations, and the verdict (design §17, §18).

Scores are normalised (each trial's score as a share of what the scenario's oracle gains
over doing nothing on the same world, seed and horizon, floored and capped: design §34),
so they lie in known ``bounds``.
Each pair of models has an anytime-valid confidence sequence at level alpha / (number of
pairs of the models the race began with), so all of them cover at once, at every step,
with probability 1 - alpha. Three ways to build it:

* ``estimand="mean"`` (the default): the mean paired difference b - a of normalised
  scores, by betting (``_betting``: Waudby-Smith & Ramdas 2024). Valid for any
  distribution of the scores within their bounds: failures scored 0, heavy tails,
  bimodal scores, ties.
* ``estimand="win-rate"``: a sequential sign test, by the same betting sequence on the
  share of worlds (pairs, ties left out) that b wins; reported as that share, never as
  money. It answers "does b beat a on more worlds than a beats b?", whatever the sizes
  of the wins.
* ``assume="gaussian"``: the former Gaussian sequence (``_confseq``) for the mean
  difference, valid only if the differences are Gaussian; every output says so.

A model is out when another's interval over it lies beyond no-difference (0 for a
mean, one half for a win rate); the race is won when one model is left. Survivors are
equivalent when every mean interval between them lies within +-margin (a share of the
oracle, fixed before the first pair); a win rate never declares equivalence. So
whatever the stopping rule, the best model is eliminated, or a false winner or a false
equivalence declared, with probability at most alpha.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass

from .. import _betting
from ._confseq import PRIOR_PRECISION, interval as gaussian_interval

WINNER, EQUIVALENT, INCONCLUSIVE = "winner", "equivalent", "inconclusive"
MEAN, WIN_RATE = "mean", "win-rate"
# --assume gaussian: the least spread a pair's differences are credited with (in shares
# of the oracle): only a sample of ties or near-ties comes below it; it widens the
# interval, so the Gaussian guarantee holds for them
SD_FLOOR = 0.005
METHODS = {
    MEAN: "betting confidence sequence for the mean paired difference of shares of the "
          "oracle's gain (Waudby-Smith & Ramdas 2024), valid for any scores within their "
          "bounds",
    WIN_RATE: "sequential sign test by betting on the share of worlds won "
              "(Waudby-Smith & Ramdas 2024), ties left out",
    "gaussian": "Gaussian confidence sequence (Wang & Ramdas 2023), ASSUMING the paired "
                "differences are Gaussian",
}


@dataclass(frozen=True, slots=True)
class Pairwise:
    """``b`` against ``a`` over ``n`` pairs: for a mean, the mean difference b - a of
    oracle shares and its interval; for a win rate, the share of non-tied pairs ``b``
    won (``n`` of them) and its interval."""

    a: str
    b: str
    n: int
    mean: float
    low: float
    high: float

    def as_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Assessment:
    survivors: list[str]
    pairwise: list[Pairwise]
    verdict: str | None            # WINNER, EQUIVALENT, or None: go on
    best: str | None
    estimand: str = MEAN
    method: str = METHODS[MEAN]


def assess(scores: dict[str, list[float]], survivors: list[str], *, started_with: int,
           alpha: float, margin: float, bounds: tuple[float, float],
           estimand: str = MEAN, assume: str | None = None) -> Assessment:
    """Where a race stands. Pure: no file, no state.

    Args:
        scores: each survivor's normalised scores, pair by pair (the same worlds and
            seeds, in the same order for every model).
        survivors: the models still racing.
        started_with: how many models the race began with (alpha is split over every
            pair of them).
        alpha: the error rate, over all stops and all pairs.
        margin: equivalence margin in the scores' own units (a share of the oracle's
            gain).
        bounds: (low, high), the interval every score lies in.
        estimand: ``"mean"`` or ``"win-rate"``.
        assume: ``"gaussian"`` for the Gaussian sequence (mean only), else None.

    Returns:
        An ``Assessment``: ``.verdict`` (``"winner"``, ``"equivalent"`` or None),
        ``.best``, ``.survivors``, each pair's interval, and the method's name.

    Raises:
        ValueError: a score that is NaN, infinite or outside ``bounds``; pairs of
            unequal length; an unknown estimand or assumption.
    """
    if estimand not in (MEAN, WIN_RATE):
        raise ValueError(f"estimand {estimand!r}: mean or win-rate")
    if assume not in (None, "gaussian") or (assume and estimand != MEAN):
        raise ValueError(f"assume {assume!r}: only 'gaussian', and for the mean only")
    low, high = bounds
    for m in survivors:
        for v in scores[m]:
            if not math.isfinite(v):
                raise ValueError(f"{m} has a score of {v}: not a number to compare")
            if not low - 1e-9 <= v <= high + 1e-9:
                raise ValueError(f"{m} has a score of {v}, outside the bounds {bounds}")
    level = alpha / max(1, started_with * (started_with - 1) // 2)
    pairwise = [_pair(a, b, scores[a], scores[b], level, bounds, estimand, assume)
                for a, b in itertools.combinations(survivors, 2)]
    neutral = 0.5 if estimand == WIN_RATE else 0.0
    beaten = {p.a for p in pairwise if p.low > neutral} | \
        {p.b for p in pairwise if p.high < neutral}
    left = [m for m in survivors if m not in beaten]
    method = METHODS[assume or estimand]
    if len(left) == 1:
        return Assessment(left, pairwise, WINNER, left[0], estimand, method)
    among = [p for p in pairwise if p.a in left and p.b in left]
    if estimand == MEAN and among and all(-margin < p.low and p.high < margin
                                          for p in among):
        return Assessment(left, pairwise, EQUIVALENT, _leader(left, scores), estimand,
                          method)
    return Assessment(left, pairwise, None, _leader(left, scores), estimand, method)


def _pair(a: str, b: str, sa: list[float], sb: list[float], level: float,
          bounds: tuple[float, float], estimand: str, assume: str | None) -> Pairwise:
    diffs = [y - x for x, y in zip(sa, sb, strict=True)]
    if estimand == WIN_RATE:
        wins = [1.0 if d > 0 else 0.0 for d in diffs if d != 0]
        if not wins:
            return Pairwise(a, b, 0, 0.5, 0.0, 1.0)
        lo, hi = _betting.sequence(wins, bounds=(0.0, 1.0), alpha=level)[-1]
        return Pairwise(a, b, len(wins), sum(wins) / len(wins), lo, hi)
    n = len(diffs)
    mean = sum(diffs) / n if n else 0.0
    if assume == "gaussian":
        iv = gaussian_interval(diffs, level, PRIOR_PRECISION, SD_FLOOR)
        return Pairwise(a, b, n, mean, iv.low, iv.high)
    spread = bounds[1] - bounds[0]
    if not diffs:
        return Pairwise(a, b, 0, 0.0, -spread, spread)
    lo, hi = _betting.sequence(diffs, bounds=(-spread, spread), alpha=level)[-1]
    return Pairwise(a, b, n, mean, lo, hi)


def _leader(models: list[str], scores: dict[str, list[float]]) -> str:
    return max(models, key=lambda m: sum(scores[m]) / max(1, len(scores[m])))


def pairs_to_decide(p: Pairwise, margin: float, estimand: str = MEAN) -> int | None:
    """A rough guess of the pairs the interval ``p`` needs to decide (its width shrinks
    about as 1/sqrt(n)): to clear no-difference if the estimate is away from it, else
    (a mean) to fit within the margin. None while it says nothing yet."""
    half = (p.high - p.low) / 2
    if not math.isfinite(half) or p.n < 2:
        return None
    neutral = 0.5 if estimand == WIN_RATE else 0.0
    away = abs(p.mean - neutral)
    target = away if estimand == WIN_RATE or away > margin / 2 else margin - away
    if target <= 0:
        return None
    return max(p.n + 1, round(p.n * (half / target) ** 2))
