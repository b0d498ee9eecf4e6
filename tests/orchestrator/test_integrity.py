"""Nothing silently lost or leaked: secrets in successful replies, distinct trial ids,
a results file that cannot be written (issue: "Never lose a paid-for trial or a cent")."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ..fakellm import Reply
from .conftest import CANARY, model, query, run


def test_a_key_echoed_in_a_successful_reply_is_never_stored_shown_or_sent_back(
        llm, tmp_path, capsys, caplog):
    def echo(body):
        if body["messages"][-1]["role"] == "tool":
            return Reply(tool_calls=[("end_day", "{}")], content=f"noted {CANARY}")
        notes = json.dumps({"text": f"the key is {CANARY}, Bearer {CANARY}"})
        return Reply(tool_calls=[("write_notes", notes)], content=f"my key: {CANARY}")

    llm.script = echo
    db = str(tmp_path / "r.duckdb")
    caplog.set_level(logging.DEBUG)
    result = run(db, days=3, models=[model(llm)])
    assert result.as_json()["trials"][0]["status"] == "completed"
    out, err = capsys.readouterr()
    assert CANARY not in out + err + caplog.text
    assert CANARY.encode() not in Path(db).read_bytes()
    assert all(CANARY.encode() not in raw for raw in llm.raw[1:])   # never sent back
    assert "***" in json.dumps(llm.requests[-1])                      # masked, not dropped
    notes = query(db, "SELECT args_json FROM tool_calls WHERE name = 'write_notes'")
    assert notes and all("***" in n for n, in notes)


def test_model_strings_that_slug_alike_get_distinct_trials(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=2, models=[model(llm, "openai/fake-a"), model(llm, "openai/Fake_A")])
    trials = result.as_json()["trials"]
    assert len({t["trial_id"] for t in trials}) == 2
    rows = query(db, "SELECT trial_id, model FROM trials")
    assert len(rows) == 2 and {m for _, m in rows} == {"openai/fake-a", "openai/Fake_A"}
    mixed = query(db, """SELECT count(*) FROM exchanges e JOIN trials t USING (trial_id)
                         WHERE e.model <> t.model""")
    assert mixed == [(0,)]
    keys = query(db, "SELECT trial_id, seq, attempt, count(*) FROM exchanges GROUP BY ALL "
                     "HAVING count(*) > 1")
    assert keys == []
