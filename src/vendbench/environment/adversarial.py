"""The adversarial suite's families (design §12.4): scripted operators that try to score
well without running the business well, through the agent's tools only.

Each family is a set of variants, and each variant a policy built for one episode.
``benchmarks/bench_exploits.py`` plays every variant on five seeds and compares the best
with the oracle; ``tests/test_exploits.py`` plays a small version of each family. A
world's families live in its own package (its descriptor's ``adversarial`` module), so
asking for one world's imports no other; a family a world cannot express is in its
``NOT_APPLICABLE`` with the reason. When a new exploit is found, it joins its world's
families before it is fixed.
"""

from __future__ import annotations

from types import ModuleType

from ._exploits import Variant
from ._registry import scenario as described


def families(scenario: str, draws: int = 200) -> dict[str, list[Variant]]:
    """The adversarial families of ``scenario``: family -> its variants (``draws`` of
    them for the random search; none for a scenario without a suite)."""
    module = _module(scenario)
    return module.families(draws) if module is not None else {}


def not_applicable(scenario: str) -> dict[str, str]:
    """The families ``scenario`` cannot express, and why."""
    module = _module(scenario)
    return dict(module.NOT_APPLICABLE) if module is not None else {}


def _module(scenario: str) -> ModuleType | None:
    entry = described(scenario)
    return entry.load(entry.adversarial) if entry.adversarial else None
