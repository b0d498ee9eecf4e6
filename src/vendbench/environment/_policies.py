"""In-process policies (the "models" named ``baseline/...``): each scenario's reference
policies, built by name, and played day by day through a recording session."""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from typing import Any, Callable, Protocol

from ..errors import ConfigError, unknown_name
from ._protocol import Environment, Match
from ._registry import DEFAULT_SCENARIO, make, scenario_class, score_name
from ._registry import scenario as registered
from ._session import RecordingSession
from ._share import Anchors


class InProcessPolicy(Protocol):
    name: str

    def play_day(self, call: Callable[[str, dict[str, Any]], dict[str, Any]],
                 observation: str) -> None: ...


class Idle:
    """Ends every day and does nothing else, paying what the world charges: every
    scenario's floor policy (``baseline/idle``, the 0 of a share: design §34) and the
    adversarial suite's ladder's first step."""

    name = "baseline/idle"

    def __init__(self, day_tool: str) -> None:
        self.day_tool = day_tool

    def play_day(self, call: Callable[[str, dict[str, Any]], dict[str, Any]],
                 observation: str) -> None:
        call(self.day_tool, {})


def policy_names(scenario: str, arena: bool = False) -> tuple[str, ...]:
    """The reference policies scenario ``scenario`` declares (without ``baseline/``), and
    ``idle``, which every scenario has; ``arena``: with those that play only against
    other operators (design §23)."""
    return tuple(_declared(scenario, arena))


def _declared(scenario: str, arena: bool) -> dict[str, Any]:
    declared = registered(scenario)
    module = declared.load(declared.policies)
    return {**module.POLICIES, "idle": lambda env: Idle(declared.day_tool),
            **(getattr(module, "ARENA_POLICIES", {}) if arena else {})}


def make_policy(name: str, env: Environment) -> InProcessPolicy:
    """Build ``env``'s scenario's reference policy ``name`` (with or without the
    ``baseline/`` prefix); ConfigError naming the ones it has otherwise. An arena's
    operator (one with a ``market``) may also play the arena's own policies."""
    policies = _declared(env.scenario, getattr(env, "market", None) is not None)
    short = name.removeprefix("baseline/")
    if short not in policies:
        raise ConfigError(unknown_name("policy", name, tuple(policies)))
    policy: InProcessPolicy = policies[short](env)
    return policy


def run_policy(env: Environment, policy: InProcessPolicy,
               on_day: Callable[[Environment], None] | None = None) -> dict[str, Any]:
    """Play ``policy`` in ``env`` until the trial ends.

    Args:
        env: a fresh environment.
        policy: the in-process policy; it sees only observations and tool results.
        on_day: called after every simulated day (progress display).

    Returns:
        ``env.summary()`` plus ``tool_calls`` and ``sim_seconds`` (time spent inside
        the environment, as opposed to the policy's own thinking).
    """
    session = RecordingSession(env)
    while not env.done:
        play_day(session, policy)
        if on_day is not None:
            on_day(env)
    return {**env.summary(), "tool_calls": session.calls,
            "sim_seconds": round(session.seconds, 3)}


def play_match(match: Match, policies: Sequence[InProcessPolicy],
               on_day: Callable[[], None] | None = None,
               order: Sequence[int] | None = None) -> list[float]:
    """Play an arena match (design §23) with one in-process policy per seat, day by day,
    seat by seat (in ``order``: moves are simultaneous, so it changes nothing), until
    every operator's trial has ended; each operator's score. ``on_day``: called after
    each day every operator played."""
    sessions = [RecordingSession(op) for op in match.seats]
    while not all(s.env.done for s in sessions):
        for seat in order or range(len(sessions)):
            if not sessions[seat].env.done:
                play_day(sessions[seat], policies[seat])
        if on_day is not None:
            on_day()
    return [s.env.score() for s in sessions]


def play_day(session: RecordingSession, policy: InProcessPolicy) -> None:
    """One day of ``policy`` through ``session``; a day it leaves open is ended for it."""
    day = session.env.day
    policy.play_day(session.call, session.observe())
    session.end_day(day)


def evaluate_policy(policy_name: str, *, seed: int = 1, days: int = 180,
                    scenario: str = DEFAULT_SCENARIO, world_seed: int | None = None,
                    world_salt: str | None = None,
                    on_day: Callable[[Environment], None] | None = None) -> dict[str, Any]:
    """Run one reference-policy episode and return the ``baseline --json`` record (a
    private world's salt is not in it; its SHA-256 is)."""
    kwargs: dict[str, Any] = {"seed": seed, "days": days}
    if world_seed is not None:
        kwargs["world_seed"] = world_seed
    if world_salt:
        kwargs["world_salt"] = world_salt
    scenario_class(scenario)    # importing the simulator's modules is not the episode's time
    start = time.perf_counter()
    env = make(scenario, **kwargs)
    policy = make_policy(policy_name, env)
    summary = run_policy(env, policy, on_day)
    final = env.final_state()
    return {
        "scenario": scenario, "policy": policy.name, "seed": seed,
        "world_seed": summary["world_seed"],
        "world_salt_sha256": summary.get("world_salt_sha256"), "days": days,
        "status": summary["status"],
        "days_completed": summary["days_completed"],
        "initial_cash": summary["initial_cash"], "final_cash": summary["cash"],
        # what the trial scores, named by its scenario (autovend's net assets, the
        # network's final bank balance); net assets are cash plus stock either way
        "score_name": score_name(scenario),
        "score": final["score"],
        "final_net_assets": final["final_net_assets"],
        "growth": round(final["score"] - summary["initial_cash"], 2),
        "tool_calls": summary["tool_calls"], "sim_seconds": summary["sim_seconds"],
        "wall_seconds": round(time.perf_counter() - start, 3),
    }


def reference_anchors(scenario: str, *, seed: int, days: int,
                      world_seed: int | None = None, world_salt: str | None = None
                      ) -> Anchors | None:
    """What scenario ``scenario``'s floor policy (doing nothing) and ceiling policy (its
    oracle) score on this world, seed and horizon: a share's 0 and 100 % (None: the
    scenario has no ceiling). Deterministic, so each is computed once per key and kept
    (``results``)."""
    oracle = ceiling_score(scenario, seed=seed, days=days, world_seed=world_seed,
                           world_salt=world_salt)
    if oracle is None:
        return None
    return Anchors(floor_score(scenario, seed=seed, days=days, world_seed=world_seed,
                               world_salt=world_salt), oracle)


def ceiling_score(scenario: str, *, seed: int, days: int, world_seed: int | None = None,
                  world_salt: str | None = None) -> float | None:
    """What scenario ``scenario``'s ceiling policy (its oracle) scores on this world, seed
    and horizon (None: the scenario has none)."""
    ceiling = registered(scenario).ceiling
    if ceiling is None:
        return None
    return _played(scenario, ceiling, seed, days, world_seed, world_salt)


def floor_score(scenario: str, *, seed: int, days: int, world_seed: int | None = None,
                world_salt: str | None = None) -> float:
    """What scenario ``scenario``'s floor policy (it only ends its days) scores on this
    world, seed and horizon."""
    return _played(scenario, registered(scenario).floor, seed, days, world_seed, world_salt)


@functools.lru_cache(maxsize=4096)
def _played(scenario: str, policy: str, seed: int, days: int, world_seed: int | None,
            world_salt: str | None) -> float:
    """A reference policy's episode, once per key in a process (a trend reads the same
    keys night after night from a file that does not keep them)."""
    return float(evaluate_policy(policy, seed=seed, days=days, scenario=scenario,
                                 world_seed=world_seed, world_salt=world_salt)["score"])
