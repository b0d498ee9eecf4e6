"""The leaderboard's metrics on small hand-built results with known answers (design §4)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import re
import statistics
from decimal import Decimal as D

import numpy as np
import pytest

from vendbench.leaderboard import (Roles, bootstrap_ci, build, html_report, mean_interval, render,
                                   write_charts)
from vendbench.results import Store

T0 = dt.datetime(2026, 11, 1)


AUTOVEND = Roles.of("autovend")          # baseline/order-up-to, baseline/oracle

def add_run(store, run_id, *, days=30, created=T0, prompt="p", tools="t", scenario="autovend"):
    from vendbench.environment import record_tables

    store.ensure_records(record_tables(scenario))        # as a run's start does
    store.con.execute(
        "INSERT INTO runs (run_id, name, created_at, scenario, days, config_json, prompt_sha256,"
        " tools_sha256, status) VALUES (?, 'test', ?, ?, ?, '{}', ?, ?, 'completed')",
        [run_id, created, scenario, days, prompt, tools])


def add_trial(store, run_id, model, seed, status="completed", net=50_000.0, cost="0",
              attempt=1, started=T0, cash=40_000.0, days=None):
    tid = f"{run_id}-{model}-{seed}-{attempt}"
    store.con.execute(
        'INSERT INTO trials (trial_id, run_id, model, seed, "repeat", attempt, status, '
        "initial_cash, final_cash, final_net_assets, score, cost_usd, started_at, "
        "days_completed, world_seed) VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, 30, 2026)",
        [tid, run_id, model, seed, attempt, status, cash, net, net, net,
         None if cost is None else D(cost), started])
    for day, row in enumerate(days or [], 1):
        store.con.execute(
            "INSERT INTO days (trial_id, day, cash, net_assets, revenue, cogs, waste_cost) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)", [tid, day, *row])
    return tid


def add_ceiling(store, seed, score, days=30, scenario="autovend"):
    """What the oracle scores on world 2026, ``seed`` (kept, as a run keeps it)."""
    from vendbench.results import CeilingRow

    store.write(CeilingRow(scenario, 2026, seed, "", days, "baseline/oracle", score, T0))


# what doing nothing ends 30 days of AutoVend with: the starting 40,000 less 30 days of
# the fixed fee (80) and 20 machines' rent (4 each); a share's 0 (design §34)
IDLE30 = 40_000.0 - 30 * (80 + 20 * 4)


def add_floor(store, seed, score=IDLE30, days=30, scenario="autovend"):
    """What doing nothing scores on world 2026, ``seed`` (kept, as a run keeps it)."""
    from vendbench.results import FloorRow

    store.write(FloorRow(scenario, 2026, seed, "", days, "baseline/idle", score, T0))


def share(score, oracle, idle=IDLE30):
    """A share as design §34 defines it, written out."""
    return (score - idle) / (oracle - idle)


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "lb.duckdb")


def row(board, model):
    return next(r for r in board.rows if r.model == model)


def test_core_metrics_with_known_answers(db):
    with Store(db) as s:
        add_run(s, "r1")
        for seed, (net, cost) in enumerate([(60_000, "2"), (80_000, "4"), (70_000, "1")], 1):
            add_trial(s, "r1", "openai/a", seed, net=net, cost=cost)
        for seed, net in enumerate([50_000, 50_000, 50_000], 1):
            add_trial(s, "r1", "baseline/order-up-to", seed, net=net)
        for seed, net in enumerate([140_000, 140_000, 140_000], 1):
            add_trial(s, "r1", "baseline/oracle", seed, net=net)
            add_ceiling(s, seed, 140_000.0)
            add_floor(s, seed)
    board = build(db)
    a = row(board, "openai/a")
    assert a.trials == a.completed == 3
    assert a.mean_net_assets == 70_000 and a.sd_net_assets == pytest.approx(10_000)
    assert a.growth == 30_000 and a.cv == pytest.approx(10_000 / 70_000)
    assert a.cost_total_usd == 7 and a.cost_mean_usd == pytest.approx(7 / 3)
    # API efficiency: growth per USD, averaged per trial: (20k/2 + 40k/4 + 30k/1) / 3
    assert a.api_efficiency == pytest.approx((10_000 + 10_000 + 30_000) / 3)
    # vs base: points of the oracle's gain above the baseline's share, seed by seed
    assert a.vs_baseline_points == pytest.approx(
        statistics.fmean(share(n, 140_000) - share(50_000, 140_000)
                         for n in (60_000, 80_000, 70_000)))
    assert a.beats_baseline == 3 and a.baseline_pairs == 3
    # the share: what the model made over doing nothing, of what the oracle made
    # (design §34), averaged: not 70,000 / 140,000, which counts the starting cash
    assert a.oracle_share == pytest.approx(share(70_000, 140_000))
    assert a.oracle_share == pytest.approx(34_800 / 104_800)
    lo, hi = a.ci_oracle_share                 # Student's t over the seeds (design §30)
    seeds = [share(n, 140_000) for n in (60_000, 80_000, 70_000)]
    half = 4.302653 * statistics.stdev(seeds) / 3 ** 0.5
    assert lo == pytest.approx(a.oracle_share - half) and hi == pytest.approx(
        a.oracle_share + half)
    # the bounds: below, an unfinished trial's 0 as a share; above, the cap
    assert board.bounds == (pytest.approx(share(0, 140_000)), 1.25)
    assert a.ci_oracle_share_any_shape == mean_interval(seeds, bounds=board.bounds)
    assert a.above_oracle == 0
    assert [r.model for r in board.rows] == ["baseline/oracle", "openai/a",
                                             "baseline/order-up-to"]
    base = row(board, "baseline/order-up-to")
    assert base.vs_baseline_points is None and base.api_efficiency is None   # zero cost
    assert row(board, "baseline/oracle").oracle_share == 1.0


def test_unfinished_trials_score_zero_and_errors_are_set_apart(db):
    with Store(db) as s:
        add_run(s, "r1")
        add_trial(s, "r1", "openai/a", 1, net=90_000, cost="1")
        add_trial(s, "r1", "openai/a", 2, status="budget_exhausted", net=45_000, cost="5")
        add_trial(s, "r1", "openai/a", 3, status="bankrupt", net=-100, cost="1")
        add_trial(s, "r1", "openai/a", 4, status="error", net=45_000, cost="1")
    board = build(db)
    a = row(board, "openai/a")
    assert a.trials == 3 and a.completed == 1
    assert a.mean_net_assets == pytest.approx(30_000)                # (90k + 0 + 0) / 3
    assert [x["seed"] for x in board.selection.set_apart] == [4]
    data = json.loads(render(board, "json"))
    assert data["set_apart"][0]["status"] == "error" and len(data["rows"]) == 1


def test_all_unfinished_and_single_trial_edge_cases(db):
    with Store(db) as s:
        add_run(s, "r1")
        add_trial(s, "r1", "openai/a", 1, status="timeout", cost="1")
        add_trial(s, "r1", "openai/b", 1, net=55_000, cost="0.5")
    board = build(db)
    a, b = row(board, "openai/a"), row(board, "openai/b")
    assert a.mean_net_assets == 0 and a.cv is None
    assert a.api_efficiency is None and a.api_efficiency_note == "no completed trial"
    assert b.sd_net_assets == 0
    lo, hi = b.ci_oracle_share                      # one trial: an honest, wide interval
    assert lo <= b.oracle_share <= hi and hi - lo > 0.5
    assert b.api_efficiency == pytest.approx(30_000)
    assert "—" in render(board, "table")


def test_an_unpriced_model_shows_no_cost_and_no_efficiency(db):
    with Store(db) as s:
        add_run(s, "r1")
        add_trial(s, "r1", "ollama/x", 1, net=60_000, cost=None)
    r = row(build(db), "ollama/x")
    assert r.cost_total_usd is None and r.api_efficiency is None


def test_refuses_to_mix_horizons_prompts_and_cash_and_takes_the_latest_attempt(db):
    with Store(db) as s:
        add_run(s, "old", created=T0)
        add_run(s, "new", created=T0 + dt.timedelta(days=1))
        add_run(s, "long", created=T0 - dt.timedelta(days=1), days=180)
        add_run(s, "other-prompt", created=T0 - dt.timedelta(days=2), prompt="q")
        add_trial(s, "old", "openai/a", 1, net=99_000, cost="1")        # best, but older
        add_trial(s, "new", "openai/a", 1, net=55_000, cost="1",
                  started=T0 + dt.timedelta(days=1))
        add_trial(s, "long", "openai/a", 1, net=300_000, cost="1")
        add_trial(s, "other-prompt", "openai/b", 1, net=70_000, cost="1")
        add_trial(s, "old", "openai/c", 1, net=50_000, cost="1", cash=30_000)
    board = build(db, "all")
    assert [r.model for r in board.rows] == ["openai/a"]
    assert row(board, "openai/a").mean_net_assets == 55_000          # latest, never best
    reasons = {r["run_id"]: r["reason"] for r in board.selection.refused}
    assert "days 180 vs 30" in reasons["long"]
    assert "prompt_sha256 differs" in reasons["other-prompt"]
    assert "initial_cash 30000.0 vs 40000.0" in reasons["old"]
    assert "refused to mix" in render(board, "table")


def test_operational_metrics_from_days(db):
    days = [(30_000.0, 50_000.0, 1000.0, 600.0, 30.0), (35_000.0, 50_000.0, 1000.0, 600.0, 0.0)]
    with Store(db) as s:
        add_run(s, "r1")
        add_trial(s, "r1", "openai/a", 1, cost="1", days=days)
    r = row(build(db), "openai/a")
    assert r.operations["waste_rate"] == pytest.approx(30 / 1200)
    assert r.operations["capital_efficiency"] == pytest.approx(800 / (20_000 + 15_000))
    assert r.operations["empty_machine_rate"] == 1.0                # no stocked machine-day


def test_baseline_and_oracle_comparisons_pair_by_seed_and_a_tie_is_no_win(db):
    """Oracles and baselines that differ by seed: each seed's share is taken against its
    own oracle and doing nothing, "vs base" against the baseline on that seed (not the
    baseline's mean, not a ratio of means); a tie does not beat the baseline."""
    with Store(db) as s:
        add_run(s, "r1")
        for seed, (model, base, oracle) in enumerate(
                [(100_000, 50_000, 140_000), (50_000, 100_000, 240_000),
                 (80_000, 80_000, 120_000)], 1):
            add_trial(s, "r1", "openai/a", seed, net=model, cost="1")
            add_trial(s, "r1", "baseline/order-up-to", seed, net=base)
            add_trial(s, "r1", "baseline/oracle", seed, net=oracle)
            add_ceiling(s, seed, oracle)
            add_floor(s, seed)
        add_trial(s, "r1", "openai/b", 4, net=90_000, cost="1")   # a seed with no baseline
        add_ceiling(s, 4, 60_000.0)                               # it beat the oracle
        add_floor(s, 4)
    board = build(db)
    a = row(board, "openai/a")
    seeds = [(100_000, 50_000, 140_000), (50_000, 100_000, 240_000),
             (80_000, 80_000, 120_000)]
    assert a.vs_baseline_points == pytest.approx(statistics.fmean(
        share(m, o) - share(b, o) for m, b, o in seeds))
    assert a.vs_baseline_points == pytest.approx((50 / 104.8 - 50 / 204.8 + 0) / 3)
    assert a.beats_baseline == 1 and a.baseline_pairs == 3                  # the tie: no
    # each seed's share against its own oracle, averaged
    assert a.oracle_share == pytest.approx(statistics.fmean(share(m, o) for m, _, o in seeds))
    oracle = row(board, "baseline/oracle")
    assert oracle.oracle_share == pytest.approx(1.0) and oracle.above_oracle == 0
    assert oracle.vs_baseline_points == pytest.approx(statistics.fmean(
        1 - share(b, o) for _, b, o in seeds))
    b = row(board, "openai/b")
    assert b.vs_baseline_points is None and b.beats_baseline is None and b.baseline_pairs == 0
    # above the oracle: an exploit or a bug, flagged where a user looks (capped at 1.25)
    assert b.oracle_share == 1.25 and b.above_oracle == 1
    text = render(board, "table")
    assert "125% (" in text and " !" in text and "ABOVE THE ORACLE: openai/b" in \
        " ".join(text.split())


def test_an_unfinished_model_does_not_beat_a_bankrupt_baseline_and_is_level_with_it(db):
    """Both unfinished on seed 1 (each scores 0: level, no win); on seed 2 the model's
    70,000 against the bankrupt baseline's 0. Shares below doing nothing are negative,
    not hidden: no ratio of zeros to refuse."""
    with Store(db) as s:
        add_run(s, "r1")
        add_trial(s, "r1", "baseline/order-up-to", 1, status="bankrupt", net=-5.0)
        add_trial(s, "r1", "openai/a", 1, status="timeout", net=70_000, cost="1")
        add_trial(s, "r1", "baseline/order-up-to", 2, status="bankrupt", net=-5.0)
        add_trial(s, "r1", "openai/a", 2, net=70_000, cost="1")
        for seed in (1, 2):
            add_ceiling(s, seed, 140_000.0)
            add_floor(s, seed)
    board = build(db)
    a, base = row(board, "openai/a"), row(board, "baseline/order-up-to")
    assert base.oracle_share == pytest.approx(share(0, 140_000)) and base.oracle_share < 0
    assert a.vs_baseline_points == pytest.approx((0 + 70_000 / 104_800) / 2)
    assert a.beats_baseline == 1 and a.baseline_pairs == 2


def _exact_mean_quantiles(values: list[int], probabilities: list[float]) -> list[float]:
    """Quantiles of the mean of len(values) draws with replacement (the bootstrap's own
    distribution), computed exactly by convolving the draw's distribution."""
    n = len(values)
    dist = {0: 1.0}
    for _ in range(n):
        nxt: dict[int, float] = {}
        for total, p in dist.items():
            for v in values:
                nxt[total + v] = nxt.get(total + v, 0.0) + p / n
        dist = nxt
    out, cumulative = [], 0.0
    ordered = sorted(dist.items())
    for q in probabilities:
        cumulative = 0.0
        for total, p in ordered:
            cumulative += p
            if cumulative >= q:
                out.append(total / n)
                break
    return out


@pytest.mark.parametrize("level", [0.95, 0.80])
def test_bootstrap_ci_takes_the_percentiles_of_the_resampled_means(level):
    values = list(range(10))
    lo, hi = bootstrap_ci([float(v) for v in values], level=level, samples=20_000)
    exact_lo, exact_hi = _exact_mean_quantiles(values, [(1 - level) / 2, (1 + level) / 2])
    # 20,000 resamples pin a percentile to about ±0.05 here; a neighbouring percentile
    # (1 point off) moves it by more than 0.1, the extremes of the resamples by over 1
    assert lo == pytest.approx(exact_lo, abs=0.1) and hi == pytest.approx(exact_hi, abs=0.1)
    assert lo < 4.5 < hi and hi - lo == pytest.approx(exact_hi - exact_lo, abs=0.15)


def test_bootstrap_ci_is_deterministic_and_brackets_the_mean():
    values = [1.0, 2.0, 3.0, 4.0, 10.0]
    assert bootstrap_ci(values) == bootstrap_ci(values)
    lo, hi = bootstrap_ci(values)
    assert lo < statistics.fmean(values) < hi
    assert bootstrap_ci([5.0]) is None


def test_formats_charts_and_a_self_contained_report(db, tmp_path):
    with Store(db) as s:
        add_run(s, "r1")
        for seed in (1, 2):
            add_trial(s, "r1", "openai/a", seed, net=60_000 + seed, cost="1",
                      days=[(40_000.0, 40_000.0, 0, 0, 0), (41_000.0, 60_000.0 + seed, 9, 5, 0)])
            add_trial(s, "r1", "baseline/order-up-to", seed, net=50_000,
                      days=[(40_000.0, 40_000.0, 0, 0, 0), (41_000.0, 50_000.0, 9, 5, 0)])
            add_ceiling(s, seed, 100_000.0)        # doing nothing's score: computed
    board = build(db)
    assert render(board, "markdown").startswith("| #")
    csv_text = render(board, "csv")
    header = csv_text.splitlines()[0].split(",")
    assert header[:4] == ["rank", "model", "trials", "completed"]
    assert "ci_oracle_share_low" in header and "ci_oracle_share_high" in header
    assert "ci_oracle_share" not in header and "[" not in csv_text     # one value per cell
    rows = list(csv.DictReader(io.StringIO(csv_text)))
    assert [r["rank"] for r in rows] == ["1", "2"] and rows[0]["model"] == "openai/a"
    assert float(rows[0]["oracle_share"]) == pytest.approx(
        (share(60_001, 100_000) + share(60_002, 100_000)) / 2)
    assert float(rows[0]["ci_oracle_share_low"]) <= float(rows[0]["oracle_share"]) <= \
        float(rows[0]["ci_oracle_share_high"])
    # rates are fractions in the data, percents only in the tables people read
    data = json.loads(render(board, "json"))["rows"][0]
    rates = ("cv", "cached_share", "waste_rate", "stockout_rate",
             "empty_machine_rate", "shelf_utilisation", "rejected_item_rate",
             "pricing_regret_share")
    assert all(data[k] is None or 0 <= data[k] <= 1 for k in rates), data
    assert data["empty_machine_rate"] == 1.0                  # no sales rows: all empty
    assert f"{data['cv'] * 100:.1f}%" in render(board, "markdown")   # the same, as a percent
    files = write_charts(board, tmp_path / "charts")
    assert {f.name for f in files} == {f"{n}.{e}" for n in ("trajectories",
                                                          "oracle_share", "return_vs_cost",
                                                          "frontier", "operations")
                                       for e in ("png", "svg")}
    assert all(f.stat().st_size > 5_000 for f in files)
    assert all(f.read_bytes().startswith(b"\x89PNG") for f in files if f.suffix == ".png")
    page = html_report(board)
    assert page.count("<svg") == 5 and "<table class=" in page and "openai/a" in page
    for external in ("src=", "<link", 'href="http', "url(http", "@import", "<metadata"):
        assert external not in page                        # nothing loaded from outside


def test_model_rows_edge_cases_on_hand_built_trials():
    """model_rows directly: oracles that did not grow, tiny baselines, two trials, a
    trial without operational figures, and the JSON shape of the intervals."""
    from vendbench.leaderboard._board import model_rows

    def trial(model, seed, net, cost="1", status="completed", read=None, inp=None):
        return {"trial_id": f"{model}-{seed}", "model": model, "world_seed": 2026,
                "seed": seed, "repeat": 1, "status": status, "score": net,
                "initial_cash": 40_000.0, "cost_usd": None if cost is None else D(cost), "input_tokens": inp,
                "cache_read_tokens": read}

    trials = [trial("openai/a", 1, 60_000, "2", inp=1000), trial("openai/a", 2, 80_000, "4"),
              trial("baseline/order-up-to", 1, 0.5, "0"), trial("baseline/order-up-to", 2,
                                                                   40_000, "0"),
              trial("baseline/oracle", 1, 40_000, "0"), trial("baseline/oracle", 2, 40_000.5,
                                                              "0")]
    shares = {"openai/a-1": 0.5, "openai/a-2": None, "baseline/oracle-1": 1.0,
              "baseline/order-up-to-1": -0.3, "baseline/order-up-to-2": 0.0}
    rows = {r.model: r for r in model_rows(trials, {"openai/a-1": {"waste_rate": 0.1}},
                                           shares, roles=AUTOVEND)}
    a = rows["openai/a"]
    assert a.sd_net_assets == pytest.approx(statistics.stdev([60_000, 80_000]))   # two trials
    # vs base: only the seed both have a share on (seed 2's is unknown for the model)
    assert a.vs_baseline_points == pytest.approx(0.5 - -0.3)
    assert a.beats_baseline == 2 and a.baseline_pairs == 2
    # seed 2 has no oracle score (a private world without its salt): seed 1's share alone
    assert a.oracle_share == 0.5 and a.ci_oracle_share[0] < 0.5 < a.ci_oracle_share[1]
    assert rows["baseline/order-up-to"].oracle_share == pytest.approx(-0.15)
    assert a.operations == {"waste_rate": 0.1}                # seed 2 had no figures
    assert a.cached_share == 0.0                              # input, but nothing read
    cached = model_rows([trial("openai/c", 1, 50_000, inp=1000, read=250),
                         trial("openai/c", 2, 50_000, inp=3000, read=750)], {})
    assert cached[0].cached_share == pytest.approx(1000 / 4000)   # over all its trials
    assert a.ci_api_efficiency is not None and a.ci_api_efficiency[0] == \
        pytest.approx(10_000) and a.ci_api_efficiency[1] == pytest.approx(10_000)
    base = rows["baseline/order-up-to"]
    assert (base.vs_baseline_points, base.beats_baseline, base.baseline_pairs) == (None, None, 0)
    assert base.cached_share is None                          # no LLM input at all
    out = a.as_json()
    assert out["ci_oracle_share"] == list(a.ci_oracle_share) and out["waste_rate"] == 0.1
    assert json.loads(json.dumps(out))["ci_api_efficiency"] == list(a.ci_api_efficiency)


def test_bootstrap_ci_edge_cases():
    import random

    rng = random.Random(3)
    values = [rng.uniform(0, 100) for _ in range(12)]
    assert bootstrap_ci(values) == bootstrap_ci(values)       # deterministic, continuous data
    assert bootstrap_ci([1.0, 3.0]) is not None               # two values are enough
    lo, hi = bootstrap_ci(values, level=1.0, samples=500)     # the whole range of resamples
    replay = random.Random(0)                                 # the function's own draws
    means = sorted(sum(replay.choices(values, k=12)) / 12 for _ in range(500))
    assert (lo, hi) == (means[0], means[-1])


def test_the_terminal_table_fits_80_columns_and_wide_has_every_column(db, capsys):
    from vendbench.cli import main

    long = "anthropic/claude-sonnet-4-5-20250929"
    with Store(db) as s:
        add_run(s, "r1")
        for seed in (1, 2, 3):
            add_trial(s, "r1", long, seed, net=249_612.0 + seed, cost="61.25")
            add_trial(s, "r1", "baseline/order-up-to", seed, net=50_000.0 + seed)
            add_ceiling(s, seed, 500_000.0)
            add_floor(s, seed)
    assert main(["leaderboard", "--db", db]) == 0
    narrow = capsys.readouterr().out
    assert max(len(line) for line in narrow.splitlines() if db not in line) <= 80, narrow
    seeds = [share(249_612 + k, 500_000) for k in (1, 2, 3)]
    lo, hi = mean_interval(seeds, bounds=(share(0, 500_000), 1.25))
    assert long in narrow and "249,614" in narrow                         # not cut
    assert "46% (46%–46%)" in narrow                     # t over three nearly equal seeds
    assert main(["leaderboard", "--db", db, "--ci", "any-shape"]) == 0
    assert f"46% ({lo:.0%}–{hi:.0%})" in capsys.readouterr().out          # any shape
    assert "more columns (vs base, cost $, growth" in narrow and "--wide" in narrow
    assert main(["leaderboard", "--db", db, "--wide"]) == 0
    wide = capsys.readouterr().out
    assert "CV" in wide.splitlines()[0] and "waste %" in wide and "CV" not in \
        narrow.splitlines()[0]


def test_the_heatmap_colours_material_differences_only():
    from vendbench.leaderboard._charts import heat

    # 0.0 against 0.0003 rejected items: both neutral, not green against red
    assert heat("rejected_item_rate", [0.0, 0.0003], lower_is_better=True) == [0.0, 0.0]
    # 10 points of waste apart: the worse red, the better green, full colour
    assert heat("waste_rate", [0.02, 0.12, 0.07], lower_is_better=True) == [1.0, -1.0, 0.0]
    # relative metrics: 5 % apart is neutral, 60 % apart is coloured
    assert heat("capital_efficiency", [1.0, 1.05], lower_is_better=False) == [0.0, 0.0]
    hot = heat("capital_efficiency", [1.0, 1.6, 1.3], lower_is_better=False)
    assert hot[0] < 0 < hot[1] and hot[2] == 0.0
    assert heat("waste_rate", [None, 0.1], lower_is_better=True) == [None, 0.0]


def test_an_idle_agents_few_calls_are_not_coloured_better():
    """Tool calls a day describe an operator; they do not rank one: an idle agent's 2 a
    day were shown green ("better") against a busy one's 40."""
    from types import SimpleNamespace

    from vendbench.environment import metric_directions
    from vendbench.leaderboard._charts import dollars_tick, heat_grid

    for scenario in ("autovend", "network"):
        assert metric_directions(scenario)["tool_calls_per_day"] == "neither"
    rows = [SimpleNamespace(operations={"tool_calls_per_day": 2.0, "waste_rate": 0.02}),
            SimpleNamespace(operations={"tool_calls_per_day": 40.0, "waste_rate": 0.12}),
            SimpleNamespace(operations={"tool_calls_per_day": 41.0, "waste_rate": 0.07})]
    board = SimpleNamespace(rows=rows, directions=metric_directions("autovend"))
    grid = heat_grid(board, ["tool_calls_per_day", "waste_rate"])
    assert grid[:, 0].mask.all()                        # calls a day: no colour at all
    assert list(grid[:, 1]) == [1.0, -1.0, 0.0]          # waste: coloured as before
    # the cost axis: two significant digits, never e-notation
    assert [dollars_tick(v) for v in (3e-05, 0.00123456, 1.5, 1234.5)] == \
        ["$0.00003", "$0.0012", "$1.5", "$1,200"]


def test_what_an_idle_operator_wins_by_default_is_not_coloured_better():
    """design §34.3: an operator that does nothing has no stock-outs (nothing listed)
    and no waste (nothing bought): it was painted green beside operators that ran the
    business. Those columns rank only models above 5 % of the oracle's gain, and the
    caption names each column's step as the code uses it."""
    from types import SimpleNamespace

    from vendbench.environment import metric_directions, scenario_metrics
    from vendbench.leaderboard._charts import MATERIAL, heat_grid, steps_text

    idle_wins = frozenset(m.name for m in scenario_metrics("autovend") if m.idle_wins)
    assert {"stockout_rate", "waste_rate", "capital_efficiency"} <= idle_wins
    assert "empty_machine_rate" not in idle_wins and "shelf_utilisation" not in idle_wins
    keys = ["stockout_rate", "empty_machine_rate", "waste_rate"]
    rows = [SimpleNamespace(oracle_share=1.0, operations={
                "stockout_rate": 0.05, "empty_machine_rate": 0.11, "waste_rate": 0.001}),
            SimpleNamespace(oracle_share=0.17, operations={
                "stockout_rate": 0.10, "empty_machine_rate": 0.11, "waste_rate": 0.05}),
            SimpleNamespace(oracle_share=0.0, operations={
                "stockout_rate": 0.0, "empty_machine_rate": 1.0, "waste_rate": 0.0})]
    board = SimpleNamespace(rows=rows, directions=metric_directions("autovend"),
                            idle_wins=idle_wins,
                            selection=SimpleNamespace(cohort={"scenario": "autovend"}))
    grid = heat_grid(board, keys)
    assert grid[2, 0] is np.ma.masked and grid[2, 2] is np.ma.masked   # idle: uncoloured
    assert grid[2, 1] == -1.0                          # its empty machines: red
    assert grid[0, 0] > 0 > grid[1, 0]                 # the two that ran it, ranked
    board.idle_wins = frozenset()                      # as before: idle painted green
    assert heat_grid(board, keys)[2, 0] > 0
    text = steps_text(board, keys)
    assert text == "stock-outs % 2 pt, empty % 2 pt, waste % 1 pt"
    assert MATERIAL["stockout_rate"] == ("abs", 0.02)


def test_the_report_table_scrolls_with_the_model_column_fixed_and_sorts_blanks_last(db):
    with Store(db) as s:
        add_run(s, "r1")
        add_trial(s, "r1", "openai/a", 1, net=60_000.0, cost="1")
        add_trial(s, "r1", "baseline/order-up-to", 1, net=50_000.0)
    page = html_report(build(db))
    assert "<div class='scroll'><table class='sortable board'>" in page
    assert re.search(r"td:nth-child\(2\),th:nth-child\(2\)\{[^}]*position:sticky", page)
    assert "overflow-x:auto" in page and "aria-sort" in page
    assert "if (x === null || y === null) return (x === null) - (y === null);" in page
    assert "[data-dir=asc]::after{content:' ▲'}" in page
    captions = re.findall(r"<figcaption[^>]*>([^<]+)</figcaption>", page)
    assert len(captions) == 1 + page.count("<svg") and page.count("<svg") >= 3
    assert all(len(c) > 40 for c in captions)


def test_a_chart_with_nothing_to_show_is_a_note_not_an_empty_plot(db, tmp_path):
    with Store(db) as s:
        add_run(s, "r1")
        add_trial(s, "r1", "baseline/order-up-to", 1, net=50_000.0,
                  days=[(40_000.0, 40_000.0, 0, 0, 0), (41_000.0, 50_000.0, 9, 5, 0)])
    board = build(db)
    out = tmp_path / "c"
    out.mkdir()
    (out / "return_vs_cost.png").write_bytes(b"stale")      # from an earlier, priced run
    files = write_charts(board, out)
    assert "return_vs_cost" not in {f.stem for f in files}
    assert not (out / "return_vs_cost.png").exists()
    assert "no trial here has an API cost" in board.chart_notes["return_vs_cost"]
    assert "Return against API cost: not drawn" in html_report(board)


def test_charts_into_a_file_or_an_unwritable_place_is_one_line_before_any_output(
        db, tmp_path, capsys):
    from vendbench.cli import main

    with Store(db) as s:
        add_run(s, "r1")
        add_trial(s, "r1", "baseline/order-up-to", 1, net=50_000.0)
    taken = tmp_path / "report"
    taken.write_text("a file, not a directory")
    places = [(str(taken), "a file by that name exists"),
              ("/proc/vendbench-charts", "cannot create it"),     # no directory there
              ("/proc/self/fdinfo", "cannot write there")]        # exists, not writable
    for place, message in places:
        assert main(["leaderboard", "--db", db, "--charts", place]) == 2
        out, err = capsys.readouterr()
        assert out == "" and message in err and len(err.strip().splitlines()) == 1, err
    assert taken.read_text() == "a file, not a directory"


def _trial(model, seed, net, *, world=2026, status="completed", cost="0.5", initial=100.0):
    return {"trial_id": f"{model}-{world}-{seed}", "model": model, "seed": seed,
            "repeat": 1, "world_seed": world, "status": status, "score": net,
            "initial_cash": initial, "cost_usd": None if cost is None else D(cost),
            "input_tokens": 10, "cache_read_tokens": 0}


def test_each_row_names_its_harness_and_why_an_efficiency_is_blank():
    from vendbench.leaderboard._board import harness, model_rows

    assert [harness(m) for m in ("baseline/oracle", "mcp/claude-code", "openai/gpt-5",
                                 "inspect/openai/gpt-5", "inspect/mockllm/model",
                                 "openrouter/inspect/x")] == \
        ["in-process", "mcp", "litellm", "inspect", "inspect", "litellm"]
    rows = {r.model: r for r in model_rows([
        _trial("baseline/order-up-to", 1, 150.0, cost="0"),
        _trial("mcp/claude-code", 1, 160.0, cost=None),
        _trial("openai/broken", 1, 90.0, status="error"),
        _trial("openai/good", 1, 200.0)], {}, roles=AUTOVEND)}
    assert {m: r.harness for m, r in rows.items()} == {
        "baseline/order-up-to": "in-process", "mcp/claude-code": "mcp",
        "openai/broken": "litellm", "openai/good": "litellm"}
    assert {m: r.api_efficiency_note for m, r in rows.items()} == {
        "baseline/order-up-to": "no API cost", "mcp/claude-code": "unpriced",
        "openai/broken": "no completed trial", "openai/good": None}
    assert rows["openai/good"].api_efficiency == pytest.approx((200.0 - 100.0) / 0.5)
    assert rows["baseline/order-up-to"].vs_baseline_points is None     # not against itself


def test_a_model_without_oracle_shares_has_no_interval():
    from vendbench.leaderboard._board import model_rows

    trials = [_trial("openai/x", 1, 200.0), _trial("openai/y", 1, 300.0)]
    shares = {trials[0]["trial_id"]: 0.5}
    rows = {r.model: r for r in model_rows(trials, {}, shares, roles=AUTOVEND)}
    assert rows["openai/y"].oracle_share is None and rows["openai/y"].ci_oracle_share is None
    assert rows["openai/x"].ci_oracle_share is not None


def test_comparisons_pair_trials_of_the_same_world_only():
    """A model's trial on world 8 is compared with the baseline's on world 8, never with
    the baseline's on world 7 of the same seed."""
    from vendbench.leaderboard._board import model_rows

    trials = [_trial("baseline/order-up-to", 1, 100.0, world=7),
              _trial("baseline/order-up-to", 1, 400.0, world=8),
              _trial("openai/x", 1, 200.0, world=7)]
    shares = dict(zip((t["trial_id"] for t in trials), (0.1, 0.9, 0.4)))
    rows = {r.model: r for r in model_rows(trials, {}, shares, roles=AUTOVEND)}
    assert rows["openai/x"].vs_baseline_points == pytest.approx(0.3)     # not -0.5
    assert rows["openai/x"].beats_baseline == 1 and rows["openai/x"].baseline_pairs == 1


def test_growth_counts_from_zero_when_the_starting_cash_is_unknown():
    from vendbench.leaderboard._board import model_rows

    (row,) = model_rows([_trial("openai/x", 1, 250.0, initial=None)], {})
    assert row.growth == 250.0


def test_json_and_csv_numbers_are_the_decimals_they_stand_for():
    from vendbench.leaderboard._render import exact

    mean = (51261.33 * 3) / 3                      # a float mean of cents
    assert repr(mean) == "51261.329999999994"
    assert exact({"a": [mean, (0.000123456789012345, 2)], "b": "x", "c": None}) == \
        {"a": [51261.33, [0.000123456789012, 2]], "b": "x", "c": None}


def test_nothing_rankable_is_said_in_a_line_with_the_trials_states(tmp_path, capsys,
                                                                   monkeypatch):
    """Every LLM trial errored: the leaderboard used to end in a TypeError traceback
    (also with --charts)."""
    import asyncio

    from vendbench.cli import main
    from vendbench.orchestrator import build_config, execute

    from ..fakellm import FakeLLM

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-0123456789")
    db = str(tmp_path / "r.duckdb")
    with FakeLLM() as llm:
        llm.inject("401", times=10)
        asyncio.run(execute(build_config({"days": 2, "seeds": [1, 2], "models": [
            {"id": "openai/fake", "api_base": llm.url, "input_usd_per_mtok": 1,
             "output_usd_per_mtok": 1, "max_output_tokens": 256}]}), db))
    for extra in ([], ["--charts", str(tmp_path / "charts")], ["--format", "markdown"]):
        assert main(["leaderboard", "--db", db, *extra]) == 0
        out, err = capsys.readouterr()
        assert "Traceback" not in err and err == ""
        first, *states = out.strip().splitlines()
        assert first.startswith("nothing to rank in run ") and len(first) <= 80
        assert states[0] == "  openai/fake: 2 error"
    assert not (tmp_path / "charts").exists()
    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0    # data: still whole
    assert json.loads(capsys.readouterr().out)["rows"] == []


def test_the_interval_takes_a_level_strictly_between_0_and_1():
    from vendbench import _betting

    values = [0.4, 0.5, 0.6, 0.45, 0.55] * 8             # enough to narrow the interval
    low, high = mean_interval(values, bounds=(0, 1.25))
    assert (low, high) == _betting.interval(values, bounds=(0, 1.25), alpha=0.05)
    assert 0 < low < 0.5 < high < 1.25
    for level in (0, 1, 1.5):
        with pytest.raises(ValueError, match=rf"^level {level} must lie in \(0, 1\)$"):
            mean_interval(values, level=level, bounds=(0, 1.25))


def test_roles_come_from_the_scenario_and_an_unknown_one_has_none():
    assert Roles.of("autovend") == Roles("baseline/order-up-to", "baseline/oracle",
                                         "baseline/idle")
    assert Roles.of("network").ceiling == "baseline/oracle"
    assert Roles.of("no-such-scenario") == Roles() == Roles(None, None, None)
    assert Roles.of(None) == Roles()


@pytest.mark.parametrize("ratio, flagged", [(1.01, True), (1.0001, True), (1.0, False),
                                            (0.999, False)])
def test_a_trial_above_the_oracle_by_any_margin_is_flagged(db, ratio, flagged):
    """design §30: a copy of the code that flagged only trials 5 % above the oracle
    passed every test; any margin above it is an exploit or a bug to look at."""
    with Store(db) as s:
        add_run(s, "r1")
        add_trial(s, "r1", "openai/a", 1, net=140_000 * ratio)
        add_ceiling(s, 1, 140_000.0)
    board = build(db)
    a = row(board, "openai/a")
    assert a.above_oracle == int(flagged)
    notes = [n for n in board.selection.notes if n.startswith("ABOVE THE ORACLE")]
    assert len(notes) == int(flagged)
    (line,) = [ln for ln in render(board).splitlines() if ln.startswith("1  openai/a")]
    assert (" !" in line) == flagged


def test_the_readme_panel_separates_at_three_seeds_and_both_intervals_are_in_json(db, capsys):
    """design §30: the README's own panel showed the oracle, 100 % of itself on every
    seed, as 18 %–125 %, overlapping order-up-to's 0 %–119 %. The default interval
    (Student's t over the seeds) puts the oracle within 5 points of 100 % and the two
    apart; the betting interval stays one flag away and in the JSON."""
    from vendbench.cli import main

    assert main(["run", "--models", "baseline/order-up-to", "baseline/oracle", "--seeds",
                 "1", "2", "3", "--days", "30", "--db", db, "--json"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    rows = {r["model"]: r for r in board["rows"]}
    oracle, base = rows["baseline/oracle"], rows["baseline/order-up-to"]
    assert 0.95 <= oracle["ci_oracle_share"][0] <= oracle["ci_oracle_share"][1] <= 1.05
    assert base["ci_oracle_share"][1] < oracle["ci_oracle_share"][0]      # apart
    assert board["interval_method"].startswith("Student's t")
    for r in (oracle, base):                    # the any-shape interval, wide at 3 seeds
        lo, hi = r["ci_oracle_share_any_shape"]
        assert hi - lo > 0.8 and lo <= r["oracle_share"] <= hi
    assert main(["leaderboard", "--db", db, "--format", "json", "--ci", "any-shape"]) == 0
    any_shape = json.loads(capsys.readouterr().out)
    assert [r["ci_oracle_share"] for r in any_shape["rows"]] == \
        [r["ci_oracle_share_any_shape"] for r in board["rows"]]
    assert any_shape["interval_method"].startswith("betting interval")


def test_the_t_interval_says_where_the_seeds_do_not_suit_it(db):
    """A failure (an unfinished trial, at the floor) beside finished trials: the t
    interval's assumption is named as doubtful under the table; the same scores all
    finished are not."""
    with Store(db) as s:
        add_run(s, "r1")
        for seed, net in enumerate([10_000, 90_000, 100_000, 95_000], 1):
            add_trial(s, "r1", "openai/a", seed, net=net,
                      status="budget_exhausted" if seed == 1 else "completed")
            add_trial(s, "r1", "openai/b", seed, net=net + 1)
            add_ceiling(s, seed, 140_000.0)
            add_floor(s, seed)
    board = build(db)
    doubts = [n for n in board.selection.notes if "doubtful" in n]
    assert len(doubts) == 1 and doubts[0].startswith(
        "openai/a: a failure scored at the floor beside finished trials") and \
        "--ci any-shape" in doubts[0], board.selection.notes



def test_per_seed_points_and_shares_are_each_seeds_latest_attempt(db, tmp_path):
    """design §35.8: the ranking takes each seed's latest attempt; no test held the
    per-seed points (the strip chart, the report's links, the above-oracle check) to
    it. Seed 1 of openai/a was tried twice in one run (its first attempt's 99,000, the
    best, then 45,000); seed 2 once. Each seed is one point, the latest."""
    with Store(db) as s:
        add_run(s, "r")
        add_ceiling(s, 1, 60_000.0)
        add_ceiling(s, 2, 60_000.0)
        add_floor(s, 1)
        add_floor(s, 2)
        first = add_trial(s, "r", "openai/a", 1, net=99_000, cost="1", attempt=1)
        retried = add_trial(s, "r", "openai/a", 1, net=45_000, cost="1", attempt=2,
                            started=T0 + dt.timedelta(hours=1))
        other = add_trial(s, "r", "openai/a", 2, net=50_000, cost="1")
    board = build(db)
    points = sorted(((p["seed"], p["trial_id"], p["score"], p["share"])
                     for p in board.points), key=lambda p: p[0])
    assert points == [(1, retried, 45_000, pytest.approx(share(45_000, 60_000))),
                      (2, other, 50_000, pytest.approx(share(50_000, 60_000)))]
    assert row(board, "openai/a").mean_net_assets == 47_500
    assert not any("ABOVE THE ORACLE" in n for n in board.selection.notes)  # 99,000 is not
    # the report links each seed's latest trial once (its pages written beside it)
    for tid in (first, retried, other):
        (tmp_path / "trial" / tid).mkdir(parents=True)
        (tmp_path / "trial" / tid / "index.html").write_text("")
    page = html_report(board, pages=tmp_path)
    assert f"trial/{retried}/index.html" in page and f"trial/{first}/" not in page
    assert page.count(">s1</a>") == 1 and page.count(">s2</a>") == 1


def test_csv_of_one_seed_keeps_its_interval_note_in_one_cell(db):
    """Found while building design §32.1: a one-seed ranking's CSV ended in a traceback,
    its note on the interval (``ci_doubt``, a sentence) split as if it were an interval."""
    with Store(db) as s:
        add_run(s, "r1")
        add_trial(s, "r1", "openai/a", 1, net=60_000, cost="1")
        add_ceiling(s, 1, 100_000.0)
    rows = list(csv.DictReader(io.StringIO(render(build(db), "csv"))))
    assert rows[0]["ci_doubt"].startswith("one seed, so its interval is the betting")
    assert float(rows[0]["ci_oracle_share_low"]) <= float(rows[0]["oracle_share"])
    # beside a model with no doubt (two seeds), every row has the same columns
    with Store(db) as s:
        add_trial(s, "r1", "openai/b", 1, net=70_000, cost="1")
        add_trial(s, "r1", "openai/b", 2, net=71_000, cost="1")
        add_ceiling(s, 2, 100_000.0)
    text = render(build(db), "csv")
    assert len({len(line.split(",")) for line in text.splitlines() if '"' not in line}) == 1
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(text))}
    assert rows["openai/b"]["ci_doubt"] == "" and rows["openai/a"]["ci_doubt"]
