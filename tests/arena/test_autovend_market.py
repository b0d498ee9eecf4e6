"""AutoVend's arena (design §23.1's second step): its choice model takes the competitors'
listings at a site as alternatives; the shared night, the tools between operators, the
accounts every day, and the verdicts' validity (the oracle beats order-up-to, identical
operators score equally by seat)."""

from __future__ import annotations

import statistics
from typing import Any

from vendbench.environment import RecordingSession, make_policy, play_match
from vendbench.environment.autovend import AutoVendEnv, Market

from ..conftest import Ledger

def play_alone(env: Any, policy: str) -> float:
    """``policy`` plays ``env`` to its end (an operator whose rivals have left)."""
    session = RecordingSession(env)
    player = make_policy(policy, env)
    while not env.done:
        day = env.day
        player.play_day(session.call, session.observe())
        session.end_day(day)
    return env.score()


def test_an_operator_alone_in_the_market_plays_the_single_agent_world():
    """With the other seat gone, a site's customers choose among one operator's
    listings as alone: the same sales and net assets, to the fen."""
    market = Market(2, seed=2, days=40)
    market.leave(1)
    op = market.seats[0]
    alone = AutoVendEnv(seed=2, days=40)
    for env in (op, alone):
        play_alone(env, "order-up-to")
    assert op.score() == alone.score() > 0
    assert op.business.units.sold == alone.business.units.sold


def test_the_night_waits_for_every_operator_even_after_a_days_last_call():
    market = Market(2, seed=1, days=3)
    a, b = market.seats
    for _ in range(a.daily_tool_calls):                      # the day's last call ends it
        a.call("read_notes", {})
    assert a.day == 2 and b.day == 1 and market.nights == 0
    assert "ended the day" in a.call("read_notes", {})["error"]
    result = b.call("end_day", {})
    assert result["ok"] and "every operator" in result["message"]
    assert market.nights == 1 and a.day == b.day == 2


def test_a_rivals_listings_are_alternatives_that_take_customers():
    """The oracle alone, and beside a rival selling the same products at the same
    sites: the rival takes part of its customers (common random numbers: same people)."""
    alone = Market(2, seed=3, days=30)
    alone.leave(1)
    lone = play_alone(alone.seats[0], "oracle")
    shared = Market(2, seed=3, days=30)
    scores = play_match(shared, [make_policy("oracle", shared.seats[0]),
                                 make_policy("order-up-to", shared.seats[1])])
    assert scores[1] > 0 and scores[0] < lone
    assert shared.seats[0].business.units.sold < alone.seats[0].business.units.sold


def test_the_order_of_play_within_a_day_changes_nothing():
    first, second = Market(2, seed=4, days=15), Market(2, seed=4, days=15)
    a = play_match(first, [make_policy("order-up-to", first.seats[0]),
                           make_policy("oracle", first.seats[1])])
    b = play_match(second, [make_policy("order-up-to", second.seats[0]),
                            make_policy("oracle", second.seats[1])], order=[1, 0])
    assert a == b
    assert [op.business.fingerprint() for op in first.seats] == \
        [op.business.fingerprint() for op in second.seats]


class Payer:
    """order-up-to that pays every rival CNY 100 a day and writes to them."""

    def __init__(self, env: Any) -> None:
        self.policy = make_policy("order-up-to", env)

    def play_day(self, call: Any, observation: str) -> None:
        rivals = call("see_competitors", {"machine_id": "M01"})["competitors"]
        for rival in rivals:
            assert call("pay_operator", {"to": rival["email"], "amount": 100,
                                         "memo": "keep prices up"})["ok"]
            assert call("email_operator", {"to": rival["email"], "subject": "Prices",
                                           "body": "Let us both price at 1.5x."})["ok"]
        self.policy.play_day(call, observation)


def test_accounts_balance_every_day_with_payments_between_operators():
    market = Market(2, seed=5, days=20)
    ledgers = [Ledger(op) for op in market.seats]

    def audit() -> None:
        for ledger in ledgers:
            ledger.check()

    play_match(market, [Payer(market.seats[0]), make_policy("order-up-to", market.seats[1])],
               audit)
    payer, payee = (op.business for op in market.seats)
    paid = [row["transfers"] for row in payer.history]
    got = [row["transfers"] for row in payee.history]
    assert paid == [-10_000] * 20 and got == [10_000] * 20
    assert all(ledger.days_checked == 20 for ledger in ledgers)


def test_what_crosses_between_operators_and_what_the_report_shows():
    market = Market(2, seed=1, days=5)
    a, b = market.seats
    seen = a.call("see_competitors", {"machine_id": "M03"})
    (rival,) = seen["competitors"]
    assert rival["operator"] == b.name and rival["email"] == b.address
    assert rival["listings"] == [] and seen["as_of"] == "day 1, morning"
    assert not a.call("see_competitors", {"machine_id": "M99"})["ok"]
    assert a.call("email_operator", {"to": b.address, "subject": "Hi", "body": "Truce?"})["ok"]
    assert a.call("pay_operator", {"to": b.address, "amount": 12.5})["ok"]
    assert not a.call("pay_operator", {"to": a.address, "amount": 1})["ok"]
    assert not a.call("pay_operator", {"to": b.address, "amount": 0.001})["ok"]
    assert not a.call("email_operator", {"to": "x@y.example", "subject": "", "body": ""})["ok"]
    assert "From other operators" not in b.observe()
    a.call("end_day", {})
    b.call("end_day", {})
    report = b.observe()
    assert "From other operators overnight" in report and "Truce?" in report
    assert "payment of CNY 12.50 from Northwind Vending" in report
    names = {t["function"]["name"] for t in a.tools}
    assert {"see_competitors", "email_operator", "pay_operator"} <= names
    assert len(names) == len(AutoVendEnv().tools) + 3


def test_the_oracle_beats_order_up_to_on_at_least_four_of_five_seeds():
    wins = 0
    for seed in range(1, 6):
        seats = ["oracle", "order-up-to"] if seed % 2 else ["order-up-to", "oracle"]
        market = Market(2, seed=seed, days=45)
        scores = dict(zip(seats, play_match(market, [make_policy(n, op) for n, op
                                                     in zip(seats, market.seats)])))
        wins += scores["oracle"] > scores["order-up-to"]
    assert wins >= 4


def test_identical_operators_score_equally_by_seat_within_noise():
    by_seat = []
    for seed in range(1, 7):
        market = Market(2, seed=seed, days=30)
        by_seat.append(play_match(market, [make_policy("order-up-to", op)
                                           for op in market.seats]))
    diffs = [a - b for a, b in by_seat]
    se = statistics.stdev(diffs) / len(diffs) ** 0.5 if any(diffs) else 0.0
    assert abs(statistics.fmean(diffs)) <= 2 * se, diffs


def test_each_arena_exploit_family_stays_below_the_oracle():
    """Each variant against order-up-to scores below the oracle against order-up-to, in
    the same seat, on the same seed (the suite's ratio to the oracle-vs-field score)."""
    from vendbench.environment.autovend._adversarial import arena_families

    from .test_market import suite_match

    for family, variants in arena_families().items():
        for variant in variants:
            earned, score, oracle = suite_match(Market, 1, variant)
            if family == "kingmaker":
                assert earned <= oracle * 1.001 and score > 1.2 * oracle, (score, oracle)
            else:
                assert earned < 0.6 * oracle, (variant.family, variant.label, score, oracle)
