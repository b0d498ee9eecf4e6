"""The site in a real browser (design §33.3): Playwright drives Debian's Chromium (apt's
package; nothing downloads a browser) over the files as a reader opens them from disk.
Every page loads with no console error and no failed request, a crawl finds every link
resolving, tables sort, the frontier drawn is the JSON's, the keys work, and axe-core
(from the npm registry; .ci/run installs it) finds no WCAG 2 A/AA violation on any page
kind.

VENDBENCH_SCREENSHOTS=DIR keeps screenshots of the index and a model page (the README's
and docs/images/ come from it)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest

from .conftest import page_json

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
AXE = Path(os.environ.get("VENDBENCH_AXE") or
           ROOT / ".ci" / "axe" / "node_modules" / "axe-core" / "axe.min.js")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium installed (Debian: apt-get install chromium; "
                             ".ci/run installs it)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield chromium
        chromium.close()


class Tab:
    """A page that records what went wrong while it loaded."""

    def __init__(self, browser, **context) -> None:
        self.context = browser.new_context(viewport={"width": 1300, "height": 900},
                                           **context)
        self.page = self.context.new_page()
        self.page.set_default_timeout(20_000)
        self.problems: list[str] = []
        self.page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                     if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        self.page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url}"))

    def open(self, path: Path) -> None:
        self.problems.clear()
        self.page.goto(path.as_uri())
        self.page.wait_for_load_state("load")
        if self.page.locator(".plot[data-figure]").count():
            self.page.wait_for_selector(".plot[data-drawn] .main-svg")

    def close(self) -> None:
        self.context.close()


def shot(tab: Tab, name: str) -> None:
    where = os.environ.get("VENDBENCH_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        tab.page.screenshot(path=str(Path(where) / f"site-{name}.png"), full_page=True)


def test_every_page_loads_clean_and_every_link_resolves(browser, site):
    tab = Tab(browser)
    seen, todo, transcripts = set(), [site / "index.html"], set()
    try:
        while todo:
            path = todo.pop()
            if path in seen:
                continue
            seen.add(path)
            tab.open(path)
            assert tab.problems == [], f"{path.relative_to(site)}: {tab.problems}"
            for href in tab.page.eval_on_selector_all(
                    "a[href], link[href], script[src], img[src]",
                    "els => els.map(e => e.href || e.src)"):
                url = urlparse(href)
                assert url.scheme == "file", f"{path.relative_to(site)} links out: {href}"
                target = Path(unquote(url.path))
                assert target.is_file(), f"{path.relative_to(site)} -> {href}"
                if target.suffix == ".html" and target not in seen:
                    if "transcripts" in target.relative_to(site).parts:
                        transcripts.add(target)       # the viewer's pages: one level
                    else:
                        todo.append(target)
        for path in sorted(transcripts)[:6]:
            tab.open(path)
            assert tab.problems == [], f"{path.relative_to(site)}: {tab.problems}"
    finally:
        tab.close()
    pages = {p for p in site.rglob("*.html") if "transcripts" not in p.relative_to(site).parts}
    assert pages <= seen, sorted(str(p.relative_to(site)) for p in pages - seen)  # no orphan
    assert len(transcripts) >= 12              # every trial of the newest night, and more


def _column(tab: Tab, table: str, index: int) -> list:
    return tab.page.eval_on_selector_all(
        f"{table} tbody tr", f"rows => rows.map(r => r.cells[{index}].getAttribute('data-v')"
                             f" ?? r.cells[{index}].textContent.trim())")


def test_tables_sort_by_number_and_by_name(browser, site):
    tab = Tab(browser)
    try:
        tab.open(site / "index.html")
        table = "table.sortable[id^=rank-]"
        header = tab.page.locator(f"{table} thead th", has_text="share").first
        header.get_by_role("button").click()
        assert header.get_attribute("aria-sort") == "ascending"
        values = [float(v) for v in _column(tab, table, 2)]
        assert values == sorted(values) and len(values) == 4
        header.get_by_role("button").click()
        assert header.get_attribute("aria-sort") == "descending"
        assert [float(v) for v in _column(tab, table, 2)] == sorted(values, reverse=True)
        model = tab.page.locator(f"{table} thead th", has_text="model").first
        model.get_by_role("button").click()
        names = [n.replace("reference", "").strip() for n in _column(tab, table, 1)]
        assert names == sorted(names)
        assert header.get_attribute("aria-sort") == "none"
        assert tab.problems == []
    finally:
        tab.close()


def test_the_frontier_drawn_is_the_json_and_hovering_tells_the_values(browser, site):
    (cohort,) = page_json(site, "index.json")["page"]["cohorts"]
    tab = Tab(browser)
    try:
        tab.open(site / "index.html")
        plot = f"plot-frontier-{cohort['id']}"
        drawn = tab.page.evaluate(
            f"() => document.getElementById({json.dumps(plot)}).data"
            ".filter(t => t.mode === 'markers').map(t => [t.name, t.x[0], t.y[0]])")
        assert sorted(map(tuple, drawn)) == sorted(
            (p["model"], p["cost"], p["share"]) for p in cohort["frontier"]["points"])
        shot(tab, "index")
        point = tab.page.locator(f"#{plot} .scatterlayer .trace .points path").first
        point.hover(force=True)
        hover = tab.page.locator(f"#{plot} .hovertext")
        hover.first.wait_for()
        assert "of the oracle's gain at $" in hover.first.text_content()
    finally:
        tab.close()


def test_the_keys_reach_everything(browser, site):
    tab = Tab(browser)
    try:
        tab.open(site / "model" / "openai--mid.html")
        shot(tab, "model")
        tab.page.keyboard.press("Tab")
        assert tab.page.evaluate("document.activeElement.textContent") == "Skip to content"
        tab.page.keyboard.press("Enter")
        assert tab.page.url.endswith("#main")
        for _ in range(80):                  # on through the links to a sort button
            tab.page.keyboard.press("Tab")
            if tab.page.evaluate("document.activeElement.closest('th') !== null"):
                break
        else:
            raise AssertionError("no sort button reached by Tab")
        tab.page.keyboard.press("Enter")
        assert tab.page.evaluate(
            "document.activeElement.closest('th').getAttribute('aria-sort')") == "ascending"
        visible = tab.page.evaluate("getComputedStyle(document.activeElement)"
                                    ".outlineStyle")
        assert visible != "none"               # where the focus is, shown
    finally:
        tab.close()


KINDS = ["index.html", "trend.html", "runs.html", "models.html", "model/openai--mid.html",
         "run/night-1/*.html", "comparison/night-2/*.html", "arena/arena/*.html",
         "transcripts/night-1/trial/*/index.html", "transcripts/night-1/trial/*/day-2.html",
         "transcripts/night-1/run/*.html", "transcripts/night-1/index.html"]


def test_axe_finds_no_accessibility_violation_on_any_page_kind(browser, site):
    if not AXE.is_file():
        if os.environ.get("CI"):
            raise AssertionError(f"axe-core is not at {AXE}: .ci/run installs it from npm")
        pytest.skip(f"axe-core not installed at {AXE} (npm ci --prefix .ci/axe; .ci/run "
                    "does)")
    source = AXE.read_text()
    tab = Tab(browser, bypass_csp=True)       # axe is injected: the test's, not the site's
    found = {}
    try:
        for kind in KINDS:
            path = sorted(site.glob(kind))[0]
            tab.open(path)
            tab.page.add_script_tag(content=source)
            result = tab.page.evaluate(
                "async () => (await axe.run(document, {runOnly: {type: 'tag', values: "
                "['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}})).violations"
                ".map(v => v.id + ': ' + v.nodes.length + ' ' + v.nodes[0].html.slice(0, 120))")
            if result:
                found[kind] = result
    finally:
        tab.close()
    assert found == {}, json.dumps(found, indent=1)
