"""``query_sql``'s sandbox against hostile queries (design §2.1)."""

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


def test_every_view_says_what_the_tools_say(env):
    """Each view, row for row, against the tool that shows the same records."""
    machines = env.call("list_machines", {})["machines"]
    out = sql(env, "SELECT machine_id, name, site_type, capacity FROM machines ORDER BY 1")
    assert out["rows"] == [[m["machine_id"], m["name"], m["site_type"], m["capacity"]]
                           for m in machines]
    assert len(out["rows"]) == 20 and {r[3] for r in out["rows"]} == {200}
    page = env.call("search_catalog", {"page_size": 50})["rows"]
    out = sql(env, "SELECT * FROM catalog ORDER BY product_id LIMIT 50")
    assert out["columns"] == ["product_id", "name", "subcategory", "unit_cost", "ref_price",
                              "shelf_life_days"]
    assert out["rows"] == [[r[c] for c in out["columns"]] for r in page]
    assert sql(env, "SELECT count(*) FROM catalog")["rows"] == [[1372]]
    orders = env.call("get_orders", {})["rows"]
    out = sql(env, "SELECT order_id, product_id, quantity, cost, status FROM orders")
    assert out["rows"] == [[o["order_id"], o["items"][0]["product_id"], o["items"][0]["quantity"],
                            o["cost"], "delivered"] for o in orders]
    shelf = env.call("get_machine_inventory", {"machine_id": "M01"})["listings"]
    out = sql(env, "SELECT product_id, units, expired_units, price FROM machine_inventory "
                   "WHERE machine_id = 'M01'")
    assert out["rows"] == [[x["product_id"], x["units"], x["expired"], x["price"]]
                           for x in shelf]
    stock = env.call("get_warehouse_inventory", {})["rows"]
    out = sql(env, "SELECT product_id, units, expired FROM warehouse")
    assert out["rows"] == [[b["product_id"], b["units"], b["expired"]] for b in stock]
    pnl = env.call("get_financials", {"window": 30})["days"]
    out = sql(env, "SELECT date, cash, net_assets, revenue, cost_of_goods, purchases, fees, "
                   "visit_fees, fines, waste, units_sold FROM daily_pnl ORDER BY day")
    assert out["rows"] == [[d[k] for k in ("date", "cash", "net_assets", "revenue", "cogs",
                                           "purchases", "fees", "visit_fees", "fines",
                                           "waste_cost", "units_sold")] for d in pnl]
    assert len(pnl) == env.day - 1


def test_the_sales_view_is_the_sales_records_row_for_row():
    """Twelve days of the baseline (many machines and products, varied prices): the view
    against the per-listing rows the environment hands to the results store."""
    from vendbench.environment import make_policy

    env = make("autovend", seed=2, days=30)
    policy = make_policy("order-up-to", env)
    while env.day <= 12:
        day = env.day
        policy.play_day(env.call, env.observe())
        if env.day == day:
            env.call("end_day", {})
    rows = env.drain_records()["sales"]
    assert len(rows) > 500 and len({r["price"] for r in rows}) > 10
    sums = sql(env, "SELECT count(*), sum(day), sum(price), sum(units_on_shelf), "
                    "sum(units_sold), sum(revenue), count(DISTINCT machine_id), "
                    "count(DISTINCT product_id) FROM sales")["rows"][0]
    assert sums[:2] == [len(rows), sum(r["day"] for r in rows)]
    assert sums[2:6] == pytest.approx([sum(r[k] for r in rows) for k in
                                       ("price", "units_on_shelf", "units_sold", "revenue")])
    assert sums[6:] == [len({r["machine_id"] for r in rows}), len({r["product_id"] for r in rows})]
    cols = ["day", "machine_id", "product_id", "price", "units_on_shelf", "units_sold", "revenue"]
    for day, machine in ((5, "M02"), (12, "M17")):
        out = sql(env, f"SELECT {', '.join(cols)}, gross_profit FROM sales WHERE day = {day} "
                       f"AND machine_id = '{machine}' ORDER BY product_id")
        mine = sorted((r for r in rows if r["day"] == day and r["machine_id"] == machine),
                      key=lambda r: r["product_id"])
        assert mine and [r[:7] for r in out["rows"]] == [[r[c] for c in cols] for r in mine]
        assert [r[7] for r in out["rows"]] == pytest.approx(
            [r["revenue"] - r["cogs"] for r in mine])


def test_sees_new_days_as_they_happen(env):
    before = sql(env, "SELECT count(*) FROM daily_pnl")["rows"][0][0]
    next_day(env)
    assert sql(env, "SELECT count(*) FROM daily_pnl")["rows"][0][0] == before + 1


def test_at_most_50_rows(env):
    out = sql(env, "SELECT * FROM catalog")
    assert len(out["rows"]) == 50 and out["truncated"]
    assert not sql(env, "SELECT * FROM catalog LIMIT 5")["truncated"]
    exactly = sql(env, "SELECT * FROM catalog LIMIT 50")
    assert len(exactly["rows"]) == 50 and not exactly["truncated"]
    assert sql(env, "SELECT * FROM catalog LIMIT 51")["truncated"]


def test_what_json_has_no_type_for_comes_back_as_text(env):
    out = sql(env, "SELECT INTERVAL 3 DAY, [1, 2], 'ab'::BLOB, NULL, 1.5, true, DATE '2026-04-02'")
    assert out["rows"] == [["3 days, 0:00:00", "[1, 2]", "b'ab'", None, 1.5, True, "2026-04-02"]]


def test_a_change_within_the_day_is_seen_at_once(env):
    before = sql(env, "SELECT count(*) FROM orders")["rows"][0][0]
    assert env.call("place_order", {"items": [{"product_id": "P0002", "quantity": 5}]})["ok"]
    out = sql(env, "SELECT count(*), max(expected_day - placed_day), max(placed_day) FROM orders")
    assert out["rows"] == [[before + 1, 3, env.day]]        # due on day t+3, as documented


def test_expiry_day_counts_as_expired_in_every_view():
    """A 30-day bread on the shelf and in the warehouse, on the day it expires."""
    env = make("autovend", seed=1, days=60, daily_tool_calls=10**9)
    bread = next(p for p in env.world.products if p.subcategory == "bread/cakes")
    env.call("place_order", {"items": [{"product_id": bread.id, "quantity": 40}]})
    next_day(env, 3)                                   # arrives on day 4, expires on day 34
    env.call("restock", {"items": [{"machine_id": "M01", "product_id": bread.id,
                                    "quantity": 30}]})
    next_day(env, 29)
    assert env.day == 33
    assert sql(env, "SELECT bool_or(expired) FROM warehouse")["rows"] == [[False]]
    shelf = sql(env, "SELECT expired_units FROM machine_inventory WHERE machine_id = 'M01'")
    assert shelf["rows"] == [[0]]                      # the day before: nothing expired yet
    next_day(env)
    tool = env.call("get_warehouse_inventory", {})["rows"]
    assert [r["expired"] for r in tool] == [True]
    assert sql(env, "SELECT bool_and(expired) FROM warehouse")["rows"] == [[True]]
    (listing,) = env.call("get_machine_inventory", {"machine_id": "M01"})["listings"]
    out = sql(env, "SELECT units, expired_units FROM machine_inventory WHERE machine_id = 'M01'")
    assert listing["expired"] == listing["units"] > 0          # what did not sell expired
    assert out["rows"] == [[listing["units"], listing["expired"]]]


@pytest.mark.parametrize("query,message", [
    ("SELEC 1", "query_sql: SQL does not parse: Parser Error"),
    ("SELECT 1; SELECT 2", "query_sql: send exactly one statement (got 2)"),
    ("DELETE FROM _sales", "query_sql: only SELECT (or WITH … SELECT) is allowed, not DELETE; "
                           "the data is read-only"),
])
def test_each_refusal_says_why(env, query, message):
    assert sql(env, query)["error"].startswith(message)


def test_a_runaway_query_is_told_how_to_narrow_itself(env):
    out = sql(env, "SELECT count(*) FROM catalog a, catalog b, catalog c, catalog d")
    assert out["error"] == ("query_sql: query stopped after 0.5 s; narrow it (filter by day, "
                            "aggregate, add LIMIT)")


def test_no_hidden_parameter_is_reachable(env):
    cols = sql(env, "SELECT column_name FROM information_schema.columns")
    names = " ".join(r[0] for r in cols["rows"]).lower()
    assert "popular" not in names and "elastic" not in names and "attraction" not in names
    assert "popularity" not in str(sql(env, "SELECT * FROM catalog LIMIT 1")).lower()


@pytest.mark.parametrize("query", [
    "SELECT * FROM read_csv('/etc/passwd')",
    "SELECT * FROM read_text('/etc/hostname')",
    "SELECT * FROM glob('/*')",
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


@pytest.fixture
def outside_files(tmp_path):
    """Files that a raw DuckDB reads without complaint (so that only the sandbox's own
    settings can stop a query that names them)."""
    import duckdb

    csv = tmp_path / "secret.csv"
    csv.write_text("k,v\nsecret,42\n")
    parquet = tmp_path / "secret.parquet"
    duckdb.connect().execute(f"COPY (SELECT 'secret' AS k) TO '{parquet}' (FORMAT parquet)")
    raw = duckdb.connect()
    for path in (csv, parquet):                    # the control: unguarded, they read
        assert raw.execute(f"SELECT count(*) FROM '{path}'").fetchone() == (1,)
    return {"csv": str(csv), "parquet": str(parquet)}


@pytest.mark.parametrize("template", [
    "SELECT * FROM '{csv}'", "SELECT * FROM read_csv('{csv}')",
    "SELECT * FROM read_parquet('{parquet}')", "SELECT * FROM '{parquet}'",
    "SELECT content FROM read_text('{csv}')",
])
def test_files_that_exist_are_out_of_reach(env, outside_files, template):
    out = sql(env, template.format(**outside_files))
    assert not out["ok"] and "disabled by configuration" in out["error"], out


def test_python_variables_in_scope_are_not_readable(env):
    import duckdb
    import numpy as np

    secret_rows = {"popularity": np.array([0.9, 0.1])}         # noqa: F841 (read by name)
    raw = duckdb.connect()                       # the control: a raw DuckDB finds it
    assert raw.execute("SELECT count(*) FROM secret_rows").fetchone() == (2,)
    out = sql(env, "SELECT * FROM secret_rows")
    assert not out["ok"] and "secret_rows" in out["error"], out


def _sandbox(env):
    sql(env, "SELECT 1")                          # the sandbox opens on first use
    return env._sql._con


@pytest.mark.parametrize("statement", [
    "SET memory_limit = '64GB'", "SET enable_external_access = true",
    "SET python_enable_replacements = true", "SET lock_configuration = false",
    "RESET memory_limit", "SET threads = 8",
])
def test_the_configuration_is_locked_behind_the_statement_gate(env, statement):
    """The gate refuses every SET; behind it, DuckDB itself refuses too."""
    import duckdb

    with pytest.raises(duckdb.Error, match="(?i)lock"):
        _sandbox(env).execute(statement)
    settings = dict(_sandbox(env).execute(
        "SELECT name, value FROM duckdb_settings() WHERE name IN ('memory_limit', "
        "'enable_external_access', 'python_enable_replacements', 'threads', "
        "'autoinstall_known_extensions', 'autoload_known_extensions')").fetchall())
    assert settings["enable_external_access"] == "false"
    assert settings["python_enable_replacements"] == "false" and settings["threads"] == "1"
    assert settings["autoinstall_known_extensions"] == "false"
    assert settings["autoload_known_extensions"] == "false"


@pytest.mark.parametrize("statement", [
    "COPY (SELECT 1) TO '{dir}/leak.csv'", "ATTACH '{dir}/other.duckdb' AS other",
    "INSTALL httpfs", "LOAD httpfs", "EXPORT DATABASE '{dir}/dump'",
])
def test_behind_the_gate_files_and_extensions_stay_out_of_reach(env, tmp_path, statement):
    import duckdb

    with pytest.raises(duckdb.Error):
        _sandbox(env).execute(statement.format(dir=tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_memory_bombs_stop_at_the_memory_limit_not_the_timer():
    """A query that needs a few hundred MB: fine for a raw DuckDB in a fraction of a
    second, refused by the sandbox's 256 MB limit (the timer is set far away)."""
    import duckdb

    bomb = ("SELECT length(list(a.name || b.name || c.name)) FROM catalog a, catalog b, "
            "(SELECT * FROM catalog LIMIT 30) c")
    control = duckdb.connect()
    control.execute("CREATE TABLE catalog AS SELECT 'Product number ' || i AS name "
                    "FROM range(1372) t(i)")
    assert control.execute(bomb).fetchone() == (1372 * 1372 * 30,)           # the control
    env = make("autovend", seed=1, days=5, sql_time_limit_s=60)
    out = sql(env, bomb)
    assert not out["ok"] and "memory" in out["error"].lower(), out
    assert sql(env, "SELECT 1")["ok"]


def test_runaway_queries_are_stopped(env):
    out = sql(env, "SELECT count(*) FROM catalog a, catalog b, catalog c, catalog d")
    assert not out["ok"] and "stopped after" in out["error"]
    assert sql(env, "SELECT 42")["rows"] == [[42]]          # the sandbox still works


def test_memory_bombs_fail_cleanly(env):
    out = sql(env, "SELECT list(a.name || b.name || c.name) FROM catalog a, catalog b, "
                   "catalog c")
    assert not out["ok"]
    assert sql(env, "SELECT 1")["ok"]


def test_each_environment_has_its_own_database():
    a = make("autovend", seed=1, days=5)
    b = make("autovend", seed=2, days=5)
    a.call("write_notes", {"text": "a"})
    a.call("place_order", {"items": [{"product_id": "P0001", "quantity": 3}]})
    assert a.call("query_sql", {"sql": "SELECT count(*) FROM orders"})["rows"] == [[1]]
    assert b.call("query_sql", {"sql": "SELECT count(*) FROM orders"})["rows"] == [[0]]


@pytest.mark.parametrize("query,message", [
    ("SELECT length(repeat('x', 240000000))", "repeat: its size must be a number written out"),
    ("SELECT repeat('x', units) FROM machine_inventory", "repeat: its size must be"),
    ("SELECT lpad('x', 100000000, 'y')", "lpad: its size must be"),
    ("SELECT sum(x) FROM range(100000000000) t(x)", "range: its size must be"),
    ("SELECT list_sum(generate_series(1, 1e9))", "generate_series: its size must be"),
    ("SELECT printf('%100000000s', 'x')", "printf: a field width over 999"),
    ("WITH RECURSIVE t(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM t "
     "WHERE length(s) < 1e9) SELECT length(max(s)) FROM t", "recursive CTEs are not allowed"),
])
def test_a_single_huge_value_is_refused_before_it_runs(env, query, message):
    """DuckDB checks its timer and memory limit between chunks, not inside one value:
    `length(repeat('x', 240000000))` ran 7.7 s past a 2 s timer and 763 MB past 256 MB.
    Sizes must be numbers written out (at most 1,000), and recursion is refused."""
    out = sql(env, query)
    assert not out["ok"] and message in out["error"], out   # the guard's words: not run
    assert sql(env, "SELECT repeat('*', 20) AS bar, list_sum(range(1000)) AS s")["rows"] \
        == [["*" * 20, 499500]]                          # small sizes written out are fine


def test_a_result_is_capped_in_bytes_with_a_note(env):
    everything = sql(env, "SELECT string_agg(name, ',') AS names FROM catalog")
    (cell,) = everything["rows"][0]
    assert len(cell) < 1_100 and cell.endswith("more characters]")
    assert "cut at 1,000 characters" in everything["note"]
    columns = ", ".join(f"name AS n{i}" for i in range(14))   # about 22,000 characters
    wide = sql(env, f"SELECT {columns} FROM catalog LIMIT 50")
    import json

    assert wide["truncated"] and len(json.dumps(wide["rows"])) <= 16_000 + 50
    assert "rows cut at 16,000 characters" in wide["note"]


def test_results_are_cut_at_their_exact_limits_with_a_note():
    from vendbench.environment.autovend._sql import (MAX_CELL_CHARS, MAX_RESULT_CHARS,
                                                    MAX_ROWS, _bounded)

    exact = _bounded(["c"], [("x" * MAX_CELL_CHARS,)])          # at the limit: whole
    assert exact == {"columns": ["c"], "rows": [["x" * MAX_CELL_CHARS]], "truncated": False}
    over = _bounded(["c", "d"], [("x" * (MAX_CELL_CHARS + 5), "y" * (MAX_CELL_CHARS + 1))])
    assert over["rows"][0][0] == "x" * MAX_CELL_CHARS + "…[5 more characters]"
    assert over["note"] == "2 cell(s) cut at 1,000 characters; select less (substr, LIMIT)"
    # each row below is 400 characters as JSON: 40 of them are the result's limit exactly
    row = ("z" * 396,)
    assert MAX_RESULT_CHARS == 40 * 400
    full = _bounded(["c"], [row] * 40)
    assert len(full["rows"]) == 40 and full["truncated"] is False and "note" not in full
    cut = _bounded(["c"], [row] * 41)
    assert len(cut["rows"]) == 40 and cut["truncated"] is True
    assert cut["note"] == ("rows cut at 16,000 characters of result; select fewer columns "
                           "or rows")
    many = _bounded(["c"], [(1,)] * (MAX_ROWS + 10))            # cut by rows: no note
    assert len(many["rows"]) == MAX_ROWS and many["truncated"] is True and "note" not in many


def test_a_size_is_a_small_number_written_out_and_nothing_else():
    from vendbench._sqlguard import _small_literal

    assert _small_literal({"class": "CONSTANT", "literal": {"text": "1000"}})
    assert not _small_literal({"class": "CONSTANT", "literal": {"text": "1001"}})
    assert not _small_literal(None) and not _small_literal(["1"])
    assert not _small_literal({"class": "CONSTANT", "literal": {}})      # no text
    assert not _small_literal({"class": "CONSTANT", "literal": {"text": "ten"}})
    assert not _small_literal({"class": "COLUMN_REF", "literal": {"text": "5"}})


def test_the_size_checks_refuse_exactly_what_they_should(env):
    recursive = sql(env, "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r "
                         "WHERE n < 3) SELECT * FROM r")
    assert recursive == {"ok": False, "error": "query_sql: recursive CTEs are not allowed "
                                               "in query_sql"}
    wide = sql(env, "SELECT format('{:5000}', 1)")
    assert wide["error"] == "query_sql: format: a field width over 999 is not allowed"
    # what merely looks like them runs: a width in a string no formatter reads, a format
    # whose template is a column, a sized function missing its size (DuckDB's own error)
    assert sql(env, "SELECT upper('%5000d') AS t")["rows"] == [["%5000D"]]
    assert sql(env, "SELECT printf(product_id) AS p FROM catalog LIMIT 1")["ok"]
    missing = sql(env, "SELECT repeat('ab')")
    assert missing["ok"] is False and "repeat" in missing["error"].lower()
