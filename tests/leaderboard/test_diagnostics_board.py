"""``leaderboard --diagnostics`` (design §32.1): per model the diagnostics and failure
modes beside the reference policies', in every format; each instance names the exchange
whose reply made it, as stored."""

from __future__ import annotations

import csv
import io
import json
import re

from vendbench.cli import main
from vendbench.results import Store

from ..fakellm import FakeLLM, Reply, vending_script


def rocket_on_day_2(body: dict) -> Reply:
    """The tests' mini-agent, but on day 2 it calls a tool the world lacks."""
    last = body["messages"][-1]
    if last["role"] == "user" and re.search(r"Day 2 of", str(last.get("content"))):
        return Reply(tool_calls=[("launch_rocket", "{}")])
    return vending_script(body)


def test_leaderboard_diagnostics_in_every_format(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-diagnostics")
    db = str(tmp_path / "r.duckdb")
    with FakeLLM(script=rocket_on_day_2) as llm:
        assert main(["run", "--models", "openai/fake-model", "baseline/idle",
                     "baseline/order-up-to", "--api-base", llm.url, "--price",
                     "openai/fake-model=0.4,1.6", "--days", "3", "--seeds", "1", "--db", db,
                     "--json"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--diagnostics", "--format", "json"]) == 0
    out, err = capsys.readouterr()
    d = json.loads(out)["diagnostics"]
    assert "diagnosing trials: 3/3" in err
    rows = {r["model"]: r for r in d["rows"]}
    assert set(rows) == {"openai/fake-model", "baseline/idle", "baseline/order-up-to"}
    assert rows["baseline/idle"]["failure_modes"]["idle_day"]["per_trial"] == 3
    assert rows["openai/fake-model"]["failure_modes"]["unknown_name"]["per_trial"] == 1
    (trial,) = [t for t in d["trials"].values() if t["model"] == "openai/fake-model"]
    (rocket,) = [i for i in trial["incidents"] if i["kind"] == "unknown_name"]
    assert rocket["day"] == 2 and "launch_rocket" in rocket["detail"]
    # the instance's exchange is the one whose reply made the call
    with Store(db, read_only=True) as store:
        (reply,) = store.con.execute(
            "SELECT e.reply_json FROM exchanges e JOIN trials t USING (trial_id) WHERE "
            "t.model = 'openai/fake-model' AND e.seq = ?", [rocket["exchange"]]).fetchone()
        (name,) = store.con.execute(
            "SELECT c.name FROM tool_calls c JOIN trials t USING (trial_id) WHERE "
            "t.model = 'openai/fake-model' AND c.seq = ?", [rocket["call"]]).fetchone()
    assert name == "launch_rocket" and "launch_rocket" in reply
    assert [x["name"] for x in d["declared"]][:3] == [
        "reassignment_gap", "visit_cycle_contribution", "empty_site_exposure"]
    # the table, Markdown and CSV carry them too
    assert main(["leaderboard", "--db", db, "--diagnostics"]) == 0
    table = capsys.readouterr().out
    assert "failure modes (instances per trial)" in table and "idle days" in table
    assert all(len(line) <= 80 for line in table.splitlines()), table
    assert main(["leaderboard", "--db", db, "--diagnostics", "--format", "markdown"]) == 0
    assert "| model" in capsys.readouterr().out
    assert main(["leaderboard", "--db", db, "--diagnostics", "--format", "csv"]) == 0
    by_model = {r["model"]: r for r in csv.DictReader(io.StringIO(capsys.readouterr().out))}
    assert float(by_model["baseline/idle"]["fail_idle_day_per_trial"]) == 3
    # the viewer's trial page lists the instance, linked to its call and its request
    site = tmp_path / "site"
    assert main(["view", "--db", db, "--static", str(site)]) == 0
    (page,) = (site / "trial").glob("*fake-model*/index.html")
    html = page.read_text()
    assert f'href="day-2.html#call-{rocket["call"]}"' in html
    assert f'href="day-2.html#exchange-{rocket["exchange"]}-1"' in html
    day = (page.parent / "day-2.html").read_text()
    assert f'id="call-{rocket["call"]}"' in day and \
        f'id="exchange-{rocket["exchange"]}-1"' in day
    capsys.readouterr()
    # without the flag nothing is replayed
    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0
    assert "diagnostics" not in json.loads(capsys.readouterr().out)
