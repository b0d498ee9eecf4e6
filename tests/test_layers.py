"""Where things live (SPEC §14): SQL against the results schema only in ``results/``."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from vendbench.results import COLUMNS

SRC = Path(__file__).resolve().parent.parent / "src" / "vendbench"
STATEMENT = re.compile(r"^\s*(SELECT\s|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|"
                       r"DELETE\s+FROM\s|CREATE\s|DROP\s|ALTER\s|"
                       r"WITH\s+(RECURSIVE\s+)?\w+\s*(\(|AS\b))")
TABLES = re.compile(r"\b(" + "|".join(sorted({*COLUMNS, "runs", "trials", "run_warnings",
                                              "segments", "meta"})) + r")\b")
# the agent's query_sql sandbox: its own in-memory database, not the results file
ELSEWHERE = {SRC / "environment" / "autovend" / "_sql.py"}


def sql_outside_results() -> list[str]:
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.is_relative_to(SRC / "results") or path in ELSEWHERE:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            parts = [node] if isinstance(node, ast.Constant) else \
                [v for v in node.values if isinstance(v, ast.Constant)] \
                if isinstance(node, ast.JoinedStr) else []
            text = "".join(p.value for p in parts if isinstance(p.value, str))
            if STATEMENT.match(text) and TABLES.search(text):
                found.append(f"{path.relative_to(SRC)}:{node.lineno}: {text[:60]!r}")
    return found


def test_no_sql_against_the_results_schema_outside_results():
    assert sql_outside_results() == []


def test_the_check_finds_sql_where_it_should_not_be(tmp_path, monkeypatch):
    stray = SRC / "leaderboard" / "_stray_sql_probe.py"
    stray.write_text('Q = "SELECT run_id FROM trials WHERE status = ?"\n')
    try:
        assert any("_stray_sql_probe.py:1" in f for f in sql_outside_results())
    finally:
        stray.unlink()
