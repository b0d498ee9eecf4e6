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
    assert rows["mcp/tester"]["mean_net_assets"] == trial["final_net_assets"]
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
         "0.0.0.0", "--port", str(port), "--token", token, "--days", str(DAYS), "--db", db],
        stderr=subprocess.PIPE, text=True)
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
    assert "give --token" in capsys.readouterr().err
    assert not (tmp_path / "x.duckdb").exists()
    with pytest.raises(SystemExit):
        main(["serve", "--port", "70000"])
