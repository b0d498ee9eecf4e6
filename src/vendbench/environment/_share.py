"""The headline share (design §34): a trial's score between doing nothing and the oracle.

    share = (score − idle) / (oracle − idle)

``idle`` is what the scenario's floor policy (it only ends its days, paying what the
world charges) scores on the same world, seed, salt and horizon, and ``oracle`` what its
ceiling policy scores there: 0 is doing nothing, 1 the oracle, below 0 losing more than
doing nothing. As Atari's human-normalised score, (agent − random) / (human − random)
(Mnih et al. 2015), it measures what an operator made of the business, not the starting
cash it was handed: the share of the score itself gave an operator that did nothing
26.6 % of the AutoVend oracle at 30 days, and 100 % at 3.

A score below the scenario's ``score_floor`` (an unfinished trial's 0) counts as the
floor; a share is then kept within ``share_low`` and ``share_cap`` (a trial that lost
more than the oracle gains counts as −100 %, one above the cap as the cap), so that
intervals and ``compare`` work on values in known bounds. Where the oracle gains too
little over doing nothing to divide by (less than ``min_gain`` of its score: AutoVend's
first three days, when nothing ordered has arrived yet, and up to a week in the
network), there is no share; where that is so on any world and seed of a cohort, the
cohort has none (``no_share``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ._registry import Scenario, scenario as registered


@dataclass(frozen=True, slots=True)
class Anchors:
    """What doing nothing (``idle``) and the oracle score on one world, seed, salt and
    horizon: a share's 0 and 100 %."""

    idle: float
    oracle: float

    @property
    def gain(self) -> float:
        """What the oracle makes of the business beyond doing nothing."""
        return self.oracle - self.idle


def divisible(anchors: Anchors, scenario: str | Scenario) -> bool:
    """Whether the oracle gains enough over doing nothing to make shares of: more than
    nothing and at least ``min_gain`` of the oracle's score."""
    declared = _declared(scenario)
    return anchors.gain > 0 and anchors.gain >= declared.min_gain * abs(anchors.oracle)


def share(score: float | None, anchors: Anchors | None, scenario: str | Scenario
          ) -> float | None:
    """A trial's share: (score − idle) / (oracle − idle), the score floored at the
    scenario's ``score_floor`` and the share kept within its ``share_low`` and
    ``share_cap`` (None without anchors, or where the oracle gains too little)."""
    declared = _declared(scenario)
    if score is None or anchors is None or not divisible(anchors, declared):
        return None
    value = (max(score, declared.score_floor) - anchors.idle) / anchors.gain
    return min(max(value, declared.share_low), declared.share_cap)


def lowest(anchors: Anchors, scenario: str | Scenario) -> float:
    """The least share a trial can have on these anchors: the least score the world
    allows (the floor: an unfinished trial's 0), normalised, and no lower than
    ``share_low``."""
    declared = _declared(scenario)
    return max(declared.share_low, (declared.score_floor - anchors.idle) / anchors.gain)


def share_bounds(scenario: str | Scenario, anchors: Iterable[Anchors] = ()
                 ) -> tuple[float, float]:
    """The interval every share on ``anchors`` lies in (the bounds that intervals and
    ``compare`` take): below, the least score the world allows, normalised (``lowest``),
    the least over the anchors; above, the scenario's cap. Without anchors that divide:
    (``share_low``, ``share_cap``)."""
    declared = _declared(scenario)
    floors = [lowest(a, declared) for a in anchors if divisible(a, declared)]
    return (min(floors) if floors else declared.share_low, declared.share_cap)


def no_share(anchors: Iterable[Anchors], scenario: str | Scenario) -> str | None:
    """Why these anchors give no shares, in words (None: every one divides). One that
    does not divide withholds them all: a mean over the seeds where the oracle happened
    to do well would flatter nobody honestly."""
    declared = _declared(scenario)
    anchors = list(anchors)
    short = [a for a in anchors if not divisible(a, declared)]
    if not short:
        return None
    worst = min(short, key=lambda a: a.gain)
    return (f"no share of the oracle: it gains too little over doing nothing to divide by "
            f"on {len(short)} of {len(anchors)} worlds and seeds (the rule: more than 0 and "
            f"at least {declared.min_gain:.0%} of its score; at worst it scores "
            f"{worst.oracle:,.2f} {declared.currency} and doing nothing "
            f"{worst.idle:,.2f}): a horizon too short for the business to pay")


def _declared(scenario: str | Scenario) -> Scenario:
    return scenario if isinstance(scenario, Scenario) else registered(scenario)
