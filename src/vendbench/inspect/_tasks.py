"""The Inspect tasks: ``vendbench/autovend`` and ``vendbench/network``.

One sample is one trial (a world seed and a seed). The task's setup opens the sample's
world and starts the conversation as vendbench's own loop does: the scenario's briefing
as the system message, the first day's report as the user's. The default solver is
Inspect's ReAct agent with the world's tools, told each new day's report and nudged after
a reply without a tool call, exactly as vendbench's loop; any Inspect solver or agent can
replace it (``--solver``), and then reads the reports with the world's own tools. The
score is the scenario's (0 for a trial that did not finish, as vendbench counts it), with
its share of the oracle's on the same world (design §18.1) in its metadata.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from typing import Any

import anyio
from inspect_ai import Task, task
from inspect_ai.agent import AgentState, react
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.solver._task_state import sample_state

from ..environment import (DEFAULT_SCENARIO, SALT_ENV, default_days, make, reference_anchors,
                           share)
from ._worlds import close_world, inspect_tools, open_world, world_of

DEFAULT_WORLD_SEED = None          # the scenario's own (AutoVend's paper world, 2026)


def _offline_tokenizer() -> None:
    """Inspect counts tokens with tiktoken (its mock model does, for usage), and tiktoken
    downloads its encodings on first use; litellm, which vendbench installs, ships them.
    Point tiktoken at that copy unless the user has chosen a cache, so that an offline
    machine runs the tasks (litellm is found, not imported: its import costs seconds)."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return
    spec = importlib.util.find_spec("litellm")
    for root in (spec.submodule_search_locations or []) if spec else []:
        shipped = Path(root) / "litellm_core_utils" / "tokenizers"
        if shipped.is_dir():
            os.environ["TIKTOKEN_CACHE_DIR"] = str(shipped)
            return


_offline_tokenizer()


def world_task(scenario: str, days: int | None = None, seed: int | list[int] = 1,
               world_seed: int | list[int] | None = DEFAULT_WORLD_SEED,
               salt_env: str = SALT_ENV) -> Task:
    """A task over ``scenario``'s worlds: a sample per world seed and seed.

    Args:
        days: the horizon (default: the scenario's).
        seed: one seed or a list (``-T seed=[1,2,3]``).
        world_seed: the world(s) (default: the scenario's own).
        salt_env: the environment variable that holds a private worlds' salt; the salt
            itself never reaches the log.
    """
    horizon = days if days is not None else default_days(scenario)
    seeds = seed if isinstance(seed, list) else [seed]
    worlds = world_seed if isinstance(world_seed, list) else [world_seed]
    salt = os.environ.get(salt_env) or None
    for w in worlds:                  # a bad horizon or world fails here, in one line
        make(scenario, seed=seeds[0], days=horizon,
             **({"world_seed": w} if w is not None else {}),
             **({"world_salt": salt} if salt else {}))
    samples = [Sample(
        input=f"{scenario}: world {w if w is not None else 'default'}, seed {s}, "
              f"{horizon} days (the setup replaces this with the day-1 report)",
        id=f"world-{w if w is not None else 'default'}-seed-{s}",
        metadata={"scenario": scenario, "seed": s, "world_seed": w, "days": horizon})
        for w in worlds for s in seeds]
    return Task(
        dataset=MemoryDataset(samples, name=f"vendbench/{scenario}"),
        setup=open_sample(scenario, horizon, salt_env),
        solver=world_agent(scenario),
        scorer=world_score(),
        metadata={"vendbench": {"scenario": scenario, "days": horizon,
                                "private_worlds": bool(salt)}})


@task
def autovend(days: int | None = None, seed: int | list[int] = 1,
             world_seed: int | list[int] | None = None, salt_env: str = SALT_ENV) -> Task:
    """AutoVend (20 machines, one warehouse): ``inspect eval vendbench/autovend``."""
    return world_task("autovend", days, seed, world_seed, salt_env)


@task
def network(days: int | None = None, seed: int | list[int] = 1,
            world_seed: int | list[int] | None = None, salt_env: str = SALT_ENV) -> Task:
    """The Prosus-style network: ``inspect eval vendbench/network``."""
    return world_task("network", days, seed, world_seed, salt_env)


@solver
def open_sample(scenario: str, days: int, salt_env: str = SALT_ENV) -> Solver:
    """Open the sample's world; begin with the briefing and the first day's report, and
    offer the world's tools to a solver that reads them from the state (``generate()``,
    most agents)."""
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        world = open_world(state, scenario, days, os.environ.get(salt_env) or None)
        state.messages = [ChatMessageSystem(content=world.env.instructions),
                          ChatMessageUser(content=world.session.observe())]
        state.tools = [t.as_tool() for t in inspect_tools(world.env.tools)]
        return state

    return solve


@solver
def world_agent(scenario: str = DEFAULT_SCENARIO) -> Solver:
    """Inspect's ReAct agent with the world's tools, run as vendbench's own loop runs:
    each new day's report as a user message, the nudge after a reply without a tool call,
    calls made after the day they were made in ended refused, and a stop after three
    replies in a row without one. Its context is trimmed by Inspect when it overflows."""
    tools = inspect_tools(make(scenario, seed=1, days=1).tools)

    async def on_continue(state: AgentState) -> bool | str:
        current = sample_state()
        world = world_of(current) if current is not None else None
        if world is None:
            return False
        return world.next_message(bool(state.output.message.tool_calls))

    agent = react(prompt=None, tools=tools, submit=False, on_continue=on_continue,
                  truncation="auto")

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        world = world_of(state)
        if world is not None:
            world.turn_day = world.env.day
        agent_state = await agent(AgentState(messages=state.messages))
        state.messages = agent_state.messages
        if agent_state.output:
            state.output = agent_state.output
        return state

    return solve


@scorer(metrics=[mean(), stderr()])
def world_score() -> Scorer:
    """The scenario's score (0 unless the trial finished: vendbench counts an unfinished
    trial so), with the oracle's share of it and the trial's figures as metadata."""
    async def score(state: TaskState, target: Target) -> Score:
        world = close_world(state)
        if world is None:
            return Score(value=0.0, answer="error",
                         explanation="the sample's world was never opened")
        env = world.env
        final = env.final_state()
        summary = env.summary()
        status = env.status if env.done else "agent_stopped" if world.stopped \
            else "unfinished"
        value = float(final["score"]) if status == "completed" else 0.0
        anchors = await anyio.to_thread.run_sync(lambda: reference_anchors(
            world.scenario, seed=world.seed, days=world.days, world_seed=world.world_seed,
            world_salt=world.salt))
        metadata: dict[str, Any] = {
            "vendbench": 1, "scenario": world.scenario, "world_seed": world.world_seed,
            "seed": world.seed, "days": world.days, "status": status,
            "world_salt_sha256": summary.get("world_salt_sha256"),
            "reason": world.stopped, "standing": float(final["score"]),
            "days_completed": summary.get("days_completed", 0),
            "tool_calls": world.session.calls, "initial_cash": final.get("initial_cash"),
            "final_cash": final.get("final_cash"),
            "final_net_assets": final.get("final_net_assets"),
            # the share between doing nothing (0) and the oracle (1): design §34
            "oracle_score": anchors.oracle if anchors else None,
            "idle_score": anchors.idle if anchors else None,
            "oracle_share": share(value, anchors, world.scenario)}
        return Score(value=value, answer=status, metadata=metadata,
                     explanation=f"{status} after {metadata['days_completed']} of "
                                 f"{world.days} days; score {value:,.2f}")

    return score
