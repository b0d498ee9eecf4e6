"""Where things live (SPEC §14): SQL against the results schema only in ``results/``;
packages import only the layers below them, and no modules import each other in a loop."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from vendbench.environment import REGISTRY, record_tables
from vendbench.results import COLUMNS

SRC = Path(__file__).resolve().parent.parent / "src" / "vendbench"
STATEMENT = re.compile(r"^\s*(SELECT\s|INSERT\s+(OR\s+\w+\s+)?INTO\s|UPDATE\s+\w+\s+SET\s|"
                       r"DELETE\s+FROM\s|CREATE\s|DROP\s|ALTER\s|"
                       r"WITH\s+(RECURSIVE\s+)?\w+\s*(\(|AS\b))")
RECORDED = {t.name for name in REGISTRY for t in record_tables(name)}
TABLES = re.compile(r"\b(" + "|".join(sorted({*COLUMNS, *RECORDED, "runs", "trials",
                                              "run_warnings", "segments", "meta"})) + r")\b")
# the agent's query_sql sandbox: its own in-memory database, not the results file
ELSEWHERE = {SRC / "environment" / "autovend" / "_sql.py"}


def sql_outside_results(src: Path = SRC) -> list[str]:
    found = []
    for path in sorted(src.rglob("*.py")):
        if path.is_relative_to(src / "results") or \
                path.relative_to(src) in {p.relative_to(SRC) for p in ELSEWHERE}:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            parts = [node] if isinstance(node, ast.Constant) else \
                [v for v in node.values if isinstance(v, ast.Constant)] \
                if isinstance(node, ast.JoinedStr) else []
            text = "".join(p.value for p in parts if isinstance(p.value, str))
            if STATEMENT.match(text) and TABLES.search(text):
                found.append(f"{path.relative_to(src)}:{node.lineno}: {text[:60]!r}")
    return found


def test_no_sql_against_the_results_schema_outside_results():
    assert sql_outside_results() == []


def test_the_check_finds_sql_where_it_should_not_be(tmp_path):
    """On a copy of the tree (never in it: another test walks it at the same time)."""
    import shutil

    copy = tmp_path / "vendbench"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert sql_outside_results(copy) == []
    (copy / "leaderboard" / "_stray_sql_probe.py").write_text(
        'Q = "SELECT run_id FROM trials WHERE status = ?"\n')
    assert sql_outside_results(copy) == [
        "leaderboard/_stray_sql_probe.py:1: 'SELECT run_id FROM trials WHERE status = ?'"]


# each package, and the packages it may import (its own modules aside): lower layers only
LAYERS = {
    "errors": set(), "_secrets": set(), "_text": set(), "_heap": set(), "_sqlguard": set(),
    "_betting": set(),
    "environment": {"errors", "_text", "_sqlguard"},
    "budgets": {"errors"},
    "results": {"errors", "_secrets", "environment", "", "_sqlguard"},
    "providers": {"errors", "_secrets", "budgets", "_heap", "_text"},
    "orchestrator": {"errors", "_secrets", "environment", "budgets", "results", "providers",
                     "_heap"},
    "leaderboard": {"errors", "environment", "results", "_text", "_betting"},
    "compare": {"errors", "environment", "results", "orchestrator", "leaderboard", "_text",
                "_betting"},
    "serve": {"errors", "environment", "results", "", "_localhttp"},
    "view": {"errors", "environment", "results", "_localhttp", "_text"},
    "inspect": {"errors", "_secrets", "environment", "results"},
    "_localhttp": set(),
    "ui": {"environment", "_text"},
}


def _runtime_nodes(tree: ast.AST):
    """Every node but those under ``if TYPE_CHECKING:`` (names for annotations only,
    never imported when the code runs)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            continue
        yield node
        yield from _runtime_nodes(node)


def import_graph(annotations: bool = False) -> dict[str, set[str]]:
    """Every vendbench module and the vendbench modules it imports when it runs, at the
    top or inside a function (a lazy import is still a dependency); with ``annotations``,
    also those imported under ``if TYPE_CHECKING:`` for annotations only."""
    modules = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join(parts)] = path
    graph = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree) if annotations else _runtime_nodes(tree):
            if isinstance(node, ast.Import):
                deps |= {a.name for a in node.names if a.name in modules}
            elif isinstance(node, ast.ImportFrom):
                base = package.split(".")[:len(package.split(".")) - node.level + 1] \
                    if node.level else []
                target = ".".join([*base, node.module] if node.module else base) \
                    if node.level else node.module
                subs = {f"{target}.{a.name}" for a in node.names} & modules.keys()
                deps |= subs if len(subs) == len(node.names) else {target, *subs}
        graph[name] = {d for d in deps if d in modules and d != name}
    return graph


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    def top(module: str) -> str:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else ""

    return sorted(f"{m} imports {d}" for m, deps in graph.items() for d in deps
                  if top(m) in LAYERS and top(d) != top(m) and top(d) not in LAYERS[top(m)])


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Groups of modules that import each other, directly or through others (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_packages_import_only_the_layers_below_them():
    assert upward_imports(import_graph()) == []


def test_no_modules_import_each_other_in_a_loop():
    assert cycles(import_graph()) == []


def test_no_modules_import_each_other_even_for_annotations():
    """A loop hidden behind ``TYPE_CHECKING`` still ties two modules into one: neither
    reads without the other (SPEC §21)."""
    assert cycles(import_graph(annotations=True)) == []


def test_serve_imports_nothing_of_the_orchestrator():
    graph = import_graph()
    assert not {d for m, deps in graph.items() if m.startswith("vendbench.serve")
                for d in deps if d.startswith("vendbench.orchestrator")}


def test_the_checks_find_an_upward_import_and_a_loop():
    graph = {"vendbench.results._x": {"vendbench.orchestrator._y"},
             "vendbench.orchestrator._y": {"vendbench.results._x"}}
    assert upward_imports(graph) == ["vendbench.results._x imports vendbench.orchestrator._y"]
    assert cycles(graph) == [["vendbench.orchestrator._y", "vendbench.results._x"]]


def test_no_module_is_over_500_lines():
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 500}
    assert long == {}


@pytest.mark.parametrize("package", ["environment", "results", "budgets", "providers",
                                     "orchestrator", "leaderboard", "serve", "view",
                                     "inspect", "cli"])
def test_each_package_exports_what_its_all_says(package):
    """A package's ``__all__`` names exactly its public vendbench objects (as httpx's
    test_exported_members does), so what it offers is written in one place."""
    import __future__
    import importlib
    import inspect

    def offered(name: str, value: object) -> bool:
        if name.startswith("_") or inspect.ismodule(value) or \
                isinstance(value, __future__._Feature):
            return False
        if inspect.isclass(value) or inspect.isroutine(value):    # its own, not borrowed
            return value.__module__.startswith(f"vendbench.{package}")
        return True                                  # constants and type aliases

    module = importlib.import_module(f"vendbench.{package}")
    assert set(module.__all__) == {n for n, v in vars(module).items() if offered(n, v)}
