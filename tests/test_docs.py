"""The README and docs/ say what the code does (design §16): the README fits a screen, the
docs build as a site, every link resolves, every `vendbench` command shown parses, the
results file is described table by table and column by column, and the forecast shown
is the one `run` prints."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _blocks(text: str) -> list[str]:
    return re.findall(r"```[a-z]*\n(.*?)```", text, re.S)


def _commands(text: str) -> list[str]:
    """Each `vendbench …` command in a page's code blocks (continuation lines joined,
    comments, pipes and redirections dropped) and inline code."""
    out = []
    spans = [" ".join(span.split()) for span in          # not a name: `vendbench run`
             re.findall(r"(?<!`)`(vendbench [^`\s]+ [^`]+)`(?!`)", text)]
    for block in [*_blocks(text), *spans]:
        joined = re.sub(r"\\\n\s*", " ", block)
        for line in joined.splitlines():
            line = line.strip().removeprefix("$ ")
            for part in re.split(r"\s*(?:&&|\|)\s*", line):
                part = re.sub(r"\s+#.*$", "", part)
                part = re.sub(r"\s+\d?>>?\s*\S+", "", part)            # redirections
                part = re.sub(r"^(?:[A-Z_]+=\S+\s+)+", "", part)     # VAR=value vendbench
                if "[" in part or "…" in part or "..." in part:   # a synopsis
                    continue
                if part.startswith(("vendbench ", ".venv/bin/vendbench ")):
                    out.append(part.split("vendbench", 1)[1].strip())
    return out


def test_the_readme_fits_a_screen_and_links_to_the_docs():
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 150          # a front page (design §26)
    for page in ("guide", "costs", "metrics", "results", "scenarios", "panels", "viewer",
                 "mcp"):
        assert f"](docs/{page}.md)" in readme, page


def test_every_relative_link_and_image_resolves():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue
            path = (page.parent / target.split("#")[0]).resolve()
            assert path.exists(), f"{page.name}: {target}"


def test_every_command_shown_parses(capsys):
    from vendbench.cli import _parser

    parser = _parser()
    seen, bad = 0, []
    for page in PAGES:
        for command in _commands(page.read_text()):
            try:
                parser.parse_args(shlex.split(command))
            except SystemExit as exc:
                if exc.code != 0:                         # --help exits 0
                    bad.append(f"{page.name}: vendbench {command}")
            seen += 1
    assert not bad, "these do not parse:\n" + "\n".join(bad)
    assert seen >= 30, seen               # 35 when written


def test_the_docs_build_as_a_site_with_no_warning(tmp_path):
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                          str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, timeout=120)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "site" / "costs" / "index.html").exists()


def test_every_table_and_column_of_a_results_file_is_described(tmp_path):
    from vendbench.cli import main
    from vendbench.results import Store

    db = str(tmp_path / "r.duckdb")
    for scenario in ("autovend", "network"):
        assert main(["run", "--models", "baseline/order-up-to", "--days", "2",
                     "--scenario", scenario, "--db", db]) == 0
    doc = (ROOT / "docs" / "results.md").read_text()
    sections = dict(re.findall(r"^### `(\w+)`\n(.*?)(?=^##|\Z)", doc, re.S | re.M))
    with Store(db, read_only=True) as store:
        tables = store.con.execute("SELECT table_name, list(column_name ORDER BY "
                                   "ordinal_position) FROM information_schema.columns "
                                   "GROUP BY table_name").fetchall()
    assert len(tables) >= 12
    for table, columns in tables:
        assert table in sections, f"docs/results.md does not describe {table}"
        for column in columns:
            assert f"`{column}`" in sections[table], f"{table}.{column} is not described"


def test_the_forecast_shown_is_the_one_run_prints(tmp_path):
    """docs/costs.md's example, run: the forecast lines and the refusal, nothing sent
    (litellm's price map, as pinned by the lock, prices the model)."""
    costs = (ROOT / "docs" / "costs.md").read_text()
    block = next(b for b in _blocks(costs) if "cost forecast" in b).splitlines()
    command = block[0].removeprefix("$ vendbench ")
    env = {**os.environ, "OPENAI_API_KEY": "sk-docs-not-a-key",
           "LITELLM_LOCAL_MODEL_COST_MAP": "true"}
    out = subprocess.run([sys.executable, "-m", "vendbench", *shlex.split(command)],
                         cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2 and not list(tmp_path.iterdir())
    printed = out.stderr.splitlines()
    assert block[1:] == printed
    for page in PAGES:                       # any other page that shows it, the same
        for shown in (b for b in _blocks(page.read_text()) if "cost forecast" in b):
            if shown.startswith("$ vendbench") and shown.splitlines()[0] != block[0]:
                continue
            assert all(line in printed for line in shown.splitlines()[1:]), page.name


def test_the_comparison_shown_is_the_one_compare_prints(tmp_path):
    page = (ROOT / "docs" / "compare.md").read_text()
    block = next(b for b in _blocks(page) if b.startswith("$ vendbench compare")).splitlines()
    out = subprocess.run([sys.executable, "-m", "vendbench",
                          *shlex.split(block[0].removeprefix("$ vendbench ")), "--db",
                          str(tmp_path / "c.duckdb")], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == block[1:]


def test_every_design_citation_names_a_section_of_docs_design():
    """The code and docs cite their reasons as "design §N" (design §26): each such section
    is in docs/design.md, and nothing cites a file the repository does not have."""
    sections = set(re.findall(r"^## §(\d+) ", (ROOT / "docs" / "design.md").read_text(),
                              re.M))
    cited, spec = set(), []
    for path in [*ROOT.glob("src/**/*.py"), *ROOT.glob("tests/**/*.py"),
                 *ROOT.glob("benchmarks/*.py"), *PAGES, ROOT / "benchmarks" / "README.md"]:
        text = path.read_text()
        cited |= {(n, path.name) for n in re.findall(r"design\s+§(\d+)", text)}
        if re.search(r"\bSPEC\s*§|\bSPEC \d", text):
            spec.append(path.name)
    assert sorted(n for n, _ in cited if n not in sections) == []
    assert len(cited) > 50 and spec == []


def test_the_docs_index_lists_every_page_the_readme_does():
    """design §35.5: docs/index.md left out four pages the README lists."""
    readme = set(re.findall(r"\(docs/([a-z]+\.md)", (ROOT / "README.md").read_text()))
    index = set(re.findall(r"\]\(([a-z]+\.md)\)", (ROOT / "docs" / "index.md").read_text()))
    assert readme - {"index.md"} <= index, sorted(readme - index)
    assert index <= {p.name for p in (ROOT / "docs").glob("*.md")}
