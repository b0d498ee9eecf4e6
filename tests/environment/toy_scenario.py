"""A toy scenario for the registry tests: one tool, two days, a metric."""

from __future__ import annotations

from typing import Any

DIRECTIONS = {"calls": "lower"}
DISPLAY = [("calls", "calls", 1, 0)]


def trial_metrics(days, sales, tool_calls, world_seed, world_salt, private) -> dict:
    return {"calls": float(len(tool_calls))}


class ToyEnv:
    instructions = "Press end_day twice."
    tools = [{"type": "function", "function": {"name": "end_day", "description": "end it",
                                               "parameters": {"type": "object",
                                                              "properties": {}}}}]

    def __init__(self, seed: int = 1, days: int = 2) -> None:
        self.day, self.days = 1, days

    @property
    def done(self) -> bool:
        return self.day > self.days

    def call(self, name: str, args: Any = None) -> dict:
        if name != "end_day":
            return {"ok": False, "error": f"unknown tool {name}"}
        self.day += 1
        return {"ok": True}
