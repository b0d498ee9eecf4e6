"""The world over MCP (`vendbench serve`), driven by the official SDK's own client over
stdio and over streamable HTTP: the tools equal the JSON tools, sessions are trials
with fresh worlds, the leaderboard ranks them, and HTTP off loopback needs a token."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import Implementation

from vendbench.cli import main
from vendbench.environment import make
from vendbench.results import Store

DAYS = 3
BAD_ORDER = {"items": [{"product_id": "P0001", "quantity": -4}, {"quantity": "many"}]}


def text(result) -> dict:
    return json.loads(result.content[0].text)


async def play_to_the_end(session: ClientSession) -> list[dict]:
    out = []
    for _ in range(DAYS):
        out.append(text(await session.call_tool("end_day", {})))
    return out


def test_a_stdio_session_is_a_trial_with_the_same_tools_and_results(tmp_path, capsys):
    db = str(tmp_path / "mcp.duckdb")
    reference = make("autovend", seed=1, days=DAYS)
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "vendbench", "serve", "--days", str(DAYS), "--db", db, "--name", "tester"],
        env={**os.environ})

    async def session() -> dict:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            init = await s.initialize()
            tools = (await s.list_tools()).tools
            report = (await s.read_resource("vendbench://daily-report")).contents[0].text
            bad = await s.call_tool("place_order", BAD_ORDER)
            unknown = await s.call_tool("launch_rocket", {})
            days = await play_to_the_end(s)
            after = await s.call_tool("end_day", {})
            return {"init": init, "tools": tools, "report": report, "bad": bad,
                    "unknown": unknown, "days": days, "after": after}

    got = asyncio.run(asyncio.wait_for(session(), 60))
    assert got["init"].instructions == reference.instructions      # the same briefing
    assert len(got["tools"]) == len(reference.tools) == 18
    for mine, theirs in zip(got["tools"], reference.tools):           # tool by tool
        f = theirs["function"]
        assert (mine.name, mine.description, mine.inputSchema) == \
            (f["name"], f.get("description"), f["parameters"])
    assert got["report"] == reference.observe()
    # the world's own validation, as for an LLM's calls: the same rejection, item by item
    assert got["bad"].isError and text(got["bad"]) == reference.call("place_order", BAD_ORDER)
    assert text(got["unknown"]) == reference.call("launch_rocket", {})
    assert [d["closed_day"] for d in got["days"]] == [1, 2, 3]
    assert got["after"].isError and "the result is final" in text(got["after"])["error"]

    with Store(db, read_only=True) as store:
        (trial,) = store.trials(store.run("latest")["run_id"])
        calls = store.con.execute("SELECT count(*) FROM tool_calls WHERE trial_id = ?",
                                  [trial["trial_id"]]).fetchone()[0]
        days = store.con.execute("SELECT count(*) FROM days WHERE trial_id = ?",
                                 [trial["trial_id"]]).fetchone()[0]
        exchanges = store.con.execute("SELECT count(*) FROM exchanges").fetchone()[0]
    assert trial["model"] == "mcp/tester" and trial["status"] == "completed"
    assert trial["days_completed"] == days == DAYS and calls == 2 + DAYS == trial["tool_calls"]
    assert exchanges == 0 and trial["cost_usd"] is None      # no LLM exchanges of ours
    for _ in range(DAYS):
        reference.call("end_day", {})
    assert trial["final_net_assets"] == reference.final_state()["final_net_assets"]

    # ranked beside an in-process model of the same cohort, its harness named
    assert main(["run", "--models", "baseline/order-up-to", "--days", str(DAYS),
                 "--db", db, "--json"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--run", "all", "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    rows = {r["model"]: r for r in board["rows"]}
    assert set(rows) == {"mcp/tester", "baseline/order-up-to"} and board["refused"] == []
    assert rows["mcp/tester"]["harness"] == "mcp"
    assert rows["mcp/tester"]["mean_net_assets"] == trial["score"]
    assert board["cohort"]["harnesses"] == ["in-process", "mcp"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_http_sessions_get_their_own_worlds_and_need_the_token_off_loopback(tmp_path):
    db = str(tmp_path / "http.duckdb")
    port = free_port()
    token = "tok-5b1f0c2e9d"
    proc = subprocess.Popen(
        [sys.executable, "-m", "vendbench", "serve", "--transport", "http", "--host",
         "0.0.0.0", "--port", str(port), "--token-env", "MCP_TOKEN", "--days", str(DAYS),
         "--db", db], stderr=subprocess.PIPE, text=True, env={**os.environ, "MCP_TOKEN": token})
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        assert "serving MCP on http://0.0.0.0" in proc.stderr.readline()
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}
        headers = {"Accept": "application/json, text/event-stream"}
        for auth in (None, "Bearer wrong", f"Basic {token}", f"Bearer {token}x"):
            extra = {"Authorization": auth} if auth else {}
            reply = httpx.post(url, json=hello, headers={**headers, **extra}, timeout=10)
            assert reply.status_code == 401, auth
        ok = {"Authorization": f"Bearer {token}"}

        async def client(name: str, order: bool, finish: bool) -> dict:
            async with httpx.AsyncClient(headers=ok) as http, \
                    streamable_http_client(url, http_client=http) as (read, write, _), \
                    ClientSession(read, write,
                                  client_info=Implementation(name=name, version="1")) as s:
                await s.initialize()
                if order:
                    placed = text(await s.call_tool("place_order", {"items": [
                        {"product_id": "P0001", "quantity": 10}]}))
                    assert placed["ok"], placed
                orders = text(await s.call_tool("get_orders", {}))
                days = await play_to_the_end(s) if finish else []
                return {"orders": orders, "days": days}

        async def both() -> list[dict]:
            return await asyncio.gather(client("alice", True, True),
                                        client("bob", False, False))

        alice, bob = asyncio.run(asyncio.wait_for(both(), 60))
        assert len(alice["orders"]["rows"]) == 1 and bob["orders"]["rows"] == []
        # read while the server still writes the file (through its process)
        deadline = time.monotonic() + 10
        while True:
            with Store(db, read_only=True) as store:
                assert store.live is not None
                trials = {t["model"]: t for t in store.trials(store.run("latest")["run_id"])}
            if trials.get("mcp/bob", {}).get("status") == "interrupted" or \
                    time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert trials["mcp/alice"]["status"] == "completed"
        assert trials["mcp/bob"]["status"] == "interrupted"      # it left before the horizon
        assert trials["mcp/alice"]["final_net_assets"] != trials["mcp/bob"]["final_net_assets"]
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0 and "Traceback" not in err
    assert token not in err
    with Store(db, read_only=True) as store:
        run = store.run("latest")
        assert token not in run["config_json"] and run["status"] == "completed"


def test_http_off_loopback_without_a_token_is_refused(tmp_path, capsys):
    assert main(["serve", "--transport", "http", "--host", "0.0.0.0", "--db",
                 str(tmp_path / "x.duckdb")]) == 2
    err = capsys.readouterr().err
    assert "--token-env NAME or --token-file PATH" in err
    assert "'Authorization: Bearer <token>'" in err             # redaction keeps advice
    assert not (tmp_path / "x.duckdb").exists()
    with pytest.raises(SystemExit):
        main(["serve", "--port", "70000"])


def test_the_token_never_comes_from_argv(tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "x.duckdb")
    base = ["serve", "--transport", "http", "--host", "0.0.0.0", "--db", db]
    assert main([*base, "--token", "visible-in-ps-123"]) == 2
    err = capsys.readouterr().err
    assert "every local user sees it" in err and "visible-in-ps-123" not in err
    assert main([*base, "--token-env", "NO_SUCH_VAR_X"]) == 2
    assert "not set" in capsys.readouterr().err
    token = tmp_path / "token"
    token.write_text("file-token-0123456\n")
    token.chmod(0o644)
    assert main([*base, "--token-file", str(token)]) == 2
    err = capsys.readouterr().err
    assert "chmod 600" in err and "file-token" not in err
    from vendbench.cli import _parser
    from vendbench.cli.serve import token as _serve_token

    token.chmod(0o600)
    args = _parser().parse_args([*base, "--token-file", str(token)])
    assert _serve_token(args) == "file-token-0123456"
    monkeypatch.setenv("MY_MCP_TOKEN", " env-token-789 ")
    args = _parser().parse_args([*base, "--token-env", "MY_MCP_TOKEN"])
    assert _serve_token(args) == "env-token-789"
    assert not os.path.exists(db)


class Served:
    """`vendbench serve` over HTTP in a subprocess, on a free port, until closed."""

    def __init__(self, db: str, *extra: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "vendbench", "serve", "--transport", "http", "--port",
             str(self.port), "--days", str(DAYS), "--db", db, *extra],
            stderr=subprocess.PIPE, text=True)
        assert "serving MCP on" in self.proc.stderr.readline()

    def close(self, sig: int = signal.SIGTERM) -> str:
        self.proc.send_signal(sig)
        return self.proc.communicate(timeout=30)[1]


HELLO = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream"}


def test_a_web_page_cannot_play_a_world_dns_rebinding(tmp_path):
    """A page at evil.example that rebinds its name to 127.0.0.1 sends its own name as
    Host and Origin: refused (403) before anything is played or written; localhost
    names pass, and --allow-origin admits a named origin."""
    db = str(tmp_path / "m.duckdb")
    served = Served(db, "--allow-origin", "http://lab.example:9999")
    try:
        port = served.port
        from .view.test_pages import LOOKALIKES

        for headers in ({"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"},
                        {"Host": f"evil.example:{port}"},
                        *({"Host": host.format(port=port)} for host in LOOKALIKES),
                        {"Origin": "http://evil-localhost.com"},
                        {"Origin": "http://evil.example"},
                        {"Origin": f"http://localhost:{port + 1}"}):
            reply = httpx.post(served.url, json=HELLO, headers={**ACCEPT, **headers},
                               timeout=10)
            assert reply.status_code == 403, headers
            assert "refused" in reply.json()["error"]
        for headers in ({}, {"Origin": f"http://localhost:{port}"},
                        {"Host": f"localhost:{port}"},
                        {"Host": "lab.example:9999", "Origin": "http://lab.example:9999"}):
            reply = httpx.post(served.url, json=HELLO, headers={**ACCEPT, **headers},
                               timeout=10)
            assert reply.status_code == 200, (headers, reply.text)
    finally:
        err = served.close()
    assert "Traceback" not in err
    with Store(db, read_only=True) as store:
        trials = store.trials(store.run("latest")["run_id"])
    assert len(trials) <= 4                         # only the admitted ones could play


def _client(url: str, name: str):
    async def session(body):
        async with streamable_http_client(url) as (read, write, _), \
                ClientSession(read, write, client_info=Implementation(name=name,
                                                                      version="1")) as s:
            await s.initialize()
            return await body(s)
    return session


def test_sessions_are_unique_trials_capped_and_ended_when_idle(tmp_path):
    db = str(tmp_path / "m.duckdb")
    served = Served(db, "--idle-timeout", "1", "--max-sessions", "2")
    try:
        async def one_call(s):
            return text(await s.call_tool("get_daily_report", {}))

        async def names() -> None:            # three clients whose names share a slug
            for name in ("x y", "x-y", "X.Y"):
                await _client(served.url, name)(one_call)

        asyncio.run(asyncio.wait_for(names(), 60))

        async def capped() -> list[int]:      # two sessions left open; a third refused
            async with httpx.AsyncClient(timeout=30) as http:
                opened = []
                for _ in range(3):
                    r = await http.post(served.url, json=HELLO, headers=ACCEPT)
                    opened.append(r.status_code)
                    if r.status_code != 200:
                        continue
                    sid = {**ACCEPT, "mcp-session-id": r.headers["mcp-session-id"]}
                    await http.post(served.url, headers=sid, json={
                        "jsonrpc": "2.0", "method": "notifications/initialized"})
                    called = await http.post(served.url, headers=sid, json={
                        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                        "params": {"name": "get_daily_report", "arguments": {}}})
                    assert called.status_code == 200, called.text
                return opened

        codes = asyncio.run(asyncio.wait_for(capped(), 60))
        deadline = time.monotonic() + 60        # idle sessions end: their trials too
        while time.monotonic() < deadline:
            with Store(db, read_only=True) as store:
                trials = store.trials(store.run("latest")["run_id"])
            if trials and all(t["status"] != "running" for t in trials):
                break
            time.sleep(0.2)
    finally:
        err = served.close()
    assert "Traceback" not in err
    ids = [t["trial_id"] for t in trials if t["model"] in ("mcp/x y", "mcp/x-y", "mcp/X.Y")]
    assert len(ids) == len(set(ids)) == 3           # three trials, not one merged
    assert codes[:2] == [200, 200] and codes[2] != 200   # the cap held
    assert all(t["status"] == "interrupted" for t in trials), trials
    idle = [t for t in trials if t["model"] == "mcp/raw"]
    assert idle and all("sent nothing for 1 s" in t["reason"] for t in idle)


def test_a_slow_call_does_not_stall_other_sessions_and_ended_sessions_free_their_world(
        tmp_path):
    """Session A's call is held inside its world (as a heavy SQL query would be) until B
    has been answered: if calls ran on the event loop, B could never be answered and this
    would time out. An ended session lets its world go."""
    import threading

    from vendbench.serve._server import ServeConfig, Session, WorldServer

    with Store(str(tmp_path / "m.duckdb")) as store:
        world = WorldServer(ServeConfig(days=DAYS, db=str(tmp_path / "m.duckdb")), store)
        a, b = Session(world, "a"), Session(world, "b")
        world.sessions += [a, b]
        release = threading.Event()
        held = a.env.call

        def slow(name, arguments):
            assert release.wait(30)
            return held(name, arguments)

        a.env.call = slow

        async def both():
            first = asyncio.create_task(a.call("query_sql", {"sql": "SELECT 1 AS one"}))
            answered = await asyncio.wait_for(b.call("get_daily_report", {}), 10)
            assert not first.done()              # A is still inside its world
            release.set()
            return answered, await asyncio.wait_for(first, 10)

        answered, slow_one = asyncio.run(both())
        assert answered["ok"] and slow_one["ok"]
        a.end("interrupted", "test")
        assert a.env is None and world.sessions == [b]
        assert not asyncio.run(a.call("end_day", {}))["ok"]
        world.close()


def test_after_kill_9_a_served_run_is_stopped_and_never_offered_a_resume(tmp_path, capsys):
    db = str(tmp_path / "m.duckdb")
    served = Served(db)

    async def call(s):
        return text(await s.call_tool("get_daily_report", {}))

    asyncio.run(asyncio.wait_for(_client(served.url, "k")(call), 60))
    served.close(signal.SIGKILL)
    assert main(["runs", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "stopped" in out and "(vendbench serve) stopped without finishing" in out
    assert "run --resume" not in out
    with Store(db, read_only=True) as store:
        run_id = store.run("latest")["run_id"]
    assert main(["run", "--resume", run_id, "--db", db]) == 2
    err = capsys.readouterr().err
    assert "cannot be resumed" in err and "Traceback" not in err and len(err.splitlines()) == 1
