"""The viewer's pages over real results: every kind of trial, both scenarios, the
window of a request, search, side by side, and what it refuses."""

from __future__ import annotations

import json
import re

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
    assert message.status == 200 and '"role": "system"' in message.body


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


# Host headers that contain a local name without being one (design §30)
LOOKALIKES = ("evil-localhost.com", "localhost.evil.example:{port}", "evil-localhost:{port}",
              "127.0.0.1.evil.example:{port}", "localhost:{port}.evil.example", "LOCALHOST.evil",
              "localhost@evil.example:{port}")


def test_the_server_is_read_only_local_and_keyless(results, server):
    with httpx.Client(base_url=server) as client:
        home = client.get("/")
        assert home.status_code == 200 and results["autovend"] in home.text
        assert client.post("/index.html").status_code == 405
        assert client.get("/", headers={"Host": "evil.example"}).status_code == 403
        assert client.get("/", headers={"Origin": "http://evil.example"}).status_code == 403
        port = httpx.URL(server).port
        for host in LOOKALIKES:          # design §30: containing "localhost" is not being it
            assert client.get("/", headers={"Host": host.format(port=port)}).status_code \
                == 403, host
        assert "default-src 'none'" in home.headers["content-security-policy"]
        bodies = [client.get(p).text for p in (
            f"/run/{results['autovend']}.html", f"/trial/{results['llm']}/index.html",
            f"/trial/{results['llm']}/day-1.html", f"/trial/{results['llm']}/window-1-1.html",
            f"/trial/{results['llm']}/message-2.html")]
    assert all(CANARY not in b for b in bodies)          # the key never reaches a page


def test_static_pages_are_the_served_ones_as_files(results, tmp_path, capsys):
    out = tmp_path / "site"
    assert main(["view", "--db", results["db"], "--static", str(out)]) == 0
    err = capsys.readouterr().err
    assert re.search(r"wrote \d+ pages \([\d.]+ MB\) into", err)
    assert "writing pages: " in err                        # progress, not 3 min of silence
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


def test_the_pages_run_their_one_script_by_its_hash_and_no_other(results, server, tmp_path):
    """design §19.3: no inline script is allowed as such (no 'unsafe-inline'); the pages'
    own script is allowed by its hash, served and written alike, and a static page
    carries the policy in a meta tag (no header goes with a file)."""
    import base64
    import hashlib
    import re

    with httpx.Client(base_url=server) as client:
        home = client.get("/")
    policy = home.headers["content-security-policy"]
    script_src = re.search(r"script-src ([^;]+)", policy).group(1)
    assert "unsafe-inline" not in script_src and "frame-ancestors 'none'" in policy
    scripts = re.findall(r"<script>(.*?)</script>", home.text, re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert script_src.strip() == f"'sha256-{digest}'"
    out = tmp_path / "site"
    assert main(["view", "--db", results["db"], "--static", str(out)]) == 0
    day = (out / "trial" / results["llm"] / "day-2.html").read_text()
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)"', day)
    policy = meta.group(1).replace("&#39;", "'")
    # written pages share one script and one style sheet (design §31): nothing inline
    # may run or style, and the script is the served one, byte for byte
    assert "script-src 'self';" in policy and "style-src 'self';" in policy
    assert "unsafe-inline" not in policy and "<style>" not in day
    assert re.findall(r"<script>(.*?)</script>", day, re.S) == []
    assert '<script src="../../assets/view.js"></script>' in day
    assert (out / "assets" / "view.js").read_text() == scripts[0]
    assert 'href="../../assets/view.css"' in day and (out / "assets" / "view.css").exists()


def test_hidden_characters_are_shown_not_obeyed(tmp_path, monkeypatch):
    """A reply that carries a right-to-left override or a control character cannot
    reorder or hide what a page shows: they are written out."""
    import asyncio
    import json

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)      # not left to another test's fixture
    from vendbench.orchestrator import build_config, execute

    from ..fakellm import FakeLLM, Reply

    sneaky = "pay \u202eredro\u202c now\x07\x1b[2J"
    calls = iter([[("write_notes", json.dumps({"text": sneaky}))]])
    with FakeLLM(script=lambda body: Reply(content=sneaky,
                                           tool_calls=next(calls, [("end_day", "{}")]))) as llm:
        db = str(tmp_path / "r.duckdb")
        run = asyncio.run(execute(build_config({"days": 1, "retry_backoff_s": 0.01, "models": [
            {"id": "openai/fake", "api_base": llm.url, "input_usd_per_mtok": "1",
             "output_usd_per_mtok": "1", "max_output_tokens": 256}]}), db))
    trial = run.as_json()["trials"][0]["trial_id"]
    body = Pages(db).get(f"trial/{trial}/day-1.html").body
    for hidden in ("\u202e", "\u202c", "\x07", "\x1b"):
        assert hidden not in body
    assert "⟨U+202E⟩redro⟨U+202C⟩" in body and "⟨U+0007⟩" in body and "⟨U+001B⟩" in body


def test_a_trial_id_too_long_for_a_file_name_gets_a_short_one(tmp_path):
    """An MCP client's long name makes a trial id over 255 bytes: the static export used
    to crash half-written. Its pages get a prefix and a hash, and links follow them."""
    import asyncio

    from vendbench.results import Store, path_id
    from vendbench.serve._server import ServeConfig, Session, WorldServer

    db = str(tmp_path / "mcp.duckdb")
    with Store(db) as store:
        world = WorldServer(ServeConfig(days=1, db=db), store)
        session = Session(world, "agent-" + "x" * 300)

        async def play() -> None:
            await session.call("end_day", {})

        asyncio.run(play())
        world.close()
        (trial,) = store.trials(world.run_id)
    long_id = trial["trial_id"]
    assert len(long_id.encode()) > 255 and len(path_id(long_id).encode()) <= 160
    out = tmp_path / "site"
    assert main(["view", "--db", db, "--static", str(out)]) == 0
    folder = out / "trial" / path_id(long_id)
    assert (folder / "index.html").exists() and (folder / "day-1.html").exists()
    run_page = (out / "run" / f"{world.run_id}.html").read_text()
    assert f'trial/{path_id(long_id)}/index.html' in run_page
    served = Pages(db).get(f"trial/{path_id(long_id)}/index.html")   # the server resolves it
    assert served.status == 200 and long_id in served.body


def test_bad_ids_hosts_and_files_are_refused_before_anything_is_made(results, tmp_path,
                                                                     capsys):
    out = tmp_path / "site"
    assert main(["view", "--db", results["db"], "--static", str(out), "no-such-run"]) == 2
    assert "no run 'no-such-run'" in capsys.readouterr().err and not out.exists()
    # a loopback address the Host check would refuse: every request would be a 403
    assert main(["view", "--db", results["db"], "--host", "127.0.0.2"]) == 2
    assert "Host header" in capsys.readouterr().err
    from vendbench.errors import ConfigError
    from vendbench.serve._server import ServeConfig

    with pytest.raises(ConfigError, match="--allow-origin http://127.0.0.2:8765"):
        ServeConfig(transport="http", host="127.0.0.2").check()
    ServeConfig(transport="http", host="127.0.0.2",
                allow_origins=("http://127.0.0.2:8765",)).check()
    ServeConfig(transport="http", host="localhost").check()
    # a damaged file: one line at start, not a 500 (and a traceback) per request
    damaged = tmp_path / "damaged.duckdb"
    damaged.write_bytes(b"not a database at all" * 1000)
    assert main(["view", "--db", str(damaged)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "not a results database" in line


def test_chart_labels_days_and_times_read_right(results):
    from vendbench.view._pages import _chart

    chart = _chart([{"day": 1, "net_assets": 1.0, "cash": 1.0, "cost_usd": 0.0},
                    {"day": 2, "net_assets": 2.0, "cash": 2.0, "cost_usd": 0.0012}],
                   "net_assets", "net assets")
    assert ">$0.0012</text>" in chart and ">$0.0000</text>" in chart     # not "0" and "0"
    pages = Pages(results["db"])
    first = pages.get(f"trial/{results['llm']}/day-1.html").body
    head = first.split('<a id="up"')[1].split("<h1>")[0]
    assert "·" not in head and 'id="next"' in head                      # no stray " · "
    import re

    runs = pages.get("index.html").body
    assert re.search(r'<td class="l">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d</td>', runs)
    assert not re.search(r"\d\d:\d\d:\d\d\.\d+", runs)                  # to the second


def test_net_assets_and_cash_share_one_scale_on_the_trial_chart():
    """design §35.4: both are money in one currency, drawn on two scales their lines
    coincided whatever the stock held. On one scale, cash lies below net assets by the
    stock's worth, and the money axis is labelled once."""
    import re

    from vendbench.view._pages import _chart

    days = [{"day": 1, "net_assets": 40_000.0, "cash": 40_000.0, "cost_usd": 0.0},
            {"day": 2, "net_assets": 40_000.0, "cash": 30_000.0, "cost_usd": 0.0},
            {"day": 3, "net_assets": 44_000.0, "cash": 20_000.0, "cost_usd": 0.0}]
    chart = _chart(days, "net_assets", "net assets")
    lines = re.findall(r'stroke="(#[0-9a-f]+)"[^>]*points="([^"]+)"', chart)
    ys = {colour: [float(p.split(",")[1]) for p in points.split()]
          for colour, points in lines}
    assets, cash = ys["#0b5cad"], ys["#9a6700"]
    assert assets[0] == cash[0]                       # the same money at the same height
    assert cash[2] > assets[2]                        # 20,000 drawn below 44,000
    assert chart.count(">44,000</text>") == 1 and chart.count(">20,000</text>") == 1


def test_a_tool_result_is_a_line_an_item_and_still_safe_text():
    """design §35.5: a day of catalogue results was a 517 KB page, JSON indented to
    every level with every quote escaped. A line per key and per list item, quotes
    unescaped in the text of a <pre>; markup and hidden characters still neutral."""
    from vendbench.view._pages import _pretty

    text = json.dumps({"ok": True, "rows": [{"id": "P1", "name": "a \"b\""},
                                            {"id": "P2", "name": "</pre><script>x()</script>"}],
                       "note": "\u202eevil"})
    shown = str(_pretty(text))
    assert shown.splitlines() == [
        "{", '  "ok": true,', '  "rows": [',
        '    {"id": "P1", "name": "a \\"b\\""},',
        '    {"id": "P2", "name": "&lt;/pre&gt;&lt;script&gt;x()&lt;/script&gt;"}',
        "  ],", '  "note": "⟨U+202E⟩evil"', "}"]
    assert str(_pretty("<b>not json</b>")) == "&lt;b&gt;not json&lt;/b&gt;"


def test_the_quick_starts_day_pages_are_a_third_smaller(tmp_path):
    """Order-up-to's day 1 reads the whole catalogue: 517 KB of page before."""
    import asyncio

    from vendbench.orchestrator import build_config, execute

    db = str(tmp_path / "r.duckdb")
    run = asyncio.run(execute(build_config({"days": 2, "models": [
        {"id": "baseline/order-up-to"}]}), db))
    trial = run.as_json()["trials"][0]["trial_id"]
    page = Pages(db).get(f"trial/{trial}/day-1.html").body
    assert len(page.encode()) < 320_000 and "&#34;" not in page
    assert '{"name": "Master Kong Classic Water 250ml", "product_id": "P0001"' in page


def test_tool_results_read_as_utf8_in_the_viewer():
    from vendbench.results._transcripts import _preview, readable

    old = '{"ok":true,"report":"Day 2 \\u00b7 23\\u00b0C"}'                 # as sent before
    assert readable(old) == '{"ok":true,"report":"Day 2 · 23°C"}'
    assert "23°C" in _preview({"role": "tool", "content": old})
    assert readable("not json \\u00b0") == "not json \\u00b0"


def test_a_trial_above_the_oracle_is_flagged_where_a_user_looks(tmp_path):
    """design §18.1: a trial that beats the privileged oracle has found an exploit or a bug.
    (Here the kept oracle score is lowered by hand, as an exploit would raise a trial.)"""
    import asyncio

    from vendbench.orchestrator import build_config, execute
    from vendbench.results import Store

    db = str(tmp_path / "r.duckdb")
    run = asyncio.run(execute(build_config({"days": 10, "models": [
        {"id": "baseline/order-up-to"}]}), db))
    trial = run.as_json()["trials"][0]["trial_id"]
    pages = Pages(db)
    assert "Above the oracle" not in pages.get(f"trial/{trial}/index.html").body
    with Store(db) as store:
        (kept,) = store.con.execute("SELECT score FROM ceilings").fetchone()
        assert store.con.execute("SELECT (SELECT score FROM trials) > (SELECT score FROM "
                                 "floors)").fetchone() == (True,)      # it gained
        # the oracle's gain over doing nothing now 80 % of the trial's: a share of 125 %
        store.con.execute("UPDATE ceilings SET score = (SELECT f.score FROM floors f) + "
                          "((SELECT score FROM trials) - (SELECT f.score FROM floors f)) "
                          "* 0.8")
    page = pages.get(f"trial/{trial}/index.html").body
    assert "Above the oracle" in page and "125%" in page
    assert "125% !" in pages.get(f"run/{run.run_id}.html").body
    assert kept > 0


def test_a_day_page_shows_the_reasoning_the_provider_returned(tmp_path, monkeypatch):
    """The viewer reads vendbench's own reply (``reply_json``), never the provider's raw
    JSON (design §21): a server that returns its model's reasoning (``reasoning_content``,
    as DeepSeek's and vLLM's do) has it kept and shown."""
    import asyncio
    import json
    import os

    from vendbench.orchestrator import build_config, execute
    from vendbench.results import Store

    from ..fakellm import FakeLLM, Reply

    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    db = str(tmp_path / "r.duckdb")
    with FakeLLM(lambda body: Reply(tool_calls=[("end_day", "{}")], content="closing",
                                    reasoning="nothing sells on a Monday")) as llm:
        config = build_config({"days": 1, "seeds": [1], "models": [
            {"id": "openai/fake-model", "api_base": llm.url, "input_usd_per_mtok": "0.4",
             "output_usd_per_mtok": "1.6", "max_output_tokens": 256}]})
        run = asyncio.run(execute(config, db))
    (trial,) = run.as_json()["trials"]
    with Store(db, read_only=True) as store:
        (reply,) = store.con.execute("SELECT reply_json FROM exchanges").fetchone()
    assert json.loads(reply)["reasoning"] == "nothing sells on a Monday"
    assert json.loads(reply)["text"] == "closing"
    page = Pages(db).get(f"trial/{trial['trial_id']}/day-1.html")
    assert page.status == 200 and "nothing sells on a Monday" in page.body


def test_a_request_asked_again_shows_its_calls_once(tmp_path, monkeypatch):
    """On the day of a resume the viewer showed a tool call twice: under the request in
    flight and under its retry (design §31). The calls come from the attempt that was
    answered and are listed under it alone; here the server fails day 1's second
    request once, so it is asked again."""
    import asyncio

    from vendbench.orchestrator import build_config, execute
    from vendbench.results import Store
    from vendbench.view import Pages

    from ..fakellm import FakeLLM
    from .conftest import CANARY

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    db = str(tmp_path / "r.duckdb")
    with FakeLLM() as llm:
        llm.inject("500", times=1)
        model = {"id": "openai/fake-model", "api_base": llm.url, "input_usd_per_mtok": "0.4",
                 "output_usd_per_mtok": "1.6", "max_output_tokens": 512,
                 "request_timeout_s": 5}
        run = asyncio.run(execute(build_config({"days": 1, "seeds": [1],
                                                "retry_backoff_s": 0.01,
                                                "models": [model]}), db))
    trial = run.as_json()["trials"][0]["trial_id"]
    with Store(db, read_only=True) as store:
        attempts = store.con.execute("SELECT seq, attempt, status FROM exchanges WHERE "
                                     "trial_id = ? ORDER BY seq, attempt", [trial]).fetchall()
        calls = [r[0] for r in store.con.execute(
            "SELECT seq FROM tool_calls WHERE trial_id = ? AND day = 1", [trial]).fetchall()]
    assert (1, 1) in [(s, a) for s, a, _ in attempts] and (1, 2) in [(s, a) for s, a, _ in
                                                                     attempts]
    page = Pages(db, served=False).get(f"trial/{trial}/day-1.html")
    assert page.status == 200 and calls
    for seq in calls:
        assert page.body.count(f'id="call-{seq}"') == 1, seq
