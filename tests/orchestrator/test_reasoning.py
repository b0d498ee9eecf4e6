"""Reasoning models as they are served (design §24), through litellm's real HTTP path to the
tests' server, which refuses what Anthropic's, Gemini's and OpenAI's APIs refuse: what a
reply asks back (signed thinking, thought signatures) goes back untouched, also after a
kill -9 and --resume; settings are part of a model's identity; what a provider would
refuse is refused before a run; ``check`` says what reasoning a model does and costs."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from decimal import Decimal

import pytest

from vendbench.errors import ConfigError
from vendbench.orchestrator import build_config, execute, model_entry

from ..fakellm import FakeLLM, vending_script
from .conftest import CANARY, query, run
from .test_network_run import network_script
from .test_resume import kill_when, outcome


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", CANARY)


def claude(llm: FakeLLM, **extra: object) -> dict:
    return {"id": "anthropic/claude-sonnet-4-5", "api_base": llm.base, "max_output_tokens": 2048,
            "reasoning_effort": "low", "request_timeout_s": 10, **extra}


def gemini(llm: FakeLLM, **extra: object) -> dict:
    return {"id": "gemini/gemini-3.1-pro-preview", "api_base": llm.base,
            "max_output_tokens": 2048, "reasoning_effort": "low", "request_timeout_s": 10,
            **extra}


MODELS = {"claude": claude, "gemini": gemini}


def plain(value: object) -> object:
    """``value`` without the cache marks a request adds to its blocks."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def sent_back_untouched(llm: FakeLLM, provider: str) -> int:
    """Checks that every request's newest assistant turn is one the server sent, with its
    reasoning state exactly as sent; returns how many requests carried one."""
    if provider == "claude":
        sent = [r["content"] for r in llm.replies]
        assert all(c[0]["type"] == "thinking" for c in sent)
        turns = [[m for m in r["messages"] if m["role"] == "assistant"][-1:]
                 for r in llm.requests]
        back = [plain(t[0]["content"]) for t in turns if t]
    else:
        def signed(parts: list[dict]) -> list[str]:
            return [p["thoughtSignature"] for p in parts if "thoughtSignature" in p]

        sent = [signed(r["candidates"][0]["content"]["parts"]) for r in llm.replies]
        assert all(sent)
        turns = [[c for c in r["contents"] if c["role"] == "model"][-1:] for r in llm.requests]
        back = [signed(t[0]["parts"]) for t in turns if t]
        assert all(p.get("text") != "" for t in turns for c in t for p in c["parts"])
    assert all(b in sent for b in back)
    return len(back)


@pytest.mark.parametrize("provider", ["claude", "gemini"])
@pytest.mark.parametrize("scenario", ["autovend", "network"])
def test_a_reasoning_model_runs_30_days_sending_back_what_it_must(tmp_path, provider, scenario):
    db = str(tmp_path / "r.duckdb")
    script = vending_script if scenario == "autovend" else network_script
    with FakeLLM(script=script) as llm:
        result = run(db, scenario=scenario, days=30, models=[MODELS[provider](llm)])
    (trial,) = result.as_json()["trials"]
    assert trial["status"] == "completed" and trial["days_completed"] == 30, trial["reason"]
    assert llm.refusals == [] and llm.placeholders == []
    assert sent_back_untouched(llm, provider) == len(llm.requests) - 1 >= 59
    # kept in the results file with the reply, as it came, so a resume sends the same
    field = "thinking_blocks" if provider == "claude" else "provider_specific_fields"
    kept = [json.loads(c) for c, in query(db, "SELECT content_json FROM messages WHERE role "
                                              "= 'assistant' ORDER BY msg_id")]
    assert len(kept) == len(llm.replies) and all(m.get(field) for m in kept)
    if provider == "claude":
        assert [m["thinking_blocks"] for m in kept] == [
            [b for b in r["content"] if "thinking" in b["type"]] for r in llm.replies]
        assert any(b["type"] == "redacted_thinking" for m in kept for b in m["thinking_blocks"])
    # the viewer's reply shows the reasoning; the log counts what it carries back
    reasoning = [json.loads(r)["reasoning"] for r, in query(
        db, "SELECT reply_json FROM exchanges ORDER BY seq")]
    assert all(r.startswith("Step ") for r in reasoning)
    assert query(db, "SELECT min(carried_tokens) FROM messages WHERE role = 'assistant'"
                 )[0][0] > 0
    from vendbench.view import Pages

    pages = Pages(db)
    shown = "".join(pages.get(f"trial/{trial['trial_id']}/day-{d}.html").body
                    for d in range(1, 31))
    assert all(r.split("\n")[0] in shown for r in reasoning)      # every reply's thinking
    if provider == "claude":
        assert "redacted thinking block" in shown


def start(db: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "ANTHROPIC_API_KEY": CANARY, "GEMINI_API_KEY": CANARY,
           "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "vendbench", "run", *args, "--db", db],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


@pytest.mark.parametrize("provider, label", [
    ("claude", "anthropic/claude-sonnet-4-5 [effort=low]"),
    ("gemini", "gemini/gemini-3.1-pro-preview [effort=low]")])
def test_killed_mid_trial_with_reasoning_on_resumes_to_the_same_calls(tmp_path, provider,
                                                                      label):
    """kill -9 mid-trial, --resume: the conversation comes back from the results file
    with its signed reasoning, the strict server takes it, and the trial ends with the
    calls of an uninterrupted one."""
    days = 10
    with FakeLLM() as llm:
        reference = str(tmp_path / "reference.duckdb")
        run(reference, days=days, models=[MODELS[provider](llm)])
        uninterrupted = len(llm.requests)
    with FakeLLM(latency=0.01) as llm:
        db = str(tmp_path / "r.duckdb")
        flags = ["--models", label, "--api-base", llm.base, "--days", str(days),
                 "--max-output-tokens", "2048", "--request-timeout", "10"]
        proc = start(db, *flags)
        assert kill_when(proc, llm, served=7)
        (run_id,), = query(db, "SELECT run_id FROM runs")
        proc = start(db, "--resume", run_id)
        assert proc.wait(timeout=240) == 0, proc.stderr.read()
        assert llm.refusals == [] and llm.placeholders == []
        assert len(llm.requests) <= uninterrupted + 1        # at most the one in flight
        assert sent_back_untouched(llm, provider) >= uninterrupted - 1
    assert outcome(db) == {(label, seed): rest for (_, seed), rest in
                           outcome(reference).items()}
    assert query(db, "SELECT max(segment) FROM segments")[0][0] == 2


def test_openai_reasoning_tokens_are_counted_and_priced_as_output(tmp_path):
    db = str(tmp_path / "r.duckdb")
    with FakeLLM() as llm:
        result = run(db, days=3, models=[
            {"id": "openai/o4-mini", "api_base": llm.url, "reasoning_effort": "high",
             "max_output_tokens": 1024, "request_timeout_s": 10}])
        assert llm.refusals == []          # max_completion_tokens, no temperature: accepted
    (trial,) = result.as_json()["trials"]
    assert trial["status"] == "completed"
    rows = query(db, "SELECT input_tokens, cache_read_tokens, output_tokens, reasoning_tokens, "
                     "cost_usd FROM exchanges")
    prices = json.loads(query(db, "SELECT prices_json FROM runs")[0][0])
    price = {k: Decimal(v) for k, v in prices["openai/o4-mini [effort=high]"].items()
             if k in ("input", "output", "cache_read")}
    for inp, read, out, reasoning, cost in rows:
        assert reasoning == 400 and out > reasoning     # the fake's figure for "high"
        assert cost == ((inp - read) * price["input"] + read * price["cache_read"]
                        + out * price["output"]) / 10**6


def test_settings_are_part_of_a_models_identity(tmp_path, capsys):
    """Two entries of one model with other settings are two models everywhere: their
    trials, the leaderboard, trend, compare and the arena (design §24.2)."""
    from vendbench.cli import main

    db, compared_db, arena_db = (str(tmp_path / f"{n}.duckdb") for n in ("r", "c", "a"))
    low, high = "openai/o4-mini [effort=low]", "openai/o4-mini [effort=high]"
    with FakeLLM() as llm:
        result = run(db, days=3, seeds=[1, 2], models=[
            {"id": "openai/o4-mini", "api_base": llm.url, "reasoning_effort": effort,
             "max_output_tokens": 1024} for effort in ("low", "high")])
        assert {t["model"] for t in result.as_json()["trials"]} == {low, high}
        assert {r["reasoning_effort"] for r in llm.requests} == {"low", "high"}
        # compare and the arena take the labels as models
        assert main(["compare", low, high, "--days", "6", "--max-pairs", "2", "--batch", "2",
                     "--api-base", llm.url, "--max-output-tokens", "1024", "--db",
                     compared_db, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["models"] == [low, high]
        assert main(["arena", low, high, "--scenario", "autovend", "--days", "2",
                     "--api-base", llm.url, "--max-output-tokens", "1024", "--db", arena_db,
                     "--json"]) == 0
        seats = json.loads(capsys.readouterr().out)["matches"]
        assert sorted(s["model"] for s in seats) == [high, high, low, low]
        assert llm.refusals == []
    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0
    assert sorted(r["model"] for r in json.loads(capsys.readouterr().out)["rows"]) == \
        [high, low]
    assert main(["trend", "--db", db, "--format", "json"]) == 0
    assert {n["model"] for n in json.loads(capsys.readouterr().out)["nights"]} == {low, high}
    assert main(["leaderboard", "--db", arena_db, "--arena", "--format", "json"]) == 0
    assert {r["model"] for r in json.loads(capsys.readouterr().out)["rows"]} == {low, high}


def test_a_label_reads_back_into_its_settings():
    from vendbench.orchestrator import ModelConfig

    entry = model_entry("anthropic/claude-sonnet-4-5 [thinking=2048, temperature=1]")
    model = ModelConfig.model_validate({**entry, "max_output_tokens": 4096})
    assert model.thinking_budget_tokens == 2048 and model.temperature == 1.0
    assert model.label == "anthropic/claude-sonnet-4-5 [thinking=2048, temperature=1]"
    assert ModelConfig.model_validate(model_entry(model.label) | {"max_output_tokens": 4096}
                                      ) == model
    assert ModelConfig(id="openai/gpt-4.1-mini").label == "openai/gpt-4.1-mini"
    for bad, said in [("openai/x [effort]", "is not a setting"),
                      ("openai/x [speed=9]", "is not a setting"),
                      ("openai/x [effort=low, effort=high]", "sets effort twice"),
                      ("openai/x [effort=low", "is not a model label")]:
        with pytest.raises(ConfigError, match=said):
            model_entry(bad)
    with pytest.raises(ConfigError, match="listed twice with the same settings"):
        build_config({"models": [{"id": "openai/x [effort=low]"},
                                 {"id": "openai/x", "reasoning_effort": "low"}]})


@pytest.mark.parametrize("extra, said", [
    ({"reasoning_effort": "high", "max_output_tokens": 4096},
     "max_output_tokens (4,096) must be above the thinking budget (4,096 tokens)"),
    ({"temperature": 0.5}, "Anthropic takes temperature 1 only when thinking is on"),
    ({"tool_choice": "required"}, "Anthropic refuses a forced tool choice"),
    ({"reasoning_effort": None, "thinking_budget_tokens": 512},
     "Anthropic's smallest thinking budget is 1,024 tokens"),
    ({"thinking_budget_tokens": 2048}, "give reasoning_effort or thinking_budget_tokens"),
    ({"reasoning_effort": None, "thinking_budget_tokens": 2048},
     "max_output_tokens (2,048) must be above thinking_budget_tokens (2,048)"),
])
def test_what_the_provider_would_refuse_is_refused_before_the_run(tmp_path, extra, said):
    db = tmp_path / "r.duckdb"
    with FakeLLM() as llm:
        with pytest.raises(ConfigError, match=re.escape(said)) as caught:
            config = build_config({"days": 3, "models": [claude(llm, **extra)]})
            asyncio.run(execute(config, str(db)))
        assert len(llm.requests) == 0
    # one line (a config file's own errors come under its heading, one line each)
    assert not db.exists() and len(str(caught.value).splitlines()) <= 2


def test_check_says_what_reasoning_does_and_what_a_request_reserves(capsys):
    from vendbench.cli import main

    with FakeLLM() as llm:
        assert main(["check", "--models", "anthropic/claude-sonnet-4-5 [effort=low]",
                     "gemini/gemini-2.5-pro [thinking=2048]",
                     "openai/gpt-4.1-mini [effort=low]", "--api-base", llm.base,
                     "--max-output-tokens", "4096", "--json"]) == 0
        assert llm.refusals == []
    report = {m["model"]: m for m in json.loads(capsys.readouterr().out)["models"]}
    claude_ = report["anthropic/claude-sonnet-4-5 [effort=low]"]["reasoning"]
    assert claude_["on"] and claude_["thinking_budget"] == 1024
    assert "Anthropic extended thinking, budget 1,024 tokens" in claude_["how"]
    gemini_ = report["gemini/gemini-2.5-pro [thinking=2048]"]
    assert gemini_["reasoning"]["reserved_beyond_max_tokens"] == 2048
    # what a request reserves counts its thinking on top of max_tokens
    tokens = gemini_["first_prompt_tokens"]
    price = gemini_["price"]
    expected = (Decimal(tokens + 1) * Decimal(price["input"]) +
                Decimal(4096 + 2048) * Decimal(price["output"])) / 10**6 * Decimal("1.2")
    assert abs(Decimal(str(gemini_["reserves_usd"])) - expected) < Decimal("1e-8")
    gpt = report["openai/gpt-4.1-mini [effort=low]"]["reasoning"]
    assert not gpt["on"] and "has no effect: litellm drops it" in gpt["notes"][0]


def test_signed_thinking_that_looks_like_a_key_goes_back_as_it_came(tmp_path):
    """Replies pass through secret redaction before anything keeps them, but what a
    provider signed is masked only for a secret we know: a thinking text that merely
    looks like a key ("api_key_rotation_plan") would otherwise fail its signature."""
    from ..fakellm import Reply

    def script(body: dict) -> Reply:
        reply = vending_script(body)
        reply.thinking = "check api_key_rotation_plan and sk-lookalike0123456789 first"
        return reply

    db = str(tmp_path / "r.duckdb")
    with FakeLLM(script=script) as llm:
        result = run(db, days=3, models=[claude(llm)])
    (trial,) = result.as_json()["trials"]
    assert trial["status"] == "completed" and llm.refusals == [], trial["reason"]
    assert sent_back_untouched(llm, "claude") == len(llm.requests) - 1
    # the provider's raw reply is still stored redacted like any other text
    raw = query(db, "SELECT response_json FROM exchanges LIMIT 1")[0][0]
    assert "api_key_rotation_plan" not in raw
