"""The typed writer and reader of ``results`` match the file's schema: a typed row's
fields are its table's columns, and what the reader returns has its type's keys."""

from __future__ import annotations

import typing

from vendbench.cli import main
from vendbench.results import (APPENDED_TYPES, COLUMNS, DDL, RunInfo, RunSummary, Store,
                               TrialInfo)


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
