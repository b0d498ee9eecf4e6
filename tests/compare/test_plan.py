"""What a verdict will cost, before it is bought (design §28.2): ``compare --plan``'s
forecast of the pairs a verdict needs, held against the bench's own simulation of the
comparison (benchmarks/bench_compare.py), and the forecast a running comparison prints."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path
from decimal import Decimal
from types import ModuleType

import numpy as np
import pytest

from vendbench.cli import main
from vendbench.compare import plan



def _bench() -> ModuleType:
    """benchmarks/bench_compare.py, loaded from its file: nothing is added to sys.path
    (a checkout's src/ ahead of the installed package hides its metadata from Inspect,
    which then names vendbench's tasks without their package)."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_compare.py"
    spec = importlib.util.spec_from_file_location("bench_compare", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


before = list(sys.path)
bench = _bench()
assert sys.path == before, "loading the bench changed sys.path"


@pytest.mark.parametrize("cv", [0.3, 0.6])
def test_the_plan_forecasts_what_the_bench_observes(cv):
    """A 10-point difference (A 0.5, B 0.6 of the oracle) at CV 30 % and 60 %: the plan's
    median pairs within 25 % of the median the bench's own comparisons took."""
    rng = np.random.default_rng(7)
    a, b = bench._normal(cv, mean=0.5)(rng, 200, 400, 0.1)
    d = b - a
    lo, hi = bench.betting_bands(d, bench.ALPHA)
    verdict, took = bench.decide(lo, hi, 400)
    observed = float(np.median(np.where(verdict != 0, took, 401)))
    forecast = plan(0.1, float(d.std()), alpha=bench.ALPHA, bounds=bench.BOUNDS,
                    max_pairs=400, batch=bench.BATCH, reps=200, seed=3)
    assert forecast.median is not None
    assert abs(forecast.median - observed) <= 0.25 * observed, (forecast, observed)
    assert forecast.p90 is None or forecast.p90 >= forecast.median
    assert 0 < forecast.decided_within <= 1


@pytest.mark.parametrize("spread", [0.02, 0.1])
def test_the_plan_for_twins_forecasts_the_equivalence_the_bench_observes(spread):
    """For two identical models `compare` forecast about 1,250 pairs (docs/compare.md:
    about 130, in the shares of the score; about 180 in shares of the gain): the plan
    counted only winners, never "equivalent". Its median for no
    difference is within 25 % of what the bench's comparisons take to equivalence
    within 5 %, and the default --max-pairs reaches it for steady play (design §31.5)."""
    from vendbench.compare import CompareSpec
    from vendbench.orchestrator import build_config

    rng = np.random.default_rng(11)
    d = spread * rng.standard_normal((200, 400))
    lo, hi = bench.betting_bands(d, bench.ALPHA)
    verdict, took = bench.decide(lo, hi, 400)
    assert set(np.unique(verdict)) <= {0, 2}                      # never a winner
    observed = float(np.median(np.where(verdict == 2, took, 401)))
    forecast = plan(0.0, spread, alpha=bench.ALPHA, bounds=bench.BOUNDS, max_pairs=400,
                    batch=bench.BATCH, reps=200, seed=3, margin=bench.MARGIN)
    assert forecast.median is not None
    assert abs(forecast.median - observed) <= 0.25 * observed, (forecast, observed)
    default = CompareSpec(base=build_config({"days": 30, "models": [
        {"id": "baseline/oracle"}, {"id": "baseline/order-up-to"}]})).max_pairs
    if spread <= 0.02:
        assert forecast.p90 is not None and forecast.p90 <= default
    winner_only = plan(0.0, spread, alpha=bench.ALPHA, bounds=bench.BOUNDS, max_pairs=400,
                       batch=bench.BATCH, reps=50, seed=3)
    assert winner_only.median is None                # what it forecast before: never


def test_a_plan_keeps_what_was_paired_and_a_clear_difference_decides_soon():
    clear = plan(0.6, 0.02, alpha=0.05, bounds=(0.0, 1.25), max_pairs=50, batch=2)
    assert clear.median is not None and clear.median <= 20 and clear.decided_within == 1
    # pairs already paired count: the plan goes on from them
    later = plan(0.6, 0.02, alpha=0.05, bounds=(0.0, 1.25), max_pairs=50, batch=2,
                 observed=[0.6] * 6)
    assert later.pairs_so_far == 6 and later.median is not None and later.median >= 8
    hopeless = plan(0.0, 0.3, alpha=0.05, bounds=(0.0, 1.25), max_pairs=50, batch=2,
                    reps=60)
    assert hopeless.median is None and "not in sight" in hopeless.line()
    with pytest.raises(ValueError):
        plan(float("nan"), 0.2, alpha=0.05, bounds=(0.0, 1.25), max_pairs=50, batch=2)


def test_plan_prints_pairs_and_dollars_and_runs_nothing(tmp_path, capsys):
    db = tmp_path / "p.duckdb"
    assert main(["compare", "--plan", "baseline/order-up-to", "baseline/oracle",
                 "--days", "30", "--difference", "0.2", "--spread", "0.1", "--db",
                 str(db), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["median_pairs"] is not None and got["p90_pairs"] >= got["median_pairs"]
    assert got["usd_per_pair"] == "0" and got["median_usd"] == "0"
    assert not db.exists()
    assert main(["compare", "--plan", "baseline/order-up-to", "baseline/oracle",
                 "--days", "30", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "a prior guess" in out and "a verdict after about" in out
    assert all(len(line) <= 80 for line in out.splitlines())
    assert main(["compare", "baseline/order-up-to", "baseline/oracle", "--spread", "0.2",
                 "--db", str(db)]) == 2
    assert "--difference, --spread and --pilot go with --plan" in capsys.readouterr().err


def test_a_running_comparison_says_where_it_stands_after_each_batch(tmp_path, capsys):
    db = str(tmp_path / "c.duckdb")
    assert main(["compare", "baseline/order-up-to", "baseline/oracle", "--days", "6",
                 "--max-pairs", "4", "--db", db]) == 0
    err = capsys.readouterr().err
    assert "after 2 pairs, $0.00 spent" in err and "after 4 pairs" in err
    assert "baseline/oracle - baseline/order-up-to:" in err and "forecast: a verdict" in err
    # the stored comparison is a pilot: its observed spread plans the next one
    assert main(["compare", "--plan", "baseline/order-up-to", "baseline/oracle", "--days",
                 "6", "--pilot", "latest", "--db", db]) == 0
    assert "observed over 4 pairs" in capsys.readouterr().out


def test_forecasts_need_no_api_key(tmp_path, capsys, monkeypatch):
    """design §35.2: `compare --plan` and `check --no-request`, the docs' own examples,
    exited 2 without API keys and forecast nothing. They send nothing: a missing key is
    a warning there (and stays an error where a request is made)."""
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    assert main(["compare", "--plan", "openai/gpt-4.1-mini", "anthropic/claude-sonnet-4-5",
                 "--days", "30", "--db", str(tmp_path / "p.duckdb")]) == 0
    out, err = capsys.readouterr()
    assert "a verdict after about" in out and "a pair is forecast at $" in out
    warned = " ".join(err.split())
    assert "warning: openai/gpt-4.1-mini needs OPENAI_API_KEY" in warned
    assert "warning: anthropic/claude-sonnet-4-5 needs ANTHROPIC_API_KEY" in warned
    assert "a run needs it, the plan does not" in warned
    assert main(["check", "--models", "openai/gpt-4.1-mini", "--days", "30",
                 "--no-request"]) == 0
    out, err = capsys.readouterr()
    assert "ready to forecast; a run needs its API key" in out and "a trial: about $" in out
    assert "warning: openai/gpt-4.1-mini needs OPENAI_API_KEY" in err
    assert main(["check", "--models", "openai/gpt-4.1-mini", "--days", "30"]) == 2
    assert "NOT READY" in capsys.readouterr().out            # a request needs the key


def test_a_pilot_prices_a_pair_from_what_its_pairs_cost(tmp_path, capsys, monkeypatch):
    """design §35.2: `--pilot` took the spread from a stored comparison but priced a pair
    at the reference operator's pace; a pilot of the same models and days prices it at
    what its own pairs cost."""
    from vendbench.compare import CompareSpec, compare, observed_per_pair
    from vendbench.orchestrator import build_config

    from ..fakellm import FakeLLM

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-pilot")
    db = str(tmp_path / "c.duckdb")
    with FakeLLM() as llm:
        models = [{"id": f"openai/{n}", "api_base": llm.url, "input_usd_per_mtok": "0.4",
                   "output_usd_per_mtok": "1.6", "max_output_tokens": 256} for n in "ab"]
        spec = CompareSpec(base=build_config({"days": 6, "models": models}), max_pairs=4)
        outcome = asyncio.run(compare(spec, db))
        observed = observed_per_pair(outcome)
        assert observed is not None and observed > 0
        argv = ["compare", "--plan", "openai/a", "openai/b", "--days", "6", "--api-base",
                llm.url, "--price", "openai/a=0.4,1.6", "--price", "openai/b=0.4,1.6",
                "--db", db]
        assert main([*argv, "--pilot", "latest", "--json"]) == 0
        piloted = json.loads(capsys.readouterr().out)
        assert main([*argv, "--spread", "0.2", "--json"]) == 0
        forecast = json.loads(capsys.readouterr().out)
        assert Decimal(piloted["usd_per_pair"]) == observed
        assert Decimal(forecast["usd_per_pair"]) != observed          # the operator's pace
        assert main([*argv, "--pilot", "latest"]) == 0
        assert f"what a pair of latest cost" in " ".join(capsys.readouterr().out.split())


def _brute(difference, spread, max_pairs, batch, reps=400, seed=0, alpha=0.05,
           bounds=(-0.5, 1.25)):
    """The pairs each simulated comparison takes, every one followed to the end: what
    the plan computed before it stopped early (design §35.8)."""
    from vendbench import _betting
    from vendbench.compare._plan import HORIZON

    width = bounds[1] - bounds[0]
    rng = np.random.default_rng(seed)
    d = np.clip(difference + spread * rng.standard_normal((reps, HORIZON)), -width, width)
    d = d[:, :3 * max_pairs // 2]        # the same draws as the plan's, far enough
    lo, hi = _betting.sequences(d, bounds=(-width, width), alpha=alpha)
    steps = np.arange(batch, d.shape[1] + 1, batch) - 1
    decided = (lo[:, steps] > 0) | (hi[:, steps] < 0)
    return np.where(decided.any(1), steps[decided.argmax(1)] + 1, d.shape[1] + 1)


def test_a_plan_that_stops_early_answers_as_one_followed_to_the_end():
    """Following only the comparisons not yet decided, and stopping once 90 % have
    decided within --max-pairs, changes no answer where no tail is sampled."""
    for difference, spread, max_pairs in ((0.1, 0.3, 200), (0.25, 0.5, 100), (0.3, 0.2, 60)):
        p = plan(difference, spread, alpha=0.05, bounds=(-0.5, 1.25), max_pairs=max_pairs,
                 batch=2)
        took = _brute(difference, spread, max_pairs, 2)
        assert (p.median, p.p90) == (int(np.quantile(took, 0.5, method="inverted_cdf")),
                                     int(np.quantile(took, 0.9, method="inverted_cdf")))
        assert p.decided_within == pytest.approx(np.mean(took <= max_pairs))
        assert not p.lower_bound


def test_a_plan_does_bounded_work_whatever_it_is_asked(monkeypatch):
    """design §35.8: `--plan --spread 2.5 --difference 0 --max-pairs 10000` (and
    `--batch 1 --difference 0.01`) ran past 120 s: every simulated comparison was
    followed to 10,000 pairs. Now a plan simulates 1,000 pairs at most, follows only the
    undecided, and past 250 pairs at most 100 of them (weighted): its work is counted
    here in series-steps, not timed. Beyond the pairs simulated, the share decided is a
    lower bound, and says so."""
    from vendbench import _betting

    steps = [0]
    sequences = _betting.sequences

    def counting(values, **kw):
        until = kw.pop("until")

        def counted(t, rows, lo, hi):
            steps[0] += len(rows)
            return until(t, rows, lo, hi)

        return sequences(values, until=counted, **kw)

    monkeypatch.setattr(_betting, "sequences", counting)
    for difference, spread, batch in ((0.0, 2.5, 2), (0.01, 0.25, 1)):
        steps[0] = 0
        p = plan(difference, spread, alpha=0.05, bounds=(-0.5, 1.25), max_pairs=10_000,
                 batch=batch)
        assert steps[0] <= 400 * 250 + 100 * 750, steps[0]
        assert p.simulated == 1_000 and p.lower_bound and p.median is None
        assert p.as_json()["decided_within_is_lower_bound"] is True
        assert "at least" in p.line() and "1,000 pairs a plan simulates" in p.line()
