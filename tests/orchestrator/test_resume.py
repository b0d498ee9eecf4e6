"""Resume mid-trial (design §7) and spend that survives a crash: kill -9 at random points,
resume, and compare with an uninterrupted run of the same scripted provider."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from decimal import Decimal

import pytest

from vendbench.budgets import Price

from ..fakellm import FakeLLM
from .conftest import CANARY, model, query, run, until

PRICE = Price(Decimal("0.4"), Decimal("1.6"))
DAYS = 12


def start(llm: FakeLLM, db: str, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "OPENAI_API_KEY": CANARY, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "vendbench", "run", *extra, "--db", db], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def kill_when(proc: subprocess.Popen, llm: FakeLLM, served: int) -> bool:
    """SIGKILL the run and its workers once the server has answered ``served``
    requests; False if the run finished first."""
    deadline = time.monotonic() + 120
    while llm.served < served and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    if proc.poll() is not None:
        return False
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return True


def outcome(db: str) -> dict:
    """What a run produced, trial by trial, independent of how it got there."""
    out = {}
    for trial_id, model_id, seed, status, net, calls in query(
            db, "SELECT trial_id, model, seed, status, final_net_assets, tool_calls FROM "
                "trials ORDER BY trial_id"):
        days = query(db, "SELECT day, cash, net_assets FROM days WHERE trial_id = ? "
                         "ORDER BY day", [trial_id])
        names = [n for n, in query(db, "SELECT name || args_json FROM tool_calls WHERE "
                                       "trial_id = ? ORDER BY seq", [trial_id])]
        out[(model_id, seed)] = (status, net, calls, days, names)
    return out


@pytest.mark.parametrize("processes", ["1", "2"])
def test_killed_at_random_points_and_resumed_equals_an_uninterrupted_run(tmp_path, processes):
    """Two SIGKILLs at random points, each followed by a resume (in one process, and with
    worker processes): every trial completes under its original id, the server got at
    most one extra request per trial per kill (those in flight), and the results equal
    an uninterrupted run's."""
    models = ["--models", "openai/fake", "baseline/order-up-to", "--price",
              "openai/fake=0.4,1.6", "--max-output-tokens", "256", "--seeds", "1", "2",
              "--days", str(DAYS), "--processes", processes]
    with FakeLLM() as llm:              # the same run, uninterrupted (results do not depend
        reference = str(tmp_path / "reference.duckdb")       # on the number of processes)
        run(reference, days=DAYS, seeds=[1, 2], models=[
            model(llm, "openai/fake", max_output_tokens=256), {"id": "baseline/order-up-to"}])
        uninterrupted = len(llm.requests)
    with FakeLLM(latency=0.005) as llm:
        db = str(tmp_path / "r.duckdb")
        rng = random.Random(f"kills-{processes}")
        proc = start(llm, db, *models, "--api-base", llm.url)
        kills, run_id, ids = 0, None, None
        for _ in range(2):
            target = llm.served + rng.randint(3, 12)
            if not kill_when(proc, llm, target):
                break
            kills += 1
            run_id = run_id or query(db, "SELECT run_id FROM runs")[0][0]
            ids = ids or {t for t, in query(db, "SELECT trial_id FROM trials")}
            proc = start(llm, db, "--resume", run_id)
        assert proc.wait(timeout=240) == 0, proc.stderr.read()
        assert kills >= 2
        trials = query(db, "SELECT trial_id, status, attempt FROM trials")
        assert {t for t, _, _ in trials} == ids and all(s == "completed" and a == 1
                                                         for _, s, a in trials)
        assert len(llm.requests) <= uninterrupted + kills * 2          # two LLM trials
        assert outcome(db) == outcome(reference)
        segments = query(db, "SELECT trial_id, max(segment) FROM segments GROUP BY 1")
        assert max(n for _, n in segments) >= 2
        costs = query(db, "SELECT t.cost_usd, (SELECT sum(cost_usd) FROM exchanges e WHERE "
                          "e.trial_id = t.trial_id) FROM trials t WHERE model = 'openai/fake'")
        assert all(a == b for a, b in costs)


def test_a_kill_never_lets_spend_pass_the_total_budget(tmp_path):
    """With a binding --total-budget, kill -9 mid-run and resume: what the server's log
    bills never exceeds the cap, and the database accounts for at least that, at most
    one reservation per trial in flight above it."""
    cap = Decimal("0.06")
    with FakeLLM(latency=0.01) as llm:
        db = str(tmp_path / "r.duckdb")
        args = ["--models", "openai/fake", "--price", "openai/fake=0.4,1.6",
                "--max-output-tokens", "256", "--seeds", "1", "2", "3", "--days", "30",
                "--total-budget", str(cap), "--api-base", llm.url]
        proc = start(llm, db, *args)
        assert kill_when(proc, llm, 15)
        run_id = query(db, "SELECT run_id FROM runs")[0][0]
        proc = start(llm, db, "--resume", run_id)
        assert proc.wait(timeout=240) == 0, proc.stderr.read()
        bill = sum((PRICE.cost(u["prompt_tokens"], u["completion_tokens"])
                    for u in llm.usages), Decimal(0))
        recorded = query(db, "SELECT sum(cost_usd) FROM exchanges")[0][0]
        biggest = query(db, "SELECT max(reserved_usd) FROM exchanges")[0][0]
        statuses = {s for s, in query(db, "SELECT status FROM trials")}
        assert bill <= cap and recorded <= cap
        assert bill <= recorded <= bill + 3 * biggest
        assert statuses == {"budget_exhausted"}                       # the cap was binding
        assert recorded > cap - 3 * biggest                           # and really used


def test_a_log_that_no_longer_replays_is_refused_and_restart_runs_it_again(llm, tmp_path):
    import asyncio

    from vendbench.orchestrator import build_config, execute

    db = str(tmp_path / "r.duckdb")
    llm.latency = 0.01
    config = build_config({"days": 10, "seeds": [1], "retry_backoff_s": 0.01,
                           "models": [model(llm)]})

    async def interrupted() -> str:
        task = asyncio.create_task(execute(config, db))
        await until(lambda: llm.served >= 8, what="8 requests")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return query(db, "SELECT run_id FROM runs")[0][0]

    run_id = asyncio.run(interrupted())
    (trial_id,) = query(db, "SELECT trial_id FROM trials")[0]
    from vendbench.results import Store

    with Store(db) as store:                      # the world's answer changed since
        store.con.execute("UPDATE tool_calls SET result_json = '{\"ok\":true}' "
                          "WHERE trial_id = ? AND seq = 2", [trial_id])
    result = asyncio.run(execute(config, db, resume=run_id))
    trial = result.as_json()["trials"][0]
    assert trial["status"] == "error" and "--restart" in trial["reason"]
    assert "tool call 2" in trial["reason"]
    result = asyncio.run(execute(config, db, resume=run_id, restart=True))
    trial = result.as_json()["trials"][0]
    assert trial["status"] == "completed" and trial["trial_id"] == f"{trial_id}-a2"


def test_resume_sends_the_request_that_was_cut_off_again_byte_for_byte(llm, tmp_path):
    """A request in flight at the interruption stays charged its reservation and is sent
    again as it was (same messages, same window: a cached prefix still holds)."""
    import asyncio

    from vendbench.orchestrator import build_config, execute

    db = str(tmp_path / "r.duckdb")
    config = build_config({"days": 3, "seeds": [1], "models": [model(llm)]})

    async def cut_off_at(exchange: int) -> str:
        task = asyncio.create_task(execute(config, db))
        await until(lambda: llm.served >= exchange - 1 and llm.in_flight > 0,
                    what=f"request {exchange} in flight")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return query(db, "SELECT run_id FROM runs")[0][0]

    llm.latency = 0.3                              # every request stays in flight a while
    run_id = asyncio.run(cut_off_at(4))
    cut = len(llm.raw) - 1
    (status, cost, reserved), = query(db, "SELECT status, cost_usd, reserved_usd FROM "
                                          "exchanges WHERE seq = 4")
    assert status == "unknown" and cost == reserved > 0
    llm.latency = 0.0
    asyncio.run(execute(config, db, resume=run_id))
    assert llm.raw[cut + 1] == llm.raw[cut]
    assert query(db, "SELECT attempt, status FROM exchanges WHERE seq = 4 ORDER BY attempt"
                 ) == [(1, "unknown"), (2, "ok")]


def test_a_provider_outage_ends_the_trial_error_and_resume_continues_it(llm, tmp_path):
    """An outage that outlasts the retries ends the trial `error` (the provider's
    failure, not the model's); --resume continues it from the request that failed."""
    import asyncio

    from vendbench.orchestrator import build_config, execute

    from ..fakellm import vending_script

    config = build_config({"days": 6, "seeds": [1], "retry_backoff_s": 0.01,
                           "max_attempts": 3, "models": [model(llm)]})
    reference = str(tmp_path / "reference.duckdb")
    asyncio.run(execute(config, reference))
    served = {"n": 0}

    def outage_after_five(body):
        served["n"] += 1
        if served["n"] == 5:
            llm.inject("500", times=3)           # every attempt of the next request fails
        return vending_script(body)

    llm.script = outage_after_five
    db = str(tmp_path / "r.duckdb")
    first = asyncio.run(execute(config, db)).as_json()
    (trial,) = first["trials"]
    assert trial["status"] == "error" and "500" in trial["reason"]
    assert query(db, "SELECT count(*) FROM exchanges WHERE status = 'transient'") == [(3,)]
    second = asyncio.run(execute(config, db, resume=first["run_id"])).as_json()
    (again,) = second["trials"]
    assert again["status"] == "completed" and again["trial_id"] == trial["trial_id"]
    assert query(db, "SELECT segment, status, from_seq FROM segments ORDER BY segment") == \
        [(1, "error", None), (2, "completed", 6)]
    assert query(db, "SELECT attempt FROM exchanges WHERE seq = 6 ORDER BY attempt") == \
        [(1,), (2,), (3,), (4,)]                  # the failed request, sent once more
    assert outcome(db) == outcome(reference)


@pytest.mark.parametrize("column", ["cash", "net_assets"])
def test_a_replayed_day_must_match_the_log_in_cash_and_in_net_assets(llm, tmp_path, column):
    """Resume checks each replayed day to the cent in both figures: a logged day whose
    cash differs while its net assets agree (and the mirror case) ends the trial
    ``error`` naming the day and suggesting --restart, and nothing more is sent."""
    import asyncio

    from vendbench.orchestrator import build_config, execute
    from vendbench.results import Store

    db = str(tmp_path / "r.duckdb")
    llm.latency = 0.01
    config = build_config({"days": 10, "seeds": [1], "retry_backoff_s": 0.01,
                           "models": [model(llm)]})

    async def interrupted() -> str:
        task = asyncio.create_task(execute(config, db))
        await until(lambda: llm.served >= 8, what="8 requests")
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return query(db, "SELECT run_id FROM runs")[0][0]

    run_id = asyncio.run(interrupted())
    with Store(db) as store:                      # one cent off on day 2, the other agrees
        store.con.execute(f"UPDATE days SET {column} = {column} + 0.01 WHERE day = 2")
    served = llm.served
    trial = asyncio.run(execute(config, db, resume=run_id)).as_json()["trials"][0]
    assert trial["status"] == "error" and "day 2 ends with cash" in trial["reason"]
    assert "--restart" in trial["reason"]
    assert llm.served == served                   # nothing more sent to the provider


def test_a_kill_while_the_server_holds_a_request_charges_its_reservation(tmp_path):
    """SIGKILL at a moment the test chooses (not a random one): the server holds the
    request unanswered; the attempt stays charged its reservation, and the run's spend
    includes it, before and after the resume."""
    from vendbench.results import Store

    with FakeLLM() as llm:
        db = str(tmp_path / "r.duckdb")
        llm.gate.clear()                          # requests wait at the server
        proc = start(llm, db, "--models", "openai/fake", "--price", "openai/fake=0.4,1.6",
                     "--max-output-tokens", "256", "--days", "3", "--api-base", llm.url)
        deadline = time.monotonic() + 120
        while llm.in_flight == 0 and proc.poll() is None:
            assert time.monotonic() < deadline, "no request reached the server"
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGKILL)          # the request is at the server
        proc.wait()
        run_id = query(db, "SELECT run_id FROM runs")[0][0]
        (reserved,) = query(db, "SELECT reserved_usd FROM reservations")[0]
        assert query(db, "SELECT count(*) FROM exchanges")[0][0] == 0   # no reply came
        with Store(db, read_only=True) as store:
            assert store.run_spend(run_id) == reserved > 0
        llm.gate.set()
        proc = start(llm, db, "--resume", run_id)
        assert proc.wait(timeout=240) == 0, proc.stderr.read()
    first = query(db, "SELECT status, cost_usd, reserved_usd FROM exchanges WHERE seq = 1 "
                      "AND attempt = 1")
    assert first == [("unknown", reserved, reserved)]
    total = query(db, "SELECT sum(cost_usd) FROM exchanges")[0][0]
    assert query(db, "SELECT cost_usd FROM trials")[0][0] == total >= reserved
    with Store(db, read_only=True) as store:
        assert store.run_spend(run_id) == total
