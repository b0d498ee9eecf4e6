"""A multi-model, multi-seed run end to end through litellm's real HTTP path."""

from __future__ import annotations

import json

from vendbench.providers import rebuild_request
from vendbench.results import Store

from ..fakellm import FakeLLM
from .conftest import model, query, run


def test_models_and_seeds_end_to_end(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=4, seeds=[1, 2], models=[
        model(llm, "openai/fake-a"), model(llm, "openai/fake-b"), {"id": "baseline/oracle"}])
    trials = result.as_json()["trials"]
    assert len(trials) == 6 and {t["status"] for t in trials} == {"completed"}
    assert {(t["model"], t["seed"]) for t in trials} == {
        (m, s) for m in ("openai/fake-a", "openai/fake-b", "baseline/oracle") for s in (1, 2)}
    llm_trials = [t for t in trials if t["model"].startswith("openai/")]
    # every request that reached the server is an exchange in the log, and vice versa
    assert sum(t["exchanges"] for t in llm_trials) == len(llm.requests) == \
        query(db, "SELECT count(*) FROM exchanges")[0][0]
    assert {r["model"] for r in llm.requests} == {"fake-a", "fake-b"}
    assert all(t["cost_usd"] > 0 for t in llm_trials)
    oracle = [t for t in trials if t["model"] == "baseline/oracle"]
    assert all(t["exchanges"] == 0 and t["tool_calls"] > 0 and t["cost_usd"] == 0
               for t in oracle)
    # one day row per simulated day, sales rows, tool calls for every trial
    assert query(db, "SELECT count(*) FROM days")[0][0] == 6 * 4
    per_trial = dict(query(db, "SELECT trial_id, count(*) FROM tool_calls GROUP BY 1"))
    assert len(per_trial) == 6
    assert query(db, "SELECT count(*) FROM sales")[0][0] > 0
    # cost in the trials table is the sum of its exchanges, to the billionth of a dollar
    rows = query(db, """SELECT t.cost_usd, sum(e.cost_usd) FROM trials t JOIN exchanges e
                        USING (trial_id) GROUP BY t.trial_id, t.cost_usd""")
    assert rows and all(a == b for a, b in rows)


def test_each_request_can_be_rebuilt_exactly(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    run(db, days=3, models=[model(llm)])
    with Store(db, read_only=True) as store:
        trial = store.con.execute("SELECT trial_id FROM trials").fetchone()[0]
        n = store.con.execute("SELECT count(*) FROM exchanges").fetchone()[0]
        for seq, sent in zip(range(1, n + 1), llm.requests):
            rebuilt = rebuild_request(store, trial, seq)
            assert rebuilt["messages"] == sent["messages"]
            assert rebuilt["max_tokens"] == sent["max_tokens"] == 512


def test_the_run_records_its_provenance(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    result = run(db, models=[model(llm)], name="provenance")
    run_row = query(db, "SELECT name, code_version, prompt_sha256, tools_sha256, prompts_json, "
                        "tools_json, prices_json, config_json, status FROM runs")[0]
    name, version, p_hash, t_hash, prompts, tools, prices, config, status = run_row
    assert name == "provenance" and version.startswith("0.1.0") and status == "completed"
    assert len(p_hash) == len(t_hash) == 64
    assert "net assets" in json.loads(prompts)["system"]
    assert len(json.loads(tools)) == 18
    assert json.loads(prices)["openai/fake-model"]["input"] == "0.4"
    assert json.loads(config)["models"][0]["id"] == "openai/fake-model"
    assert result.status == "completed"


def test_log_grows_linearly_over_a_60_day_trial(llm, tmp_path):
    sizes = {}
    for days in (30, 60):
        db = str(tmp_path / f"r{days}.duckdb")
        run(db, days=days, models=[model(llm, max_context_tokens=6000)])
        messages, chars = query(db, "SELECT count(*), sum(length(content_json)) FROM messages")[0]
        requests = query(db, "SELECT sum(length(request_json)) FROM exchanges")[0][0]
        distinct = query(db, "SELECT count(DISTINCT msg_id) FROM messages")[0][0]
        assert distinct == messages                       # each message stored once
        sizes[days] = (chars + requests, messages)
    ratio = sizes[60][0] / sizes[30][0]
    assert 1.7 < ratio < 2.3, sizes                        # linear, not quadratic (4x)
    assert sizes[60][1] / sizes[30][1] < 2.2


def test_a_results_file_of_another_schema_is_refused_plainly(tmp_path):
    import duckdb
    import pytest

    from vendbench.errors import ResultsError

    db = str(tmp_path / "old.duckdb")
    con = duckdb.connect(db)
    con.execute("CREATE TABLE meta(key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    con.close()
    for read_only in (True, False):
        with pytest.raises(ResultsError, match="schema 1"):
            Store(db, read_only=read_only)
    other = str(tmp_path / "other.duckdb")
    con = duckdb.connect(other)
    con.execute("CREATE TABLE something(x INTEGER)")
    con.close()
    with pytest.raises(ResultsError, match="not a vendbench results file"):
        Store(other, read_only=True)


def test_top_p_and_a_sampling_seed_are_sent_logged_and_part_of_the_name(tmp_path, capsys,
                                                                         monkeypatch):
    """design §35.7: top_p and the provider's sampling seed beside temperature: sent as
    the provider takes them, kept in the logged request (so a request is rebuilt byte
    for byte), part of the model's name (two seeds are two models), and said in `check`
    where a provider has none."""
    import json as _json

    from vendbench.cli import main
    from vendbench.providers import rebuild_request
    from vendbench.results import Store

    db = str(tmp_path / "r.duckdb")
    with FakeLLM() as llm:
        assert main(["run", "--models", "openai/fake", "--api-base", llm.url, "--price",
                     "openai/fake=0.4,1.6", "--top-p", "0.9", "--sampling-seed", "7",
                     "--temperature", "0.2", "--days", "1", "--db", db, "--json"]) == 0
        sent = llm.requests[0]
    (trial,) = _json.loads(capsys.readouterr().out)["trials"]
    assert trial["model"] == "openai/fake [temperature=0.2, top_p=0.9, seed=7]"
    assert (sent["top_p"], sent["seed"], sent["temperature"]) == (0.9, 7, 0.2)
    with Store(db, read_only=True) as store:
        logged = _json.loads(store.con.execute(
            "SELECT request_json FROM exchanges ORDER BY seq LIMIT 1").fetchone()[0])
        rebuilt = rebuild_request(store, trial["trial_id"], 1)
    assert (logged["top_p"], logged["seed"]) == (0.9, 7)
    assert (rebuilt["top_p"], rebuilt["seed"]) == (0.9, 7)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-seed")
    assert main(["check", "--models", "anthropic/claude-sonnet-4-5", "--sampling-seed", "7",
                 "--days", "30", "--no-request"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "anthropic/claude-sonnet-4-5 [seed=7]: ready" in out
    assert "the sampling seed is dropped: anthropic/claude-sonnet-4-5's API takes none" in out
