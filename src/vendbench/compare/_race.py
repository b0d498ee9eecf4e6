"""Deciding between models from paired scores: every pairwise confidence sequence,
eliminations, and the verdict (SPEC §17).

Each pair of models has an anytime-valid confidence sequence for the mean of their
paired differences (``_confseq``), at level alpha / (number of pairs of the models the
race began with): all of them cover at once, at every step, with probability 1 - alpha.
A model is out when another's interval over it lies above 0; the race is won when one
model is left, and the survivors are equivalent when every interval between them lies
within +-margin of the first one's mean score. So whatever the stopping rule, the best
model is eliminated, or a false winner or a false equivalence declared, with
probability at most alpha.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass

from ._confseq import PRIOR_PRECISION, interval

WINNER, EQUIVALENT, INCONCLUSIVE = "winner", "equivalent", "inconclusive"
# the least spread a pair's differences are credited with, as a share of the first model's
# mean score: a fifth of the seed-to-seed CV of the paper's world (2.7 %). Only a sample
# of ties or near-ties (deterministic or discrete play) comes below it; it widens the
# interval, so the guarantee holds.
SD_FLOOR = 0.005


@dataclass(frozen=True, slots=True)
class Pairwise:
    """``b`` against ``a`` over ``n`` pairs: the mean difference (b - a) and its
    interval, with ``scale`` the mean score of ``a`` (relative figures divide by it)."""

    a: str
    b: str
    n: int
    mean: float
    low: float
    high: float
    scale: float

    def relative(self, value: float) -> float | None:
        return value / self.scale if self.scale > 0 else None

    def as_json(self) -> dict[str, object]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Assessment:
    survivors: list[str]
    pairwise: list[Pairwise]
    verdict: str | None            # WINNER, EQUIVALENT, or None: go on
    best: str | None


def assess(scores: dict[str, list[float]], survivors: list[str], *, started_with: int,
           alpha: float, margin: float, prior: float = PRIOR_PRECISION) -> Assessment:
    """Where the race stands: ``scores[model]`` are the survivors' scores, pair by pair
    (the same worlds and seeds, in the same order)."""
    level = alpha / max(1, started_with * (started_with - 1) // 2)
    pairwise = []
    for a, b in itertools.combinations(survivors, 2):
        diffs = [sb - sa for sa, sb in zip(scores[a], scores[b], strict=True)]
        scale = sum(scores[a]) / len(scores[a]) if scores[a] else 0.0
        iv = interval(diffs, level, prior, SD_FLOOR * abs(scale))
        pairwise.append(Pairwise(a, b, iv.n, iv.mean, iv.low, iv.high, scale))
    beaten = {p.a for p in pairwise if p.low > 0} | {p.b for p in pairwise if p.high < 0}
    left = [m for m in survivors if m not in beaten]
    if len(left) == 1:
        return Assessment(left, pairwise, WINNER, left[0])
    among = [p for p in pairwise if p.a in left and p.b in left]
    if among and all(p.scale > 0 and -margin * p.scale < p.low and p.high < margin * p.scale
                     for p in among):
        return Assessment(left, pairwise, EQUIVALENT, _leader(left, scores))
    return Assessment(left, pairwise, None, _leader(left, scores))


def _leader(models: list[str], scores: dict[str, list[float]]) -> str:
    return max(models, key=lambda m: sum(scores[m]) / max(1, len(scores[m])))


def pairs_to_decide(p: Pairwise, margin: float) -> int | None:
    """A rough guess of the pairs the interval ``p`` needs to decide (its width shrinks
    about as 1/sqrt(n)): to clear 0 if the mean is away from it, else to fit within the
    margin. None while the interval is unbounded."""
    half = (p.high - p.low) / 2
    if half == float("inf") or p.n < 2:
        return None
    target = abs(p.mean) if abs(p.mean) > margin * p.scale / 2 else \
        margin * p.scale - abs(p.mean)
    if target <= 0:
        return None
    return max(p.n + 1, round(p.n * (half / target) ** 2))
