"""`vendbench compare` end to end: the reference policies offline, and two fake models of
known, different skill on the local test server; identical models; the budget; a crash
and --resume; what is stored and shown."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from decimal import Decimal

import pytest

from vendbench.cli import main
from vendbench.compare import EQUIVALENT, INCONCLUSIVE, WINNER, CompareSpec, compare
from vendbench.orchestrator import build_config
from vendbench.results import Store, comparison, comparison_steps

from ..fakellm import FakeLLM, Reply
from ..orchestrator.conftest import api_key  # noqa: F401  (a canary key for the fake models)

PRODUCTS = ["P0001", "P0045", "P0200"]


def _coin(body: dict) -> bool:
    """A fair coin per model and world seed: the model's name and day 1's report (its
    weather differs by seed) hashed; two ``coin-…`` models play the same distribution."""
    first = next(m["content"] for m in body["messages"]
                 if m["role"] == "user" and "Day 1 of" in str(m.get("content")))
    return hashlib.sha256(f"{body['model']}|{first}".encode()).digest()[0] % 2 == 1


def skills(body: dict) -> Reply:
    """``idle``: ends every day. ``wasteful``: orders stock on day 1 and throws it away
    when it arrives (a known loss: its cost, about 8 % of net assets). ``coin-…``: on a
    fair coin per world seed, idle or wasteful on a tenth of the scale (below the 2 %
    margin). Anything else: idle too."""
    last = body["messages"][-1]
    wasteful = body["model"].endswith("wasteful") or \
        ("/coin-" in "/" + body["model"] and _coin(body))
    if last["role"] == "tool" or not wasteful:
        return Reply(tool_calls=[("end_day", "{}")])
    text = last.get("content") or ""
    units = 60 if "/coin-" in "/" + body["model"] else 600
    if "Day 1 of" in text:
        items = [{"product_id": p, "quantity": units} for p in PRODUCTS]
        return Reply(tool_calls=[("place_order", json.dumps({"items": items}))])
    if re.search(r"Warehouse: [1-9]\d* units", text):
        items = [{"product_id": p, "quantity": units} for p in PRODUCTS]
        return Reply(tool_calls=[("discard", json.dumps({"items": items}))])
    return Reply(tool_calls=[("end_day", "{}")])


@pytest.fixture
def llm():
    with FakeLLM(script=skills) as server:
        yield server


def _models(llm: FakeLLM, *names: str) -> list[dict]:
    return [{"id": f"openai/{n}", "api_base": llm.url, "input_usd_per_mtok": "0.4",
             "output_usd_per_mtok": "1.6", "max_output_tokens": 256, "request_timeout_s": 5}
            for n in names]


def _spec(models: list[dict], **extra) -> CompareSpec:
    return CompareSpec(base=build_config({"days": 8, "seeds": [1], "models": models}),
                       max_pairs=20, **extra)


def test_the_better_fake_model_wins_within_the_budget(llm, tmp_path):
    db = str(tmp_path / "c.duckdb")
    out = asyncio.run(compare(_spec(_models(llm, "wasteful", "idle"),
                                    budget_usd=Decimal("20")), db))
    assert out.row.verdict == WINNER and out.row.best == "openai/idle"
    assert out.row.pairs <= 8 and Decimal(0) < out.row.spent_usd <= Decimal(20)
    assert all(w < i for w, i in zip(out.scores["openai/wasteful"], out.scores["openai/idle"]))
    with Store(db, read_only=True) as store:
        row = comparison(store, "latest")
        steps = comparison_steps(store, row.comparison_id)
        assert row.status == "decided" and row.verdict == WINNER and row.spent_usd == \
            out.row.spent_usd
        assert [s.step for s in steps] == list(range(1, len(steps) + 1))
        assert steps[-1].intervals[0]["low"] > 0                 # idle - wasteful > 0
        # every batch is a run of the file, its trials logged as in `run`
        for s in steps:
            trials = store.trials(s.run_id)
            assert len(trials) == 2 * 2 and all(t["exchanges"] > 0 for t in trials)
        assert store.run(steps[0].run_id)["name"] == f"compare {row.comparison_id} batch 1"


def test_identical_models_are_never_declared_a_winner(llm, tmp_path):
    out = asyncio.run(compare(_spec(_models(llm, "idle", "idle-twin")),
                              str(tmp_path / "c.duckdb")))
    assert out.row.verdict == EQUIVALENT and out.row.best is not None
    assert out.scores["openai/idle"] == out.scores["openai/idle-twin"]


def test_identically_skilled_models_are_not_called_different(llm, tmp_path):
    """Six comparisons of two models that play the same coin-flip strategy (each its
    own coins): at the documented error rate (at most 5 %; about 2 % simulated) none is
    expected to name a winner; every one stops equivalent or inconclusive."""
    verdicts = []
    for k in range(6):
        spec = CompareSpec(base=build_config({"days": 5, "seeds": [1], "models": _models(
            llm, f"coin-a{k}", f"coin-b{k}")}), max_pairs=8)
        out = asyncio.run(compare(spec, str(tmp_path / f"c{k}.duckdb")))
        assert any(x != y for x, y in zip(*out.scores.values())) or out.row.pairs < 4
        verdicts.append(out.row.verdict)
    assert WINNER not in verdicts and len(verdicts) == 6


def test_a_race_of_three_drops_the_worst_and_calls_the_rest_equivalent(llm, tmp_path):
    out = asyncio.run(compare(_spec(_models(llm, "idle", "wasteful", "idle-twin")),
                              str(tmp_path / "c.duckdb")))
    assert out.row.verdict == EQUIVALENT
    first, last = out.steps[0], out.steps[-1]
    assert len(first.intervals) == 3                       # every pair of the three
    assert first.survivors == ["openai/idle", "openai/wasteful", "openai/idle-twin"]
    assert last.survivors == ["openai/idle", "openai/idle-twin"]     # after the step
    below = [p for p in last.intervals if "openai/wasteful" in (p["a"], p["b"])]
    assert all((p["high"] < 0) if p["b"] == "openai/wasteful" else (p["low"] > 0)
               for p in below) and len(below) == 2


def test_a_batch_the_budget_cannot_cover_is_not_started(llm, tmp_path):
    db = str(tmp_path / "c.duckdb")
    out = asyncio.run(compare(_spec(_models(llm, "idle", "wasteful"),
                                    budget_usd=Decimal("0.001")), db))
    assert out.row.verdict == INCONCLUSIVE and out.steps == [] and llm.served == 0
    assert "the next batch is forecast at $" in out.row.reason and "budget is left" in \
        out.row.reason


def test_a_crash_after_a_batch_resumes_to_the_same_answer(tmp_path):
    models = [{"id": "baseline/order-up-to"}, {"id": "baseline/oracle"}]
    spec = CompareSpec(base=build_config({"days": 5, "seeds": [1], "models": models}),
                       max_pairs=12)
    whole = asyncio.run(compare(spec, str(tmp_path / "whole.duckdb")))
    db = str(tmp_path / "c.duckdb")

    def crash(kind, data):
        if kind == "step":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        asyncio.run(compare(spec, db, on_event=crash))
    statuses: list[str] = []
    with Store(db, read_only=True) as store:
        assert comparison(store, "latest").status == "interrupted"
    resumed = asyncio.run(compare(spec, db, resume="latest", on_event=lambda kind, data: (
        kind == "batch" and statuses.append(_status(db)))))
    assert (resumed.row.verdict, resumed.row.best, resumed.row.pairs) == \
        (whole.row.verdict, whole.row.best, whole.row.pairs) == (WINNER, "baseline/oracle",
                                                                 whole.row.pairs)
    assert [s.intervals for s in resumed.steps] == [s.intervals for s in whole.steps]
    assert statuses and set(statuses) == {"running"}          # running again, then decided
    assert _status(db) == "decided"


def _status(db: str) -> str:
    with Store(db, read_only=True) as store:
        return comparison(store, "latest").status


def test_the_cli_runs_shows_and_charts_a_comparison(tmp_path, capsys):
    db = str(tmp_path / "c.duckdb")
    assert main(["compare", "baseline/order-up-to", "baseline/oracle", "--days", "5",
                 "--db", db, "--chart", str(tmp_path / "c.png")]) == 0
    out = capsys.readouterr()
    assert "verdict: baseline/oracle is better, after" in out.out
    assert "batch 1: seeds 1-2" in out.err and (tmp_path / "c.png").stat().st_size > 10_000
    assert main(["compare", "--show", "latest", "--db", db, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["verdict"] == WINNER and shown["steps"][0]["intervals"][0]["low"] is None
    assert shown["steps"][-1]["intervals"][0]["relative"]["low"] > 0


def test_an_unknown_comparison_is_named(tmp_path, capsys):
    db = str(tmp_path / "c.duckdb")
    assert main(["run", "--models", "baseline/oracle", "--days", "1", "--db", db]) == 0
    capsys.readouterr()
    assert main(["compare", "--resume", "nope", "--db", db]) == 2
    assert capsys.readouterr().err.strip() == f"vendbench: error: no comparison nope in {db}"
    assert main(["compare", "--show", "latest", "--db", db]) == 2      # none at all yet
    assert capsys.readouterr().err.strip() == (
        f"vendbench: error: {db} holds no comparison yet: vendbench compare MODEL_A "
        "MODEL_B starts one")


@pytest.mark.parametrize("argv, message", [
    (["compare", "baseline/oracle"], "two or more models"),
    (["compare", "baseline/oracle", "baseline/oracle"], "two or more different models"),
    (["compare", "--show", "nope"], "no results database at"),
    (["compare", "baseline/oracle", "baseline/order-up-to", "--chart", "x.pdf"], ".png or .svg"),
])
def test_bad_input_is_one_line(argv, message, tmp_path, capsys):
    assert main([*argv, "--db", str(tmp_path / "c.duckdb")]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
