"""Where things live (design §14): SQL against the results schema only in ``results/``;
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
                "_betting", "budgets"},
    "screen": {"errors", "_secrets", "environment", "budgets", "results", "providers",
               "orchestrator"},
    "serve": {"errors", "environment", "results", "", "_localhttp"},
    "view": {"errors", "environment", "results", "_localhttp", "_text"},
    # the leaderboard as a static site (design §33): above the boards and the viewer
    "site": {"errors", "environment", "results", "leaderboard", "view", "_text"},
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
    reads without the other (design §21)."""
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
                                     "orchestrator", "leaderboard", "compare", "serve",
                                     "view", "inspect", "cli"])
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


def _imports_from(path: Path, src: Path = SRC) -> list[tuple[list[str], str]]:
    """Each ``from X import name`` of a module: X as its parts (vendbench.…), the name."""
    parts = ["vendbench", *path.relative_to(src).with_suffix("").parts]
    package = parts[:-1]                 # a module's own package (an __init__'s too)
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package[:len(package) - node.level + 1]
            target = base + (node.module.split(".") if node.module else [])
        elif (node.module or "").startswith("vendbench"):
            target = (node.module or "").split(".")
        else:
            continue
        out += [(target, a.name) for a in node.names]
    return out


def fence_breaches(src: Path = SRC) -> list[str]:
    """Imports across packages of what is not a package's public face (design §26.4): a
    private module of another package, or an underscore name. The project's own shared
    internals (``_secrets``, ``_text``…, layers of their own) and dunders are not."""
    found = []
    for path in sorted(src.rglob("*.py")):
        here = path.relative_to(src).parts[0].removesuffix(".py")
        for target, name in _imports_from(path, src):
            there = target[1] if len(target) > 1 else ""
            if there == here:
                continue
            inner = [p for p in target[2:] if p.startswith("_")]
            private = name.startswith("_") and not name.startswith("__") and \
                not (len(target) == 1 and name in LAYERS)
            if inner or private:
                found.append(f"{path.relative_to(src)}: from {'.'.join(target)} import {name}")
    return found


def test_no_package_imports_what_another_keeps_to_itself():
    assert fence_breaches() == []


def test_no_package_hands_on_another_packages_names():
    """A package's ``__all__`` offers its own names only: a name is imported from its
    home, never through a package that re-exports it."""
    found = []
    for init in sorted(SRC.rglob("__init__.py")):
        here = init.relative_to(SRC).parts[0] if init.parent != SRC else ""
        offered = set()
        for node in ast.parse(init.read_text()).body:
            if isinstance(node, ast.Assign) and any(
                    getattr(t, "id", "") == "__all__" for t in node.targets):
                offered = {e.value for e in node.value.elts}
        for target, name in _imports_from(init):
            there = target[1] if len(target) > 1 else ""
            if there != here and name in offered:
                found.append(f"{init.relative_to(SRC)} offers {'.'.join(target)}.{name}")
    assert found == []


def test_the_fence_check_finds_a_breach(tmp_path):
    import shutil

    copy = tmp_path / "vendbench"
    shutil.copytree(SRC, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "view" / "_probe.py").write_text(
        "from ..results._transcripts import Transcripts\nfrom ..results import _trials\n")
    assert fence_breaches(copy) == [
        "view/_probe.py: from vendbench.results._transcripts import Transcripts",
        "view/_probe.py: from vendbench.results import _trials"]


def floors() -> list[list[str]]:
    """The packages by floor, from what ``LAYERS`` lets each import: a package stands one
    floor above the highest it may import."""
    level: dict[str, int] = {}

    def floor(name: str) -> int:
        if name not in level:
            below = [floor(d) for d in LAYERS[name] if d in LAYERS]
            level[name] = 1 + max(below, default=0)
        return level[name]

    for name in LAYERS:
        floor(name)
    return [sorted(n for n in LAYERS if level[n] == f) for f in range(1, max(level.values()) + 1)]


def test_the_docs_draw_the_layers_this_test_enforces():
    """docs/development.md's picture of the layers is the one ``LAYERS`` holds."""
    drawn = "\n".join(f"floor {i}: {', '.join(names)}"
                      for i, names in reversed(list(enumerate(floors(), 1))))
    text = (SRC.parent.parent / "docs" / "development.md").read_text()
    block = text.split("<!-- layers -->")[1].split("```")[1].strip()
    assert block == drawn, f"docs/development.md should show:\n{drawn}"


def test_no_function_of_the_orchestrator_is_over_60_lines():
    """design §26: the orchestrator reads step by step (the agent loop is an object)."""
    long = []
    for path in sorted((SRC / "orchestrator").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    node.end_lineno - node.lineno + 1 > 60:
                long.append(f"{path.name}:{node.name}")
    assert long == []
