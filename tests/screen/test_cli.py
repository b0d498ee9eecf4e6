"""``vendbench screen`` as a user runs it, and its findings in the leaderboard (a flags
column, a note, --flags, JSON and CSV) and the viewer (each at its call)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from ..test_cli import run_cli


@pytest.fixture(scope="module")
def arena_db(tmp_path_factory):
    """A network arena where baseline/colluder proposes a price floor on day 1."""
    db = str(tmp_path_factory.mktemp("cli") / "arena.duckdb")
    done = run_cli("arena", "baseline/colluder", "baseline/order-up-to", "--scenario",
                   "network", "--days", "4", "--seeds", "1", "2", "--db", db)
    assert done.returncode == 0, done.stderr
    return db


def test_screen_reports_what_each_scanner_found_and_the_board_flags_it(arena_db):
    done = run_cli("screen", "--db", arena_db, "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["trials"] == 4 and report["findings"]["collusion"] == {"high": 2}
    assert "scanning trials: 4/4" in done.stderr
    board = run_cli("leaderboard", "--arena", "--db", arena_db, "--format", "json")
    assert board.returncode == 0, board.stderr
    data = json.loads(board.stdout)
    assert {r["model"]: r["flags"] for r in data["rows"]} == {"baseline/colluder": 2,
                                                             "baseline/order-up-to": 0}
    assert {f["category"] for f in data["findings"]} == {"collusion"}
    listed = run_cli("leaderboard", "--arena", "--db", arena_db, "--flags").stdout
    assert "flags (2):" in listed and "baseline/colluder seed 1, day 1: collusion" in listed


def test_the_leaderboard_shows_flags_and_lists_them(tmp_path):
    db = str(tmp_path / "ref.duckdb")
    assert run_cli("run", "--models", "baseline/order-up-to", "baseline/idle", "--days", "5",
                   "--seeds", "1", "--db", db).returncode == 0
    before = run_cli("leaderboard", "--db", db)
    assert "flags" not in before.stdout                 # nothing screened: no column
    assert run_cli("screen", "--db", db).returncode == 0
    text = run_cli("leaderboard", "--db", db, "--flags")
    assert text.returncode == 0, text.stderr
    assert text.stdout.splitlines()[0].rstrip().endswith("flags")
    assert "0 in 2 screened trial(s)" in " ".join(text.stdout.split())   # the footer
    assert "no flags: the screened trials show nothing" in text.stdout
    data = json.loads(run_cli("leaderboard", "--db", db, "--format", "json").stdout)
    assert data["findings"] == [] and {r["flags"] for r in data["rows"]} == {0}
    rows = list(csv.DictReader(io.StringIO(
        run_cli("leaderboard", "--db", db, "--format", "csv").stdout)))
    assert {r["flags"] for r in rows} == {"0"} and {r["screened"] for r in rows} == {"1"}


def test_a_flag_is_listed_with_its_day_and_shown_in_the_viewer(tmp_path):
    from vendbench.results import FindingRow, Screening, Store, now

    db = str(tmp_path / "one.duckdb")
    assert run_cli("run", "--models", "baseline/order-up-to", "--days", "3", "--seeds", "1",
                   "--db", db).returncode == 0
    with Store(db) as store:
        trial = Screening(store).trials()[0]["trial_id"]
        call = store.trial_calls(trial)[0]
        Screening(store).replace(trial, "probe", "9", None, "screen-x", [FindingRow(
            trial, "probe", "9", None, call["day"], None, None, call["seq"], "probe_kind",
            "high", "the words", "why it matters", "screen-x", now())])
    text = run_cli("leaderboard", "--db", db, "--flags").stdout
    assert f"baseline/order-up-to seed 1, day {call['day']}: probe_kind (high, probe): " \
           f"\"the words\" why it matters [{trial}]" in text
    site = tmp_path / "site"
    assert run_cli("view", "--db", db, "--static", str(site)).returncode == 0
    page = (site / "trial" / trial / "index.html").read_text()
    assert f'href="day-{call["day"]}.html#call-{call["seq"]}">{call["day"]}</a>' in page
    assert "probe_kind (high): why it matters" in page
    day = (site / "trial" / trial / f"day-{call['day']}.html").read_text()
    assert "Findings this day" in day and f'id="call-{call["seq"]}"' in day


@pytest.mark.parametrize("args,words", [
    (["--judge", "openai/gpt-4.1-mini"], "--judge needs --budget"),
    (["--budget", "1"], "need --judge MODEL"),
    (["--scanners", "nope"], "no scanner nope"),
    (["--run", "nope"], "no run 'nope'"),
    (["--judge", "openai/no-such-model-xyz", "--budget", "1"], "no price"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, words):
    db = str(tmp_path / "x.duckdb")
    assert run_cli("run", "--models", "baseline/idle", "--days", "2", "--seeds", "1",
                   "--db", db).returncode == 0
    done = run_cli("screen", "--db", db, *args)
    assert done.returncode == 2 and words in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_the_forecast_needs_no_key_and_writes_nothing(tmp_path):
    import os

    from ..orchestrator.conftest import query

    db = str(tmp_path / "x.duckdb")
    assert run_cli("run", "--models", "baseline/idle", "--days", "2", "--seeds", "1",
                   "--db", db).returncode == 0
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    done = run_cli("screen", "--db", db, "--judge", "openai/gpt-4.1-mini", "--forecast",
                   env=env)
    assert done.returncode == 0, done.stderr
    forecast = json.loads(done.stdout)
    # an in-process policy's trial has no messages: nothing for a judge to read
    assert forecast["chunks"] == 0 and forecast["expected_usd"] == 0
    assert query(db, "SELECT count(*) FROM screens")[0][0] == 0
