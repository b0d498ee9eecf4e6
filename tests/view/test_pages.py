"""The viewer's pages over real results: every kind of trial, both scenarios, the
window of a request, search, side by side, and what it refuses."""

from __future__ import annotations

import httpx
import pytest

from vendbench.cli import main
from vendbench.view import Pages

from .conftest import CANARY


def test_every_kind_of_trial_has_its_pages(results):
    pages = Pages(results["db"])
    run = pages.get(f"run/{results['autovend']}.html")
    assert run.status == 200 and "openai/fake-model" in run.body and "<svg" in run.body
    assert f"compare/{results['policy']}/{results['llm']}.html" in run.body   # a pair
    llm = pages.get(f"trial/{results['llm']}/index.html")
    assert llm.status == 200 and 'href="day-6.html"' in llm.body and "completed" in llm.body
    day = pages.get(f"trial/{results['llm']}/day-4.html")
    assert "Daily report" in day.body and "Day 4 of 6" in day.body      # what it read
    assert "restock" in day.body and "window-" in day.body              # calls, windows
    assert 'id="prev" href="day-3.html"' in day.body and 'id="next" href="day-5.html"' in day.body
    policy = pages.get(f"trial/{results['policy']}/day-2.html")       # no exchanges
    assert policy.status == 200 and "Tool calls" in policy.body and "request " not in policy.body
    session = pages.get(f"trial/{results['session']}/day-1.html")     # an MCP session
    assert session.status == 200 and "get_daily_report" in session.body
    network = pages.get(f"trial/{results['oracle']}/day-1.html")      # the other world
    assert network.status == 200 and "final bank balance" in network.body
    assert "EUR" in pages.get(f"trial/{results['oracle']}/index.html").body


def test_a_window_shows_what_a_request_carried_and_what_was_evicted(results):
    pages = Pages(results["db"])
    first = pages.get(f"trial/{results['llm']}/window-1-1.html")
    assert first.status == 200 and "system" in first.body and "Evicted" not in first.body
    last_day = pages.get(f"trial/{results['llm']}/day-6.html").body
    seq = int(last_day.split('id="exchange-')[1].split("-")[0])
    late = pages.get(f"trial/{results['llm']}/window-{seq}-1.html")
    assert late.status == 200 and "Day 6 of 6" in late.body
    message = pages.get(f"trial/{results['llm']}/message-0.html")
    assert message.status == 200 and "&#34;role&#34;: &#34;system&#34;" in message.body


def test_search_finds_calls_and_links_their_day(results):
    pages = Pages(results["db"])
    found = pages.get(f"trial/{results['llm']}/search.html", {"q": "RESTOCK"})
    assert found.status == 200 and "matches of" in found.body
    assert 'href="day-' in found.body and "restock" in found.body
    none = pages.get(f"trial/{results['llm']}/search.html", {"q": "no-such-words-here"})
    assert "0 matches" in none.body


def test_side_by_side_names_the_first_day_they_differ(results):
    page = Pages(results["db"]).get(f"compare/{results['policy']}/{results['llm']}.html")
    assert page.status == 200 and "openai/fake-model" in page.body
    assert "baseline/order-up-to" in page.body and "first day where the two differ" in page.body


@pytest.mark.parametrize("path", ["nothing.html", "trial/nope/index.html",
                                  "trial/nope/day-1.html", "run/nope.html",
                                  "trial/x/window-999-1.html", "../../etc/passwd"])
def test_what_is_not_there_is_a_clear_404(results, path):
    page = Pages(results["db"]).get(path)
    assert page.status == 404 and "No such" in page.body


def test_a_day_beyond_the_trial_is_404(results):
    page = Pages(results["db"]).get(f"trial/{results['llm']}/day-99.html")
    assert page.status == 404 and "has days 1–6" in page.body


def test_the_server_is_read_only_local_and_keyless(results, server):
    with httpx.Client(base_url=server) as client:
        home = client.get("/")
        assert home.status_code == 200 and results["autovend"] in home.text
        assert client.post("/index.html").status_code == 405
        assert client.get("/", headers={"Host": "evil.example"}).status_code == 403
        assert client.get("/", headers={"Origin": "http://evil.example"}).status_code == 403
        assert "default-src 'none'" in home.headers["content-security-policy"]
        bodies = [client.get(p).text for p in (
            f"/run/{results['autovend']}.html", f"/trial/{results['llm']}/index.html",
            f"/trial/{results['llm']}/day-1.html", f"/trial/{results['llm']}/window-1-1.html",
            f"/trial/{results['llm']}/message-2.html")]
    assert all(CANARY not in b for b in bodies)          # the key never reaches a page


def test_static_pages_are_the_served_ones_as_files(results, tmp_path, capsys):
    out = tmp_path / "site"
    assert main(["view", "--db", results["db"], "--static", str(out)]) == 0
    assert "pages into" in capsys.readouterr().err
    assert (out / "index.html").exists() and (out / "run" / f"{results['autovend']}.html").exists()
    day = (out / "trial" / results["llm"] / "day-3.html").read_text()
    assert "Daily report" in day and 'href="day-4.html"' in day
    assert "search.html" not in (out / "trial" / results["llm"] / "index.html").read_text()
    first = (out / "trial" / results["llm"] / "window-1-1.html").read_text()
    assert "Carried, by message number: 0, 2." in first           # compact, as ranges
    later = (out / "trial" / results["llm"] / "window-5-1.html").read_text()
    assert "Carried, by message number: 0, 2–" in later
    assert (out / "compare" / results["policy"] / f"{results['llm']}.html").exists()
    # the leaderboard's report, written beside them, links each row to its trials
    assert main(["leaderboard", "--db", results["db"], "--run", results["autovend"],
                 "--charts", str(out)]) == 0
    report = (out / "report.html").read_text()
    assert f"href='trial/{results['llm']}/index.html'>s1</a>" in report
    assert f"href='trial/{results['policy']}/index.html'>s1</a>" in report


def test_bad_input_is_one_clear_line(results, capsys):
    assert main(["view", "--db", results["db"], "--host", "0.0.0.0"]) == 2
    assert "reachable from other machines" in capsys.readouterr().err
    assert main(["view", "--db", results["db"] + ".missing"]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main(["view", "--db", results["db"], "no-such-run"]) == 2
    assert "no run or trial 'no-such-run'" in capsys.readouterr().err
