"""One score, one name (design §12.7): each scenario names its score once, and the baseline
command, run summaries, the leaderboard, its charts and report use that name and that
quantity (the network: the final bank balance, plotted day by day as the bank)."""

from __future__ import annotations

import json
import re

import pytest

from vendbench.cli import main
from vendbench.environment import score_column, score_name
from vendbench.leaderboard import build, html_report, write_charts
from vendbench.results import Store


@pytest.mark.parametrize("scenario,name,column", [("autovend", "net assets", "net_assets"),
                                                  ("network", "final bank balance", "cash")])
def test_each_scenario_names_its_score_once(scenario, name, column):
    assert score_name(scenario) == name and score_column(scenario) == column


def test_the_network_says_final_bank_balance_everywhere(tmp_path, capsys):
    assert main(["baseline", "--scenario", "network", "--policy", "all", "--seeds", "1", "2",
                 "--days", "6"]) == 0
    out = capsys.readouterr().out
    assert "final bank balance" in out and "net assets" not in out
    assert main(["baseline", "--scenario", "network", "--days", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["score_name"] == "final bank balance"

    db = str(tmp_path / "n.duckdb")
    assert main(["run", "--models", "baseline/order-up-to", "baseline/oracle", "--seeds",
                 "1", "2", "--scenario", "network", "--days", "10", "--db", db]) == 0
    assert "final bank balance" in capsys.readouterr().out        # the run's summary
    assert main(["leaderboard", "--db", db]) == 0
    assert "final bank balance" in capsys.readouterr().out
    board = build(db)
    with Store(db, read_only=True) as store:
        trials = {(t["model"], t["seed"]): t for t in store.trials(store.runs()[0]["run_id"])}
    assert board.score_name == "final bank balance"
    for model, runs in board.trajectories.items():            # the score's own quantity:
        finals = sorted(run[-1] for run in runs)                # it ends on the score
        assert finals == sorted(t["score"] for (m, _), t in trials.items()
                                if m == model)
    for r in board.rows:                                        # profit is the score's too
        mine = [t for (m, _), t in trials.items() if m == r.model]
        profit = sum(t["score"] - 1500 for t in mine) / len(mine)
        assert r.operations["profit"] == pytest.approx(profit)
    texts = [p.read_text() for p in write_charts(board, tmp_path / "charts")
             if p.suffix == ".svg"]
    report = html_report(board)
    for text in (*texts, report):
        assert not re.search(r"net.assets|net-asset", text, re.I), text[:200]
    assert all("final bank balance" in t.lower() for t in texts[:2]) and \
        "terminal final bank balance" in report.lower()


def test_autovend_keeps_net_assets(tmp_path, capsys):
    assert main(["baseline", "--days", "2"]) == 0
    out = capsys.readouterr().out
    assert "net assets" in out and "bank balance" not in out
