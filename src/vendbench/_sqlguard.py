"""What no read-only query may build: a value too large to interrupt.

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
from typing import Any

MAX_SIZE_ARG = 1_000            # repeat/pad widths, range lengths, printf widths
# function -> which arguments are sizes (None: all of them)
SIZED = {"repeat": (1,), "lpad": (1,), "rpad": (1,), "range": None,
         "generate_series": None, "list_resize": (1,), "array_resize": (1,)}
WIDTH = re.compile(r"%[-+ #0]*(\*|\d{4,})|\{:[^}]*\d{4,}")   # printf/format widths


def oversized(sql: str, con: Any) -> str | None:
    """Why ``sql`` could build a value too large to interrupt, or None. ``con`` (any
    DuckDB connection) parses it."""
    tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchall()[0][0])
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
            continue
        if not isinstance(node, dict):
            continue
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
        stack.extend(node.values())
    return None


def _small_literal(expr: Any) -> bool:
    """Whether ``expr`` is a number written out, at most ``MAX_SIZE_ARG`` in size."""
    if not isinstance(expr, dict) or expr.get("class") != "CONSTANT":
        return False
    try:
        return abs(float((expr.get("literal") or {}).get("text", ""))) <= MAX_SIZE_ARG
    except ValueError:
        return False
