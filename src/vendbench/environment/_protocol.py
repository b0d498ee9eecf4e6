"""The environment protocol: all the orchestrator knows about a world."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class Environment(Protocol):
    """A scenario the orchestrator can run a trial in, gym-style.

    The orchestrator sends tool calls and reads observations; it never imports the
    simulator's internals. ``drain_records`` hands it per-day rows (plain dicts keyed
    by table name) to store without knowing what they describe.
    """

    scenario: str
    tools: list[dict[str, Any]]          # OpenAI function-calling schemas
    instructions: str                    # the system prompt: rules, costs, what counts

    @property
    def done(self) -> bool: ...

    @property
    def day(self) -> int: ...

    def observe(self) -> str: ...

    def call(self, name: str, arguments: dict[str, Any] | str | None = None
             ) -> dict[str, Any]: ...

    @property
    def status(self) -> str: ...         # "running", "completed", or a failure like "bankrupt"

    def summary(self) -> dict[str, Any]: ...

    # initial_cash, final_cash, final_net_assets (cash plus stock) and score (what the
    # scenario scores: net assets, or a bank balance), for the trial record
    def final_state(self) -> dict[str, float]: ...

    def score(self) -> float: ...

    def drain_records(self) -> dict[str, list[dict[str, Any]]]: ...


@runtime_checkable
class Match(Protocol):
    """Several operators in one world (an arena, design §23): one Environment per seat,
    whose days close together. The orchestrator runs each seat as a trial; a seat that
    has ended its day waits until ``nights`` moves on."""

    seats: list[Any]                     # one Environment per operator

    @property
    def nights(self) -> int: ...         # nights the market has run

    def waiting(self, seat: int) -> bool: ...

    def leave(self, seat: int) -> None: ...   # the seat's trial ended: it plays no more
