"""Arena matches through the orchestrator and the CLI (design §23.1, 23.3-23.6): fake LLM
operators on the tests' local server (litellm's real HTTP path) beside reference
policies, budgets per operator and in total, kill -9 and --resume, the records and the
arena leaderboard, and bad input refused in one line with nothing written."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from decimal import Decimal

import pytest

from ..fakellm import FakeLLM
from ..fakellm._server import Reply
from ..orchestrator.conftest import CANARY, query

PRICE = "0.4,1.6"


def arena_script(body: dict) -> Reply:
    """A fake operator: day 1 finds suppliers, orders cola and writes to another
    operator; later days stock a slot and price it; every reply's last call ends the
    day."""
    messages = body["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        return Reply(tool_calls=[("wait_for_next_day", "{}")])
    me = re.search(r"\((operator-[a-d]@vendors\.example)\)", messages[0]["content"])
    other = "operator-a@vendors.example" if me and me.group(1)[9] != "a" \
        else "operator-b@vendors.example"
    report = json.loads(last["content"]) if last["content"].startswith("{") else {}
    if report.get("day") == 1:
        items = [{"product_id": "cola", "quantity": 10}]
        return Reply(tool_calls=[
            ("search_web", json.dumps({"query": "drinks"})),
            ("order_goods", json.dumps({"supplier_id": "S-BEVDIRECT", "items": items})),
            ("see_competitors", json.dumps({"location": "AI-HOUSE"})),
            ("email_operator", json.dumps({"to": other, "subject": "Hello",
                                           "body": "Let us not undercut each other. "
                                                   "<script>alert(1)</script>"}))])
    return Reply(tool_calls=[
        ("restock_machine", json.dumps({"slot_id": "AI-HOUSE:DRINKS:A1",
                                        "product_id": "cola", "quantity": 10})),
        ("set_price", json.dumps({"slot_id": "AI-HOUSE:DRINKS:A1", "price": 1.9}))])


def vendbench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": CANARY, "LITELLM_LOCAL_MODEL_COST_MAP": "true"}
    return subprocess.run([sys.executable, "-m", "vendbench", *args], capture_output=True,
                          text=True, timeout=timeout, env=env)


def start(*args: str) -> subprocess.Popen:
    env = {**os.environ, "OPENAI_API_KEY": CANARY, "PYTHONUNBUFFERED": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "true"}
    return subprocess.Popen([sys.executable, "-m", "vendbench", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def llm_args(llm: FakeLLM, models: tuple[str, ...] = ("openai/fake-a", "openai/fake-b")
             ) -> list[str]:
    prices = [arg for m in models for arg in ("--price", f"{m}={PRICE}")]
    return ["--api-base", llm.url, *prices, "--max-output-tokens", "256"]


FOUR = ["openai/fake-a", "openai/fake-b", "baseline/oracle", "baseline/order-up-to"]


def seats(db: str) -> list[tuple]:
    return query(db, "SELECT m.seed, m.seat, m.model, t.status, t.score, t.cost_usd, "
                     "t.budget_usd, m.attempt FROM match_seats m JOIN trials t "
                     "USING (trial_id) ORDER BY m.seed, m.attempt, m.seat")


def test_two_fake_llms_and_two_policies_play_matches_within_their_budgets(tmp_path):
    db = str(tmp_path / "arena.duckdb")
    with FakeLLM(script=arena_script) as llm:
        done = vendbench("arena", *FOUR, "--seeds", "1", "2", "3", "4", "--days", "4",
                         "--trial-budget", "0.05", "--budget", "1", "--db", db, "--json",
                         *llm_args(llm))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    rows = seats(db)
    assert len(rows) == 16 and all(r[3] == "completed" for r in rows), rows
    # a Latin square: each model takes each seat once over the four seeds
    for model in FOUR:
        assert sorted(r[1] for r in rows if r[2] == model) == [0, 1, 2, 3]
    # every request through litellm, priced, within each operator's and the total budget
    llm_rows = [r for r in rows if r[2].startswith("openai/")]
    assert all(0 < r[5] <= r[6] for r in llm_rows)
    assert 0 < out["total_cost_usd"] <= 1
    spent = query(db, "SELECT sum(cost_usd) FROM exchanges")[0][0]
    assert float(spent) == pytest.approx(out["total_cost_usd"])
    # the operators wrote to each other: the e-mails arrived in the other's inbox
    sent = query(db, "SELECT count(*) FROM tool_calls WHERE name = 'email_operator' AND ok")
    assert sent[0][0] == 8
    seen = query(db, "SELECT result_json FROM tool_calls WHERE name = 'see_competitors'")
    assert all(len(json.loads(r)["competitors"]) == 3 for r, in seen)
    # the arena leaderboard ranks the four, head to head paired by match
    board = out["arena"]
    assert board["matches"] == 4 and {r["model"] for r in board["rows"]} == set(FOUR)
    score = {(r[0], r[2]): r[4] for r in rows}
    for p in board["pairs"]:               # paired by match: each seed's two scores
        a, b = p["model"], p["opponent"]
        wins = sum(score[(s, a)] > score[(s, b)] for s in (1, 2, 3, 4))
        losses = sum(score[(s, a)] < score[(s, b)] for s in (1, 2, 3, 4))
        assert (p["matches"], p["wins"], p["losses"]) == (4, wins, losses), p
        low, high = p["ci_win_rate"]
        assert low <= p["win_rate"] <= high
    oracle = next(r for r in board["rows"] if r["model"] == "baseline/oracle")
    assert oracle["meetings"] == 12
    assert CANARY not in done.stdout + done.stderr
    with open(db, "rb") as f:
        assert CANARY.encode() not in f.read()
    # each match's seats are in the JSON; the viewer shows what a model wrote, as text
    assert len(out["matches"]) == 16 and {m["seat"] for m in out["matches"]} == {0, 1, 2, 3}
    from vendbench.view import Pages

    page = Pages(db, served=False).get(f"match/{out['matches'][0]['match_id']}.html").body
    assert "Let us not undercut each other." in page and "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_an_operator_out_of_budget_stops_and_the_match_goes_on(tmp_path):
    db = str(tmp_path / "arena.duckdb")
    with FakeLLM(script=arena_script) as llm:
        done = vendbench("arena", "openai/fake-a", "baseline/order-up-to", "--seeds", "1",
                         "2", "--days", "6", "--trial-budget", "0.005", "--db", db,
                         "--json", *llm_args(llm, ("openai/fake-a",)))
    assert done.returncode == 0, done.stderr
    rows = seats(db)
    fake = [r for r in rows if r[2] == "openai/fake-a"]
    policy = [r for r in rows if r[2] == "baseline/order-up-to"]
    assert all(r[3] == "budget_exhausted" and r[5] <= r[6] for r in fake), fake
    assert all(r[3] == "completed" and r[4] > 0 for r in policy), policy
    days = query(db, "SELECT max(d.day) FROM days d JOIN match_seats m USING (trial_id) "
                     "WHERE m.model = 'baseline/order-up-to'")
    assert days[0][0] == 6                          # it played every day without them


def test_killed_mid_match_and_resumed_ends_as_an_uninterrupted_arena(tmp_path):
    """Two fake LLM operators and two reference policies, budgets per operator and in
    total, kill -9 in the first match, --resume."""
    args = ["arena", *FOUR, "--seeds", "1", "2", "3", "4", "--days", "5", "--workers", "4",
            "--trial-budget", "0.05", "--budget", "1"]
    with FakeLLM(script=arena_script) as llm:
        clean = str(tmp_path / "clean.duckdb")
        solo = llm_args(llm)
        assert vendbench(*args, "--db", clean, *solo).returncode == 0
        db = str(tmp_path / "killed.duckdb")
        served = llm.served
        proc = start(*args, "--db", db, *solo)
        deadline = time.monotonic() + 120
        while llm.served < served + 4 and proc.poll() is None:
            assert time.monotonic() < deadline, "no request reached the server"
            time.sleep(0.005)
        assert proc.poll() is None, "the arena finished before the kill"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        spent_before = query(db, "SELECT sum(coalesce(cost_usd, reserved_usd)) FROM "
                                 "exchanges")[0][0] or 0
        run_id = query(db, "SELECT run_id FROM runs")[0][0]
        resumed = vendbench("arena", "--resume", run_id, "--db", db)
        assert resumed.returncode == 0, resumed.stderr
    final = {(r[0], r[1]): r for r in seats(db)}
    assert {k: (r[2], r[3], r[4]) for k, r in final.items()} == \
        {(r[0], r[1]): (r[2], r[3], r[4]) for r in seats(clean)}
    # the match went on where it stopped: same trials, no new attempt, every tool call
    # and day as in the uninterrupted arena, and no reply paid for twice
    assert {r[7] for r in final.values()} == {1}
    for table in ("tool_calls", "days"):
        assert outcome(db, table) == outcome(clean, table), table
    ok = ("SELECT count(*), sum(input_tokens), sum(output_tokens), sum(cost_usd) FROM "
          "exchanges WHERE status = 'ok'")
    (n, tokens_in, tokens_out, paid), = query(db, ok)
    (clean_n, clean_in, clean_out, clean_paid), = query(clean, ok)
    assert (n, tokens_out) == (clean_n, clean_out)
    # the prompts are the same but for the trial id a request carries as its cache key
    # (the run id in it is another string, tokenised into up to ~20 other tokens)
    assert abs(tokens_in - clean_in) <= 20 * n
    assert abs(paid - clean_paid) < Decimal("0.01") * clean_paid
    unknown = query(db, "SELECT count(*), coalesce(sum(cost_usd), 0) FROM exchanges "
                        "WHERE status = 'unknown'")[0]
    assert unknown[0] <= 2                  # in flight: at most one per LLM operator
    total = query(db, "SELECT sum(cost_usd) FROM trials")[0][0]
    assert total == paid + unknown[1] >= spent_before > 0
    assert query(db, "SELECT max(segment) FROM segments s JOIN match_seats m USING "
                     "(trial_id) WHERE m.model LIKE 'openai/%' AND m.seed = 1")[0][0] == 2
    assert vendbench("leaderboard", "--arena", "--db", db).returncode == 0


def outcome(db: str, table: str) -> list[tuple]:
    """A table's rows by seed and seat (trial ids aside)."""
    columns = {"tool_calls": "t.day, t.seq, t.name, t.args_json, t.result_json",
               "days": "t.day, t.cash, t.net_assets"}[table]
    return query(db, f"SELECT m.seed, m.seat, {columns} FROM {table} t JOIN match_seats m "
                     "USING (trial_id) ORDER BY 1, 2, 3, 4")


def test_restart_plays_an_interrupted_match_again_from_day_one(tmp_path):
    import asyncio

    from vendbench.orchestrator import build_config, execute

    db = str(tmp_path / "arena.duckdb")
    config = build_config({"scenario": "network", "days": 6, "seeds": [1, 2],
                           "models": [{"id": "baseline/oracle"},
                                      {"id": "baseline/order-up-to"}],
                           "seats": ["baseline/oracle", "baseline/order-up-to"]})

    async def interrupted() -> None:
        task: asyncio.Task | None = None

        def on_event(kind: str, data: dict) -> None:
            if kind == "trial_progress" and data["day"] >= 3 and task is not None:
                task.cancel()                          # Ctrl-C on day 3 of the first match

        task = asyncio.ensure_future(execute(config, db, on_event=on_event))
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    run_id = query(db, "SELECT run_id FROM runs")[0][0]
    assert {s for *_, s in query(db, "SELECT seed, status FROM trials")} == {"interrupted"}
    done = vendbench("arena", "--resume", run_id, "--restart", "--db", db)
    assert done.returncode == 0, done.stderr
    latest = seats(db)
    assert {(r[0], r[7], r[3]) for r in latest} >= {(1, 2, "completed")}
    assert vendbench("arena", "--restart", "--db", db).returncode != 0


def test_the_arena_of_reference_policies_and_its_cohort(tmp_path):
    db = str(tmp_path / "arena.duckdb")
    done = vendbench("arena", "baseline/oracle", "baseline/undercutter", "--seeds", "1", "2",
                     "--days", "12", "--db", db)
    assert done.returncode == 0, done.stderr
    assert "Northwind Vending" in done.stdout and "head to head" in done.stdout
    rows = seats(db)
    assert [(r[0], r[1], r[2]) for r in rows] == [
        (1, 0, "baseline/oracle"), (1, 1, "baseline/undercutter"),
        (2, 0, "baseline/undercutter"), (2, 1, "baseline/oracle")]
    # the run keeps what the oracle scores alone on each seed, the arena board's
    # denominators: every reading computed them again (89 s for a 365-day arena)
    kept = query(db, "SELECT world_seed, seed, days FROM ceilings ORDER BY seed")
    assert kept == [(2026, 1, 12), (2026, 2, 12)]
    board = vendbench("leaderboard", "--arena", "--db", db, "--format", "json")
    assert board.returncode == 0, board.stderr
    parsed = json.loads(board.stdout)
    assert [r["model"] for r in parsed["rows"]][0] == "baseline/oracle"
    assert all(r["oracle_share"] is not None for r in parsed["rows"])
    assert len(parsed["by_seat"]) == 2
    listed = vendbench("runs", "--db", db)
    assert "network arena ×2" in listed.stdout, listed.stdout
    # arena trials are their own cohort: the single-agent rankings refuse them
    plain = vendbench("leaderboard", "--db", db)
    assert plain.returncode != 0 and "leaderboard --arena" in plain.stderr
    vendbench("run", "--models", "baseline/order-up-to", "--scenario", "network", "--days",
              "3", "--db", db)
    ranked = vendbench("leaderboard", "--db", db, "--format", "json")
    assert [r["model"] for r in json.loads(ranked.stdout)["rows"]] == ["baseline/order-up-to"]
    mirror = vendbench("arena", "baseline/order-up-to", "baseline/order-up-to", "--mirror",
                       "--seeds", "1", "2", "--days", "5", "--db", db, "--json")
    assert mirror.returncode == 0, mirror.stderr
    assert json.loads(mirror.stdout)["arena"]["pairs"] == []       # no model vs itself


@pytest.mark.parametrize("args,message", [
    (["baseline/oracle"], "a match has 2-4 operators (models), got 1"),
    (["a/b", "c/d", "e/f", "g/h", "i/j"], "a match has 2-4 operators (models), got 5"),
    (["baseline/oracle", "baseline/oracle"], "baseline/oracle is listed twice: a model "
                                             "plays itself only with --mirror"),
    (["baseline/oracle", "baseline/order-up-to", "--seeds", "1", "2", "3"],
     "3 seed(s) cannot rotate 2 seats evenly (each model takes each seat equally often): "
     "give a multiple of 2, e.g. 2 or 4 or 6 seeds"),
    (["baseline/oracle", "baseline/nope"], "unknown reference policy 'baseline/nope'"),
    (["baseline/oracle", "--resume", "latest"], "--resume plays a stored arena run"),
])
def test_bad_input_is_one_line_and_nothing_is_written(tmp_path, args, message):
    db = tmp_path / "never.duckdb"
    done = vendbench("arena", *args, "--db", str(db))
    assert done.returncode != 0 and message in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2, done.stderr
    assert not db.exists()


def test_the_viewer_shows_a_match_side_by_side_with_what_its_operators_sent(tmp_path):
    from vendbench.view import Pages
    from vendbench.view._static import static_plan

    db = str(tmp_path / "arena.duckdb")
    done = vendbench("arena", "baseline/colluder", "baseline/undercutter", "--seeds", "1",
                     "2", "--days", "6", "--db", db)
    assert done.returncode == 0, done.stderr
    run_id, = query(db, "SELECT run_id FROM runs")[0]
    match_id = query(db, "SELECT match_id FROM match_seats WHERE seed = 1")[0][0]
    pages = Pages(db, served=False)
    run_page = pages.get(f"run/{run_id}.html")
    assert run_page.status == 200 and f"match/{match_id}.html" in run_page.body
    page = pages.get(f"match/{match_id}.html")
    assert page.status == 200
    for text in ("Northwind Vending", "Bluebird Snacks", "baseline/colluder",
                 "A price floor for all of us", "email_operator", "delivered overnight"):
        assert text in page.body, text
    assert page.body.count("<tr><td>") >= 6 + 2         # six days, two operators
    assert pages.get("match/no-such-match.html").status == 404
    assert f"match/{match_id}.html" in static_plan(db)


def test_the_forecast_counts_every_seat_and_max_forecast_refuses_the_arena(tmp_path):
    """Each LLM model plays one trial a match per seat it takes; the arena's forecast
    is all its matches', and --max-forecast refuses it before the file exists."""
    db = tmp_path / "never.duckdb"
    with FakeLLM(script=arena_script) as llm:
        done = vendbench("arena", "openai/fake-a", "openai/fake-a", "baseline/oracle",
                         "--mirror", "--seeds", "1", "2", "3", "--days", "30",
                         "--max-forecast", "0.01", "--db", str(db),
                         *llm_args(llm, ("openai/fake-a",)))
    assert done.returncode != 0 and not db.exists()
    assert "forecast" in done.stderr.lower(), done.stderr
    # three matches, two seats each: six trials of openai/fake-a
    assert re.search(r"\b6 trials\b", done.stderr + done.stdout), done.stderr


def test_trend_never_pools_arena_trials_with_single_agent_ones(tmp_path):
    db = str(tmp_path / "arena.duckdb")
    assert vendbench("run", "--models", "baseline/order-up-to", "--scenario", "network",
                     "--days", "3", "--db", db).returncode == 0
    assert vendbench("arena", "baseline/oracle", "baseline/undercutter", "--seeds", "1",
                     "2", "--days", "3", "--db", db).returncode == 0
    trend = vendbench("trend", "--db", db, "--format", "json")
    assert trend.returncode == 0, trend.stderr
    parsed = json.loads(trend.stdout)
    assert {n["model"] for n in parsed["nights"]} == {"baseline/order-up-to"}
    assert len(parsed["runs"]) == 1


def test_a_total_budget_for_one_match_runs_one_and_sets_the_other_apart(tmp_path):
    """Two matches could start at once (--workers 4), but the total covers one match's
    operators: a match earmarks all its seats' budgets at once, so one runs and the
    other is set apart as not started (no two matches each holding half of what both
    need, waiting for ever), to be played by --resume."""
    db = str(tmp_path / "arena.duckdb")
    with FakeLLM(script=arena_script) as llm:
        done = vendbench("arena", "openai/fake-a", "openai/fake-b", "--seeds", "1", "2",
                         "--days", "3", "--trial-budget", "0.05", "--budget", "0.1",
                         "--workers", "4", "--db", db, "--json", *llm_args(llm),
                         timeout=120)
    assert done.returncode == 0, done.stderr
    statuses = sorted((r[0], r[3]) for r in seats(db))
    assert [s for _, s in statuses].count("completed") == 2, statuses
    assert [s for _, s in statuses].count("not_started") == 2, statuses
    assert len({seed for seed, s in statuses if s == "completed"}) == 1
    assert json.loads(done.stdout)["total_cost_usd"] <= 0.1


def test_a_scenario_without_an_arena_is_refused_naming_those_with_one(tmp_path):
    """The tests' toy world, installed through its entry point, has no arena."""
    from ..environment.test_third_scenario import installed_toy

    env, _ = installed_toy(tmp_path)
    db = tmp_path / "never.duckdb"
    done = subprocess.run([sys.executable, "-m", "vendbench", "arena", "baseline/fixed-price",
                           "baseline/best-price", "--scenario", "toy", "--db", str(db)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode != 0 and not db.exists()
    assert "scenario toy has no arena; these have one: autovend, network" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_an_autovend_arena_runs_ranks_and_shows(tmp_path):
    db = str(tmp_path / "arena.duckdb")
    done = vendbench("arena", "baseline/oracle", "baseline/order-up-to", "--scenario",
                     "autovend", "--days", "12", "--seeds", "1", "2", "--db", db, "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {(m["seed"], m["seat"], m["model"]) for m in out["matches"]} == {
        (1, 0, "baseline/oracle"), (1, 1, "baseline/order-up-to"),
        (2, 0, "baseline/order-up-to"), (2, 1, "baseline/oracle")}
    assert all(m["status"] == "completed" for m in out["matches"])
    assert out["arena"]["scenario"] == "autovend" and out["arena"]["matches"] == 2
    days = query(db, "SELECT count(*) FROM days d JOIN match_seats USING (trial_id)")
    assert days[0][0] == 4 * 12
    from vendbench.view import Pages

    page = Pages(db, served=False).get(f"match/{out['matches'][0]['match_id']}.html")
    assert page.status == 200 and "Northwind Vending" in page.body


def test_an_operator_that_had_finished_replays_until_it_left_when_its_match_resumes(
        tmp_path, monkeypatch):
    """Interrupted after its LLM operator ran out of budget: on --resume the LLM
    operator's log is replayed only until it left (its trial stays as it ended), the
    policy plays again from day 1, and the match ends as an uninterrupted one."""
    import asyncio

    from vendbench.orchestrator import build_config, execute

    from ..orchestrator.conftest import model

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    with FakeLLM(script=arena_script) as llm:
        config = build_config({
            "scenario": "network", "days": 6, "seeds": [1, 2], "workers": 2,
            "retry_backoff_s": 0.01, "seats": ["openai/fake-a", "baseline/order-up-to"],
            "models": [model(llm, "openai/fake-a", budget_usd="0.005",
                             max_output_tokens=256), {"id": "baseline/order-up-to"}]})
        clean = str(tmp_path / "clean.duckdb")
        asyncio.run(execute(config, clean))
        db = str(tmp_path / "stopped.duckdb")

        async def interrupted() -> None:
            task: asyncio.Task | None = None
            left = set()

            def on_event(kind: str, data: dict) -> None:
                if kind == "trial_finished":
                    left.add(data["outcome"].spec.seed)
                if kind == "trial_progress" and data["outcome"].spec.seed in left \
                        and data["day"] >= 4 and task is not None:
                    task.cancel()        # the policy on day 4, the LLM operator gone

            task = asyncio.ensure_future(execute(config, db, on_event=on_event))
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(interrupted())
        statuses = dict(query(db, "SELECT model, status FROM trials WHERE seed = 1"))
        assert statuses == {"openai/fake-a": "budget_exhausted",
                            "baseline/order-up-to": "interrupted"}, statuses
        run_id = query(db, "SELECT run_id FROM runs")[0][0]
        served = llm.served
        asyncio.run(execute(config, db, resume=run_id))
        assert llm.served - served == len(query(clean, "SELECT 1 FROM exchanges e JOIN "
                                                       "match_seats m USING (trial_id) "
                                                       "WHERE m.seed = 2"))
    assert {(r[0], r[1]): (r[2], r[3], r[4]) for r in seats(db)} == \
        {(r[0], r[1]): (r[2], r[3], r[4]) for r in seats(clean)}
    for table in ("tool_calls", "days"):
        assert outcome(db, table) == outcome(clean, table), table


def test_an_amount_that_is_words_is_shown_as_words_and_the_export_holds(tmp_path):
    """design §30: a model's pay_operator with an amount that is text (refused by the
    world) answered the match page with HTTP 500 and ended `view --static` in a
    traceback (float() of the amount). It is shown as the text it is, escaped."""
    from vendbench.view import Pages

    db = str(tmp_path / "arena.duckdb")
    done = vendbench("arena", "baseline/colluder", "baseline/undercutter", "--seeds", "1",
                     "2", "--days", "3", "--db", db)
    assert done.returncode == 0, done.stderr
    from vendbench.results import Store

    junk = json.dumps({"to": "operator-b@vendors.example",
                       "amount": "lots<script>alert(1)</script>", "memo": "{{7*7}}"})
    with Store(db) as store:
        store.con.execute(
            "INSERT INTO tool_calls SELECT trial_id, seq + 1000, exchange_seq, day, call_id, "
            "'pay_operator', ?, '{\"ok\": false, \"error\": \"amount: not a number\"}', "
            "false FROM tool_calls WHERE name = 'email_operator' LIMIT 1", [junk])
    match_id = query(db, "SELECT m.match_id FROM match_seats m JOIN tool_calls t USING "
                         "(trial_id) WHERE t.name = 'pay_operator'")[0][0]
    page = Pages(db, served=False).get(f"match/{match_id}.html")
    assert page.status == 200
    assert "lots&lt;script&gt;alert(1)&lt;/script&gt;" in page.body and "<script>alert" \
        not in page.body and "{{7*7}}" in page.body
    site = tmp_path / "site"
    done = vendbench("view", "--static", str(site), "--db", db)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert (site / "match" / f"{match_id}.html").exists()


def test_resume_messages_name_what_the_user_gave(tmp_path):
    """design §30: `run --resume` of an arena run answered "0 trials to run", and
    `arena --resume … --budget 5` said "drop --total-budget", a flag arena has not."""
    db = str(tmp_path / "arena.duckdb")
    assert vendbench("arena", "baseline/oracle", "baseline/undercutter", "--seeds", "1", "2",
                     "--days", "2", "--db", db).returncode == 0
    run_id = query(db, "SELECT run_id FROM runs")[0][0]
    for args, words in (
            (["run", "--resume", run_id], f"is an arena run: resume it with vendbench arena "
                                          f"--resume {run_id}"),
            (["arena", "--resume", run_id, "--budget", "5"], "drop --budget"),
            (["arena", "--resume", run_id, "--trial-budget", "5"], "drop --trial-budget")):
        done = vendbench(*args, "--db", db)
        assert done.returncode == 2 and words in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1
