"""Deciding from paired scores: winners, equivalence, racing, and the error budget split
over every pair of models the race began with."""

from __future__ import annotations

import math
import random

from vendbench.compare import EQUIVALENT, WINNER, Pairwise, assess, interval
from vendbench.compare._race import pairs_to_decide


def _scores(means: dict[str, float], n: int, cv: float, seed: int = 1) -> dict[str, list[float]]:
    rng = random.Random(seed)
    return {m: [mu * (1 + cv * rng.gauss(0, 1)) for _ in range(n)] for m, mu in means.items()}


def test_a_clear_difference_is_a_winner_and_too_few_pairs_are_not():
    scores = _scores({"a": 100.0, "b": 110.0}, 8, 0.027)
    a = assess(scores, ["a", "b"], started_with=2, alpha=0.05, margin=0.02)
    assert a.verdict == WINNER and a.best == "b" and a.survivors == ["b"]
    (p,) = a.pairwise
    assert p.low > 0 and p.scale == sum(scores["a"]) / 8
    early = assess({m: v[:3] for m, v in scores.items()}, ["a", "b"], started_with=2,
                   alpha=0.05, margin=0.02)
    assert early.verdict is None and early.survivors == ["a", "b"]      # unbounded at 3


def test_identical_play_is_equivalent_never_a_winner():
    same = [100.0, 102.0, 98.0, 101.0, 99.0]
    a = assess({"a": same, "b": list(same)}, ["a", "b"], started_with=2, alpha=0.05,
               margin=0.02)
    assert a.verdict == EQUIVALENT and a.survivors == ["a", "b"]


def test_equal_differences_do_not_make_a_zero_width_interval():
    """Four pairs that differ by exactly 1 % (two agents that only score one of two
    values): without the floor the spread is 0, the interval a point, and a winner
    declared on a coin's luck."""
    a = [100.0] * 4
    b = [101.0] * 4
    got = assess({"a": a, "b": b}, ["a", "b"], started_with=2, alpha=0.05, margin=0.02)
    (p,) = got.pairwise
    assert got.verdict is None and p.low < 0 < p.high
    assert interval([1.0] * 4, 0.05).low == 1.0                 # the bare interval: a point
    far = assess({"a": a, "b": [110.0] * 4}, ["a", "b"], started_with=2, alpha=0.05,
                 margin=0.02)
    assert far.verdict == WINNER                      # a 10 % difference still decides


def test_a_race_splits_alpha_over_every_pair_and_drops_the_beaten():
    scores = _scores({"a": 100.0, "b": 100.5, "c": 115.0}, 12, 0.02, seed=4)
    a = assess(scores, ["a", "b", "c"], started_with=3, alpha=0.05, margin=0.02)
    by = {(p.a, p.b): p for p in a.pairwise}
    diffs = [c - b for b, c in zip(scores["b"], scores["c"])]
    assert by[("b", "c")].low == interval(diffs, 0.05 / 3).low      # alpha / 3 pairs
    assert a.verdict == WINNER and a.best == "c"
    # two models left of a race of three still pay for three pairs
    left = assess({m: scores[m] for m in "ab"}, ["a", "b"], started_with=3, alpha=0.05,
                  margin=0.02)
    diffs = [b - a for a, b in zip(scores["a"], scores["b"])]
    assert left.pairwise[0].high == interval(diffs, 0.05 / 3).high


def test_what_deciding_would_take_is_the_width_needed_at_the_root_n_rate():
    # half-width 5, the mean 3 away from 0: (5 / 3)^2 as many pairs
    away = Pairwise("a", "b", 6, 3.0, -2.0, 8.0, 100.0)
    assert pairs_to_decide(away, 0.02) == round(6 * (5 / 3) ** 2) == 17
    # the mean near 0: the interval must fit in the margin (2 - 0.2 = 1.8 either side)
    near = Pairwise("a", "b", 6, 0.2, -4.8, 5.2, 100.0)
    assert pairs_to_decide(near, 0.02) == round(6 * (5 / 1.8) ** 2)
    assert pairs_to_decide(Pairwise("a", "b", 3, 1.0, -math.inf, math.inf, 100.0),
                           0.02) is None
