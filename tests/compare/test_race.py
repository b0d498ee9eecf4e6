"""Deciding from paired oracle shares (design §18.2-18.3): ``vendbench.compare.assess`` is
pure, valid for any shape of scores within their bounds, and splits its error budget
over every pair of models the race began with."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from vendbench import _betting
from vendbench.compare import EQUIVALENT, WINNER, Pairwise, assess
from vendbench.compare._race import pairs_to_decide

BOUNDS = (0.0, 1.25)


def _scores(means: dict[str, float], n: int, cv: float, seed: int = 1) -> dict[str, list[float]]:
    rng = random.Random(seed)
    return {m: [min(1.25, max(0.0, mu * (1 + cv * rng.gauss(0, 1)))) for _ in range(n)]
            for m, mu in means.items()}


def test_a_clear_difference_is_a_winner_and_too_few_pairs_are_not():
    scores = _scores({"a": 0.39, "b": 1.0}, 12, 0.01)
    a = assess(scores, ["a", "b"], started_with=2, alpha=0.05, margin=0.05, bounds=BOUNDS)
    assert a.verdict == WINNER and a.best == "b" and a.survivors == ["b"]
    (p,) = a.pairwise
    assert p.low > 0 and p.mean == pytest.approx(sum(scores["b"]) / 12 - sum(scores["a"]) / 12)
    assert "Waudby-Smith" in a.method and a.estimand == "mean"
    early = assess({m: v[:4] for m, v in scores.items()}, ["a", "b"], started_with=2,
                   alpha=0.05, margin=0.05, bounds=BOUNDS)
    assert early.verdict is None and early.survivors == ["a", "b"]


def test_identical_play_is_equivalent_within_a_wide_margin_and_never_a_winner():
    same = [0.5, 0.52, 0.48, 0.51, 0.49] * 4
    a = assess({"a": same, "b": list(same)}, ["a", "b"], started_with=2, alpha=0.05,
               margin=0.5, bounds=BOUNDS)
    assert a.verdict == EQUIVALENT and a.survivors == ["a", "b"]
    narrow = assess({"a": same, "b": list(same)}, ["a", "b"], started_with=2, alpha=0.05,
                    margin=0.05, bounds=BOUNDS)
    assert narrow.verdict is None            # 5 % of the oracle takes far more pairs


def test_a_model_that_usually_scores_more_but_sometimes_fails_is_no_winner():
    """design §18: equal means, b +11 % on nine worlds in ten and 0 on the tenth. The
    Gaussian sequence named b the winner in 40 % of such comparisons; the betting
    sequence, in none of these 200 (its guarantee: at most 5 %)."""
    rng = np.random.default_rng(7)
    betting = gaussian = 0
    for _ in range(200):
        a = np.clip(0.5 * (1 + 0.027 * rng.standard_normal(60)), 0, 1.25)
        ok = rng.random(60) >= 0.1
        b = np.clip(0.5 / 0.9 * (1 + 0.027 * rng.standard_normal(60)), 0, 1.25) * ok
        scores = {"a": a.tolist(), "b": b.tolist()}
        for assume in (None, "gaussian"):          # checked after every batch, as compare
            for n in range(2, 61, 2):
                got = assess({m: v[:n] for m, v in scores.items()}, ["a", "b"],
                             started_with=2, alpha=0.05, margin=0.05, bounds=BOUNDS,
                             assume=assume)
                if got.verdict is not None:
                    betting += assume is None and got.verdict == WINNER
                    gaussian += assume == "gaussian" and got.verdict == WINNER
                    break
    assert "ASSUMING the paired differences are Gaussian" in got.method
    assert betting <= 200 * 0.05 and gaussian >= 200 * 0.2, (betting, gaussian)


def test_the_win_rate_counts_worlds_won_and_skips_ties():
    a = [0.5] * 10 + [0.4] * 6
    b = [0.5] * 10 + [0.41] * 6                # ties on 10 worlds, b wins the other 6
    got = assess({"a": a, "b": b}, ["a", "b"], started_with=2, alpha=0.05, margin=0.05,
                 bounds=BOUNDS, estimand="win-rate")
    (p,) = got.pairwise
    assert (p.n, p.mean) == (6, 1.0) and got.estimand == "win-rate"
    assert got.verdict is None                  # six worlds do not decide at 5 %
    more = assess({"a": a + [0.4] * 10, "b": b + [0.41] * 10}, ["a", "b"], started_with=2,
                  alpha=0.05, margin=0.05, bounds=BOUNDS, estimand="win-rate")
    assert more.verdict == WINNER and more.best == "b" and more.pairwise[0].low > 0.5
    # a win rate never says "equivalent": it is a share of worlds, not of money
    even = assess({"a": [0.4, 0.5] * 30, "b": [0.5, 0.4] * 30}, ["a", "b"], started_with=2,
                  alpha=0.05, margin=0.5, bounds=BOUNDS, estimand="win-rate")
    assert even.verdict is None


def test_a_race_splits_alpha_over_every_pair_and_drops_the_beaten():
    scores = _scores({"a": 0.30, "b": 0.31, "c": 0.95}, 16, 0.02, seed=4)
    a = assess(scores, ["a", "b", "c"], started_with=3, alpha=0.05, margin=0.05,
               bounds=BOUNDS)
    by = {(p.a, p.b): p for p in a.pairwise}
    diffs = [c - b for b, c in zip(scores["b"], scores["c"])]
    assert (by[("b", "c")].low, by[("b", "c")].high) == \
        _betting.sequence(diffs, bounds=(-1.25, 1.25), alpha=0.05 / 3)[-1]   # alpha / 3
    assert a.verdict == WINNER and a.best == "c"
    left = assess({m: scores[m] for m in "ab"}, ["a", "b"], started_with=3, alpha=0.05,
                  margin=0.05, bounds=BOUNDS)
    diffs = [b - a for a, b in zip(scores["a"], scores["b"])]
    assert left.pairwise[0].high == \
        _betting.sequence(diffs, bounds=(-1.25, 1.25), alpha=0.05 / 3)[-1][1]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -0.1, 1.3])
def test_a_score_that_is_not_a_number_or_outside_the_bounds_is_an_error(bad):
    with pytest.raises(ValueError, match="a score of"):
        assess({"a": [0.5, bad], "b": [0.5, 0.5]}, ["a", "b"], started_with=2, alpha=0.05,
               margin=0.05, bounds=BOUNDS)
    with pytest.raises(ValueError, match="estimand"):
        assess({"a": [0.5], "b": [0.5]}, ["a", "b"], started_with=2, alpha=0.05,
               margin=0.05, bounds=BOUNDS, estimand="median")


def test_what_deciding_would_take_is_the_width_needed_at_the_root_n_rate():
    # half-width 0.05, the mean 0.03 away from 0: (5 / 3)^2 as many pairs
    away = Pairwise("a", "b", 6, 0.03, -0.02, 0.08)
    assert pairs_to_decide(away, 0.02) == round(6 * (5 / 3) ** 2) == 17
    # the mean near 0: the interval must fit in the margin (0.02 - 0.002 either side)
    near = Pairwise("a", "b", 6, 0.002, -0.048, 0.052)
    assert pairs_to_decide(near, 0.02) == round(6 * (0.05 / 0.018) ** 2)
    assert pairs_to_decide(Pairwise("a", "b", 1, 0.01, -1.0, 1.0), 0.02) is None
