"""The cost–share frontier (design §33): who is on it, the staircase, who is possibly
on it and by which rule, the log axis; and the rule checked by simulation on the shapes
real shares have (failures at the floor, a rare big win, ties), not only normal ones."""

from __future__ import annotations

import random

import pytest

from vendbench.leaderboard import Point, dominates, frontier, t_interval
from vendbench.leaderboard._frontier import cost_interval


def point(model, cost, share, cost_ci=None, share_ci=None, n=3):
    return Point(model, ((cost, share),) * n, cost_ci, share_ci)


def test_who_is_on_the_frontier_and_the_staircase_through_them():
    fr = frontier([point("a", 1.0, 0.5), point("b", 2.0, 0.7), point("c", 3.0, 0.6)],
                  resamples=0)
    on = {p["model"]: p["on_frontier"] for p in fr.points}
    assert on == {"a": True, "b": True, "c": False}
    # right from a at its share to b's cost, up to b's share, on to the costliest model
    flat = [v for corner in fr.staircase for v in corner]
    assert flat == pytest.approx([1.0, 0.5, 2.0, 0.5, 2.0, 0.7, 3.0, 0.7])


def test_ties_beat_no_one():
    assert not dominates((1.0, 0.5), (1.0, 0.5))
    fr = frontier([point("a", 1.0, 0.5), point("b", 1.0, 0.5)], resamples=0)
    assert all(p["on_frontier"] for p in fr.points)


@pytest.mark.parametrize("cost_low, share_high, possibly", [
    (2.5, 0.75, True),        # its best case beats b on share: it may be on the frontier
    (1.5, 0.65, True),        # cheaper than b at best: a only is cheaper, and a is worse
    (2.5, 0.65, False),       # b is cheaper and better than its best case
])
def test_possibly_on_the_frontier_when_its_intervals_reach_the_staircase(
        cost_low, share_high, possibly):
    fr = frontier([point("a", 1.0, 0.5), point("b", 2.0, 0.7),
                   point("c", 3.0, 0.6, (cost_low, 3.5), (0.5, share_high))], resamples=0)
    c = next(p for p in fr.points if p["model"] == "c")
    assert (c["on_frontier"], c["possibly_on_frontier"]) == (False, possibly)
    assert "possibly on the frontier" in fr.rule


def test_the_resampled_share_is_of_resamples_over_seeds():
    steady = Point("steady", ((1.0, 0.5),) * 5)
    # on the frontier only in the resamples that draw its good trial more than its bad
    wobbly = Point("wobbly", ((1.0, 0.2), (1.0, 0.8), (1.0, 0.2), (1.0, 0.8), (1.0, 0.5)))
    fr = frontier([steady, wobbly], resamples=400, seed=3)
    share = {p["model"]: p["resampled_on_frontier"] for p in fr.points}
    assert 0.3 < share["wobbly"] < 0.7 and 0.3 < share["steady"] < 0.7
    assert share["wobbly"] + share["steady"] >= 1.0       # ties: both on


def test_a_log_cost_axis_only_where_costs_span_a_decade():
    assert frontier([point("a", 0.01, 0.2), point("b", 0.5, 0.4)], resamples=0).log_cost
    assert not frontier([point("a", 0.1, 0.2), point("b", 0.5, 0.4)], resamples=0).log_cost


def test_models_without_a_cost_are_left_off_and_named():
    fr = frontier([point("free", 0.0, 0.3), point("a", 0.1, 0.2)], unpriced={"u": "unpriced"},
                  resamples=0)
    assert [p["model"] for p in fr.points] == ["a"]
    assert set(fr.left_off) == {"free", "u"} and "log axis" in fr.left_off["free"]


def shares(rng, shape, mean, n):
    """Seeds' shares: roughly normal, one in 8 failing at the floor, one in 20 a big win,
    or rounded to a tenth (ties)."""
    out = []
    for _ in range(n):
        if shape == "failures":
            out.append(-0.3 if rng.random() < 1 / 8 else rng.gauss(mean + 0.05, 0.1))
        elif shape == "rare-win":
            out.append(mean + 0.8 if rng.random() < 1 / 20 else rng.gauss(mean - 0.04, 0.1))
        elif shape == "ties":
            out.append(round(rng.gauss(mean, 0.15), 1))
        else:
            out.append(rng.gauss(mean, 0.15))
    return out


@pytest.mark.parametrize("shape", ["normal", "failures", "rare-win", "ties"])
@pytest.mark.parametrize("seeds", [3, 5, 10])
def test_a_model_truly_on_the_frontier_is_rarely_left_unmarked(shape, seeds):
    """Truly: a (share 0.3 at $0.01) and b (0.5 at $0.10) are on it, c (0.25 at $0.10)
    is not. Over 200 panels, b is marked on or possibly on the frontier in at least 95 %
    (measured: 97.7-100 % across these shapes and seeds); c, close to a, is often
    marked possibly (its intervals do reach): the rule says "may be", never "is not"."""
    rng = random.Random(f"{shape}-{seeds}")
    missed = 0
    for _ in range(200):
        points = []
        for model, mean, cost in (("a", 0.3, 0.01), ("b", 0.5, 0.1), ("c", 0.25, 0.1)):
            s = shares(rng, shape, mean, seeds)
            costs = [cost * rng.uniform(0.9, 1.1) for _ in s]
            points.append(Point(model, tuple(zip(costs, s)), cost_interval(costs),
                                t_interval(s, bounds=(-1.0, 1.25))))
        b = next(p for p in frontier(points, resamples=0).points if p["model"] == "b")
        missed += not (b["on_frontier"] or b["possibly_on_frontier"])
    assert missed / 200 <= 0.05


def test_a_far_worse_model_is_not_called_possibly_on_it_at_ten_seeds():
    rng = random.Random(7)
    called = 0
    for _ in range(200):
        points = []
        for model, mean, cost in (("a", 0.5, 0.01), ("far", 0.0, 0.1)):
            s = shares(rng, "failures", mean, 10)
            costs = [cost * rng.uniform(0.9, 1.1) for _ in s]
            points.append(Point(model, tuple(zip(costs, s)), cost_interval(costs),
                                t_interval(s, bounds=(-1.0, 1.25))))
        far = next(p for p in frontier(points, resamples=0).points if p["model"] == "far")
        called += far["on_frontier"] or far["possibly_on_frontier"]
    assert called / 200 <= 0.05
