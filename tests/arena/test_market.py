"""The network world's arena (design §23.1-23.3, 23.6): K operators in one market, their
tools between each other, the shared night, accounting every day, and the validity of
its verdicts (the oracle beats order-up-to, identical operators score equally by seat,
the arena's exploit families stay below the oracle)."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from vendbench.environment import (DAY_OVER, RecordingSession, make_market, make_policy,
                                   play_match)
from vendbench.environment.network import Market, NetworkEnv
from vendbench.environment.network._adversarial import arena_families
from vendbench.errors import ConfigError

from ..environment.conftest import toy  # noqa: F401  (a fixture)
from ..environment.test_network import checked_ledger, deliver, fingerprint, found


def play(market: Market, names: list[str | Any], order: list[int] | None = None,
         check: bool = False) -> list[float]:
    """Play a match with in-process policies (by name, or built), seats in ``order``
    within each day; ``check``: the accounts of every operator after every day."""
    pols = [make_policy(n, op) if isinstance(n, str) else n
            for n, op in zip(names, market.seats)]

    def audit() -> None:
        for op in market.seats:
            checked_ledger(op)

    play_match(market, pols, audit if check else None, order)
    return [op.score() for op in market.seats]


def ready(market: Market) -> Market:
    """Every operator with cola in its depot and suppliers found."""
    for op in market.seats:
        found(op)
        deliver(op, {"cola": 20})
        op.units_ordered = 20
    return market


def end_day(market: Market) -> None:
    for op in market.seats:
        op.call("wait_for_next_day", {})


# -- the market ----------------------------------------------------------------------
def test_the_night_waits_for_every_operator_and_the_day_moves_on_together():
    market = Market(3, seed=1, days=3)
    a, b, c = market.seats
    assert a.call("wait_for_next_day", {})["ok"] and market.nights == 0
    assert a.day == 2 and b.day == 1              # a waits for the others' day to end
    assert "ended the day" in a.call("get_status", {})["error"]
    b.call("wait_for_next_day", {})
    assert market.nights == 0
    c.call("wait_for_next_day", {})
    assert market.nights == 1 and {op.day for op in market.seats} == {2}
    assert all(op.call("get_status", {})["day"] == 2 for op in market.seats)


class NoCrossing(NetworkEnv):
    crosses_midnight = False        # as in a market: a call that does not fit is refused


def test_an_operator_alone_in_the_market_plays_the_single_agent_world():
    """With every other seat gone, the market's night is the network world's own: the
    same customers, the same sales, to the cent (calls that do not fit the day refused
    in both)."""
    market = Market(2, seed=3, days=30)
    market.leave(1)
    alone = NoCrossing(seed=3, days=30)
    pol_a, pol_b = make_policy("order-up-to", market.seats[0]), make_policy("order-up-to", alone)
    for env, pol in ((market.seats[0], pol_a), (alone, pol_b)):
        session = RecordingSession(env)
        while not env.done:
            day = env.day
            pol.play_day(session.call, session.observe())
            session.end_day(day)
    assert market.seats[0].score() == alone.score() > 0
    assert market.seats[0].units_sold == alone.units_sold


def test_customers_buy_the_cheapest_unit_whoever_sells_it():
    market = ready(Market(2, seed=1, days=5))
    a, b = market.seats
    for op, price in ((a, 2.0), (b, 1.5)):
        op.call("restock_machine", {"slot_id": "AI-HOUSE:DRINKS:A1", "product_id": "cola",
                                    "quantity": 10})
        op.call("set_price", {"slot_id": "AI-HOUSE:DRINKS:A1", "price": price})
    end_day(market)
    sold = {op.seat: op.units_sold for op in market.seats}
    assert sold[1] > 0 and sold[0] == 0 or b.slots["AI-HOUSE:DRINKS:A1"].units == 0
    assert sold[1] >= sold[0]


def test_operators_tied_on_price_share_the_customers():
    """Same product, same price: each customer picks one of them at random; over a
    week neither seat takes them all, and neither is favoured by its number."""
    totals = [0, 0]
    for seed in range(1, 7):
        market = ready(Market(2, seed=seed, days=3))
        for op in market.seats:
            op.call("restock_machine", {"slot_id": "AI-HOUSE:DRINKS:A1",
                                        "product_id": "cola", "quantity": 10})
            op.call("set_price", {"slot_id": "AI-HOUSE:DRINKS:A1", "price": 1.0})
        end_day(market)
        sold = [op.units_sold for op in market.seats]
        assert sum(sold) > 0
        totals = [t + s for t, s in zip(totals, sold)]
    assert min(totals) > 0.3 * sum(totals), totals


def test_the_order_of_play_within_a_day_changes_nothing():
    """Moves are simultaneous: whoever acts first, the match ends the same (so the
    scheduler may run the operators concurrently)."""
    first = Market(2, seed=2, days=12)
    second = Market(2, seed=2, days=12)
    assert play(first, ["undercutter", "oracle"]) == \
        play(second, ["undercutter", "oracle"], order=[1, 0])
    assert [fingerprint(op) for op in first.seats] == [fingerprint(op) for op in second.seats]


def test_accounts_balance_every_day_with_payments_between_operators():
    market = Market(2, seed=4, days=20)
    play(market, ["colluder", "order-up-to"], check=True)
    bribed = Market(2, seed=4, days=6)
    bribes = arena_families()["rival-bribes"][0].build(4, bribed.seats[0])
    play(bribed, [bribes, "order-up-to"], check=True)
    a, b = bribed.seats
    assert a.ledger.paid_operators == b.ledger.from_operators == 6 * 500   # days 1-6


# -- what crosses between operators (and nothing else) ---------------------------------
def test_competitors_are_seen_as_this_morning_and_only_as_a_customer_sees_them():
    market = ready(Market(2, seed=1, days=5))
    a, b = market.seats
    b.call("restock_machine", {"slot_id": "AI-HOUSE:DRINKS:A1", "product_id": "cola",
                               "quantity": 10})
    b.call("set_price", {"slot_id": "AI-HOUSE:DRINKS:A1", "price": 2.5})
    seen = a.call("see_competitors", {"location": "AI-HOUSE"})
    assert seen["ok"] and seen["as_of"] == "day 1, morning"
    (rival,) = seen["competitors"]
    assert rival["operator"] == b.name and rival["email"] == b.address
    assert all(not m["facings"] for m in rival["machines"])     # not before tonight
    end_day(market)
    (rival,) = a.call("see_competitors", {"location": "AI-HOUSE"})["competitors"]
    drinks = next(m for m in rival["machines"] if m["machine"] == "AI-HOUSE:DRINKS")
    (facing,) = drinks["facings"]
    assert facing["product"] == "cola" and facing["price"] == 2.5
    assert facing["stock"] in ("plenty", "some", "few")
    assert set(facing) == {"product", "price", "stock"}       # no units, no bank, no notes
    assert a.call("see_competitors", {"location": "NOWHERE"})["ok"] is False


def test_emails_and_payments_arrive_overnight_and_are_refused_when_wrong():
    market = Market(2, seed=1, days=5)
    a, b = market.seats
    sent = a.call("email_operator", {"to": b.address, "subject": "Prices",
                                     "body": "Shall we both stay above EUR 2?"})
    assert sent["ok"] and not b.emails
    paid = a.call("pay_operator", {"to": b.address.upper(), "amount": 12.5, "memo": "hi"})
    assert paid["ok"] and a.bank == a.initial_cash - 1250 and b.bank == b.initial_cash
    assert not a.call("email_operator", {"to": a.address, "subject": "me", "body": ""})["ok"]
    assert not a.call("email_operator", {"to": "x@y.example", "subject": "", "body": ""})["ok"]
    assert not a.call("pay_operator", {"to": b.address, "amount": 1e4})["ok"]   # the bank
    for _ in range(3):          # the payment's memo was the second message of five
        assert a.call("email_operator", {"to": b.address, "subject": "s", "body": "b"})["ok"]
    assert "at most 5 messages" in a.call("email_operator", {"to": b.address, "subject": "s",
                                                             "body": "b"})["error"]
    assert "pay without a memo" in a.call("pay_operator", {"to": b.address, "amount": 1,
                                                           "memo": "more"})["error"]
    assert a.call("pay_operator", {"to": b.address, "amount": 1})["ok"]
    end_day(market)
    subjects = [e.subject for e in b.emails]
    assert subjects[0] == "Prices" and any("EUR 13.50 from" in s for s in subjects)
    assert b.emails[0].sender == a.address and b.ledger.from_operators == 1350
    # nothing else crosses: no tool reads another operator's bank, notes or inbox
    assert not set(a.tool_specs) - set(NetworkEnv.tool_specs) - {
        "see_competitors", "email_operator", "pay_operator"}


def test_a_payment_to_an_operator_that_stopped_comes_back():
    market = Market(2, seed=1, days=5)
    a, b = market.seats
    a.call("pay_operator", {"to": b.address, "amount": 10})
    market.leave(1)
    a.call("wait_for_next_day", {})
    assert a.bank - (a.ledger.sales_cash + a.ledger.sales_card - a.ledger.rent) \
        == a.initial_cash and a.ledger.paid_operators == 0
    assert b.day == 1 and b.status == "running"               # frozen where it stopped


def test_a_call_that_does_not_fit_the_day_is_refused_not_run_overnight():
    market = Market(2, seed=1, days=5)
    a = market.seats[0]
    for _ in range(19):
        a.call("search_web", {"query": "drinks"})            # 19 x 25 = 475 minutes
    result = a.call("search_web", {"query": "snacks"})
    assert not result["ok"] and "night waits for every operator" in result["error"]
    assert a.day == 1 and market.nights == 0


def test_a_day_tool_call_after_the_day_ended_is_refused_by_the_session():
    market = Market(2, seed=1, days=3)
    session = RecordingSession(market.seats[0])
    session.call("wait_for_next_day", {}, day=1)
    assert session.call("get_status", {}, day=1) is DAY_OVER


@pytest.mark.parametrize("bad", [1, 5, 0])
def test_a_market_has_two_to_four_operators(bad):
    with pytest.raises(ConfigError, match="2-4 operators"):
        Market(bad)


def test_a_scenario_without_an_arena_says_which_have_one(toy):
    with pytest.raises(ConfigError, match="toy has no arena; these have one: autovend, "
                                          "network"):
        make_market("toy", 2)


# -- validity (design §23.6) --------------------------------------------------------------
def test_the_oracle_beats_order_up_to_on_at_least_four_of_five_seeds():
    wins = 0
    for seed in range(1, 6):
        seats = ["oracle", "order-up-to"] if seed % 2 else ["order-up-to", "oracle"]
        scores = dict(zip(seats, play(Market(2, seed=seed, days=30), seats)))
        wins += scores["oracle"] > scores["order-up-to"]
    assert wins >= 4


def test_the_oracle_beats_the_undercutter_and_the_undercutter_beats_order_up_to():
    for seed in (1, 2):
        oracle, under = play(Market(2, seed=seed, days=30), ["oracle", "undercutter"])
        assert oracle > under
        under, base = play(Market(2, seed=seed, days=30), ["undercutter", "order-up-to"])
        assert under > base


def test_the_colluder_proposes_a_floor_by_email_and_matches_a_rival_below_it():
    market = Market(2, seed=1, days=20)        # (10 days: order-up-to's endgame only)
    colluder = make_policy("colluder", market.seats[0])
    prices: list[tuple[str, float]] = []

    class Logged:
        def play_day(self, call: Any, observation: str) -> None:
            def logged(name: str, args: dict[str, Any]) -> dict[str, Any]:
                result = call(name, args)
                if name == "set_price" and result["ok"]:
                    prices.append((args["slot_id"], args["price"]))
                return result
            colluder.play_day(logged, observation)

    play(market, [Logged(), "undercutter"])
    a, b = market.seats
    proposal = [e for e in b.emails if e.sender == a.address]
    assert proposal and "at or above 3.5 times unit cost" in proposal[0].body
    # it priced at its floor, then followed the undercutter down (tit for tat), never
    # below 1.1x its cost
    ratios = [price / colluder.cost(colluder.plan[sid]) for sid, price in prices]
    assert max(ratios) >= 3.4 and min(ratios) < 3.0, ratios
    assert min(ratios) >= 1.1 - 0.1, ratios


def test_identical_operators_score_equally_by_seat_within_noise():
    """--mirror's check: K identical order-up-to operators; the mean difference between
    seats over the seeds lies within two standard errors of 0 (and the seeds' draws are
    fixed, so this is a deterministic check of the tie rule and the tools' fairness)."""
    for k, seeds in ((2, range(1, 9)), (4, range(1, 5))):
        by_seat = [play(Market(k, seed=s, days=20), ["order-up-to"] * k) for s in seeds]
        for seat in range(1, k):
            diffs = [r[0] - r[seat] for r in by_seat]
            se = statistics.stdev(diffs) / len(diffs) ** 0.5
            assert abs(statistics.fmean(diffs)) < 2 * se, (k, seat, diffs)


@pytest.mark.parametrize("family", sorted(arena_families()))
def test_each_arena_exploit_family_stays_below_the_oracle(family):
    """Each variant against its field earns (its score less the transfers it received)
    below the oracle against the variant's reference field, in the same seat, on the same
    seeds; the kingmaker's money is real (its score is above), its earnings are not."""
    for seed in (1, 2):
        for variant in arena_families()[family]:
            earned, score, oracle = suite_match(Market, seed, variant)
            if family == "kingmaker":
                assert earned <= oracle * 1.001 and score > 1.2 * oracle, (seed, score, oracle)
            else:
                assert earned < 0.6 * oracle, (variant.label, seed)


def suite_match(market_of, seed: int, variant, days: int = 30) -> tuple[float, float, float]:
    """The adversarial suite's arena match (design §29.2): the variant in seat 0 against
    its field, and the oracle against its reference; (earned, score, oracle's score)."""
    market = market_of(2, seed=seed, days=days)
    reference = variant.reference(seed, market.seats[1]) if variant.reference else \
        "order-up-to"
    oracle = play(market, ["oracle", reference])[0]
    market = market_of(2, seed=seed, days=days)
    field = variant.field(seed, market.seats[1]) if variant.field else "order-up-to"
    score = play(market, [variant.build(seed, market.seats[0]), field])[0]
    return score - market.seats[0].transfers / 100, score, oracle
