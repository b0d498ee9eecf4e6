"""What a live reader may ask the writing process (``_live``): which queries are
answered, and each answer's rows measured by DuckDB before Python holds them."""

from __future__ import annotations

import json
import re
from typing import Any

from .._sqlguard import oversized, writes

# what Python holds of an answer before it is counted: DuckDB measures each row (its
# values as text) and refuses one over MAX_ROW_BYTES before Python sees it, and rows are
# fetched FETCH_ROWS at a time, so at most their product is held uncounted (a list of
# 1.5 GB built by one query once took the writer to 6.1 GB on its way to Python)
MAX_ROW_BYTES = 4 << 20
FETCH_ROWS = 8
TOO_LARGE = "vendbench: a row of this answer is over"
# types whose values have a fixed size (DESCRIBE's names): not measured
FIXED = re.compile(r"(BOOLEAN|U?(TINY|SMALL|BIG|HUGE)?INT(EGER)?|FLOAT|DOUBLE|DECIMAL\(.*\)|"
                   r"DATE|TIME|TIMESTAMP.*|TIME WITH TIME ZONE|INTERVAL|UUID)")


def refused_sql(sql: str, con: Any) -> str | None:
    """Why a reader's query is refused, or None: one SELECT over tables only, with no
    table function (checkpoint, range, read_csv …) and no file or URL as a table."""
    import duckdb

    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        return str(exc)
    if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
        return "only one SELECT statement at a time is answered while a run writes this file"
    tree = json.loads(con.execute("SELECT json_serialize_sql(?)", [sql]).fetchall()[0][0])
    if tree.get("error"):
        return str(tree.get("error_message") or "the query could not be parsed")
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if node.get("type") == "TABLE_FUNCTION":
                name = (node.get("function") or {}).get("function_name", "?")
                return f"table functions are not answered while a run writes this file ({name})"
            if node.get("type") == "BASE_TABLE" and re.search(r"[./:\\]", node.get(
                    "table_name", "")):
                return "only the results tables are answered, not files or URLs"
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    why = writes(sql, con) or oversized(sql, con)
    return None if why is None else f"{why} while a run writes this file"


def row_cap() -> str:
    """``MAX_ROW_BYTES`` in words."""
    n = MAX_ROW_BYTES
    return f"{n >> 20} MB" if n >= 1 << 20 and not n % (1 << 20) else f"{n:,} bytes"


def measured_rows(cursor: Any, sql: str, params: Any) -> tuple[str, list[str]]:
    """``sql`` (one SELECT) wrapped so that DuckDB refuses any row whose values, as text,
    are over ``MAX_ROW_BYTES`` before Python holds it; and its columns' names. A query
    whose columns all have fixed sizes is returned as it is. The wrapped query's last
    column is the measure (NULL)."""
    import duckdb

    (statement,) = duckdb.extract_statements(sql)
    body = statement.query.rstrip().rstrip(";")
    described = cursor.execute(f"DESCRIBE {body}", params).fetchall()
    columns = [str(d[0]) for d in described]
    sizes = [f"coalesce(strlen(CAST(c{i} AS VARCHAR)), 0)"
             for i, d in enumerate(described) if not FIXED.fullmatch(str(d[1]))]
    if not sizes:
        return body, columns
    aliases = ", ".join(f"c{i}" for i in range(len(columns)))
    measure = (f"CASE WHEN {' + '.join(sizes)} > {MAX_ROW_BYTES} THEN "
               f"error('{TOO_LARGE} {MAX_ROW_BYTES} bytes') END")
    # the body on lines of its own: a trailing comment ends at its line
    return f"SELECT *, {measure} FROM (\n{body}\n) AS q({aliases})", columns
