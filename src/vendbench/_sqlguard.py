"""What no read-only query may do: write, or build a value too large to interrupt.

A statement DuckDB calls a SELECT may still write: ``WITH x AS (DELETE … RETURNING …)
SELECT …`` deletes (a live read of a running run's file once deleted its run row, set
every trial's score to 1e9 and added a forged run). So a query is read only by what its
parsed tree is made of, not by its first word: every query node in it must be one that
reads (``READ_NODES``); any other (a DELETE, UPDATE or INSERT node, or one DuckDB adds
later) is refused (``writes``).

DuckDB checks an interrupt and its memory limit between chunks of rows, not inside one
value: a single expression that builds a huge value (``len(range(200000000))``,
``repeat('x', 240000000)``, a recursive CTE that doubles a string) runs past both. So
the sizes such functions take must be numbers written out, at most ``MAX_SIZE_ARG``, and
recursive CTEs are refused. The agent's ``query_sql`` and the live reads of a results
file both ask this guard (a live read of ``len(range(200000000))`` once ran 189 s against
a 1.1 s allowance and took the writing run from 168 MB to 14 GB).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

MAX_SIZE_ARG = 1_000            # repeat/pad widths, range lengths, printf widths
# function -> which arguments are sizes (None: all of them)
SIZED = {"repeat": (1,), "lpad": (1,), "rpad": (1,), "range": None,
         "generate_series": None, "list_resize": (1,), "array_resize": (1,)}
WIDTH = re.compile(r"%[-+ #0]*(\*|\d{4,})|\{:[^}]*\d{4,}")   # printf/format widths
# the query nodes a read is made of; any other node (DELETE_QUERY_NODE …) writes
READ_NODES = {"SELECT_NODE", "SET_OPERATION_NODE", "CTE_NODE", "RECURSIVE_CTE_NODE"}
# functions that change the database's state from inside a SELECT
WRITING_FUNCTIONS = {"nextval", "setseed"}


def _parsed(sql: str, con: Any) -> dict[str, Any]:
    """``sql``'s parse tree, as DuckDB serialises it (``con`` parses it)."""
    tree: dict[str, Any] = json.loads(
        con.execute("SELECT json_serialize_sql(?)", [sql]).fetchall()[0][0])
    return tree


def _nodes(tree: Any) -> Iterator[dict[str, Any]]:
    """Every object of a parse tree, depth first."""
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            yield node
            stack.extend(node.values())


def writes(sql: str, con: Any) -> str | None:
    """Why ``sql`` could change the database, or None (it only reads): a query node that
    is not a read, or a function that changes state. ``con`` parses it."""
    tree = _parsed(sql, con)
    if tree.get("error"):
        return str(tree.get("error_message") or "the query could not be parsed")
    for node in _nodes(tree.get("statements", [])):
        kind = node.get("type")
        if isinstance(kind, str) and kind.endswith("_NODE") and kind not in READ_NODES:
            return (f"only reads are answered: this query would write "
                    f"({kind.removesuffix('_QUERY_NODE').removesuffix('_NODE')})")
        if node.get("class") == "FUNCTION" and node.get("function_name") in WRITING_FUNCTIONS:
            return f"only reads are answered: {node['function_name']} changes the database"
    return None


def oversized(sql: str, con: Any) -> str | None:
    """Why ``sql`` could build a value too large to interrupt, or None. ``con`` (any
    DuckDB connection) parses it."""
    for node in _nodes(_parsed(sql, con)):
        if node.get("type") == "RECURSIVE_CTE_NODE":
            return "recursive CTEs are not allowed"
        name = node.get("function_name")
        if node.get("class") == "FUNCTION" and name in SIZED:
            args = [a.get("expression") for a in node.get("arguments", [])]
            sized = SIZED[name]
            which = sized if sized is not None else range(len(args))
            if any(i < len(args) and not _small_literal(args[i]) for i in which):
                return (f"{name}: its size must be a number written out, at most "
                        f"{MAX_SIZE_ARG:,}")
        if node.get("class") == "FUNCTION" and name in ("printf", "format"):
            first = (node.get("arguments") or [{}])[0].get("expression") or {}
            if WIDTH.search((first.get("literal") or {}).get("text", "")):
                return f"{name}: a field width over {MAX_SIZE_ARG - 1:,} is not allowed"
    return None


def _small_literal(expr: Any) -> bool:
    """Whether ``expr`` is a number written out, at most ``MAX_SIZE_ARG`` in size."""
    if not isinstance(expr, dict) or expr.get("class") != "CONSTANT":
        return False
    try:
        return abs(float((expr.get("literal") or {}).get("text", ""))) <= MAX_SIZE_ARG
    except ValueError:
        return False
