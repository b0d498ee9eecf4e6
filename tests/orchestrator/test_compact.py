"""``compact`` (design §27): when the window is full the model summarises what is to
leave it, in a request of its own through the same budget, reservation and log; its
summary takes the place of what left."""

from __future__ import annotations

import asyncio
import hashlib
import json

import pytest

from vendbench.cli import main
from vendbench.orchestrator._context import COMPACT_PROMPT, SUMMARY_HEAD, RollingContext
from vendbench.providers import TokenCounter
from vendbench.results import dumps

from ..fakellm import FakeLLM
from .conftest import model, query, run
from .test_reasoning import start
from .test_resume import outcome

LIMIT, OUTPUT = 8_000, 512


def compaction(body: dict) -> bool:
    return body.get("tool_choice") == "none"


def counting_server(context_error: str = "openai") -> FakeLLM:
    """A server that counts tokens as we do, whose context is LIMIT and which refuses a
    prompt plus max_tokens over it (as OpenAI does; "llama": the prompt alone)."""
    counter = TokenCounter("openai/fake-model")
    return FakeLLM(count_message=lambda m: counter.count_now([m])[0],
                   count_tools=lambda t: counter.tools(t) if t else 0,
                   context_window=LIMIT, context_error=context_error)


def compact(llm: FakeLLM, **extra) -> dict:
    return model(llm, max_context_tokens=LIMIT, max_output_tokens=OUTPUT,
                 context_strategy="compact", **extra)


def test_a_40_day_trial_compacts_within_an_8k_window(tmp_path):
    """The issue's own check: 40 days, an 8k window, the tests' server refusing anything
    longer; compactions recorded as such, every request within the window, each summary
    standing after the system prompt of the requests that follow it, which again only
    grow (a cacheable prefix) until the next compaction."""
    db = str(tmp_path / "r.duckdb")
    with counting_server() as llm:
        result = run(db, days=40, models=[compact(llm)])
        requests, prompts = list(llm.requests), [u["prompt_tokens"] for u in llm.usages]
    (trial,) = result.as_json()["trials"]
    assert trial["status"] == "completed" and trial["model"] == \
        "openai/fake-model [context=compact]"
    assert max(prompts) + OUTPUT <= LIMIT                         # never over, never refused
    assert query(db, "SELECT count(*) FROM exchanges WHERE status <> 'ok'") == [(0,)]
    purposes = [p for p, in query(db, "SELECT purpose FROM exchanges ORDER BY seq")]
    assert purposes == ["compaction" if compaction(r) else "act" for r in requests]
    assert purposes.count("compaction") >= 5 and purposes.count("act") == 80
    summaries = [text for text, in query(
        db, "SELECT json_extract_string(reply_json, '$.text') FROM exchanges "
            "WHERE purpose = 'compaction' ORDER BY seq")]
    k = 0
    for i, body in enumerate(requests):
        if compaction(body):
            assert body["messages"][-1]["content"] == COMPACT_PROMPT and "tools" in body
            if k:                       # the previous summary is shown to be carried on
                assert body["messages"][1]["content"] == SUMMARY_HEAD + summaries[k - 1]
            after = requests[i + 1]
            assert after["messages"][0] == body["messages"][0]
            assert after["messages"][1]["content"] == SUMMARY_HEAD + summaries[k]
            k += 1
        elif i and not compaction(requests[i - 1]) and k:
            before = requests[i - 1]["messages"]               # between compactions: grows
            assert body["messages"][:len(before)] == before
    assert k == purposes.count("compaction")
    # the prompt that asks is stored with the run, hashed; the agent's prompts hash as a
    # block run's do (a strategy is the model's setting, not another world)
    stored = json.loads(query(db, "SELECT prompts_json FROM runs")[0][0])
    assert stored["compaction"] == COMPACT_PROMPT
    assert stored["compaction_sha256"] == hashlib.sha256(COMPACT_PROMPT.encode()).hexdigest()
    agent = dumps({k: stored[k] for k in ("system", "nudge")})
    assert query(db, "SELECT prompt_sha256 FROM runs")[0][0] == \
        hashlib.sha256(agent.encode()).hexdigest()

def test_killed_mid_compaction_resumes_to_the_same_calls(tmp_path):
    """kill -9 while a compaction is in flight, --resume: the compaction is asked again
    as it was, and the trial ends with the calls, books and compactions of an
    uninterrupted one."""
    days, flags = 16, ["--models", "openai/fake-model", "--price", "openai/fake-model=0.4,1.6",
                       "--context-strategy", "compact", "--max-context-tokens", str(LIMIT),
                       "--max-output-tokens", str(OUTPUT), "--request-timeout", "10"]
    with counting_server() as llm:
        reference = str(tmp_path / "reference.duckdb")
        assert main(["run", *flags, "--api-base", llm.url, "--days", str(days), "--db",
                     reference, "--json"]) == 0
    asked = query(reference, "SELECT count(*) FROM exchanges WHERE purpose = 'compaction'")
    assert asked[0][0] >= 2
    with counting_server() as llm:
        held: list[dict] = []

        def hold_the_second(body: dict) -> None:
            if compaction(body):
                held.append(body)
                if len(held) == 2:
                    llm.gate.clear()

        llm.on_arrival = hold_the_second
        db = str(tmp_path / "r.duckdb")
        proc = start(db, *flags, "--api-base", llm.url, "--days", str(days))
        _until(lambda: not llm.gate.is_set() or proc.poll() is not None)
        assert proc.poll() is None, "the run ended before its second compaction"
        import os
        import signal

        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        llm.gate.set()
        (run_id,), = query(db, "SELECT run_id FROM runs")
        proc = start(db, "--resume", run_id)
        assert proc.wait(timeout=240) == 0, proc.stderr.read()
    assert held[2]["messages"] == held[1]["messages"]      # asked again, as it was
    assert outcome(db) == outcome(reference)
    assert query(db, "SELECT count(DISTINCT seq) FROM exchanges WHERE purpose = 'compaction' "
                     "AND status = 'ok'") == asked


def _until(condition, timeout: float = 120.0) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("gave up waiting")
        time.sleep(0.005)
    return True


def test_a_compaction_refused_as_too_long_summarises_less_and_goes_on(tmp_path):
    """The server's context shrinks to 6k just as the first compaction arrives: that
    request is refused as too long (its exchange logged as a compaction that failed),
    the window is recalibrated, fewer exchanges are summarised, and the trial goes on
    within the smaller window."""
    db = str(tmp_path / "r.duckdb")
    with counting_server(context_error="llama") as llm:
        def shrink(body: dict) -> None:
            if compaction(body) and llm.context_window == LIMIT:
                llm.context_window = 6_000

        llm.on_arrival = shrink
        result = run(db, days=12, models=[compact(llm)])
        prompts = [u["prompt_tokens"] for u in llm.usages]
    assert result.as_json()["trials"][0]["status"] == "completed"
    rows = query(db, "SELECT purpose, status, count(*) FROM exchanges GROUP BY ALL")
    assert ("compaction", "context_length", 1) in rows, rows
    first = query(db, "SELECT seq FROM exchanges WHERE status = 'context_length'")[0][0]
    assert query(db, "SELECT purpose, status FROM exchanges WHERE seq = ? ORDER BY attempt",
                 [first]) == [("compaction", "context_length"), ("compaction", "ok")]
    assert max(prompts[first:]) <= 6_000


@pytest.mark.parametrize("failures, status", [(1, "completed"), (10, "error")])
def test_a_failing_compaction_is_a_request_that_fails(tmp_path, failures, status):
    """500s on the compaction: retried as any request is; when the retries run out the
    trial ends as a trial whose request failed does, never going on without its memory."""
    db = str(tmp_path / "r.duckdb")
    with counting_server() as llm:
        def fail(body: dict) -> None:
            if compaction(body) and not getattr(llm, "failed", False):
                llm.failed = True
                llm.inject("500", times=failures)

        llm.on_arrival = fail
        result = run(db, days=12, max_attempts=3, models=[compact(llm)])
    (trial,) = result.as_json()["trials"]
    assert trial["status"] == status, trial
    failed = query(db, "SELECT purpose, count(*) FROM exchanges WHERE status <> 'ok' GROUP BY ALL")
    assert failed == [("compaction", min(failures, 3))]
    if status != "completed":
        last = query(db, "SELECT purpose FROM exchanges ORDER BY seq DESC, attempt DESC "
                         "LIMIT 1")
        assert last == [("compaction",)]                 # nothing was sent after it


async def _count(messages: list[dict]) -> list[int]:
    return [len(json.dumps(m)) // 4 for m in messages]


def test_a_context_restored_after_an_answered_compaction_goes_on_as_the_original():
    """The process died after a compaction was answered and logged but before the next
    request was: the restored context (its last request the compaction) takes the logged
    summary and sends what the uninterrupted one sends."""
    async def go() -> None:
        ctx = await RollingContext.create("sys", 1_000, _count, strategy="compact")
        for i in range(30):
            await ctx.add_user(f"report {i} " + "r" * 300)
            limit = 1_000.0
            while (cut := ctx.compaction(limit)) is not None:
                window = await ctx.compaction_window(cut)
                stored = [(m.id, json.dumps(m.body), m.tokens, m.carried)
                          for m in [*ctx.take_new()]]
                copy = await RollingContext.create("sys", 1_000, _count, strategy="compact")
                copy.take_new()
                await ctx.compacted(cut, f"summary {i}")
                original = ctx.window(limit)
                assert original.messages[1].body["content"] == SUMMARY_HEAD + f"summary {i}"
                messages = _stored(ctx, stored)
                copy.restore(messages, [m.id for m in window.messages])
                await copy.compacted_before(f"summary {i}")
                assert [m.body for m in copy.window(limit).messages] == \
                    [m.body for m in original.messages]
            ctx.window(limit)

    asyncio.run(go())


def _stored(ctx: RollingContext, new: list[tuple]) -> list:
    """Every message the results file would hold of ``ctx`` up to its compaction."""
    from vendbench.orchestrator._context import Message

    seen = {m.id: m for unit in ctx.units for m in unit}
    seen |= {ctx.system.id: ctx.system, ctx.omitted.id: ctx.omitted}
    if ctx.summary is not None:
        seen[ctx.summary.id] = ctx.summary
    ours = {i: Message(i, json.loads(body), tokens, carried) for i, body, tokens, carried in new}
    return sorted({**seen, **ours}.values(), key=lambda m: m.id)


def test_the_strategy_is_part_of_the_models_identity(tmp_path, capsys):
    """One model with block and with compact: two models on the leaderboard, in trend and
    in compare; a label names the strategy and reads back into it."""
    db, compared = str(tmp_path / "r.duckdb"), str(tmp_path / "c.duckdb")
    plain, compacting = "openai/fake-model", "openai/fake-model [context=compact]"
    with FakeLLM() as llm:
        result = run(db, days=2, seeds=[1, 2], models=[model(llm), compact(llm)])
        assert {t["model"] for t in result.as_json()["trials"]} == {plain, compacting}
        assert main(["compare", plain, compacting, "--days", "6", "--max-pairs", "2",
                     "--batch", "2", "--api-base", llm.url, "--price",
                     "openai/fake-model=0.4,1.6", "--db", compared, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["models"] == [plain, compacting]
    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0
    assert sorted(r["model"] for r in json.loads(capsys.readouterr().out)["rows"]) == \
        [plain, compacting]
    assert main(["trend", "--db", db, "--format", "json"]) == 0
    assert {n["model"] for n in json.loads(capsys.readouterr().out)["nights"]} == \
        {plain, compacting}
    (config,), = query(compared, "SELECT config_json FROM runs LIMIT 1")
    assert [m["context_strategy"] for m in json.loads(config)["models"]] == \
        ["block", "compact"]


def test_a_results_file_of_schema_11_gets_purposes(tmp_path):
    from vendbench.results import Store
    from vendbench.results._schema import SCHEMA_VERSION

    db = str(tmp_path / "old.duckdb")
    with FakeLLM() as llm:
        run(db, days=2, models=[model(llm)])
    with Store(db) as store:                      # as schema 11 wrote it
        store.con.execute("ALTER TABLE exchanges DROP COLUMN purpose")
        store.con.execute("UPDATE meta SET value = '11' WHERE key = 'schema_version'")
    assert query(db, "SELECT DISTINCT purpose FROM exchanges") == [("act",)]
    assert query(db, "SELECT value FROM meta WHERE key = 'schema_version'") == \
        [(str(SCHEMA_VERSION),)]


def test_the_viewer_marks_a_compaction_and_shows_its_summary(tmp_path):
    from vendbench.view import Pages

    db = str(tmp_path / "r.duckdb")
    with counting_server() as llm:
        result = run(db, days=12, models=[compact(llm)])
    (trial,) = result.as_json()["trials"]
    (seq, day, text), *_ = query(db, "SELECT seq, day, json_extract_string(reply_json, "
                                     "'$.text') FROM exchanges WHERE purpose = 'compaction' "
                                     "ORDER BY seq")
    page = Pages(db).get(f"trial/{trial['trial_id']}/day-{day}.html").body
    import html

    shown = page.split(f'id="exchange-{seq}-1"')[1].split('class="exchange"')[0]
    assert "<b>compaction</b>" in shown and text.splitlines()[0] in html.unescape(shown)
    assert page.count("<b>compaction</b>") == query(
        db, "SELECT count(*) FROM exchanges WHERE purpose = 'compaction' AND day = ?",
        [day])[0][0]


def test_a_compactions_cost_is_the_trials_and_its_budgets(tmp_path):
    """design §35.8: no test failed when a compaction's cost was left out of its trial's
    (the pool still reserved it, so the trial's own budget was judged on less than it
    spent). A trial's cost is every exchange's, compactions' too; and a budget that the
    acts alone fit but not the compactions ends the trial before it is overspent."""
    db = str(tmp_path / "free.duckdb")
    with counting_server() as llm:
        run(db, days=20, models=[compact(llm)])
    (cost, status), = query(db, "SELECT cost_usd, status FROM trials")
    by_purpose = dict(query(db, "SELECT purpose, sum(cost_usd) FROM exchanges GROUP BY 1"))
    assert status == "completed" and by_purpose["compaction"] > 0
    assert cost == by_purpose["act"] + by_purpose["compaction"]
    # a budget between what the acts cost and what all cost
    budget = by_purpose["act"] + by_purpose["compaction"] / 2
    db = str(tmp_path / "capped.duckdb")
    with counting_server() as llm:
        run(db, days=20, models=[compact(llm, budget_usd=str(budget))])
    (cost, status), = query(db, "SELECT cost_usd, status FROM trials")
    (spent,), = query(db, "SELECT sum(cost_usd) FROM exchanges")
    assert status == "budget_exhausted" and cost == spent <= budget
    assert query(db, "SELECT count(*) FROM exchanges WHERE purpose = 'compaction'")[0][0] > 0
