"""Drive an environment with an in-process policy, day by day."""

from __future__ import annotations

from typing import Any, Protocol

from ...environment import Environment


class InProcessPolicy(Protocol):
    name: str

    def play_day(self, call: Any, observation: str) -> None: ...


def run_policy(env: Environment, policy: InProcessPolicy) -> dict[str, Any]:
    """Play ``policy`` in ``env`` until the trial ends; return ``env.summary()``."""
    while not env.done:
        day = env.day
        policy.play_day(env.call, env.observe())
        if not env.done and env.day == day:     # a policy that forgot to end its day
            env.call("end_day", {})
    return env.summary()
