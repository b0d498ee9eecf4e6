"""LLM trials in worker processes (``--processes``): same results, exact budgets, the
parent's one writer, interruption, and a worker that dies."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import threading
import time
from decimal import Decimal as D
from pathlib import Path

import pytest

from vendbench.errors import ConfigError
from vendbench.orchestrator import build_config
from vendbench.orchestrator._shards import plan_processes, shard_config

from ..fakellm import Reply
from .conftest import CANARY, model, query, run, until
from .test_cli_run import finish, llm_args, vendbench


# what asyncio and Python print when a process leaves futures, coroutines or tasks behind
COMPLAINTS = ("never retrieved", "never awaited", "Task was destroyed", "Traceback",
              "Exception ignored")


def _workers_of(pid: int) -> list[int]:
    """Worker processes started by ``pid``."""
    out = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmd = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if re.search(rf"^PPid:\s+{pid}$", status, re.M) and b"_shard_main" in cmd:
            out.append(int(entry.name))
    return sorted(out)


def _under_way(llm, db: str, *seeds: str):
    """``vendbench run`` of 30-day trials over two worker processes, in its own process
    group, once 20 requests have been answered."""
    proc = vendbench("run", "--models", "openai/fake", *llm_args(llm), "--seeds", *seeds,
                     "--days", "30", "--processes", "2", "--db", db, start_new_session=True)
    for _ in range(1200):
        if llm.served >= 20 or proc.poll() is not None:
            break
        time.sleep(0.05)
    workers = _workers_of(proc.pid)
    assert len(workers) == 2
    # each in a process group of its own: a terminal's Ctrl-C reaches the scheduler only
    assert [os.getpgid(w) for w in workers] == workers and os.getpgid(proc.pid) == proc.pid
    return proc


def test_worker_processes_give_the_results_of_one_process(llm, tmp_path):
    results = {}
    for processes in (1, 2):
        db = str(tmp_path / f"p{processes}.duckdb")
        result = run(db, days=5, seeds=[1, 2, 3], processes=processes, models=[
            model(llm, "openai/fake-a", max_concurrency=8), model(llm, "openai/fake-b"),
            {"id": "baseline/order-up-to"}])
        trials = result.as_json()["trials"]
        assert {t["status"] for t in trials} == {"completed"}
        results[processes] = {
            (t["model"], t["seed"]): (t["final_net_assets"], t["exchanges"], t["tool_calls"],
                                      pytest.approx(t["cost_usd"], rel=1e-3))
            for t in trials}   # (the fake server's reply ids grow, and with them the prompts)
        tables = {t: query(db, f"SELECT count(*) FROM {t}")[0][0]
                  for t in ("exchanges", "messages", "tool_calls", "days", "sales")}
        results[processes]["rows"] = tables
        starts = sorted(c for c, in query(db, "SELECT concurrency FROM provider_events "
                                              "WHERE event = 'start'"))
        results[processes]["starts"] = starts
        # the trial row's cost is the sum of its logged exchanges, in both modes
        rows = query(db, """SELECT t.cost_usd, sum(e.cost_usd) FROM trials t JOIN exchanges e
                            USING (trial_id) GROUP BY t.trial_id, t.cost_usd""")
        assert len(rows) == 6 and all(a == b for a, b in rows)
    one, two = results[1], results[2]
    assert one.pop("starts") == [8.0]                   # one endpoint, one limit of 8…
    assert two.pop("starts") == [4.0, 4.0]              # …split over the two workers
    assert one == two
    assert one["rows"]["exchanges"] > 0


def test_processes_are_planned_and_limits_split_exactly(monkeypatch):
    def config(**extra):
        base = {"seeds": list(range(1, 41)), "workers": 40,
                "models": [{"id": "openai/x", "max_concurrency": 16, "rpm": 7, "tpm": 1001}]}
        return build_config({**base, **extra})

    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert plan_processes(config()) == 2                 # automatic: 16+ trials per worker…
    assert plan_processes(config(seeds=list(range(1, 201)), workers=200,
                                 models=[{"id": "openai/x", "max_concurrency": 64}])) == 8
    monkeypatch.setattr(os, "cpu_count", lambda: 2)             # …one a core…
    assert plan_processes(config(seeds=list(range(1, 201)), workers=200,
                                 models=[{"id": "openai/x", "max_concurrency": 64}])) == 2
    monkeypatch.setattr(os, "cpu_count", lambda: 1)             # …none on one core
    assert plan_processes(config(seeds=list(range(1, 201)), workers=200,
                                 models=[{"id": "openai/x", "max_concurrency": 64}])) == 0
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert plan_processes(config(workers=31)) == 0       # …else one process
    assert plan_processes(config(seeds=[1], workers=40)) == 0
    assert plan_processes(config(processes=3)) == 3
    assert plan_processes(config(processes=1)) == 0
    assert plan_processes(build_config({"seeds": list(range(1, 60)), "workers": 60, "models": [
        {"id": "baseline/oracle"}]})) == 0                         # no LLM trials
    cfg = config()
    for n in (2, 3, 5):
        parts = [shard_config(cfg, i, n).models[0] for i in range(n)]
        assert sum(p.max_concurrency for p in parts) == 16
        assert sum(p.rpm for p in parts) == 7 and sum(p.tpm for p in parts) == 1001
        assert min(p.rpm for p in parts) >= 1
    with pytest.raises(ConfigError, match="--budget"):
        plan_processes(config(processes=2, total_budget_usd="5"))
    assert plan_processes(config(processes=2, total_budget_usd="5", budget_usd="0.5")) == 2
    with pytest.raises(ConfigError, match="rpm=7 cannot be split over 8"):
        plan_processes(config(processes=8))
    # automatic: a run it cannot split runs in one process, without an error
    assert plan_processes(config(total_budget_usd="5")) == 0


def test_no_overspend_across_worker_processes(llm, tmp_path):
    """20 trials on two workers draw on one pool through earmarked trial budgets, against
    a server reporting large usage: every trial budget and the pool hold, because each
    worker reserves against its trial's budget before every request."""
    llm.script = lambda body: Reply(tool_calls=[("list_machines", "{}")],
                                    completion_tokens=500, delay=0.2)
    llm.gate.clear()            # the first replies wait until five requests are held at once

    def open_at_five() -> None:
        deadline = time.monotonic() + 120            # a safety net: the assert below says
        while llm.in_flight < 5 and time.monotonic() < deadline:
            time.sleep(0.01)
        llm.gate.set()

    threading.Thread(target=open_at_five, daemon=True).start()
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=30, seeds=list(range(1, 21)), workers=20, processes=2,
                 budget_usd="0.01", total_budget_usd="0.05",
                 models=[model(llm, max_output_tokens=600, max_concurrency=32)])
    trials = result.as_json()["trials"]
    assert llm.max_in_flight >= 5                       # 5 × $0.01 fit the pool at once
    spent = query(db, "SELECT sum(cost_usd) FROM exchanges")[0][0]
    assert D("0.04") < spent <= D("0.05")               # drawn on to within one trial budget
    per_trial = query(db, "SELECT trial_id, sum(cost_usd) FROM exchanges GROUP BY 1")
    assert all(cost <= D("0.01") for _, cost in per_trial)
    started = [t for t in trials if t["exchanges"] > 0]
    not_started = [t for t in trials if t["status"] == "not_started"]
    assert len(started) >= 5 and len(not_started) >= 1
    assert len(started) + len(not_started) == 20
    for t in started:        # each stopped because its next reservation did not fit
        needed, left = re.search(r"needs \$([\d.]+) but only \$([\d.]+)", t["reason"]).groups()
        assert t["status"] == "budget_exhausted" and D(left) < D(needed)
    assert sum(t["cost_usd"] for t in trials) == pytest.approx(float(spent))


def test_a_worker_that_dies_fails_only_the_trial_it_was_running(llm, tmp_path):
    """Two trials at a time over two workers, four trials: the worker killed mid-trial
    fails that one trial (what it did is kept); the two still waiting run on the live
    worker."""
    llm.latency = 0.02
    db = str(tmp_path / "r.duckdb")
    me, killed = os.getpid(), []
    finished = threading.Event()

    def both_under_way() -> bool:
        """Both trials in flight have had 3 requests answered, so whichever worker dies,
        its trial has exchanges committed (each before its next request left)."""
        per_trial: dict[str, int] = {}
        for body in list(llm.requests):
            key = body.get("prompt_cache_key")
            per_trial[key] = per_trial.get(key, 0) + 1
        return sum(n >= 3 for n in per_trial.values()) >= 2

    def kill_one_worker() -> None:
        while not finished.is_set():
            workers = _workers_of(me) if both_under_way() else []
            if len(workers) == 2:
                os.kill(workers[0], signal.SIGKILL)
                killed.append(workers[0])
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_one_worker)
    killer.start()
    try:
        result = run(db, days=15, seeds=[1, 2, 3, 4], processes=2, workers=2, budget_usd="1",
                     models=[model(llm)])
    finally:
        finished.set()
        killer.join()
    assert killed
    trials = result.as_json()["trials"]
    statuses = sorted(t["status"] for t in trials)
    assert statuses == ["completed", "completed", "completed", "error"], trials
    (died,) = [t for t in trials if t["status"] == "error"]
    assert "exited unexpectedly" in died["reason"] and died["exchanges"] > 0, died
    assert dict(query(db, "SELECT trial_id, status FROM trials")) == \
        {t["trial_id"]: t["status"] for t in trials}
    logged = query(db, "SELECT count(*) FROM exchanges WHERE trial_id = ?",
                   [died["trial_id"]])[0][0]
    assert logged >= died["exchanges"]          # every exchange it reported was logged


def test_ctrl_c_with_workers_marks_trials_interrupted_and_resume_finishes(llm, tmp_path):
    """Ctrl-C reaches the scheduler's process group (the workers have their own): the
    scheduler has every running trial recorded ``interrupted``."""
    llm.latency = 0.05
    db = str(tmp_path / "r.duckdb")
    proc = _under_way(llm, db, "1", "2", "3")
    os.killpg(proc.pid, signal.SIGINT)
    rc, out, err = finish(proc)
    assert rc == 130 and "--resume" in err, err
    assert not [c for c in COMPLAINTS if c in err], err      # the workers ended quietly
    statuses = [s for s, in query(db, "SELECT status FROM trials")]
    assert statuses == ["interrupted"] * 3
    assert query(db, "SELECT count(*) FROM exchanges")[0][0] >= 20
    # each worker answered: its trials keep their final figures, not the last progress
    rows = query(db, """SELECT t.reason, t.cost_usd, t.exchanges, (SELECT sum(cost_usd)
                        FROM exchanges e WHERE e.trial_id = t.trial_id), (SELECT count(DISTINCT
                        seq) FILTER (WHERE status = 'ok') FROM exchanges e
                        WHERE e.trial_id = t.trial_id) FROM trials t""")
    for reason, cost, exchanges, summed, answered in rows:
        assert "did not answer" not in reason
        assert cost == summed and exchanges == answered
    run_id = err.split("vendbench run --resume ")[1].split()[0]
    rc, out, err = finish(vendbench("run", "--resume", run_id, "--db", db, "--json",
                                    "--processes", "2"))
    assert rc == 0, err
    payload = json.loads(out)
    assert [t["status"] for t in payload["trials"]] == ["completed"] * 3
    assert all(t["attempt"] == 1 for t in payload["trials"])     # continued, same ids
    assert query(db, "SELECT count(*) FROM segments WHERE segment = 2 AND status = "
                     "'completed'")[0][0] == 3
    days = query(db, "SELECT count(*), count(DISTINCT (trial_id, day)) FROM days")[0]
    assert days == (3 * 30, 3 * 30)                    # every day once, none lost


def test_ctrl_c_while_the_workers_start_ends_the_run_quietly(llm, tmp_path):
    """Ctrl-C before the workers have started (each imports litellm first, seconds on a
    loaded machine) ends the run as any Ctrl-C does, at once: no hang waiting for
    workers that never answered, no trial left running, nothing printed by them
    (design §31: under load, a cancelled run's test once hung until pytest's timeout)."""
    db = str(tmp_path / "r.duckdb")
    proc = vendbench("run", "--models", "openai/fake", *llm_args(llm), "--seeds", "1", "2",
                     "--days", "30", "--processes", "2", "--db", db, start_new_session=True)
    seen = []
    for line in proc.stderr:                 # the run is announced before workers start
        seen.append(line)
        if "trials to run" in line:
            break
    os.killpg(proc.pid, signal.SIGINT)
    rc, out, err = finish(proc)
    err = "".join(seen) + err
    assert rc == 130 and "--resume" in err, err
    assert not [c for c in COMPLAINTS if c in err], err
    assert "Traceback" not in err, err
    statuses = [s for s, in query(db, "SELECT status FROM trials")]
    assert "running" not in statuses, statuses


def test_processes_flag_errors_are_plain(llm, tmp_path):
    rc, out, err = finish(vendbench("run", "--models", "openai/fake", *llm_args(llm),
                                    "--processes", "2", "--total-budget", "1",
                                    "--db", str(tmp_path / "r.duckdb")))
    assert rc == 2 and "--processes 2" in err and "--budget" in err
    assert "Traceback" not in err
    assert not (tmp_path / "r.duckdb").exists()          # refused before anything ran
    rc, out, err = finish(vendbench("run", "--models", "openai/fake", "--processes", "0"))
    assert rc == 2 and "--processes" in err


def test_a_worker_that_does_not_answer_a_cancel_is_recorded_by_the_scheduler(
        llm, tmp_path, monkeypatch):
    from vendbench.orchestrator import _shards, execute

    # the frozen worker is given up on after this; the other must answer within it, even
    # on a loaded 2-core machine
    monkeypatch.setattr(_shards, "CANCEL_GRACE_S", 5.0)
    llm.latency = 0.02
    db = str(tmp_path / "r.duckdb")
    config = build_config({"days": 60, "seeds": [1, 2, 3, 4], "processes": 2,
                           "budget_usd": "1", "retry_backoff_s": 0.01, "models": [model(llm)]})

    async def interrupt_with_one_worker_frozen() -> int:
        task = asyncio.create_task(execute(config, db))
        try:                      # waits on the requests, however slowly workers start
            await until(lambda: llm.served >= 12 or task.done(), timeout=200,
                        what="12 requests")
            assert not task.done(), task
            frozen = _workers_of(os.getpid())[0]
            os.kill(frozen, signal.SIGSTOP)
        finally:                  # whatever happened, the run is cancelled, not left
            task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return frozen

    frozen = asyncio.run(interrupt_with_one_worker_frozen())
    with contextlib.suppress(ProcessLookupError):        # killed by the scheduler already
        os.kill(frozen, signal.SIGKILL)
    rows = query(db, "SELECT status, reason FROM trials")
    assert [s for s, _ in rows] == ["interrupted"] * 4, rows  # none left "running"
    unanswered = [r for _, r in rows if "did not answer" in r]
    assert len(unanswered) == 2                             # the frozen worker's two
    assert query(db, "SELECT status FROM runs")[0][0] == "interrupted"


def test_no_secret_leaves_a_worker_process(llm, tmp_path):
    """A provider that echoes the key back, seen from a worker: the key reaches neither
    the database nor anything the scheduler or its workers print."""
    db = str(tmp_path / "r.duckdb")
    llm.inject("500", times=2, echo_auth=True)
    llm.inject("401", echo_auth=True)
    rc, out, err = finish(vendbench("-v", "run", "--models", "openai/fake", *llm_args(llm),
                                    "--seeds", "1", "2", "--days", "2", "--processes", "2",
                                    "--db", db))
    assert rc == 3, err                                  # one trial: a provider error
    assert CANARY in llm.headers[0]["Authorization"]     # the key really was sent…
    assert CANARY not in out and CANARY not in err       # …and never printed
    assert not [c for c in COMPLAINTS if c in err], err  # a run's end: workers quiet
    reasons = [r for r, in query(db, "SELECT reason FROM trials WHERE status = 'error'")]
    assert len(reasons) == 1 and "injected 401" in reasons[0] and "***" in reasons[0]
    assert CANARY.encode() not in Path(db).read_bytes()


def test_flushes_failed_after_their_trials_ended_print_nothing_at_exit():
    """The scheduler gone while flushes wait (the run ending): each failed flush whose
    trial was cancelled already used to print 'Future exception was never retrieved'
    at exit, a hundred lines after a benchmark. An awaiter still gets the error."""
    import asyncio
    import gc

    from vendbench.errors import ResultsError
    from vendbench.orchestrator._shard_main import LinkWriter

    class Quiet:
        def send(self, *message):
            pass

    seen: list[str] = []

    async def main():
        asyncio.get_running_loop().set_exception_handler(
            lambda loop, context: seen.append(context["message"]))
        writer = LinkWriter(Quiet())
        abandoned = asyncio.create_task(writer.flush())
        awaited = asyncio.create_task(writer.flush())
        await asyncio.sleep(0)
        abandoned.cancel()                         # its trial ended (Ctrl-C, SIGTERM)
        await asyncio.sleep(0)
        leftover = asyncio.get_running_loop().create_future()
        writer._waiting[99] = leftover             # a flush no task awaits any more
        writer.fail_all("the scheduler has gone")
        with pytest.raises(ResultsError, match="the scheduler has gone"):
            await awaited
        del leftover
        gc.collect()

    asyncio.run(main())
    gc.collect()
    assert not [m for m in seen if "never retrieved" in m], seen



def test_a_flush_to_a_scheduler_already_gone_is_a_results_error():
    """A worker whose scheduler died before a flush could even be sent got LinkClosed,
    which the trial took for a bug of ours and printed with its traceback (seen once in
    CI with the scheduler killed). It is the same news as a flush failed later."""
    import asyncio

    from vendbench.errors import ResultsError
    from vendbench.orchestrator._link import LinkClosed
    from vendbench.orchestrator._shard_main import LinkWriter

    class Gone:
        def send(self, *message):
            raise LinkClosed("the link is closed")

    async def main():
        writer = LinkWriter(Gone())
        with pytest.raises(ResultsError, match="the scheduler has gone"):
            await writer.flush()
        assert writer._waiting == {}

    asyncio.run(main())


def test_a_progress_report_to_a_scheduler_already_gone_is_a_results_error():
    """A worker's trial reported its day to a scheduler already killed: the send raised
    LinkClosed inside the trial, which took it for a bug of ours and printed "trial …
    failed" with a traceback (seen in a fresh-clone CI run of the scheduler-killed exit
    path). It is the same news as a flush failed: a ResultsError, which the trial passes
    on unlogged and the worker ends quietly on."""
    from types import SimpleNamespace

    from vendbench.errors import ResultsError
    from vendbench.orchestrator._link import LinkClosed
    from vendbench.environment import make
    from vendbench.orchestrator._shard_main import progress_reporter
    from vendbench.orchestrator._spec import TrialOutcome

    sent = []

    class Link:
        gone = False

        def send(self, message):
            if self.gone:
                raise LinkClosed("the link is closed")
            sent.append(message)

    link, env = Link(), make("autovend", seed=1, days=5)
    report = progress_reporter(link, "t1")
    out = TrialOutcome(SimpleNamespace(), priced=True)
    report(out, env)
    report(out, env)                       # the same day again: not sent twice
    assert [m.day for m in sent] == [1]
    link.gone = True
    env.call("end_day")
    with pytest.raises(ResultsError, match="the scheduler has gone"):
        report(out, env)


def test_a_progress_report_counts_only_once_the_rows_it_counts_have_arrived():
    """A worker's progress report counted an exchange whose rows were still queued in
    the worker: killed then, its trial said 4 exchanges with 3 logged (seen once in
    three loaded runs). The scheduler now applies a report only when the worker's next
    rows arrive (they carry what it counted); a worker that dies first leaves the counts
    of what was committed."""
    import asyncio

    from vendbench.orchestrator._messages import Ack, Progress, Rows
    from vendbench.orchestrator._shards import Worker, _Running
    from vendbench.orchestrator._spec import TrialOutcome, TrialSpec
    from vendbench.results import Append

    class Writer:
        def __init__(self):
            self.rows = []

        def put(self, table, rows, columns=None):
            self.rows.extend(rows)

        def put_row(self, row):
            self.rows.append(row)

        async def flush(self):
            pass

    async def main():
        worker = Worker.__new__(Worker)
        spec = TrialSpec("t1", "r", None, 1, 1, None)
        entry = _Running(spec, TrialOutcome(spec))
        acks = []

        class Link:
            def send(self, message):
                acks.append(message)

        worker.running, worker.writer, worker._acks = {"t1": entry}, Writer(), set()
        worker.link = Link()
        events = []
        worker.on_event = lambda kind, data: events.append(data["outcome"].exchanges)
        worker._handle(Rows(7, [Append("exchanges", [("t1", 3)])]))
        worker._handle(Progress("t1", {"exchanges": 3}, 2, 1.0))
        assert entry.outcome.exchanges == 0 and events == []   # its rows may be queued
        worker._handle(Rows(8, [Append("exchanges", [("t1", 4)])]))
        assert entry.outcome.exchanges == 3 and events == [3]  # now they have arrived
        worker._handle(Progress("t1", {"exchanges": 4}, 3, 1.0))
        assert entry.outcome.exchanges == 3                    # the worker dies here
        await asyncio.gather(*worker._acks)
        assert acks == [Ack(7, None), Ack(8, None)]

    asyncio.run(main())


def test_a_message_of_no_known_type_is_refused_by_both_ends():
    """Messages are matched by type: a stray one (an old tuple) is a bug, not ignored
    (the scheduler's reader then stops the worker, and its trials fail loudly)."""
    import pytest

    from vendbench.orchestrator._shards import Worker

    worker = Worker.__new__(Worker)
    worker.running = {}
    with pytest.raises(TypeError, match="unknown message"):
        worker._handle(("progress", "t1", {}, 1, 0.0))


@pytest.mark.parametrize("ending", ["sigterm", "scheduler killed"])
def test_workers_shut_down_quietly_on_every_exit_path(llm, tmp_path, ending):
    """Whatever ends a run with worker processes, no process prints asyncio's complaints
    about futures, coroutines or tasks left behind: here SIGTERM to the scheduler, and
    the scheduler killed outright (the run's end and Ctrl-C to the process group are
    checked alike by the tests of secrets and of Ctrl-C above). The workers' stderr is
    the run's: reading it to its end waits for the last worker to exit."""
    llm.latency = 0.03
    proc = _under_way(llm, str(tmp_path / "r.duckdb"), "1", "2", "3", "4")
    os.kill(proc.pid, signal.SIGTERM if ending == "sigterm" else signal.SIGKILL)
    rc, out, err = finish(proc)
    assert rc == {"sigterm": 130, "scheduler killed": -9}[ending], err
    for complaint in COMPLAINTS:
        assert complaint not in err, err
