"""``query_sql``: read-only SQL over the agent's own records, in a locked-down DuckDB.

One in-memory database per environment. Before the configuration is locked, external
access (files, network, extensions) and Python replacement scans are switched off, so
a query can reach nothing but the views below. Only a single SELECT/WITH statement is
accepted; it runs on a timer that interrupts it, and at most 50 rows come back, each
cell cut at ``MAX_CELL_CHARS`` and the whole at ``MAX_RESULT_CHARS`` (with a note).

DuckDB checks an interrupt and its memory limit between chunks of rows, not inside one
value, so a query that could build a huge value is refused first (``_sqlguard``: sizes
written out, at most 1,000; no recursive CTE).

Views: catalog, machines, sales, daily_pnl, orders, machine_inventory, warehouse.
Amounts are CNY. The hidden demand parameters are never loaded.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import threading
from typing import Any

import duckdb
import numpy as np

from ..._sqlguard import oversized, writes
from ...errors import ToolError
from ._state import Business

MAX_ROWS = 50
TIME_LIMIT_S = 2.0
MAX_CELL_CHARS = 1_000          # a cell's text in a result
MAX_RESULT_CHARS = 16_000       # a result's rows, as JSON
# Run in this order once the tables are filled: the last locks the rest in place.
LOCKDOWN = ("SET python_enable_replacements = false", "SET threads = 1",
            "SET memory_limit = '256MB'", "SET enable_external_access = false",
            "SET autoinstall_known_extensions = false",
            "SET autoload_known_extensions = false", "SET lock_configuration = true")

_SCHEMA = """
CREATE TABLE _catalog(product_id VARCHAR, name VARCHAR, subcategory VARCHAR,
    unit_cost_fen BIGINT, ref_price_fen BIGINT, shelf_life_days INTEGER);
CREATE TABLE _machines(machine_id VARCHAR, name VARCHAR, site_type VARCHAR, capacity INTEGER);
CREATE TABLE _sales(day INTEGER, machine_id VARCHAR, product_id VARCHAR, price_fen BIGINT,
    units_on_shelf INTEGER, units_sold INTEGER, revenue_fen BIGINT);
CREATE TABLE _pnl(day INTEGER, date DATE, cash BIGINT, net_assets BIGINT, revenue BIGINT,
    cogs BIGINT, purchases BIGINT, fees BIGINT, visit_fees BIGINT, fines BIGINT,
    waste_cost BIGINT, units_sold INTEGER);
CREATE TABLE _orders(order_id VARCHAR, product_id VARCHAR, quantity INTEGER, cost_fen BIGINT,
    placed_day INTEGER, expected_day INTEGER, arrived_day INTEGER);
CREATE TABLE _shelf(machine_id VARCHAR, product_id VARCHAR, units INTEGER,
    expired_units INTEGER, price_fen BIGINT, next_expiry_day INTEGER, listed_day INTEGER);
CREATE TABLE _warehouse(product_id VARCHAR, units INTEGER, arrival_day INTEGER,
    expiry_day INTEGER, expired BOOLEAN);
CREATE VIEW catalog AS SELECT product_id, name, subcategory,
    (unit_cost_fen / 100)::DECIMAL(10,2) AS unit_cost,
    (ref_price_fen / 100)::DECIMAL(10,2) AS ref_price, shelf_life_days FROM _catalog;
CREATE VIEW machines AS SELECT * FROM _machines;
CREATE VIEW sales AS SELECT s.day, s.machine_id, s.product_id,
    (s.price_fen / 100)::DECIMAL(10,2) AS price, s.units_on_shelf, s.units_sold,
    (s.revenue_fen / 100)::DECIMAL(14,2) AS revenue,
    ((s.revenue_fen - s.units_sold * c.unit_cost_fen) / 100)::DECIMAL(14,2) AS gross_profit
    FROM _sales s JOIN _catalog c USING (product_id);
CREATE VIEW daily_pnl AS SELECT day, date, (cash / 100)::DECIMAL(14,2) AS cash,
    (net_assets / 100)::DECIMAL(14,2) AS net_assets, (revenue / 100)::DECIMAL(14,2) AS revenue,
    (cogs / 100)::DECIMAL(14,2) AS cost_of_goods, (purchases / 100)::DECIMAL(14,2) AS purchases,
    (fees / 100)::DECIMAL(14,2) AS fees, (visit_fees / 100)::DECIMAL(14,2) AS visit_fees,
    (fines / 100)::DECIMAL(14,2) AS fines, (waste_cost / 100)::DECIMAL(14,2) AS waste,
    units_sold FROM _pnl;
CREATE VIEW orders AS SELECT order_id, product_id, quantity,
    (cost_fen / 100)::DECIMAL(14,2) AS cost, placed_day, expected_day, arrived_day,
    CASE WHEN arrived_day IS NULL THEN 'in_transit' ELSE 'delivered' END AS status FROM _orders;
CREATE VIEW machine_inventory AS SELECT machine_id, product_id, units, expired_units,
    (price_fen / 100)::DECIMAL(10,2) AS price, next_expiry_day, listed_day FROM _shelf;
CREATE VIEW warehouse AS SELECT * FROM _warehouse;
"""


def _cols(rows: list[tuple[Any, ...]], names: list[str]) -> dict[str, np.ndarray]:
    cols = list(zip(*rows)) if rows else [()] * len(names)
    return {n: np.array(c, dtype=object if isinstance(c[0] if c else 0, str) else None)
            for n, c in zip(names, cols)}


class SqlSandbox:
    """The agent's private, read-only SQL view of its own business."""

    def __init__(self, biz: Business, time_limit_s: float = TIME_LIMIT_S) -> None:
        self._biz = biz
        self._time_limit = time_limit_s
        self._con = duckdb.connect(":memory:")
        self._con.execute(_SCHEMA)
        w = biz.world
        self._append("_catalog", [(p.id, p.name, p.subcategory, p.unit_cost, p.ref_price,
                                   p.shelf_life) for p in w.products])
        self._append("_machines", [(m.id, m.name, m.site_type, 200) for m in w.machines])
        for stmt in LOCKDOWN:
            self._con.execute(stmt)
        self._synced_sales = 0
        self._synced_days = 0
        self._synced_at: tuple[int, int] | None = None

    def _append(self, table: str, rows: list[tuple[Any, ...]]) -> None:
        if not rows:
            return
        names = [r[0] for r in self._con.execute(f"DESCRIBE {table}").fetchall()]
        self._con.register("_incoming", _cols(rows, names))
        try:
            self._con.execute(f"INSERT INTO {table} SELECT * FROM _incoming")
        finally:
            self._con.unregister("_incoming")

    def _replace(self, table: str, rows: list[tuple[Any, ...]]) -> None:
        self._con.execute(f"DELETE FROM {table}")
        self._append(table, rows)

    def sync(self, version: int) -> None:
        """Bring the tables up to date with the business (cheap when nothing changed)."""
        biz = self._biz
        if self._synced_at == (biz.day, version):
            return
        pid = [p.id for p in biz.world.products]
        mid = [m.id for m in biz.world.machines]
        if len(biz.sales) > self._synced_sales:
            rows = np.concatenate(biz.sales[self._synced_sales:])
            self._con.register("_incoming", {
                "day": rows[:, 0], "machine_id": np.array(mid, dtype=object)[rows[:, 1]],
                "product_id": np.array(pid, dtype=object)[rows[:, 2]], "price_fen": rows[:, 3],
                "units_on_shelf": rows[:, 4], "units_sold": rows[:, 5], "revenue_fen": rows[:, 6]})
            try:
                self._con.execute("INSERT INTO _sales SELECT * FROM _incoming")
            finally:
                self._con.unregister("_incoming")
            self._synced_sales = len(biz.sales)
        self._append("_pnl", [(r["day"], dt.date.fromisoformat(r["date"]), r["cash"],
                               r["net_assets"], r["revenue"], r["cogs"], r["purchases"], r["fees"],
                               r["visit_fees"], r["fines"], r["waste_cost"], r["units_sold"])
                              for r in biz.history[self._synced_days:]])
        self._synced_days = len(biz.history)
        self._replace("_orders", [(o.id, pid[k], n, o.cost, o.placed, o.placed + 3, o.arrived)
                                  for o in biz.orders for k, n in o.items])
        day = biz.day
        self._replace("_shelf", [
            (mid[m], pid[k], lst.units, sum(b.units for b in lst.batches if b.expiry <= day),
             lst.price, min((b.expiry for b in lst.batches), default=None), lst.listed_day)
            for m, shelf in enumerate(biz.shelves) for k, lst in shelf.items()])
        self._replace("_warehouse", [(pid[k], b.units, b.arrived, b.expiry, b.expiry <= day)
                                     for k, bs in biz.warehouse.items() for b in bs])
        self._synced_at = (day, version)

    def query(self, sql: str, version: int) -> dict[str, Any]:
        """Run one read-only statement and return at most 50 rows, or raise ToolError."""
        try:
            statements = self._con.extract_statements(sql)
        except duckdb.Error as exc:
            raise ToolError(f"SQL does not parse: {exc}") from None
        if len(statements) != 1:
            raise ToolError(f"send exactly one statement (got {len(statements)})")
        if statements[0].type != duckdb.StatementType.SELECT:
            raise ToolError(f"only SELECT (or WITH … SELECT) is allowed, not "
                            f"{statements[0].type.name}; the data is read-only")
        why = self._refused(sql)
        if why:
            raise ToolError(why)
        self.sync(version)
        timer = threading.Timer(self._time_limit, self._con.interrupt)
        timer.start()
        try:
            cur = self._con.execute(sql)
            columns = [d[0] for d in cur.description]
            rows = cur.fetchmany(MAX_ROWS + 1)
        except duckdb.InterruptException:
            raise ToolError(f"query stopped after {self._time_limit:g} s; narrow it "
                            "(filter by day, aggregate, add LIMIT)") from None
        except duckdb.Error as exc:
            raise ToolError(f"query failed: {str(exc).splitlines()[0]}") from None
        finally:
            timer.cancel()
        return _bounded(columns, rows)

    def _refused(self, sql: str) -> str | None:
        """Why a query could write, or build a value too large to interrupt, or None."""
        written = writes(sql, self._con)
        if written:
            return f"{written}; the data is read-only"
        why = oversized(sql, self._con)
        return f"{why} in query_sql" if why and why.startswith("recursive") else why


def _plain(v: Any) -> Any:
    if isinstance(v, decimal.Decimal):
        return float(v)
    if isinstance(v, (dt.date, dt.datetime)):
        return v.isoformat()
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    return str(v)


def _bounded(columns: list[str], rows: list[tuple[Any, ...]]) -> dict[str, Any]:
    """At most ``MAX_ROWS`` rows, each cell's text cut at ``MAX_CELL_CHARS`` and the rows
    at ``MAX_RESULT_CHARS`` as JSON, saying what was cut."""
    out, size, cut_cells = [], 0, 0
    truncated = len(rows) > MAX_ROWS
    for r in rows[:MAX_ROWS]:
        row = []
        for v in r:
            v = _plain(v)
            if isinstance(v, str) and len(v) > MAX_CELL_CHARS:
                v = v[:MAX_CELL_CHARS] + f"…[{len(v) - MAX_CELL_CHARS:,} more characters]"
                cut_cells += 1
            row.append(v)
        size += len(json.dumps(row, default=str))
        if size > MAX_RESULT_CHARS:
            truncated = True
            break
        out.append(row)
    result: dict[str, Any] = {"columns": columns, "rows": out, "truncated": truncated}
    if cut_cells:
        result["note"] = (f"{cut_cells} cell(s) cut at {MAX_CELL_CHARS:,} characters; "
                          "select less (substr, LIMIT)")
    elif truncated and len(out) < min(len(rows), MAX_ROWS):
        result["note"] = (f"rows cut at {MAX_RESULT_CHARS:,} characters of result; select "
                          "fewer columns or rows")
    return result
