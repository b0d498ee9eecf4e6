"""Fixtures for orchestrator tests: the fake LLM server and a one-call run helper."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest

from vendbench.orchestrator import RunResult, build_config, execute
from vendbench.results import Store

from ..fakellm import FakeLLM

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")


CANARY = "sk-canary-7f3e9d2c41b8a6e5"


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    """A canary key: any trace of it in the database, logs or output is a leak."""
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", CANARY)
    return CANARY


@pytest.fixture
def llm():
    with FakeLLM() as server:
        yield server


def model(llm: FakeLLM, name: str = "openai/fake-model", **extra: Any) -> dict[str, Any]:
    """A priced fake model entry for a run config."""
    return {"id": name, "api_base": llm.url, "input_usd_per_mtok": "0.4",
            "output_usd_per_mtok": "1.6", "max_output_tokens": 512, "request_timeout_s": 5,
            **extra}


def claude(llm: FakeLLM, name: str = "anthropic/claude-sonnet-4-5", **extra: Any
           ) -> dict[str, Any]:
    """An Anthropic model entry against the fake server's /v1/messages (litellm appends
    the path to the base itself), priced from litellm's map (with cache prices)."""
    return {"id": name, "api_base": llm.base, "max_output_tokens": 512,
            "request_timeout_s": 5, **extra}


def run(db: str, **config: Any) -> RunResult:
    cfg = build_config({"days": 3, "seeds": [1], "workers": 8, "retry_backoff_s": 0.01,
                        **config})
    return asyncio.run(execute(cfg, db))


async def until(condition: Any, timeout: float = 60.0, what: str = "the condition") -> None:
    """Wait (in the event loop) until ``condition()`` holds; fail after ``timeout`` s
    rather than hang the suite."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() > deadline:
            raise AssertionError(f"gave up waiting for {what} after {timeout:g} s")
        await asyncio.sleep(0.005)


def query(db: str, sql: str, params: list | None = None) -> list[tuple]:
    with Store(db, read_only=True) as store:
        return store.con.execute(sql, params or []).fetchall()
