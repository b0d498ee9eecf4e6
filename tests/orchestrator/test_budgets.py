"""USD budgets: reservations, settlement, pools, prices (design §3, "Budgets")."""

from __future__ import annotations

from decimal import Decimal as D

import re

import pytest

from vendbench.budgets import Budget, Price, parse_price_flag, resolve_prices
from vendbench.errors import BudgetExceeded, ConfigError, UnknownPriceError
from vendbench.providers import litellm_price

from ..fakellm import FakeLLM, Reply
from .conftest import model, query, run


def test_reserve_settle_release():
    b = Budget("trial", D("1"))
    r = b.reserve(D("0.4"))
    assert b.left() == D("0.6")
    r.settle(D("0.1"))
    assert (b.spent, b.reserved, b.left()) == (D("0.1"), 0, D("0.9"))
    b.reserve(D("0.5")).release()
    assert b.spent == D("0.1")
    b.reserve(D("0.5")).charge_in_full()
    assert b.spent == D("0.6")
    with pytest.raises(BudgetExceeded, match="needs"):
        b.reserve(D("0.41"))
    with pytest.raises(RuntimeError):
        r.settle(D("0"))


def test_earmarks_guarantee_a_started_trial_its_budget():
    pool = Budget("run", D("10"))
    a, _ = pool.earmark("trial", D("4")), pool.earmark("trial", D("4"))
    with pytest.raises(BudgetExceeded):
        pool.earmark("trial", D("4"))
    assert a.left() == D("4") and pool.left() == D("2")
    a.reserve(D("3")).settle(D("1"))
    assert pool.spent == D("1") and pool.left() == D("2")
    a.close()                                     # 3 unspent dollars come back
    assert pool.left() == D("5")
    free = pool.earmark("trial", None)            # no per-trial budget: draw on the pool
    free.reserve(D("5"))
    with pytest.raises(BudgetExceeded, match="run budget"):
        free.reserve(D("0.01"))


def test_price_cost_is_exact_decimal():
    p = Price(D("0.4"), D("1.6"), cache_read=D("0.1"))
    assert p.cost(1_000_000, 1_000_000) == D("2.0")
    assert p.cost(1000, 100, cache_read_tokens=400) == D("0.00044")   # 600·0.4+400·0.1+100·1.6
    assert Price(D("2"), D("8"), reasoning=D("10")).cost(0, 100, reasoning_tokens=50) == \
        D("0.0009")


def test_cache_reads_and_writes_are_priced_as_the_provider_bills_them():
    """Anthropic-style usage: prompt tokens = plain input + cache writes + cache reads."""
    sonnet = Price(D("3"), D("15"), cache_read=D("0.30"), cache_write=D("3.75"))
    # 10,000 prompt tokens: 6,000 read, 3,000 written, 1,000 plain; 200 output
    assert sonnet.cost(10_000, 200, cache_read_tokens=6_000, cache_write_tokens=3_000) == \
        (1_000 * D("3") + 6_000 * D("0.30") + 3_000 * D("3.75") + 200 * D("15")) / 1_000_000
    # no cache prices: reads and writes are billed as plain input, never as free
    plain = Price(D("3"), D("15"))
    assert plain.cost(10_000, 0, cache_read_tokens=6_000, cache_write_tokens=3_000) == D("0.03")
    # usage that claims more cache than prompt tokens cannot make a cost negative
    assert sonnet.cost(100, 0, cache_read_tokens=500, cache_write_tokens=500) == D("0.00003")
    # a reservation covers every input token at the dearest input-side price
    assert sonnet.worst_case(1_000_000, 1_000_000) == D("3.75") + D("15")
    assert Price(D("1"), D("2"), reasoning=D("9")).worst_case(0, 1_000_000) == D("9")


def test_price_flags():
    assert parse_price_flag("openai/x=0.4,1.6") == ("openai/x", {"input": D("0.4"),
                                                                 "output": D("1.6")})
    assert parse_price_flag("anthropic/y=3,15,0.3,3.75")[1] == {
        "input": D("3"), "output": D("15"), "cache_read": D("0.3"), "cache_write": D("3.75")}
    for bad in ("openai/x", "openai/x=1", "openai/x=a,b", "openai/x=-1,2", "=1,2",
                "openai/x=1,2,3,4,5", "openai/x=nan,1", "openai/x=1,inf"):
        with pytest.raises(UnknownPriceError):
            parse_price_flag(bad)


def test_given_prices_override_the_price_map_field_by_field():
    table = resolve_prices(["anthropic/claude-sonnet-4-5", "openai/gpt-4.1-mini", "openai/own"],
                           {"anthropic/claude-sonnet-4-5": {"input": D("2"), "output": D("10")},
                            "openai/gpt-4.1-mini": {"cache_read": D("0.05")},
                            "openai/own": {"input": D("1"), "output": D("2")}},
                           lookup=litellm_price)
    sonnet = table["anthropic/claude-sonnet-4-5"]
    assert (sonnet.input, sonnet.output) == (D("2"), D("10"))
    assert (sonnet.cache_read, sonnet.cache_write) == (D("0.3"), D("3.75"))   # from the map
    assert sonnet.source == "config+litellm"
    mini = table["openai/gpt-4.1-mini"]
    assert (mini.input, mini.cache_read, mini.source) == (D("0.4"), D("0.05"), "litellm+config")
    own = table["openai/own"]
    assert own.cache_read is None and own.source == "config"     # reads billed as input
    assert Price.from_json(sonnet.to_json()) == sonnet


def test_prices_fail_closed_and_come_from_litellm_when_known():
    table = resolve_prices(["openai/gpt-4.1-mini", "baseline/oracle"], {}, lookup=litellm_price)
    assert table["openai/gpt-4.1-mini"].input == D("0.4")
    assert table["openai/gpt-4.1-mini"].source == "litellm"
    assert table["baseline/oracle"].input == 0
    with pytest.raises(UnknownPriceError, match="--price openai/no-such-model=IN,OUT"):
        resolve_prices(["openai/no-such-model"], {}, lookup=litellm_price)
    assert resolve_prices(["openai/no-such-model"], {}, lookup=litellm_price,
                          allow_unpriced=True) == \
        {"openai/no-such-model": None}


def test_unpriced_model_with_a_budget_is_refused(llm, tmp_path):
    m = model(llm)
    del m["input_usd_per_mtok"], m["output_usd_per_mtok"]
    with pytest.raises(ConfigError, match="budget cannot be enforced"):
        run(str(tmp_path / "r.duckdb"), allow_unpriced=True, budget_usd="1", models=[m])
    result = run(str(tmp_path / "s.duckdb"), allow_unpriced=True, models=[m])
    trial = result.as_json()["trials"][0]
    assert trial["status"] == "completed" and trial["cost_usd"] is None
    assert query(str(tmp_path / "s.duckdb"), "SELECT cost_usd FROM trials")[0][0] is None


def test_a_budget_below_one_request_is_said_plainly(llm, tmp_path):
    with pytest.raises(ConfigError, match="raise the budget or lower max_output_tokens"):
        run(str(tmp_path / "r.duckdb"), budget_usd="0.0001", models=[model(llm)])
    assert llm.requests == []


def test_no_overspend_with_many_trials_in_flight_on_one_pool(llm, tmp_path):
    """20 trials draw on one pool at once, against a server reporting large usage."""
    import threading

    llm.script = lambda body: Reply(tool_calls=[("list_machines", "{}")],
                                    completion_tokens=500, delay=0.5)
    arrived = [0]

    def hold(body: dict) -> None:
        """Once the first reply has calibrated the count, replies wait until ten
        requests are in flight at once: overlap by event, not by a delay a loaded
        machine outlasts (9 in flight beside two CPU hogs)."""
        arrived[0] += 1
        if arrived[0] == 2:
            llm.gate.clear()
        if llm.in_flight >= 10:
            llm.gate.set()

    llm.on_arrival = hold
    never_hang = threading.Timer(120, llm.gate.set)   # (then the count below fails)
    never_hang.start()
    db = str(tmp_path / "r.duckdb")
    try:
        result = run(db, days=30, seeds=list(range(1, 21)), workers=20,
                     total_budget_usd="0.05",
                     models=[model(llm, max_output_tokens=600, max_concurrency=32)])
    finally:
        never_hang.cancel()
        llm.gate.set()
    trials = result.as_json()["trials"]
    # many at once: as many as the pool's reservations allow (about 15 of ~$0.0032 each,
    # once the first reply has calibrated the count), not one by one
    assert llm.max_in_flight >= 10
    spent = query(db, "SELECT sum(cost_usd) FROM exchanges")[0][0]
    assert spent <= D("0.05")                              # never over the cap…
    assert {t["status"] for t in trials} == {"budget_exhausted"}
    needs = []
    for t in trials:        # each stopped because its next reservation did not fit
        needed, left = re.search(r"needs \$([\d.]+) but only \$([\d.]+)", t["reason"]).groups()
        assert "run budget" in t["reason"] and D(left) < D(needed)
        needs.append(D(needed))
    # …with the pool really drawn on: the last to stop had nothing in flight beside it
    assert D("0.05") - spent < max(needs), (spent, needs)
    assert sum(t["cost_usd"] for t in trials) == pytest.approx(float(spent))


def test_a_server_counting_4x_our_tokens_never_takes_the_pool_past_its_cap(llm, tmp_path):
    """Every trial's first reservation used to be made at our own count, before any reply
    had calibrated it: twenty at once, each billed 4× what it reserved for its prompt,
    overspent a small pool. The first request of a model now goes alone; once it has
    answered, the others reserve at the server's count."""
    llm.usage_scale = 4.0                     # prompt (and output) tokens: 4× ours
    llm.script = lambda body: Reply(tool_calls=[("list_machines", "{}")], delay=0.05)
    cap = D("0.051")
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=30, seeds=list(range(1, 21)), workers=20,
                 total_budget_usd=str(cap), models=[model(llm, max_output_tokens=256)])
    price = Price(D("0.4"), D("1.6"))
    bill = sum((price.cost(u["prompt_tokens"], u["completion_tokens"]) for u in llm.usages),
               D(0))
    spent = query(db, "SELECT sum(cost_usd) FROM exchanges")[0][0]
    assert bill == spent == result.pool.spent                  # the server's bill is ours
    assert spent <= cap, spent                                 # and it never passed the cap
    # ... with the pool really used: when the last trial stopped nothing was in flight,
    # so what is left is less than what that trial's next request needed (a share of
    # the cap, 80 %, held unloaded and failed on a loaded machine, where more requests
    # overlap and their unused reservations come back late)
    needs = [D(m.group(1)) for t in result.as_json()["trials"]
             if (m := re.search(r"needs \$([\d.]+) but only", t["reason"] or ""))]
    assert needs and cap - spent < max(needs), (cap - spent, needs)
    statuses = [t["status"] for t in result.as_json()["trials"]]
    # each trial ran until the pool could not pay its next request; on a busy machine the
    # pool may be gone before the last trials begin: those were never started
    assert "budget_exhausted" in statuses
    assert set(statuses) <= {"budget_exhausted", "not_started"}
    first = query(db, "SELECT min(sent_at) FROM exchanges")[0][0]
    together = query(db, "SELECT count(*) FROM exchanges WHERE sent_at = ?", [first])[0][0]
    assert together == 1                                        # the first went alone
    reserved = query(db, "SELECT reserved_usd, json_extract(request_json, '$.counted_tokens')"
                         "::INT FROM exchanges ORDER BY sent_at")
    for r, counted in reserved[1:]:                             # then at the server's count
        assert r >= price.cost(4 * counted, 256)


def test_trial_budgets_are_earmarked_from_the_pool(llm, tmp_path):
    llm.script = lambda body: Reply(tool_calls=[("list_machines", "{}")],
                                    completion_tokens=500, delay=0.01)
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=30, seeds=list(range(1, 21)), workers=20, budget_usd="0.01",
                 total_budget_usd="0.05", models=[model(llm, max_output_tokens=600)])
    trials = result.as_json()["trials"]
    spent = query(db, "SELECT sum(cost_usd) FROM exchanges")[0][0]
    assert spent <= D("0.05")
    per_trial = query(db, "SELECT trial_id, sum(cost_usd) FROM exchanges GROUP BY 1")
    assert all(cost <= D("0.01") for _, cost in per_trial)
    started = [t for t in trials if t["exchanges"] > 0]
    not_started = [t for t in trials if t["status"] == "not_started"]
    assert len(started) >= 5                      # 5 × $0.01 fit the pool at once, and
    assert len(not_started) >= 1                  # more start as unspent earmarks return
    assert len(started) + len(not_started) == 20
    assert all(t["exchanges"] == 0 and t["cost_usd"] == 0 for t in not_started)
    assert all("not started" in t["reason"] for t in not_started)
    # never the model's failure: set apart on the leaderboard, not ranked as a zero
    from vendbench.leaderboard import build

    board = build(db)
    apart = [a for a in board.selection.set_apart if a["status"] == "not_started"]
    assert len(apart) == len(not_started)
    (row,) = board.rows
    assert row.trials == len(trials) - len(not_started)
    # a trial is refused only when the pool cannot cover its budget and nothing running
    # would give money back: the pool was used up to within one trial budget
    assert spent > D("0.05") - D("0.01")


def test_charge_records_spend_settled_elsewhere_even_past_the_cap():
    pool = Budget("run", D("1"))
    trial = pool.earmark("trial", D("0.4"))
    trial.charge(D("0.25"))
    assert trial.spent == pool.spent == D("0.25") and trial.reserved == pool.reserved == 0
    assert trial.overspent() == pool.overspent() == 0
    trial.charge(D("0.2"))          # a provider billed past the earmark: it was spent
    assert trial.spent == pool.spent == D("0.45")
    assert trial.overspent() == D("0.05") and pool.overspent() == 0
    with pytest.raises(BudgetExceeded):
        trial.reserve(D("0.01"))                # and nothing more can be reserved
    trial.charge(D("0"))
    assert pool.spent == D("0.45")


def test_a_provider_billing_past_the_request_is_charged_in_full_and_named(llm, tmp_path):
    """A server reporting far more input tokens than were sent (100,000 for a prompt of a
    few thousand): every such reply is charged in full, the run names the provider once,
    and each trial stops budget_exhausted as soon as its budget's cap is crossed (by one
    reply at most). (An output count above max_tokens is no bill at all but a garbled
    reply, charged its reservation: test_faults.)"""
    llm.script = lambda body: Reply(tool_calls=[("list_machines", "{}")],
                                    prompt_tokens=100_000)
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=30, seeds=[1, 2, 3], budget_usd="0.03", total_budget_usd="1",
                 models=[model(llm, max_output_tokens=256)])
    trials = result.as_json()["trials"]
    assert {t["status"] for t in trials} == {"budget_exhausted"}
    assert all("reported usage costing" in t["reason"] and llm.url in t["reason"]
               for t in trials)
    per_trial = query(db, "SELECT trial_id, sum(cost_usd), max(cost_usd) FROM exchanges "
                          "GROUP BY 1")
    for _, spent, biggest in per_trial:
        assert D("0.03") < spent <= D("0.03") + biggest           # past the cap by one reply
    assert all(r[0] > r[1] for r in query(db, "SELECT cost_usd, reserved_usd FROM exchanges "
                                              "WHERE status = 'ok'"))
    warnings = query(db, "SELECT kind, message FROM run_warnings")
    assert [w[0] for w in warnings] == ["over_billed"] and "max_tokens 256" in warnings[0][1]
    assert query(db, "SELECT sum(cost_usd) FROM trials") == \
        query(db, "SELECT sum(cost_usd) FROM exchanges")


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_server_that_reports_no_usage_is_charged_its_reservations_and_capped(
        tmp_path, wire):
    """A server that leaves ``usage`` out of every reply: each reply's cost is unknown,
    so it is charged its full reservation (our token counts recorded beside it), the run
    warns once for the model, and the pool's cap holds. (It used to be charged $0: sixteen
    trials under a $0.05 cap ran to completion while the tokens were worth $0.22.)"""
    from .conftest import claude

    with FakeLLM(report_usage=False) as llm:
        entry = model(llm) if wire == "openai" else claude(llm)
        db = str(tmp_path / "r.duckdb")
        result = run(db, seeds=list(range(1, 17)), workers=16, total_budget_usd="0.05",
                     models=[entry])
        assert llm.served > 0
        price = Price(D("0.4"), D("1.6")) if wire == "openai" else litellm_price(entry["id"])
        produced = sum((price.cost(u.get("prompt_tokens", u.get("input_tokens", 0))
                                   + u.get("cache_read_input_tokens", 0)
                                   + u.get("cache_creation_input_tokens", 0),
                                   u.get("completion_tokens", u.get("output_tokens", 0)))
                        for u in llm.usages), D(0))
    rows = query(db, "SELECT status, cost_usd, reserved_usd, input_tokens, output_tokens, "
                     "usage_counted FROM exchanges")
    assert rows and all(r[1] == r[2] > 0 for r in rows)          # charged in full
    spent = query(db, "SELECT sum(cost_usd) FROM exchanges")[0][0]
    assert spent == result.pool.spent <= D("0.05")               # the cap holds…
    assert spent >= produced                    # …and never less than what was produced
    if wire == "anthropic":
        # litellm cannot parse an Anthropic reply without usage: a garbled reply, of
        # unknown outcome, charged as such (the trial ends error, kept apart)
        assert {r[0] for r in rows} == {"unknown"}
        return
    assert all(r[0] == "ok" and r[3] > 0 and r[4] > 0 and r[5] is True for r in rows)
    trials = result.as_json()["trials"]
    assert "budget_exhausted" in {t["status"] for t in trials}
    assert sum(t["input_tokens"] for t in trials) > 0
    warnings = query(db, "SELECT model, kind, message FROM run_warnings")
    assert [(w[0], w[1]) for w in warnings] == [(entry["id"], "usage_missing")]
    assert "without usage" in warnings[0][2] and "full reservation" in warnings[0][2]


def test_a_reply_reporting_zero_prompt_tokens_counts_as_no_usage():
    from vendbench.providers._wire import usage_from

    reply = {"choices": [{"message": {"content": "", "tool_calls": [{"id": "a"}]}}]}
    assert usage_from(reply) is None
    assert usage_from({**reply, "usage": {"prompt_tokens": 0, "completion_tokens": 0}}) is None
    # input reported, output missing beside a reply that has output: still unknown
    assert usage_from({**reply, "usage": {"prompt_tokens": 900}}) is None
    assert usage_from({**reply, "usage": {"prompt_tokens": 900, "completion_tokens": 7}}
                      ).completion_tokens == 7
    quiet = {"choices": [{"message": {"content": ""}}], "usage": {"prompt_tokens": 900}}
    assert usage_from(quiet).prompt_tokens == 900
