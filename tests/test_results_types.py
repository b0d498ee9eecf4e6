"""The typed writer and reader of ``results`` match the file's schema: a typed row's
fields are its table's columns, and what the reader returns has its type's keys."""

from __future__ import annotations

import datetime as dt
import typing
from decimal import Decimal

from vendbench.cli import main
from vendbench.results import (APPENDED_TYPES, COLUMNS, DDL, RunInfo, RunSummary, Store,
                               Tokens, TrialInfo, TrialLog, TrialRecord)


def _columns(con, table: str) -> list[str]:
    return [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]


def test_typed_rows_and_reads_are_the_schema(tmp_path, capsys):
    db = str(tmp_path / "r.duckdb")
    assert main(["run", "--models", "baseline/order-up-to", "--days", "2", "--db", db,
                 "--json"]) == 0
    capsys.readouterr()
    with Store(db, read_only=True) as store:
        for row_type in APPENDED_TYPES:            # every appended row: its table's columns
            assert list(COLUMNS[row_type.TABLE]) == _columns(store.con, row_type.TABLE)
        run = store.run("latest")
        assert set(run) == set(typing.get_type_hints(RunInfo)) == \
            set(_columns(store.con, "runs"))
        (trial,) = store.trials(run["run_id"])
        assert set(trial) == set(typing.get_type_hints(TrialInfo)) == \
            set(_columns(store.con, "trials"))
        (summary,) = store.runs()
        assert set(summary) == set(typing.get_type_hints(RunSummary))
        assert summary["cost_usd"] == 0            # a policy costs nothing, and is priced
    assert "CREATE TABLE IF NOT EXISTS days" in DDL


class _Direct:
    """A sink that writes each row at once (as ``serve`` does)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def put_row(self, row) -> None:
        sql, values = row.statement()
        self.store.con.execute(sql, values)


def test_a_trial_record_writes_every_column_of_its_table_and_reads_back(tmp_path):
    """One shape (design §21): the record's upsert is built from its fields and names every
    column of ``trials``; what ``Store.trials`` reads back is the same record; its reason
    is redacted on the way in; ``as_json`` prints what ``run --json`` promises."""
    t0 = dt.datetime(2026, 12, 3, 6, 0, 0)
    record = TrialRecord(
        "r-m-s3-r2", "r", "openai/m", 2026, 3, 2, 1, "budget_exhausted",
        "needs $0.02 but only $0.01 (key sk-abcdefghijklmnopqrstuvwxyz0123)", 40_000.0,
        39_000.25, 52_000.5, 52_000.5, Decimal("0.012345678"), Decimal("0.05"),
        Tokens(1_000, 200, 600, 100), 7, 9, 4, t0, t0 + dt.timedelta(seconds=90.5))
    db = str(tmp_path / "t.duckdb")
    with Store(db) as store:
        assert sorted(TrialRecord.columns()) == sorted(_columns(store.con, "trials"))
        TrialLog(_Direct(store), record.trial_id, record.model).trial(record)
        (row,) = store.trials("r")
    assert set(row) == set(typing.get_type_hints(TrialInfo))
    back = TrialRecord.of(row)
    assert back.reason.startswith("needs $0.02 but only $0.01 (key ")
    assert "sk-abcdefghijklmnopqrstuvwxyz0123" not in back.reason
    assert back == TrialRecord(**{**{f: getattr(record, f) for f in record.__slots__},
                                  "reason": back.reason})
    assert row["wall_seconds"] == 90.5 and row["cache_read_tokens"] == 600
    printed = record.as_json()
    assert {"trial_id", "model", "seed", "repeat", "status", "final_net_assets", "cost_usd",
            "exchanges", "tool_calls"} <= set(printed)
    assert printed["cost_usd"] == 0.012345678 and printed["cached_share"] == 0.6
    assert "run_id" not in printed and "started_at" not in printed
    assert record.as_json(times=True)["wall_seconds"] == 90.5


def test_an_unpriced_run_costs_unknown_not_zero(tmp_path):
    """Store.runs sums the trials' costs; when none was priced the sum is unknown."""
    db = str(tmp_path / "u.duckdb")
    with Store(db) as store:
        store.con.execute("INSERT INTO runs (run_id, created_at, scenario, days, status) "
                          "VALUES ('r', now(), 'autovend', 2, 'completed')")
        store.con.execute("INSERT INTO trials (trial_id, run_id, model, status, cost_usd) "
                          "VALUES ('t', 'r', 'openai/x', 'completed', NULL)")
        (summary,) = store.runs()
    assert summary["cost_usd"] is None


def test_a_killed_runs_cost_is_what_its_trials_were_charged(tmp_path):
    """A run killed mid-trial leaves its trials marked running with the cost of their
    start: the listing counts what their exchanges were charged instead."""
    from decimal import Decimal

    db = str(tmp_path / "k.duckdb")
    with Store(db) as store:
        store.con.execute("INSERT INTO runs (run_id, created_at, scenario, days, status) "
                          "VALUES ('r', now(), 'autovend', 2, 'running')")
        for trial, charged in (("a", ("0.0100", "0.0088")), ("b", ("0.0169",))):
            store.con.execute("INSERT INTO trials (trial_id, run_id, model, status, "
                              "cost_usd) VALUES (?, 'r', 'openai/x', 'running', 0)", [trial])
            for seq, cost in enumerate(charged, 1):
                store.con.execute("INSERT INTO exchanges (trial_id, seq, attempt, cost_usd) "
                                  "VALUES (?, ?, 1, ?)", [trial, seq, Decimal(cost)])
        (summary,) = store.runs()
    assert summary["cost_usd"] == Decimal("0.0357")


def test_a_run_counts_every_trial_it_plans_begun_or_not(tmp_path):
    """`runs` showed "running 0/8" for a run of 12 trials: only those begun were counted
    (design §31.5). A run counts models (an arena: seats) × worlds × seeds × repeats from
    its config; a run that plans none (a served run) counts what began."""
    import json

    db = str(tmp_path / "p.duckdb")
    plans = {"panel": {"models": [{"id": "a"}, {"id": "b"}], "seeds": [1, 2, 3],
                       "world_seeds": [1, 2], "repeats": 1},
             "arena": {"models": [{"id": "a"}, {"id": "b"}], "seats": ["a", "b", "b"],
                       "seeds": [1, 2], "world_seeds": [7], "repeats": 2},
             "served": {"harness": "mcp"}}
    with Store(db) as store:
        for run, config in plans.items():
            store.con.execute("INSERT INTO runs (run_id, created_at, scenario, days, status, "
                              "config_json) VALUES (?, now(), 'autovend', 2, 'running', ?)",
                              [run, json.dumps(config)])
        for trial in ("t1", "t2"):
            for run in plans:
                store.con.execute("INSERT INTO trials (trial_id, run_id, model, status) "
                                  "VALUES (?, ?, 'a', 'running')", [f"{run}-{trial}", run])
        counted = {r["run_id"]: (r["started"], r["trials"]) for r in store.runs()}
    assert counted == {"panel": (2, 12), "arena": (2, 12), "served": (2, 2)}


def test_a_logged_request_is_written_and_read_in_one_type():
    """``request_json`` has one type (design §21): what a request logs reads back the same,
    byte for byte as files have always held it, and a file of an older vendbench (fewer
    keys, lists) reads too."""
    from vendbench.results import LoggedRequest

    logged = LoggedRequest("openai/m", (0, 1, 5), 4096, 0.2, None, "auto", (1, 5), "t-1",
                           12_345)
    text = logged.json()
    assert LoggedRequest.parse(text) == logged
    assert text == ('{"cache_key":"t-1","cache_points":[1,5],"counted_tokens":12345,'
                    '"max_tokens":4096,"message_ids":[0,1,5],"model":"openai/m",'
                    '"reasoning_effort":null,"temperature":0.2,"tool_choice":"auto",'
                    '"tools":"run"}')
    old = LoggedRequest.parse('{"model": "openai/m", "message_ids": [0, 2], "tools": "run", '
                              '"max_tokens": 100, "someday": 1}')
    assert old.message_ids == (0, 2) and old.counted_tokens == 0 and old.cache_points == ()
    assert logged.parameters()["cache_points"] == [1, 5]


def test_a_results_file_of_schema_8_gets_its_replies_in_vendbenchs_shape(tmp_path):
    """Before schema 9 only the provider's raw reply was kept: opening such a file reads
    each reply's text, reasoning and calls out of it once, into ``reply_json``."""
    import json

    db = str(tmp_path / "old.duckdb")
    with Store(db) as store:
        raw = {"choices": [{"message": {"role": "assistant", "content": "restocking",
                                        "reasoning_content": "cola sells",
                                        "tool_calls": [{"id": "c1", "type": "function",
                                                        "function": {"name": "end_day",
                                                                     "arguments": "{}"}}]}}]}
        store.con.execute("INSERT INTO exchanges (trial_id, seq, attempt, status, "
                          "response_json) VALUES ('t', 1, 1, 'ok', ?), "
                          "('t', 2, 1, 'ok', '{\"choices\": [{\"message\": {}}]}'), "
                          "('t', 3, 1, 'timeout', NULL)", [json.dumps(raw)])
        store.con.execute("ALTER TABLE exchanges DROP COLUMN reply_json")
        store.con.execute("UPDATE meta SET value = '8' WHERE key = 'schema_version'")
    with Store(db) as store:
        rows = store.con.execute("SELECT seq, reply_json FROM exchanges ORDER BY seq"
                                 ).fetchall()
    replies = {seq: json.loads(r) if r else None for seq, r in rows}
    assert replies[1] == {"text": "restocking", "reasoning": "cola sells",
                          "tool_calls": raw["choices"][0]["message"]["tool_calls"]}
    assert replies[2] == {"text": "", "reasoning": "", "tool_calls": []}
    assert replies[3] is None


def test_a_reader_of_a_live_run_takes_the_oracle_scores_kept_and_computes_none(tmp_path):
    """While a run writes the file the anchors of its shares are its to compute: a reader
    that computed the missing ones kept `leaderboard --arena` silent for 89 s (design §30).
    A key needs both doing nothing's score and the oracle's (design §34)."""
    from vendbench.environment import Anchors
    from vendbench.results import CeilingRow, FloorRow, anchors_for

    db = str(tmp_path / "c.duckdb")
    when = dt.datetime(2026, 11, 1)
    with Store(db) as store:
        store.write(CeilingRow("network", 2026, 1, "", 5, "baseline/oracle@3", 123.0, when))
        store.write(FloorRow("network", 2026, 1, "", 5, "baseline/idle", 45.0, when))
        store.write(CeilingRow("network", 2026, 3, "", 5, "baseline/oracle@3", 99.0, when))
        keys = [(2026, 1), (2026, 2), (2026, 3)]
        assert anchors_for(store, "network", 5, keys, None, None, compute=False) == {
            (2026, 1): Anchors(45.0, 123.0)}               # seed 3 lacks doing nothing's
        computed = anchors_for(store, "network", 5, keys, None, None)
        # the two tables keep one score a key each: the oracle's row is not replaced
        assert store.ceilings("network", 5, None)[(2026, 1)] == 123.0
    assert computed[(2026, 1)] == Anchors(45.0, 123.0) and computed[(2026, 3)].oracle == 99.0
    assert computed[(2026, 2)].oracle > 0 and computed[(2026, 3)].idle == \
        computed[(2026, 2)].idle == 1_500 - 5 * 12               # rent alone, five days
