"""Prices and what they make of a reply's usage, and of a reservation (design §3
"Budgets", §6.2): every rate on a case where it, and only it, changes the answer."""

from __future__ import annotations

import json
from decimal import Decimal as D

import pytest

from vendbench.budgets import Price, parse_price_flag
from vendbench.errors import UnknownPriceError
from vendbench.providers import litellm_price

M = D(1_000_000)


def test_defaults_bill_no_cache_and_no_reasoning_tokens():
    p = Price(D("3"), D("15"), cache_read=D("0.3"), cache_write=D("3.75"), reasoning=D("20"))
    assert p.cost(1000, 100) == (1000 * D("3") + 100 * D("15")) / M


def test_litellms_price_map_gives_every_rate_it_has():
    import os

    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    sonnet = litellm_price("anthropic/claude-sonnet-4-5")
    assert sonnet == Price(D("3"), D("15"), cache_read=D("0.3"), cache_write=D("3.75"),
                           source="litellm")
    turbo = litellm_price("dashscope/qwen-turbo")          # prices reasoning apart
    assert turbo == Price(D("0.05"), D("0.2"), reasoning=D("0.5"), source="litellm")
    assert litellm_price("openai/not-a-model-anyone-has") is None


def test_resolving_prices_field_by_field_and_failing_closed():
    from vendbench.budgets import resolve_prices

    free = Price(D("0"), D("0"), source="in-process")
    table = resolve_prices(["baseline/oracle", "openai/x", "baseline/order-up-to"],
                           {"openai/x": {"input": D("1"), "output": D("2")}},
                           lookup=litellm_price)
    assert table == {"baseline/oracle": free, "openai/x": Price(D("1"), D("2")),
                     "baseline/order-up-to": free}
    # all four rates given: the map is not consulted, even for a model it knows
    given = {"input": D("2"), "output": D("9"), "cache_read": D("0.2"), "cache_write": D("2.5")}
    assert resolve_prices(["anthropic/claude-sonnet-4-5"],
                          {"anthropic/claude-sonnet-4-5": given}, lookup=litellm_price)[
        "anthropic/claude-sonnet-4-5"] == Price(**given, source="config")
    with pytest.raises(UnknownPriceError) as err:
        resolve_prices(["openai/a", "baseline/oracle", "openai/b"], {}, lookup=litellm_price)
    assert str(err.value) == (
        "no price known for openai/a, openai/b: give USD per million tokens with --price "
        "openai/a=IN,OUT --price openai/b=IN,OUT (or input_usd_per_mtok/output_usd_per_mtok "
        "in the panel file), or pass --allow-unpriced to run without costs (no API "
        "efficiency, no USD budget)")
    assert resolve_prices(["openai/a", "openai/b"], {}, lookup=litellm_price,
                          allow_unpriced=True) == \
        {"openai/a": None, "openai/b": None}


def test_reasoning_tokens_are_output_unless_priced_apart():
    plain = Price(D("2"), D("8"))
    assert plain.cost(0, 100, reasoning_tokens=50) == 100 * D("8") / M     # not free
    apart = Price(D("2"), D("8"), reasoning=D("10"))
    assert apart.cost(0, 100, reasoning_tokens=50) == (50 * D("8") + 50 * D("10")) / M
    assert apart.cost(0, 10, reasoning_tokens=50) == 10 * D("10") / M       # at most all
    free_thinking = Price(D("2"), D("8"), reasoning=D("0"))     # priced, at zero
    assert free_thinking.cost(0, 100, reasoning_tokens=50) == 50 * D("8") / M


def test_cache_tokens_never_exceed_the_prompt():
    p = Price(D("3"), D("15"), cache_read=D("0.3"), cache_write=D("3.75"))
    assert p.cost(100, 0, cache_read_tokens=500) == 100 * D("0.3") / M
    assert p.cost(100, 0, cache_read_tokens=60, cache_write_tokens=90) == \
        (60 * D("0.3") + 40 * D("3.75")) / M


def test_a_reservation_prices_every_token_at_the_dearest_rate_of_its_side():
    # input dearest: neither cache rate may stand in for it
    assert Price(D("3"), D("15"), cache_read=D("0.3"), cache_write=D("2")).worst_case(
        1000, 0) == 1000 * D("3") / M
    # a cache write dearer than input (Anthropic: 1.25x), or a read (odd, but priced)
    assert Price(D("3"), D("15"), cache_write=D("3.75")).worst_case(1000, 0) == \
        1000 * D("3.75") / M
    assert Price(D("1"), D("2"), cache_read=D("5")).worst_case(1000, 0) == 1000 * D("5") / M
    # output: the output rate, or reasoning when it is dearer; cheap outputs stay cheap
    assert Price(D("0.1"), D("0.5")).worst_case(0, 100) == 100 * D("0.5") / M
    assert Price(D("1"), D("4"), reasoning=D("9")).worst_case(0, 100) == 100 * D("9") / M


def test_a_price_table_stores_as_json_text_and_reads_back_exactly():
    p = Price(D("0.40"), D("1.6"), cache_read=D("0.1"), source="config")
    stored = p.to_json()
    assert stored["input"] == "0.40" and stored["cache_write"] is None
    assert Price.from_json(json.loads(json.dumps(stored))) == p


@pytest.mark.parametrize("text,model,fields", [
    ("openai/gpt-4.1-mini=0.4,1.6", "openai/gpt-4.1-mini",
     {"input": D("0.4"), "output": D("1.6")}),
    ("anthropic/x=3,15,0.3,3.75", "anthropic/x",
     {"input": D("3"), "output": D("15"), "cache_read": D("0.3"), "cache_write": D("3.75")}),
    ("ollama/m=0,0", "ollama/m", {"input": D("0"), "output": D("0")}),   # free is a price
    ("hosted_vllm/org/m=v2=1, 2", "hosted_vllm/org/m=v2", {"input": D("1"), "output": D("2")}),
])
def test_price_flags_parse(text, model, fields):
    assert parse_price_flag(text) == (model, fields)


@pytest.mark.parametrize("text,message", [
    ("openai/x", "--price takes MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]] in USD per million"),
    ("=1,2", "got '=1,2'"),
    ("openai/x=1", "e.g. openai/gpt-4.1-mini=0.4,1.6"),
    ("openai/x=1,2,3,4,5", "MODEL=IN,OUT"),
    ("openai/x=a,b", "--price 'openai/x=a,b': prices must be numbers"),
    ("openai/x=nan,1", "prices must be finite and non-negative"),
    ("openai/x=1,-2", "prices must be finite and non-negative"),
])
def test_bad_price_flags_say_what_is_wrong(text, message):
    with pytest.raises(UnknownPriceError) as err:
        parse_price_flag(text)
    assert message in str(err.value) and str(err.value).startswith("--price ")


def test_a_price_litellm_only_pattern_matches_is_no_price():
    """litellm answers for ``openai/gpt-9-turbo`` (its patterns match) with a rate, but its
    map lists no such model: that is a guess, not a price."""
    assert litellm_price("openai/gpt-9-turbo") is None
    assert litellm_price("openai/gpt-4.1-mini") is not None
