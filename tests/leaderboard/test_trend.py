"""Trends across nights and regressions (design §9), on hand-built nights with known
answers; cohort selection with --days and --scenario; the trend's outputs."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import subprocess
import sys

import pytest

from vendbench.cli import main
from vendbench.leaderboard import Filters, build, build_trend, html_report, write_trend_chart
from vendbench.results import Store

from .test_leaderboard import IDLE30, T0, add_ceiling, add_floor, add_run, add_trial

SEEDS = range(1, 9)
# per-seed levels: seeds differ a lot (demand draws), which pairing removes
LEVEL = {s: 60_000 + 9_000 * s for s in SEEDS}
ORACLE_SCORE = 150_000.0             # what the oracle scores on each seed


def night(store, run_id: str, day: int, scores: dict[str, dict[int, float]],
          statuses: dict[tuple[str, int], str] | None = None, *, days: int = 30) -> None:
    created = T0 + dt.timedelta(days=day)
    add_run(store, run_id, created=created, days=days)
    for seed in {seed for by_seed in scores.values() for seed in by_seed}:
        add_ceiling(store, seed, ORACLE_SCORE, days=days)     # kept once per key
        if days == 30:
            add_floor(store, seed, IDLE30)
    for model, by_seed in scores.items():
        for seed, net in by_seed.items():
            status = (statuses or {}).get((model, seed), "completed")
            add_trial(store, run_id, model, seed, status=status, net=net, cost="0.5",
                      started=created)


def nights(db: str) -> None:
    """Two nights: ``regress`` loses 3-5k on every seed, ``steady`` moves by ±200,
    ``noisy`` moves by ±25k around 0 (its mean equal), ``flaky`` errors on 3 of 8."""
    with Store(db) as s:
        night(s, "n1", 1, {"openai/regress": LEVEL, "openai/steady": LEVEL,
                           "openai/noisy": LEVEL, "openai/flaky": LEVEL})
        night(s, "n2", 2, {
            "openai/regress": {k: v - 3_000 - 250 * k for k, v in LEVEL.items()},
            "openai/steady": {k: v + (200 if k % 2 else -200) for k, v in LEVEL.items()},
            "openai/noisy": {k: v + (25_000 if k % 2 else -25_000) for k, v in LEVEL.items()},
            "openai/flaky": LEVEL},
            {("openai/flaky", s): "error" for s in (1, 2, 3)})


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "nights.duckdb")
    nights(path)
    return path


def test_a_regressing_model_is_flagged_a_steady_or_noisy_one_is_not(db):
    trend = build_trend(db)
    assert [r["run_id"] for r in trend.runs] == ["n1", "n2"]
    flags = {(r["model"], r["kind"]): r for r in trend.regressions}
    assert set(flags) == {("openai/regress", "score"), ("openai/flaky", "failures")}
    score = flags[("openai/regress", "score")]
    assert score["pairs"] == 8 and score["mean_difference"] == pytest.approx(
        (-3_000 - 250 * 4.5) / (ORACLE_SCORE - IDLE30))    # in shares of the oracle's gain
    lo, hi = score["ci_difference"]
    assert lo <= score["mean_difference"] <= hi               # too small for the interval,
    assert score["worse"] == 8 and score["sign_test_p"] == 2 ** -8   # not for the signs
    assert "sign test p 0.004" in score["evidence"]
    assert (score["previous_run"], score["latest_run"]) == ("n1", "n2")
    failures = flags[("openai/flaky", "failures")]
    assert (failures["previous_failed"], failures["latest_failed"]) == (0, 3)
    assert failures["latest_trials"] == 8 and "0/8 → 3/8" in failures["evidence"]
    # the unpaired means of ``noisy`` are equal; the CI of its differences spans 0
    noisy = [n for n in trend.nights if n.model == "openai/noisy"]
    assert noisy[0].mean_net_assets == noisy[1].mean_net_assets


def test_an_unpaired_drop_within_noise_is_not_a_regression(tmp_path):
    """The same small drop on only half of the seeds, the other half up: no flag, even
    though the latest mean is lower."""
    db = str(tmp_path / "n.duckdb")
    with Store(db) as s:
        night(s, "n1", 1, {"openai/a": LEVEL})
        night(s, "n2", 2, {"openai/a": {k: v + (-4_000 if k % 2 else 3_000)
                                        for k, v in LEVEL.items()}})
    trend = build_trend(db)
    assert trend.of("openai/a")[1].mean_net_assets < trend.of("openai/a")[0].mean_net_assets
    assert trend.regressions == []


def test_one_run_has_no_regression_and_says_why(tmp_path):
    db = str(tmp_path / "one.duckdb")
    with Store(db) as s:
        night(s, "n1", 1, {"openai/a": LEVEL})
    trend = build_trend(db)
    assert trend.regressions == [] and "at least two" in " ".join(trend.notes)
    assert write_trend_chart(trend, tmp_path / "c") == []


def test_trend_formats_and_exit_code(db, tmp_path, capsys):
    assert main(["trend", "--db", db]) == 0
    table = capsys.readouterr().out
    assert max(len(line) for line in table.splitlines()) <= 80
    assert "REGRESSION openai/regress (score, n1 → n2)" in table
    assert main(["trend", "--db", db, "--fail-on-regression"]) == 4
    assert "2 regressions" in capsys.readouterr().err
    assert main(["trend", "--db", db, "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {r["kind"] for r in data["regressions"]} == {"score", "failures"}
    assert all(r["evidence"] for r in data["regressions"])
    regress = [n for n in data["nights"] if n["model"] == "openai/regress"]
    assert [n["run_id"] for n in regress] == ["n1", "n2"]
    lo, hi = regress[0]["ci_oracle_share"]
    assert lo <= regress[0]["oracle_share"] <= hi
    assert regress[0]["cost_total_usd"] == 4.0 and regress[0]["completed"] == 8
    assert main(["trend", "--db", db, "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 8 and {r["regression"] for r in rows} == {"", "score", "failures"}
    assert main(["trend", "--db", db, "--format", "markdown", "--model", "openai/steady"]) == 0
    md = capsys.readouterr().out
    assert md.startswith("| model") and "openai/noisy" not in md and "no regression" in md
    assert main(["trend", "--db", db, "--last", "1"]) == 0
    assert "n1" not in capsys.readouterr().out.split("1 run:")[1]
    assert main(["trend", "--db", db, "--model", "openai/nope"]) == 2
    assert "no model openai/nope" in capsys.readouterr().err
    assert main(["trend", "--db", db, "--charts", str(tmp_path / "t")]) == 0
    assert {p.name for p in (tmp_path / "t").iterdir()} == {"trend.png", "trend.svg"}
    assert (tmp_path / "t" / "trend.png").read_bytes().startswith(b"\x89PNG")


def test_the_report_gains_a_trend_section_with_several_runs(db, tmp_path):
    board = build(db)
    page = html_report(board, build_trend(db))
    assert "<h2>Trend across runs</h2>" in page and "REGRESSION openai/regress" in page
    assert page.count("<svg") == html_report(board).count("<svg") + 1
    single = str(tmp_path / "single.duckdb")
    with Store(single) as s:
        night(s, "n1", 1, {"openai/a": LEVEL})
    assert "Trend across runs" not in html_report(build(single), build_trend(single))


def test_cohorts_are_picked_by_days_and_scenario_and_the_others_listed(db, capsys):
    with Store(db) as s:                       # a newer, shorter test run
        night(s, "quick", 5, {"openai/regress": {1: 41_000.0}}, days=3)
    board = build(db)
    assert board.selection.runs == ["quick"]
    assert main(["leaderboard", "--db", db, "--run", "all"]) == 0
    out = capsys.readouterr().out
    assert "other cohort: autovend, 30 days, world 2026: 2 runs" in out
    command = next(line for line in out.replace("\n  ", " ").splitlines()
                   if line.startswith("other cohort")).split("rank it with: ")[1]
    assert command.endswith("--run all --scenario autovend --days 30")
    assert main(command.split()[1:]) == 0
    again = capsys.readouterr().out
    assert "openai/steady" in again and "other cohort: autovend, 3 days" in again
    thirty = build(db, "all", Filters(days=30))
    assert thirty.selection.runs == ["n1", "n2"] and thirty.selection.cohort["days"] == 30
    assert [r["run_id"] for r in build_trend(db, filters=Filters(days=30)).runs] == \
        ["n1", "n2"]
    assert main(["leaderboard", "--db", db, "--scenario", "network"]) == 2
    err = capsys.readouterr().err
    assert "no run in" in err and "matches scenario network" in err
    assert "autovend 30 days" in err and "autovend 3 days" in err
    assert main(["leaderboard", "--db", db, "--run", "quick", "--days", "30"]) == 2
    assert "not 30 days" in capsys.readouterr().err


def test_help_says_95_percent_once():
    out = subprocess.run([sys.executable, "-m", "vendbench", "leaderboard", "--help"],
                         capture_output=True, text=True).stdout
    assert "95% confidence" in " ".join(out.split()) and "%%" not in out
    trend = subprocess.run([sys.executable, "-m", "vendbench", "trend", "--help"],
                           capture_output=True, text=True).stdout
    from vendbench.leaderboard._trend import FAILED_JUMP

    assert f"by {FAILED_JUMP * 100:.0f} percentage points" in " ".join(trend.split())
    assert "--fail-on-regression" in trend and "exit 4" in trend


def test_too_few_pairs_are_not_tested_rather_than_flagged_by_chance(tmp_path):
    """Three seeds all lower: the percentile bootstrap's interval would lie below 0 (as
    it does for one night in eight by chance alone), so three pairs are not tested."""
    from vendbench.leaderboard._board import bootstrap_ci
    from vendbench.leaderboard._trend import MIN_PAIRS, sign_test

    drop = {1: -400.0, 2: -300.0, 3: -500.0}
    assert bootstrap_ci(list(drop.values()))[1] < 0        # what would have been flagged
    assert sign_test(3, 3) == 1 / 8                        # chance alone: one night in 8
    db = str(tmp_path / "three.duckdb")
    with Store(db) as s:
        night(s, "n1", 1, {"openai/a": {k: LEVEL[k] for k in drop}})
        night(s, "n2", 2, {"openai/a": {k: LEVEL[k] + d for k, d in drop.items()}})
    trend = build_trend(db)
    assert trend.regressions == [] and MIN_PAIRS > 3
    check = next(c for c in trend.comparisons if c["kind"] == "score")
    assert check["pairs"] == 3 and not check["regressed"] and check["ci_difference"] is None
    assert f"need {MIN_PAIRS}+ trials" in " ".join(trend.notes)


def test_a_large_drop_clears_the_interval_and_a_steady_model_never_does(tmp_path):
    """The mean's interval flags a collapse even when the signs alone could not (some
    seeds up); the sign test is exact: 7 worse of 8 is 3.5 %, within its 4 %, and 8 of
    10 is 5.5 %, above it."""
    from vendbench.leaderboard._trend import sign_test

    assert sign_test(8, 8) == 1 / 256 and sign_test(7, 8) == pytest.approx(9 / 256)
    assert sign_test(8, 10) == pytest.approx(56 / 1024)
    assert sign_test(0, 0) == 1.0
    db = str(tmp_path / "c.duckdb")
    seeds = range(1, 21)
    with Store(db) as s:
        night(s, "n1", 1, {"openai/a": {k: 140_000.0 for k in seeds}})
        # collapses on 15 seeds, a little better on 5: 15 of 20 worse is p = 2.1 %...
        night(s, "n2", 2, {"openai/a": {k: (0.0 if k <= 15 else 141_000.0) for k in seeds}})
    (check,) = [c for c in build_trend(db).comparisons if c["kind"] == "score"]
    assert check["regressed"] and check["ci_difference"][1] < 0


@pytest.mark.parametrize("seeds,drop,low,high", [
    (5, 0.0, 0.0, 0.05), (5, 1.0, 0.33, 0.53), (5, 2.0, 0.84, 0.94), (10, 2.0, 0.95, 1.0)])
def test_what_a_night_can_detect_is_what_the_guide_says(seeds, drop, low, high):
    """docs/guide.md: with five seeds a drop of twice the spread of a model's paired
    differences is flagged about 9 nights in 10, one spread about 4 in 10, a steady model
    about 3 in 100; ten seeds flag two spreads 98 in 100. Simulated with the trend's own
    tests (normal paired differences, spread 0.1 of the oracle's score)."""
    import numpy as np

    from vendbench.leaderboard._board import mean_interval
    from vendbench.leaderboard._trend import MEAN_ALPHA, SIGN_ALPHA, sign_test

    rng = np.random.default_rng(seeds * 10 + int(drop * 2))
    flagged, nights = 0, 600
    for _ in range(nights):
        d = rng.normal(-drop * 0.1, 0.1, seeds)
        worse, better = int((d < 0).sum()), int((d > 0).sum())
        ci = mean_interval(list(d), level=1 - MEAN_ALPHA, bounds=(-1.25, 1.25))
        flagged += sign_test(worse, worse + better) <= SIGN_ALPHA or ci[1] < 0
    assert low <= flagged / nights <= high, flagged / nights


def test_one_interval_named_one_way_in_the_table_chart_and_json(db, tmp_path, capsys,
                                                                 monkeypatch):
    """design §35.3: the trend's table showed the betting interval (0–125 %), its chart
    Student's t whiskers (55–85 %), its --help said bootstrap. Now each night's interval
    is the leaderboard's (t by default, --ci any-shape), the same in every output and
    named: the chart's whiskers are the JSON's intervals."""
    from vendbench.leaderboard import _charts
    from vendbench.leaderboard._board import T_METHOD, mean_interval, t_interval

    for ci in ("t", "any-shape"):
        assert main(["trend", "--db", db, "--format", "json", "--ci", ci]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["interval_method"].startswith("Student's t" if ci == "t" else "betting")
        steady = [n for n in data["nights"] if n["model"] == "openai/steady"][0]
        trend = build_trend(db, ci=ci)
        night = trend.of("openai/steady")[0]
        values = list(night.shares.values())
        want = t_interval(values, bounds=night.bounds) if ci == "t" else \
            mean_interval(values, bounds=night.bounds)
        assert steady["ci_oracle_share"] == pytest.approx(list(want))
        whiskers = []
        real_vlines = _charts._plt().Axes.vlines

        def vlines(self, x, low, high, **kw):
            whiskers.append((low / 100, high / 100))
            return real_vlines(self, x, low, high, **kw)

        monkeypatch.setattr(_charts._plt().Axes, "vlines", vlines)
        write_trend_chart(trend, tmp_path / ci)
        monkeypatch.undo()
        drawn = [v for pair in sorted(whiskers) for v in pair]
        shown = [v for pair in sorted(tuple(n.ci_oracle_share) for n in trend.nights
                                      if n.ci_oracle_share is not None) for v in pair]
        assert drawn == pytest.approx(shown) and drawn
    assert main(["trend", "--db", db]) == 0
    assert T_METHOD.split(" (")[0] in " ".join(capsys.readouterr().out.split())
    import contextlib
    import io

    help_text = io.StringIO()
    with contextlib.redirect_stdout(help_text), pytest.raises(SystemExit):
        main(["trend", "--help"])
    assert "bootstrap" not in help_text.getvalue()
    assert "--ci" in help_text.getvalue()
