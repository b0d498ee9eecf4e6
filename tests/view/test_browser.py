"""The viewer in a real browser: Playwright drives Debian's Chromium (apt's package;
nothing downloads a browser) through runs → trial → day → a tool call → its window,
a search, the keys and the side-by-side view, and checks what is on screen.

VENDBENCH_SCREENSHOTS=DIR keeps a screenshot of each page (the README's come from it).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no Chromium installed (Debian: apt-get install chromium; "
                             ".ci/run installs it)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="module")
def page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        tab = browser.new_page(viewport={"width": 1300, "height": 900})
        tab.set_default_timeout(20_000)
        yield tab
        browser.close()


def shot(page, name: str) -> None:
    where = os.environ.get("VENDBENCH_SCREENSHOTS")
    if where:
        Path(where).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(where) / f"view-{name}.png"))


def test_runs_to_trial_to_day_to_call_to_window(page, server, results):
    from playwright.sync_api import expect

    page.goto(f"{server}/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Runs in")
    page.get_by_role("link", name=results["autovend"]).click()
    expect(page.get_by_role("link", name=results["llm"])).to_be_visible()
    shot(page, "run")
    page.get_by_role("link", name=results["llm"]).click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("openai/fake-model")
    expect(page.get_by_role("group", name="net assets by day")).to_be_visible()
    shot(page, "trial")
    page.get_by_role("link", name="4", exact=True).first.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Day 4")
    expect(page.get_by_text("Day 4 of 6")).to_be_visible()            # the daily report
    call = page.locator(".call").first
    call.locator("summary", has_text="result").click()               # a folded result
    expect(call.locator("pre").last).to_be_visible()
    shot(page, "day")
    page.keyboard.press("ArrowRight")                                 # keys: the next day
    expect(page.get_by_role("heading", level=1)).to_contain_text("Day 5")
    page.keyboard.press("ArrowLeft")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Day 4")
    page.get_by_role("link", name="the window").first.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("The window of request")
    expect(page.get_by_role("cell", name="system", exact=True)).to_be_visible()
    shot(page, "window")


def test_search_and_side_by_side(page, server, results):
    from playwright.sync_api import expect

    page.goto(f"{server}/trial/{results['llm']}/index.html")
    page.keyboard.press("/")                                          # focuses the search
    page.keyboard.type("restock")
    page.keyboard.press("Enter")
    expect(page.get_by_text("matches of “restock”")).to_be_visible()
    page.get_by_role("row").nth(1).get_by_role("link").click()        # the first hit's day
    expect(page.get_by_role("heading", level=1)).to_contain_text("Day")
    page.goto(f"{server}/run/{results['autovend']}.html")
    page.get_by_role("link", name="vs").first.click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("Side by side")
    expect(page.get_by_role("columnheader", name="openai/fake-model")).to_be_visible()
    shot(page, "compare")


MARKUP = ('<img src=x onerror="document.title=\'pwned\'"><b id="bold">bold</b>'
          "<script>document.title='pwned'</script>")


@pytest.fixture(scope="module")
def marked_up(tmp_path_factory):
    """A trial whose model wrote markup into a tool call's arguments (design §30), served
    and exported as static pages."""
    import json
    import re
    import subprocess
    import sys

    from ..fakellm import FakeLLM, Reply, vending_script
    from .conftest import CANARY

    folder = tmp_path_factory.mktemp("markup")
    db = str(folder / "m.duckdb")
    first = iter([Reply(tool_calls=[("write_notes", json.dumps({"text": MARKUP}))])])
    with FakeLLM(lambda body: next(first, None) or vending_script(body)) as llm:
        done = subprocess.run([sys.executable, "-m", "vendbench", "run", "--models",
                               "openai/fake-model", "--api-base", llm.url, "--price",
                               "openai/fake-model=0.4,1.6", "--days", "2", "--seeds", "1",
                               "--db", db, "--json"], capture_output=True, text=True,
                              env={**os.environ, "OPENAI_API_KEY": CANARY})
    assert done.returncode == 0, done.stderr
    trial = json.loads(done.stdout)["trials"][0]["trial_id"]
    site = folder / "site"
    assert subprocess.run([sys.executable, "-m", "vendbench", "view", "--static", str(site),
                           "--db", db], capture_output=True).returncode == 0
    proc = subprocess.Popen([sys.executable, "-m", "vendbench", "view", "--db", db, "--port",
                             "0"], stderr=subprocess.PIPE, text=True, start_new_session=True)
    url = re.search(r"(http://127\.0\.0\.1:\d+)/", proc.stderr.readline()).group(1)
    yield {"url": url, "site": site, "trial": trial}
    proc.terminate()
    proc.wait(timeout=30)


def test_markup_in_a_tool_calls_arguments_is_text_served_and_static(page, marked_up):
    """What a model sends in a call's arguments shows as the text it is: no element is
    made of it and no script of it runs, served or from the static export."""
    from playwright.sync_api import expect

    for where in (f"{marked_up['url']}/trial/{marked_up['trial']}/day-1.html",
                  (marked_up["site"] / "trial" / marked_up["trial"] / "day-1.html").as_uri()):
        page.goto(where)
        expect(page.get_by_role("heading", level=1)).to_contain_text("Day 1")
        expect(page.get_by_text('<b id="bold">bold</b>', exact=False).first).to_be_attached()
        assert page.locator("#bold").count() == 0          # no element made of it
        assert page.locator("img[src='x']").count() == 0
        assert page.title() != "pwned"


def test_a_static_page_opened_from_disk_runs_its_shared_script_and_style(page, marked_up):
    """The static export's pages share assets/view.js and assets/view.css (design §31:
    each page once carried both inline); opened from disk in Chromium, the keys still
    move between days and the style still applies."""
    from playwright.sync_api import expect

    day = marked_up["site"] / "trial" / marked_up["trial"] / "day-1.html"
    page.goto(day.as_uri())
    assert page.eval_on_selector("header", "e => getComputedStyle(e).display") == "flex"
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("heading", level=1)).to_contain_text("Day 2")
