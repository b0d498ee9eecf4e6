"""``query_sql``'s sandbox against hostile queries (SPEC §2.1)."""

from __future__ import annotations

import os

import pytest

from vendbench.environment import make

from ..conftest import next_day, stock_machine


@pytest.fixture
def env():
    env = make("autovend", seed=1, days=30, daily_tool_calls=10**9, sql_time_limit_s=0.5)
    stock_machine(env, quantity=40, ordered=60)
    next_day(env, 2)
    return env


def sql(env, text: str) -> dict:
    return env.call("query_sql", {"sql": text})


def test_reads_the_agents_own_records(env):
    out = sql(env, "SELECT machine_id, product_id, sum(units_sold) AS units, sum(revenue) "
                   "FROM sales GROUP BY ALL")
    assert out["ok"] and out["columns"][:3] == ["machine_id", "product_id", "units"]
    report = env.call("get_sales_report", {"window": 30})["totals"]
    assert out["rows"][0][:2] == ["M01", "P0001"]
    assert out["rows"][0][2:] == [report["units"], report["revenue"]]
    for view in ("catalog", "machines", "daily_pnl", "orders", "machine_inventory",
                 "warehouse"):
        assert sql(env, f"SELECT count(*) FROM {view}")["ok"], view
    out = sql(env, "WITH d AS (SELECT * FROM daily_pnl) SELECT max(day) FROM d")
    assert out["rows"] == [[env.day - 1]]


def test_sees_new_days_as_they_happen(env):
    before = sql(env, "SELECT count(*) FROM daily_pnl")["rows"][0][0]
    next_day(env)
    assert sql(env, "SELECT count(*) FROM daily_pnl")["rows"][0][0] == before + 1


def test_at_most_50_rows(env):
    out = sql(env, "SELECT * FROM catalog")
    assert len(out["rows"]) == 50 and out["truncated"]
    assert not sql(env, "SELECT * FROM catalog LIMIT 5")["truncated"]


def test_no_hidden_parameter_is_reachable(env):
    cols = sql(env, "SELECT column_name FROM information_schema.columns")
    names = " ".join(r[0] for r in cols["rows"]).lower()
    assert "popular" not in names and "elastic" not in names and "attraction" not in names
    assert "popularity" not in str(sql(env, "SELECT * FROM catalog LIMIT 1")).lower()


@pytest.mark.parametrize("query", [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM read_parquet('/tmp/x.parquet')",
    "SELECT * FROM glob('/*')",
    "SELECT getenv('HOME')",
    "SELECT * FROM 'pyproject.toml'",
    "COPY (SELECT 1) TO '/tmp/vendbench_leak.csv'",
    "ATTACH '/tmp/other.duckdb' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "PRAGMA version",
    "CREATE TABLE t AS SELECT 1",
    "INSERT INTO _sales VALUES (1, 'M01', 'P0001', 1, 1, 1, 1)",
    "DELETE FROM _sales",
    "DROP VIEW sales",
    "UPDATE _catalog SET unit_cost_fen = 0",
    "SELECT 1; DROP VIEW sales",
    "SELECT 1; SELECT 2",
    "EXPORT DATABASE '/tmp/dump'",
    "CALL pragma_version()",
    "SELECT * FROM secret_python_variable",
    "",
    "SELEC 1",
])
def test_hostile_queries_are_refused_and_change_nothing(env, query):
    before = sql(env, "SELECT count(*), sum(units_sold) FROM sales")["rows"]
    out = sql(env, query)
    assert not out["ok"] and out["error"], query
    assert "Traceback" not in out["error"]
    assert sql(env, "SELECT count(*), sum(units_sold) FROM sales")["rows"] == before
    assert not os.path.exists("/tmp/vendbench_leak.csv")


def test_runaway_queries_are_stopped(env):
    out = sql(env, "SELECT count(*) FROM range(100000000000) a")
    assert not out["ok"] and "stopped after" in out["error"]
    assert sql(env, "SELECT 42")["rows"] == [[42]]          # the sandbox still works


def test_memory_bombs_fail_cleanly(env):
    out = sql(env, "SELECT list(range) FROM range(200000000)")
    assert not out["ok"]
    assert sql(env, "SELECT 1")["ok"]


def test_each_environment_has_its_own_database():
    a = make("autovend", seed=1, days=5)
    b = make("autovend", seed=2, days=5)
    a.call("write_notes", {"text": "a"})
    a.call("place_order", {"items": [{"product_id": "P0001", "quantity": 3}]})
    assert a.call("query_sql", {"sql": "SELECT count(*) FROM orders"})["rows"] == [[1]]
    assert b.call("query_sql", {"sql": "SELECT count(*) FROM orders"})["rows"] == [[0]]
