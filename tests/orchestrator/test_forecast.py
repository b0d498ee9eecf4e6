"""The cost forecast before a run (design §16): the measured operator's trial at the model's
prices, strategy and window; checked against what the local test server bills for the
same operator's 30-day trial; printed before the file exists; --max-forecast refuses."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
from decimal import Decimal

import pytest

from vendbench.budgets import Forecast, Price, forecast
from vendbench.budgets._forecast import requests_for
from vendbench.environment import scenario
from vendbench.cli import main
from vendbench.orchestrator import build_config, execute

from ..operator import record, server
from .conftest import model, query

GPT5_CLASS = Price(Decimal("1.25"), Decimal("10"), Decimal("0.125"))
SONNET_CLASS = Price(Decimal("3"), Decimal("15"), Decimal("0.30"), Decimal("3.75"))
AUTOVEND = scenario("autovend").workload
SHAPE = dict(window=60_000, max_output=4_096, first_prompt=2_797, stable_prefix=1_922,
             workload=AUTOVEND)


def test_the_operator_makes_its_measured_requests():
    assert requests_for(30, AUTOVEND) == 301                          # bench_cost, seed 1
    assert requests_for(180, AUTOVEND) == 2_639
    assert requests_for(15, AUTOVEND) == 150 and requests_for(1, AUTOVEND) == 10
    assert requests_for(365, AUTOVEND) == 2_639 + round(545 * 185 / 30)   # the last rate on


def test_block_caches_what_sliding_cannot_and_costs_less():
    block = forecast(SONNET_CLASS, days=180, strategy="block", **SHAPE)
    sliding = forecast(SONNET_CLASS, days=180, strategy="sliding", **SHAPE)
    assert block.requests == sliding.requests == 2_639
    # bench_cost measured 106.2M / 90.3 % (block) and 142.7M / 40.1 % (sliding)
    assert 100e6 < block.input_tokens < 115e6 and 0.88 < block.cached_share < 0.93
    assert 135e6 < sliding.input_tokens < 155e6 and 0.35 < sliding.cached_share < 0.45
    # and $80.02 against $342.81 at these prices
    assert Decimal(75) < block.usd < Decimal(90) < Decimal(330) < sliding.usd < Decimal(370)
    assert list(block.by_day) == sorted(block.by_day) and block.by_day[-1] == block.usd


def test_no_caching_no_price_and_a_turn_cap_each_change_the_forecast():
    cached = forecast(GPT5_CLASS, days=30, **SHAPE)
    plain = forecast(GPT5_CLASS, days=30, caching=False, **SHAPE)
    assert plain.cached_tokens == 0 and plain.usd > 3 * cached.usd
    assert forecast(None, days=30, **SHAPE).usd is None
    capped = forecast(GPT5_CLASS, days=30, max_turns=25, **SHAPE)
    assert capped.requests == 25 and capped.usd < cached.usd


def test_thinking_is_forecast_as_output_and_as_input_where_the_provider_counts_it():
    """design §24.1: a reasoning model's budget as output on every request (a ceiling), and
    as input where its provider counts it back: Anthropic's current turn (the k-th
    request of a day carries the k before it), DeepSeek's everywhere, Gemini's never."""
    plain = forecast(SONNET_CLASS, days=30, **SHAPE)
    gemini = forecast(SONNET_CLASS, days=30, thinking=1024, thinking_input="none", **SHAPE)
    anthropic = forecast(SONNET_CLASS, days=30, thinking=1024, thinking_input="turn", **SHAPE)
    deepseek = forecast(SONNET_CLASS, days=30, thinking=1024, thinking_input="sent", **SHAPE)
    assert gemini.output_tokens == plain.output_tokens + 1024 * plain.requests
    assert gemini.input_tokens == plain.input_tokens
    per_day = [requests_for(d + 1, AUTOVEND) - requests_for(d, AUTOVEND) for d in range(30)]
    carried = sum(1024 * k for n in per_day for k in range(n))
    assert anthropic.input_tokens == plain.input_tokens + carried
    # DeepSeek's grows the conversation (so the window also evicts sooner)
    first_day = forecast(SONNET_CLASS, days=1, **SHAPE)
    grows = forecast(SONNET_CLASS, days=1, thinking=1024, thinking_input="sent", **SHAPE)
    assert grows.input_tokens == first_day.input_tokens + sum(1024 * k for k in range(10))
    assert deepseek.requests == plain.requests
    assert plain.usd < gemini.usd < anthropic.usd


def test_a_budget_lasts_the_days_its_spending_leaves_room_for_a_request():
    f = Forecast(3, 30, 0, 3, Decimal("0.30"), (Decimal("0.10"), Decimal("0.20"),
                                               Decimal("0.30")))
    assert f.days_within(Decimal("0.25"), Decimal("0.05")) == 2      # 0.20 + 0.05 fits
    assert f.days_within(Decimal("0.24"), Decimal("0.05")) == 1
    assert f.days_within(Decimal("0.20"), Decimal("0")) == 2
    assert f.days_within(Decimal("1"), Decimal("0.05")) == 3


@pytest.mark.parametrize("strategy", ["block", "sliding", "compact"])
def test_the_forecast_is_within_10_percent_of_the_servers_bill(tmp_path, strategy):
    """The operator's 30-day trial through the real LLM path, billed from the usage the
    test server reports (its prompt cache emulated OpenAI-style), against the forecast
    the run made before it started. docs/costs.md states the errors."""
    episode, net_assets = record(1, 30)
    with server(episode, 1) as llm:
        config = build_config({"days": 30, "seeds": [1], "models": [{
            "id": "openai/gpt-5", "api_base": llm.url, "context_strategy": strategy,
            "input_usd_per_mtok": "1.25", "output_usd_per_mtok": "10",
            "cache_read_usd_per_mtok": "0.125", "request_timeout_s": 60}]})
        result = asyncio.run(execute(config, str(tmp_path / "f.duckdb")))
    (outcome,) = result.outcomes
    assert outcome.status == "completed" and outcome.final["final_net_assets"] == net_assets
    predicted = result.forecast.models[0].trial
    if strategy == "compact":      # the operator's 301 requests, and a compaction per eviction
        compactions = query(str(tmp_path / "f.duckdb"), "SELECT count(*) FROM exchanges "
                            "WHERE purpose = 'compaction'")[0][0]
        assert outcome.exchanges - compactions == 301 and compactions >= 10
        assert abs(predicted.requests - outcome.exchanges) <= 0.05 * outcome.exchanges
    else:
        assert predicted.requests == outcome.exchanges == 301
    error = (predicted.usd - outcome.cost) / outcome.cost
    assert Decimal("-0.10") <= error <= Decimal("0.10"), (predicted.usd, outcome.cost)


def test_run_prints_the_forecast_and_refuses_above_max_forecast(llm, tmp_path, capsys):
    db = tmp_path / "r.duckdb"
    args = ["run", "--models", "openai/fake-model", "--api-base", llm.url, "--price",
            "openai/fake-model=0.4,1.6", "--days", "30", "--seeds", "1", "2",
            "--budget", "0.5", "--db", str(db)]
    assert main([*args, "--max-forecast", "0.9"]) == 2
    err = capsys.readouterr().err
    assert not db.exists() and llm.served == 0
    assert "cost forecast, 30 days a trial" in err
    # 301 requests, all input at $0.40 (no cache price given): 12.1M tokens, $4.84 + output
    assert "a trial: about $5.03 (301 requests, 12.1M tokens in, 90% cached)" in err
    assert "cost forecast, 30 days a trial, if the model is as busy as autovend's\n" \
           "  baseline/order-up-to:" in err                        # what it assumes
    assert "cached input at the full rate (no cache price: --price" in err
    # once full: (60,000 - 4,096 + 1) in at $0.40 + 4,096 out at $1.60, x 1.2 margin
    assert "a request reserves $0.0092 at first, $0.0347 once the window is full" in err
    said = " ".join(err.split())
    assert re.search(r"if it is that busy, its \$0.50 budget lasts about \d of 30 days "
                     r"\(a trial that runs out ends budget_exhausted", said)   # a forecast,
    assert "a model that asks less spends less" in said     # never said as this model's fate
    assert "trials end budget_exhausted" not in err
    assert "2 trials: $1.00 within their budgets (finishing them: $10.06)" in err
    assert "the run is forecast at $1.00, above --max-forecast $0.90" in err
    assert all(len(line) <= 80 for line in err.splitlines()[:-1])


def test_check_and_run_json_carry_the_forecast(llm, tmp_path, capsys):
    assert main(["check", "--models", "openai/fake-model", "--api-base", llm.url,
                 "--price", "openai/fake-model=0.4,1.6", "--days", "3", "--no-request",
                 "--json"]) == 0
    checked = json.loads(capsys.readouterr().out)["forecast"]
    (m,) = checked["models"]
    assert m["requests"] == requests_for(3, AUTOVEND) and Decimal(m["trial_usd"]) > 0
    config = build_config({"days": 3, "seeds": [1], "max_turns": 2,
                           "models": [model(llm)]})
    result = asyncio.run(execute(config, str(tmp_path / "j.duckdb")))
    assert result.as_json()["forecast"]["models"][0]["requests"] == 2    # the turn cap


def test_resume_takes_no_max_forecast(tmp_path, capsys):
    assert main(["run", "--resume", "x", "--max-forecast", "1", "--db",
                 str(tmp_path / "none.duckdb")]) == 2
    assert "drop --max-forecast" in capsys.readouterr().err


def test_each_scenario_forecasts_its_own_operator(llm, capsys):
    """A network trial is forecast from the network's measured workload, not AutoVend's
    (design §21): its own requests a month and its short tool results."""
    network = scenario("network").workload
    assert network is not None and network != AUTOVEND
    assert requests_for(30, network) == 585
    mine = forecast(GPT5_CLASS, days=30, **{**SHAPE, "workload": network})
    # the same pace with AutoVend's sizes: 2,239 new tokens a request, 390 written
    bigger = dataclasses.replace(network, new_tokens_per_request=2_239,
                                 output_tokens_per_request=390)
    theirs = forecast(GPT5_CLASS, days=30, **{**SHAPE, "workload": bigger})
    assert mine.requests == theirs.requests == 585 and mine.output_tokens == 585 * 38
    assert mine.input_tokens < theirs.input_tokens and mine.usd < theirs.usd
    for name, requests in (("network", 585), ("autovend", 301)):
        assert main(["check", "--scenario", name, "--models", "openai/fake-model",
                     "--api-base", llm.url, "--price", "openai/fake-model=0.4,1.6",
                     "--days", "30", "--no-request", "--json"]) == 0
        checked = json.loads(capsys.readouterr().out)["forecast"]
        assert checked["operator"] == f"{name}'s baseline/order-up-to"
        assert checked["models"][0]["requests"] == requests
