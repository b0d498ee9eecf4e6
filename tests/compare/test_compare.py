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

from ..fakellm import FakeLLM, Reply, vending_script
from ..orchestrator.conftest import api_key  # noqa: F401  (a canary key for the fake models)

PRODUCTS = ["P0001", "P0045", "P0200"]


def _coin(body: dict) -> bool:
    """A fair coin per model and world seed: the model's name and day 1's report (its
    weather differs by seed) hashed; two ``coin-…`` models play the same distribution."""
    first = next(m["content"] for m in body["messages"]
                 if m["role"] == "user" and "Day 1 of" in str(m.get("content")))
    return hashlib.sha256(f"{body['model']}|{first}".encode()).digest()[0] % 2 == 1


def skills(body: dict) -> Reply:
    """``idle``: ends every day (0 % of the oracle's gain: doing nothing, design §34).
    ``quitter``: never calls a tool, so its trial ends agent_stopped on day 1 and scores
    0 (at 6 days a share of -100 %: it lost more than the oracle gains). ``coin-…``: on a fair coin per world seed, idle or a quitter; two ``coin-…``
    models play the same distribution. Anything else: idle too."""
    quits = body["model"].endswith("quitter") or \
        ("/coin-" in "/" + body["model"] and _coin(body))
    if quits:
        return Reply(content="I would rather not.")
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
    """6 days (the oracle gains enough over doing nothing on every seed to make shares
    of), at most 20 pairs; a wide margin (half the oracle's gain): deciding two identical
    models equivalent within 5 % takes over 100 pairs (docs/compare.md)."""
    return CompareSpec(base=build_config({"days": 6, "seeds": [1], "models": models}),
                       **{"max_pairs": 20, "margin": 0.5, **extra})


def test_the_better_fake_model_wins_within_the_budget(llm, tmp_path):
    db = str(tmp_path / "c.duckdb")
    out = asyncio.run(compare(_spec(_models(llm, "quitter", "idle"),
                                    budget_usd=Decimal("20")), db))
    assert out.row.verdict == WINNER and out.row.best == "openai/idle"
    # 100 points apart within bounds of -100 %..125 %: 13 pairs (batches of 2: 14)
    assert out.row.pairs <= 14 and Decimal(0) < out.row.spent_usd <= Decimal(20)
    # scored 0: below doing nothing by more than the oracle gains, so -100 %
    assert out.scores["openai/quitter"] == [-1.0] * out.row.pairs
    assert out.scores["openai/idle"] == [0.0] * out.row.pairs      # doing nothing: 0 %
    assert out.shares == {"openai/quitter": (out.row.pairs, 0, out.row.pairs),
                          "openai/idle": (0, 0, out.row.pairs)}       # unfinished, above
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
    """Three comparisons of two models that play the same coin-flip strategy (each its
    own coins: quit, scoring 0, or idle): at the documented error rate (at most 5 %;
    2 % or less simulated for coins) none is expected to name a winner."""
    verdicts, differing = [], 0
    for k in range(3):
        spec = CompareSpec(base=build_config({"days": 6, "seeds": [1], "models": _models(
            llm, f"coin-a{k}", f"coin-b{k}")}), max_pairs=6)
        out = asyncio.run(compare(spec, str(tmp_path / f"c{k}.duckdb")))
        differing += sum(x != y for x, y in zip(*out.scores.values()))
        verdicts.append(out.row.verdict)
    assert WINNER not in verdicts and len(verdicts) == 3
    assert differing >= 3                 # the coins do differ: there was a test to pass


def test_a_race_of_three_drops_the_worst_and_calls_the_rest_equivalent(llm, tmp_path):
    """(Two identical scores within ±50 points, at alpha / 3, with bounds -100 %..125 %:
    25 pairs.)"""
    out = asyncio.run(compare(_spec(_models(llm, "idle", "quitter", "idle-twin"),
                                    max_pairs=30), str(tmp_path / "c.duckdb")))
    assert out.row.verdict == EQUIVALENT
    first, last = out.steps[0], out.steps[-1]
    assert len(first.intervals) == 3                       # every pair of the three
    assert first.survivors == ["openai/idle", "openai/quitter", "openai/idle-twin"]
    assert last.survivors == ["openai/idle", "openai/idle-twin"]     # after the step
    # the quitter goes at the step whose intervals put it below both others, before
    # the twins are found equivalent
    out_at = next(s for s in out.steps if "openai/quitter" not in s.survivors)
    below = [p for p in out_at.intervals if "openai/quitter" in (p["a"], p["b"])]
    assert all((p["high"] < 0) if p["b"] == "openai/quitter" else (p["low"] > 0)
               for p in below) and len(below) == 2
    assert out_at.step < last.step and len(last.intervals) == 1


def test_a_budget_that_cannot_pay_the_first_batch_runs_nothing(llm, tmp_path, capsys):
    """It used to exit 0, "inconclusive after 0 pairs", with an empty chart."""
    from vendbench.errors import ConfigError

    db = tmp_path / "c.duckdb"
    with pytest.raises(ConfigError, match=r"the first batch \(2 pairs\) is forecast at \$"):
        asyncio.run(compare(_spec(_models(llm, "idle", "quitter"),
                                  budget_usd=Decimal("0.001")), str(db)))
    assert llm.served == 0 and not db.exists()
    assert main(["compare", "openai/idle", "openai/quitter", "--api-base", llm.url,
                 "--price", "openai/idle=0.4,1.6", "--price", "openai/quitter=0.4,1.6",
                 "--days", "8", "--budget", "0.001", "--db", str(db),
                 "--chart", str(tmp_path / "c.png")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "nothing was run" in line
    assert llm.served == 0 and not db.exists() and not (tmp_path / "c.png").exists()


def test_a_batch_starts_only_when_what_is_left_covers_its_trials_budgets(llm, tmp_path):
    """design §35.1: `compare --budget 1 --trial-budget 0.1` started a last batch with
    $0.11 left: 1 of 4 trials ran, both pairs were dropped and the money spent. Each
    batch (two pairs of two LLM models: four trials) now starts only when what is left
    covers four trial budgets; the comparison ends inconclusive before one that cannot
    be paid, and no trial is cut short by the pool."""
    from vendbench.errors import ConfigError

    trial_budget = Decimal("0.05")

    def spec(budget: str) -> CompareSpec:
        return CompareSpec(base=build_config({
            "days": 6, "seeds": [1], "budget_usd": str(trial_budget),
            "models": _models(llm, "idle", "idle-twin")}),
            max_pairs=40, margin=0.01, budget_usd=Decimal(budget))

    db = str(tmp_path / "c.duckdb")
    out = asyncio.run(compare(spec("0.25"), db))
    assert out.row.verdict == INCONCLUSIVE and out.dropped == 0
    assert "less than the next batch's 4 trials may spend at their --trial-budget " \
           "($0.20)" in out.row.reason
    left = Decimal("0.25") - out.row.spent_usd
    assert 0 < left < 4 * trial_budget and out.row.pairs >= 2
    before = [Decimal("0.25") - s.spent_usd for s in out.steps[:-1]]
    assert all(b >= 4 * trial_budget for b in [Decimal("0.25"), *before])
    with Store(db, read_only=True) as store:          # every trial it ran finished
        statuses = {t["status"] for s in out.steps for t in store.trials(s.run_id)}
    assert statuses == {"completed"}
    # a budget below the first batch's trial budgets runs nothing
    with pytest.raises(ConfigError, match=r"the first batch's 4 trials may spend \$0\.20"):
        asyncio.run(compare(spec("0.19"), str(tmp_path / "none.duckdb")))
    assert not (tmp_path / "none.duckdb").exists()


def test_a_crash_after_a_batch_resumes_to_the_same_answer(tmp_path):
    models = [{"id": "baseline/order-up-to"}, {"id": "baseline/oracle"}]
    spec = CompareSpec(base=build_config({"days": 6, "seeds": [1], "models": models}),
                       max_pairs=6)
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
        (whole.row.verdict, whole.row.best, whole.row.pairs) == (INCONCLUSIVE,
                                                                 "baseline/oracle", 6)
    assert resumed.row.reason == whole.row.reason == "6 pairs of at most 6 (--max-pairs)"
    assert [s.intervals for s in resumed.steps] == [s.intervals for s in whole.steps]
    assert statuses and set(statuses) == {"running"}          # running again, then decided
    assert _status(db) == "decided"


def _status(db: str) -> str:
    with Store(db, read_only=True) as store:
        return comparison(store, "latest").status


def test_the_cli_runs_shows_and_charts_a_comparison(tmp_path, capsys):
    """(design §18.6's first power target, the oracle against order-up-to at 30 days within
    20 pairs, is the example docs/compare.md shows, run by tests/test_docs.py.)"""
    db = str(tmp_path / "c.duckdb")
    assert main(["compare", "baseline/order-up-to", "baseline/oracle", "--days", "6",
                 "--max-pairs", "4", "--db", db, "--chart", str(tmp_path / "c.png")]) == 0
    out = capsys.readouterr()
    assert "verdict: inconclusive after 4 pairs: 4 pairs of at most 4" in out.out
    assert "method: betting confidence sequence" in out.out
    assert "baseline/oracle: 0% of 4 trials" in out.out and "0% above the" in out.out
    assert "batch 1: seeds 1-2" in out.err and (tmp_path / "c.png").stat().st_size > 10_000
    assert main(["compare", "--show", "latest", "--db", db, "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["verdict"] == INCONCLUSIVE and shown["pairs"] == 4
    (first,) = shown["steps"][0]["intervals"]
    assert first["low"] < first["mean"] < first["high"]   # in shares of the oracle's gain
    assert 0.5 < first["mean"] < 1               # the oracle gains 100 %, order-up-to less
    assert -2.25 <= first["low"] and first["high"] <= 2.25
    assert shown["estimand"] == "mean" and "Waudby-Smith" in shown["method"]
    assert shown["models_shares"]["baseline/oracle"]["above_oracle_share"] == 0


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
    # these ended in a pydantic traceback
    (["compare", "baseline/oracle", "baseline/order-up-to", "--max-pairs", "1"],
     "--max-pairs is 2-10,000, got 1"),
    (["compare", "baseline/oracle", "baseline/order-up-to", "--batch", "100000"],
     "--batch is 1-1,000, got 100,000"),
    (["compare", "baseline/oracle", "baseline/order-up-to", "--estimand", "win-rate",
      "--assume", "gaussian"], "--assume gaussian is for the mean"),
])
def test_bad_input_is_one_line(argv, message, tmp_path, capsys):
    try:
        code = main([*argv, "--db", str(tmp_path / "c.duckdb")])
    except SystemExit as exc:            # argparse's own check: usage, then the error
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_a_trial_the_comparisons_pool_stopped_is_the_budgets_doing(llm, tmp_path):
    """The pool's refusal ("run budget: ...") drops the pair; a trial's own budget
    running out is the model's, and scores 0. Read from what a real run records."""
    from vendbench.compare._run import cut_by_pool
    from vendbench.orchestrator import execute

    reasons = {}
    for name, extra in (("pool", {"total_budget_usd": "0.002"}),
                        ("own", {"budget_usd": "0.002"})):
        config = build_config({"days": 8, "seeds": [1], "models": _models(llm, "idle"),
                               **extra})
        out = asyncio.run(execute(config, str(tmp_path / f"{name}.duckdb")))
        (trial,) = out.as_json()["trials"]
        assert trial["status"] == "budget_exhausted"
        reasons[name] = trial
    assert cut_by_pool(reasons["pool"]) and not cut_by_pool(reasons["own"])
    assert not cut_by_pool({"status": "completed", "reason": "run budget: whatever"})


def test_batches_that_add_no_pair_stop_the_comparison(llm, tmp_path):
    """Every trial of one model fails (the server refuses it): no pair is ever scored;
    two such batches in a row end the comparison, saying why, instead of spending on."""
    llm.inject("401", times=1000)
    spec = CompareSpec(base=build_config({"days": 6, "seeds": [1], "models": [
        {"id": "baseline/order-up-to"}, *_models(llm, "idle")]}), max_pairs=20)
    out = asyncio.run(compare(spec, str(tmp_path / "c.duckdb")))
    assert out.row.verdict == INCONCLUSIVE and out.row.pairs == 0
    assert len(out.steps) == 2 and out.dropped == 4
    assert "two batches in a row added no pair" in out.row.reason


def test_resume_takes_a_new_budget_or_pair_cap_and_refuses_what_would_change_the_measure(
        tmp_path, capsys):
    """`compare --resume latest --budget 5` once reprinted the old verdict, the new budget
    silently ignored (design §31.5). A comparison that ended inconclusive at its cap goes
    on under a new one, stored with it; a flag that would change what it measures is
    refused by name."""
    db = str(tmp_path / "c.duckdb")
    assert main(["compare", "baseline/order-up-to", "baseline/oracle", "--days", "6",
                 "--max-pairs", "2", "--db", db]) == 0
    assert "inconclusive after 2 pairs" in capsys.readouterr().out
    assert main(["compare", "--resume", "latest", "--days", "4", "--db", db]) == 2
    assert capsys.readouterr().err.strip() == (
        "vendbench: error: --resume and --show take the stored comparison as it was "
        "specified; drop --days (a new --budget or --max-pairs is taken by --resume)")
    assert main(["compare", "--resume", "latest", "--max-pairs", "4", "--db", db]) == 0
    out = capsys.readouterr()
    assert "continues with at most 4 pairs (was at most 2 pairs)" in out.err
    assert "batch 2: seeds 3-4" in out.err
    assert "inconclusive after 4 pairs: 4 pairs of at most 4" in out.out
    with Store(db, read_only=True) as store:
        row = comparison(store, "latest")
        assert CompareSpec.model_validate_json(row.config_json).max_pairs == 4
        assert len(comparison_steps(store, row.comparison_id)) == 2
    assert main(["compare", "--resume", "latest", "--max-pairs", "3", "--db", db]) == 2
    assert "has 4 pairs already" in capsys.readouterr().err


def test_a_comparisons_batches_stay_out_of_the_panels_leaderboard_and_trend(tmp_path,
                                                                          capsys):
    """After `compare`, `leaderboard` showed its last batch (two seeds) instead of the
    quick start's panel, and `trend` six batches as six nights (design §31.2)."""
    db = str(tmp_path / "c.duckdb")
    assert main(["run", "--models", "baseline/order-up-to", "baseline/oracle", "--seeds",
                 "1", "2", "3", "--days", "6", "--db", db]) == 0
    assert main(["compare", "baseline/order-up-to", "baseline/oracle", "--days", "6",
                 "--max-pairs", "4", "--db", db]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    assert len(board["runs"]) == 1 and board["left_out_compare"] == 2
    assert {r["model"]: r["trials"] for r in board["rows"]} == {
        "baseline/oracle": 3, "baseline/order-up-to": 3}          # the panel's three seeds
    assert any("left out 2 runs of vendbench compare" in n for n in board["notes"])
    assert main(["leaderboard", "--db", db, "--format", "json", "--include-compare"]) == 0
    assert json.loads(capsys.readouterr().out)["left_out_compare"] == 0
    assert main(["trend", "--db", db, "--format", "json"]) == 0
    trend = json.loads(capsys.readouterr().out)
    assert len(trend["runs"]) == 1 and any("left out 2 runs" in n for n in trend["notes"])
    assert main(["trend", "--db", db, "--format", "json", "--include-compare"]) == 0
    assert len(json.loads(capsys.readouterr().out)["runs"]) == 3
    assert main(["runs", "--db", db]) == 0
    listed = capsys.readouterr().out
    assert listed.count("autovend compare") == 2 and "6/6" in listed


def test_a_batch_shows_a_live_line_on_a_terminal(capsys):
    """An LLM comparison's batch runs for an hour: on a terminal, a line says how far its
    trials are and what it has spent (design §31.1), within 80 columns, ending with
    every trial done."""
    from types import SimpleNamespace

    from vendbench.cli.compare import BatchLine

    spec = SimpleNamespace(base=SimpleNamespace(days=30))
    line = BatchLine(spec)
    pool = SimpleNamespace(spent=Decimal("0.1234"))
    line.event("run_started", {"trials": 2, "pool": pool})
    for trial, day in (("a", 3), ("b", 5)):
        line.shown = 0.0                               # (drawn at most 4 times a second)
        line.event("trial_progress", {"outcome": SimpleNamespace(
            spec=SimpleNamespace(trial_id=trial)), "day": day})
    shown = capsys.readouterr().err
    assert "0/2 trials done, 2 at day 4 of 30; $0.1234 spent" in shown
    for trial in ("a", "b"):
        line.event("trial_finished", {"outcome": SimpleNamespace(
            spec=SimpleNamespace(trial_id=trial))})
    shown = capsys.readouterr().err
    assert shown.endswith("\n") and "2/2 trials done; $0.1234 spent" in shown
    assert all(len(part) <= 80 for part in shown.replace("\r", "\n").splitlines())


def test_resume_drops_the_pair_the_comparisons_own_pool_cut_as_the_whole_run_does(
        tmp_path):
    """design §30: `compare --resume` must drop a pair whose trial the comparison's own
    budget stopped, as the uninterrupted comparison does. The fake model's requests turn
    dear after the first batch (its reported prompt grows), so the second batch's
    trial does not fit what is left of the comparison's budget; one comparison runs
    through, the other is interrupted inside that batch (after its first trial) and
    resumed. One trial at a time, so both meet the same order."""
    dear = [False]

    def script(body: dict) -> Reply:
        reply = vending_script(body)
        if dear[0]:
            reply.prompt_tokens = 550_000
        return reply

    outcomes = []
    with FakeLLM(script=script) as server:
        model = {"id": "openai/b", "api_base": server.url, "input_usd_per_mtok": "0.4",
                 "output_usd_per_mtok": "1.6", "max_output_tokens": 256,
                 "max_context_tokens": 2_000_000, "request_timeout_s": 5}
        # a trial is forecast at about $1.69 and costs about $0.03: $2.00 pays for the
        # first and forecasts a second that fits; the second's dear requests ($0.22
        # each, and reserved dearer as the server's count is learnt) then meet the
        # pool's end first (no trial budget: with one, a batch starts only when the pool
        # covers it whole, design §35.1, and only a provider's over-billing could cut it)
        spec = CompareSpec(base=build_config({
            "days": 6, "seeds": [1], "workers": 1,
            "models": [{"id": "baseline/order-up-to"}, model]}),
            max_pairs=3, batch=1, margin=0.5, budget_usd=Decimal("2.00"))

        def turn_dear(kind, data):
            if kind == "batch" and data["step"] == 2:
                dear[0] = True

        for name in ("whole", "resumed"):
            dear[0] = False
            db = str(tmp_path / f"{name}.duckdb")
            if name == "whole":
                outcomes.append(asyncio.run(compare(spec, db, on_event=turn_dear)))
                continue

            async def interrupted() -> None:     # as Ctrl-C does: the task cancelled
                inside = asyncio.Event()

                def crash(kind, data):
                    if kind == "trial_finished" and dear[0]:
                        inside.set()                 # the second batch's first trial

                task = asyncio.create_task(compare(spec, db, on_event=turn_dear,
                                                   on_run_event=crash))
                done, _ = await asyncio.wait({task, asyncio.create_task(inside.wait())},
                                             return_when=asyncio.FIRST_COMPLETED)
                assert task not in done, "the comparison ended before its second batch"
                task.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await task

            asyncio.run(interrupted())
            assert _status_of(db) == "interrupted"
            outcomes.append(asyncio.run(compare(spec, db, resume="latest")))
    whole, resumed = outcomes
    assert whole.dropped >= 1                     # the pool's doing: dropped, not scored
    assert (resumed.row.pairs, resumed.dropped, resumed.row.verdict, resumed.row.reason) == \
        (whole.row.pairs, whole.dropped, whole.row.verdict, whole.row.reason)
    assert resumed.scores == whole.scores


def _status_of(db: str) -> str:
    with Store(db, read_only=True) as store:
        return comparison(store, "latest").status
