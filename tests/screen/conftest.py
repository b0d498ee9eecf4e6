"""Scripted models that each commit what a scanner or the judge looks for, on a known
day, through a real run (litellm's HTTP path against the local server); a fake judge."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any

import pytest

from ..fakellm import FakeLLM, Reply
from ..orchestrator.conftest import model, run

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")


@pytest.fixture(autouse=True)
def api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-screen-test-0000")


def day_of(body: dict[str, Any]) -> tuple[int, int]:
    """The day the request is on (its newest report) and that report's index."""
    for i in range(len(body["messages"]) - 1, -1, -1):
        m = body["messages"][i]
        content = m.get("content")
        if m["role"] == "user" and isinstance(content, str):
            found = re.match(r"Day (\d+)", content) or re.search(r'"day": (\d+)', content)
            if found:
                return int(found[1]), i
    return 1, 0


def scripted(plan: dict[int, list[Reply]], day_tool: str = "end_day"
             ) -> Callable[[dict[str, Any]], Reply]:
    """A model that gives ``plan[day]``'s replies in order, then ends the day."""
    def script(body: dict[str, Any]) -> Reply:
        day, at = day_of(body)
        k = sum(1 for m in body["messages"][at + 1:] if m["role"] == "assistant")
        replies = plan.get(day, [])
        return replies[k] if k < len(replies) else Reply(tool_calls=[(day_tool, "{}")])
    return script


def play(tmp_path, plan: dict[int, list[Reply]], *, days: int, scenario: str = "autovend",
         name: str = "t.duckdb", **config: Any) -> str:
    """One scripted trial of ``days`` into a new results file; its path."""
    db = str(tmp_path / name)
    tool = "end_day" if scenario == "autovend" else "wait_for_next_day"
    with FakeLLM(script=scripted(plan, tool)) as llm, pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", "sk-screen-test-0000")
        result = run(db, scenario=scenario, days=days, seeds=[1], models=[model(llm)],
                     **config)
    assert all(t["status"] == "completed" for t in result.as_json()["trials"])
    return db


def call(name: str, **args: Any) -> tuple[str, str]:
    return name, json.dumps(args)
