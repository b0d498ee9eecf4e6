"""One world per Inspect sample, and the world's tools as Inspect tools.

Inspect builds a task's tools once and runs its samples concurrently in one process, so
a tool finds its sample's world by the sample's id (``sample_state().uuid``): the world
is opened by the task's setup and closed by its scorer. A tool's schema is the world's
own (what vendbench's loop and ``serve`` send), read by Inspect's ``ToolParams``; its
result is the world's answer as the same JSON text vendbench's loop shows the model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.solver import TaskState
from inspect_ai.solver._task_state import sample_state
from inspect_ai.tool import ToolDef, ToolError, ToolParams
from inspect_ai.util._json import resolve_schema_references

from ..environment import (DAY_OVER, MAX_SILENT_REPLIES, Environment, RecordingSession,
                           make, nudge)
from ..results import dumps

# a tool's result is never cut: the model reads what vendbench's own loop would show
NO_TRUNCATION = 1 << 30


@dataclass
class World:
    """A sample's world and the little the default agent keeps about its turns."""

    env: Environment
    scenario: str
    seed: int
    world_seed: int
    days: int
    salt: str | None             # a private world's salt (never logged)
    session: RecordingSession = field(init=False)
    # the day the calls of the model's current reply were made during (set by the
    # default agent after each reply; None: another agent, whose calls always run)
    turn_day: int | None = None
    reported_day: int = 1        # the day whose report the model was last shown
    silent: int = 0              # replies in a row without a tool call
    stopped: str | None = None   # why the default agent stopped before the world ended

    def __post_init__(self) -> None:
        self.session = RecordingSession(self.env)

    def call(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        if self.env.done:
            return {"ok": False, "error": f"the trial is over ({self.env.status}); "
                                          "no tool runs any more"}
        return self.session.call(name, arguments, day=self.turn_day)

    def next_message(self, made_calls: bool) -> str | bool:
        """What the default agent does after a reply: stop (False), go on (True), or go
        on with a user message: the new day's report, or the nudge after a reply
        without a tool call (as vendbench's own loop does)."""
        env = self.env
        if env.done:
            return False
        self.silent = 0 if made_calls else self.silent + 1
        if self.silent >= MAX_SILENT_REPLIES:
            self.stopped = f"{MAX_SILENT_REPLIES} replies in a row without a tool call"
            return False
        if (stuck := self.session.repeats.stuck()) is not None:   # design §35.0
            self.stopped = stuck
            return False
        self.turn_day = env.day
        if env.day != self.reported_day:
            self.reported_day = env.day
            return self.session.observe()
        return True if made_calls else nudge(env)


_WORLDS: dict[str, World] = {}


def open_world(state: TaskState, scenario: str, days: int, salt: str | None) -> World:
    """Open the world of ``state``'s sample (its seed and world seed in its metadata)."""
    meta = state.metadata
    kwargs: dict[str, Any] = {"seed": meta["seed"], "days": days}
    if meta.get("world_seed") is not None:
        kwargs["world_seed"] = meta["world_seed"]
    if salt:
        kwargs["world_salt"] = salt
    env = make(scenario, **kwargs)
    world = World(env, scenario, meta["seed"], int(env.summary()["world_seed"]), days, salt)
    _WORLDS[state.uuid] = world
    return world


def world_of(state: TaskState) -> World | None:
    return _WORLDS.get(state.uuid)


def close_world(state: TaskState) -> World | None:
    return _WORLDS.pop(state.uuid, None)


def _current() -> World:
    state = sample_state()
    world = world_of(state) if state is not None else None
    if world is None:
        raise ToolError("no vendbench world is open for this sample: the task's setup "
                        "opens it (use vendbench's task, with any solver)")
    return world


def inspect_tools(schemas: list[dict[str, Any]]) -> list[ToolDef]:
    """The world's tools (OpenAI function schemas) as Inspect tools."""
    return [_tool(schema["function"]) for schema in schemas]


def _tool(function: dict[str, Any]) -> ToolDef:
    name = function["name"]

    async def execute(**arguments: Any) -> str:
        return dumps(_current().call(name, arguments), ascii=False)

    # Inspect's schema type keeps JSON Schema's core keywords; references are inlined
    parameters = ToolParams.model_validate(
        resolve_schema_references(json.loads(json.dumps(function["parameters"]))))
    for key, param in parameters.properties.items():
        param.description = param.description or key
    return ToolDef(execute, name=name, description=function.get("description", name),
                   parameters=parameters, max_output=NO_TRUNCATION)


def refused(result: str) -> bool:
    """Whether a logged tool result is the refusal of a call made after its day ended."""
    try:
        return bool(json.loads(result) == DAY_OVER)
    except ValueError:
        return False
