"""A results file with every kind of trial the viewer shows: an LLM trial and a
reference policy of one world and seed (AutoVend), an MCP session, and the network."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from vendbench.orchestrator import build_config, execute
from vendbench.results import Store

from ..fakellm import FakeLLM

CANARY = "sk-canary-7f3e9d2c41b8a6e5"


@pytest.fixture(scope="package")
def results(tmp_path_factory) -> dict:
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")
    os.environ["OPENAI_API_KEY"] = CANARY
    db = str(tmp_path_factory.mktemp("view") / "view.duckdb")
    with FakeLLM() as llm:
        model = {"id": "openai/fake-model", "api_base": llm.url,
                 "input_usd_per_mtok": "0.4", "output_usd_per_mtok": "1.6",
                 "max_output_tokens": 512, "request_timeout_s": 5}
        cfg = build_config({"days": 6, "seeds": [1], "retry_backoff_s": 0.01,
                            "models": [model, {"id": "baseline/order-up-to"}]})
        autovend = asyncio.run(execute(cfg, db)).run_id
    network = asyncio.run(execute(build_config(
        {"scenario": "network", "days": 3, "seeds": [2],
         "models": [{"id": "baseline/oracle"}]}), db)).run_id
    with Store(db) as store:
        from vendbench.serve._server import ServeConfig, Session, WorldServer

        world = WorldServer(ServeConfig(days=2, db=db, name="harness"), store)
        session = Session(world, "harness")

        async def play() -> None:
            await session.call("get_daily_report", {})
            await session.call("end_day", {})
            await session.call("end_day", {})

        asyncio.run(play())
        world.close()
        trials = {t["model"]: t["trial_id"] for r in (autovend, network, world.run_id)
                  for t in store.trials(r)}
    return {"db": db, "autovend": autovend, "network": network, "mcp": world.run_id,
            "llm": trials["openai/fake-model"], "policy": trials["baseline/order-up-to"],
            "oracle": trials["baseline/oracle"], "session": trials["mcp/harness"]}


@pytest.fixture(scope="package")
def server(results) -> str:
    """``vendbench view`` on a free port; its URL, once it printed it."""
    proc = subprocess.Popen([sys.executable, "-m", "vendbench", "view", "--db",
                             results["db"], "--port", "0"], stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    line = proc.stderr.readline()
    found = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
    if not found:
        proc.kill()
        raise AssertionError(f"vendbench view did not start: {line}{proc.stderr.read()}")
    yield found.group(1)
    proc.terminate()
    proc.wait(timeout=30)


ROOT = Path(__file__).resolve().parents[2]
