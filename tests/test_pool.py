"""The budget pool, driven directly: earmarks hold what their trials have in flight, and
no sequence of reservations, settlements and closes spends past a cap (design §3
"Budgets"). Scripted, then at random against a model of what must hold."""

from __future__ import annotations

import random
from decimal import Decimal as D

import pytest

from vendbench.budgets import Budget
from vendbench.errors import BudgetExceeded


def test_an_earmark_holds_what_its_trial_has_in_flight():
    pool = Budget("run", D("10"))
    a = pool.earmark("trial a", D("6"))
    in_flight = a.reserve(D("5"))                 # a's request is out, not yet settled
    assert pool.left() == D("4")                  # the 5 in flight are still promised to a
    b = pool.earmark("trial b", D("4"))
    with pytest.raises(BudgetExceeded):
        pool.earmark("trial c", D("0.01"))
    b.reserve(D("4")).settle(D("4"))
    in_flight.settle(D("5"))                      # a's reply: it cost all it reserved
    assert pool.spent == D("9") <= pool.limit
    a.close()
    b.close()
    assert pool.left() == D("1")


def test_an_unearmarked_trial_draws_on_the_pool_directly():
    pool = Budget("run", D("1"))
    free = pool.earmark("trial", None)
    hold = free.reserve(D("0.75"))
    assert pool.reserved == D("0.75") and pool.left() == D("0.25")
    with pytest.raises(BudgetExceeded, match="run budget"):
        pool.earmark("trial", D("0.5"))
    hold.charge_in_full()
    assert pool.spent == free.spent == D("0.75") and pool.reserved == 0


def test_a_trial_budget_below_an_unlimited_pool_is_its_own_cap():
    pool = Budget("run")                          # no total budget
    trial = pool.earmark("trial", D("2"))
    assert not trial.earmarked and trial.left() == D("2") and pool.left() is None
    trial.reserve(D("1.5")).settle(D("1.5"))
    with pytest.raises(BudgetExceeded, match="trial budget"):
        trial.reserve(D("0.6"))
    assert pool.spent == D("1.5")


def test_what_is_settled_is_exactly_what_was_spent():
    pool = Budget("run", D("100"))
    trial = pool.earmark("trial", D("10"))
    trial.reserve(D("3")).settle(D("1.25"))        # a reply: its actual cost
    trial.reserve(D("3")).release()                # a 429 or 5xx: nothing
    trial.reserve(D("2")).charge_in_full()         # unknown outcome: all of it
    assert trial.spent == pool.spent == D("3.25")
    assert trial.reserved == pool.reserved == 0 and trial.left() == D("6.75")
    assert pool.left() == D("90")                 # 100 − 3.25 spent − 6.75 still promised
    trial.close()
    assert pool.left() == D("96.75")


def _run_script(seed: int) -> None:
    """Random trials against one capped pool: earmarks, reservations and their outcomes,
    closes; after every step the books balance and nothing can spend past a cap."""
    rng = random.Random(seed)
    cap = D(rng.randint(5, 50))
    pool = Budget("run", cap)
    trials: list[tuple[Budget, D | None]] = []
    holds: list[tuple[Budget, object, D]] = []
    settled = D(0)
    for _ in range(150):
        op = rng.random()
        if op < 0.2 or not trials:
            amount = None if rng.random() < 0.3 else D(rng.randint(1, 20))
            try:
                trials.append((pool.earmark("trial", amount), amount))
            except BudgetExceeded:
                assert amount is not None and amount > pool.left()
        elif op < 0.6:
            trial, _ = rng.choice(trials)
            if trial.closed:
                continue
            amount = D(rng.randint(1, 400)) / 100
            left = trial.left()
            try:
                holds.append((trial, trial.reserve(amount), amount))
            except BudgetExceeded:
                assert left is not None and amount > left
            else:
                assert left is None or amount <= left
        elif op < 0.9 and holds:
            trial, hold, amount = holds.pop(rng.randrange(len(holds)))
            outcome = rng.random()
            if outcome < 0.5:
                actual = amount * D(rng.randint(0, 100)) / 100
                hold.settle(actual)
            elif outcome < 0.75:
                actual = amount
                hold.charge_in_full()
            else:
                actual = D(0)
                hold.release()
            settled += actual
        else:
            trial, _ = rng.choice(trials)
            if not any(t is trial for t, _, _ in holds):
                trial.close()
        # the books balance, and what is spent plus everything still out fits the cap
        assert pool.spent == settled
        outstanding = sum((a for _, _, a in holds), D(0))
        assert pool.spent + outstanding <= cap, (seed, pool.spent, outstanding)
        for trial, budget in trials:
            if budget is not None and trial.earmarked:
                mine = sum((a for t, _, a in holds if t is trial), D(0))
                assert trial.spent + mine <= budget
    assert pool.spent <= cap


@pytest.mark.parametrize("seed", range(40))
def test_no_script_spends_past_the_cap(seed):
    _run_script(seed)


def test_open_earmarks_are_what_the_scheduler_waits_for():
    pool = Budget("run", D("10"))
    assert not pool.has_open_earmarks()
    free = pool.earmark("trial", None)            # draws on the pool: promises nothing
    assert not free.earmarked and not pool.has_open_earmarks()
    held = pool.earmark("trial", D("3"))
    assert pool.has_open_earmarks()
    held.close()
    assert not pool.has_open_earmarks()


def test_a_refusal_names_the_budget_and_the_cap_that_bind():
    pool = Budget("run", D("10"))
    trial = pool.earmark("trial", D("2"))
    with pytest.raises(BudgetExceeded) as err:
        trial.reserve(D("2.5"))
    assert (err.value.scope, err.value.limit, err.value.left) == ("trial", D("2"), D("2"))
    free = pool.earmark("trial", None)            # no cap of its own: the pool's binds
    with pytest.raises(BudgetExceeded) as err:
        free.reserve(D("9"))
    assert (err.value.scope, err.value.limit, err.value.left) == ("run", D("10"), D("8"))
    assert "run budget" in str(err.value) and "$8" in str(err.value)


def test_overspend_is_measured_against_every_cap_above():
    pool = Budget("run", D("1"))
    free = pool.earmark("trial", None)
    free.charge(D("1.25"))                        # billed past the pool's cap
    assert free.overspent() == pool.overspent() == D("0.25")
    capped = Budget("run", D("5")).earmark("trial", D("1"))
    capped.charge(D("1.5"))
    assert capped.overspent() == D("0.5") and capped.parent.overspent() == 0


def test_a_budget_of_zero_is_a_budget_and_a_negative_one_is_refused():
    pool = Budget("run", D("1"))
    spent_out = pool.earmark("trial", D("0"))     # a resumed trial that used all of it
    assert spent_out.left() == 0 and not spent_out.can_cover(D("0.01"))
    assert spent_out.can_cover(D("0"))
    with pytest.raises(ValueError, match="trial: a budget cannot be negative"):
        Budget("trial", D("-1"))


def test_can_cover_exactly_what_is_left():
    pool = Budget("run", D("10"))
    pool.earmark("trial", D("4"))
    assert pool.can_cover(D("6")) and not pool.can_cover(D("6.000000001"))


def test_an_earmark_refusal_carries_the_pool_and_its_cap():
    pool = Budget("run", D("10"))
    pool.earmark("trial", D("7"))
    with pytest.raises(BudgetExceeded) as err:
        pool.earmark("trial", D("4"))
    assert (err.value.scope, err.value.needed, err.value.left, err.value.limit) == \
        ("run", D("4"), D("3"), D("10"))


def test_a_capped_child_that_is_not_earmarked_is_held_to_both_caps():
    """Built by hand (earmark() only makes one under an unlimited pool): the tighter of
    its own cap and the pool's binds, and a refusal names the one that bound."""
    pool = Budget("run", D("10"))
    child = Budget("trial", D("5"), parent=pool)
    assert child.left() == D("5")
    pool.reserve(D("7")).settle(D("7"))           # the pool now has 3 left
    assert child.left() == D("3")
    with pytest.raises(BudgetExceeded) as err:
        child.reserve(D("5"))                     # exactly the child's own: the pool binds
    assert err.value.scope == "run"
    child.reserve(D("3")).settle(D("3"))
    assert pool.spent == D("10") and child.spent == D("3")


def test_a_reservation_settles_once():
    hold = Budget("trial", D("1")).reserve(D("0.5"))
    hold.release()
    with pytest.raises(RuntimeError, match="^reservation settled twice$"):
        hold.charge_in_full()
