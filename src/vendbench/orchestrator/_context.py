"""The rolling context window (SPEC §3, "Rolling context").

The conversation is a list of units, each a whole exchange that must travel together:
a user message (a daily report, a nudge), or an assistant message with all of its tool
results. A request carries the system prompt and as many of the most recent units as
fit the token limit, so a tool result is never sent without its call. When older units
fall out, a short note says so (the agent's notebook is its memory across the window).
Every message gets an id once, so the log can store it once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

OMITTED = ("(Earlier conversation is outside your context window. Your notebook — "
           "read_notes — is your memory; the daily report has today's state.)")


class ContextOverflow(Exception):
    """The newest exchange alone does not fit the limit."""


@dataclass(slots=True)
class Message:
    id: int
    body: dict[str, Any]
    tokens: int


Count = Callable[[list[dict[str, Any]]], Awaitable[list[int]]]


class RollingContext:
    """Whole exchanges, newest first, within ``limit_tokens`` (system prompt included).

    Build it with ``await RollingContext.create(...)``: counting tokens may leave the
    event loop.
    """

    def __init__(self, limit_tokens: int, count: Count, fixed_tokens: int = 0) -> None:
        self._count = count
        self._next_id = 0
        self.new: list[Message] = []                 # created since the caller last looked
        self.units: list[list[Message]] = []
        self.limit = limit_tokens
        self.fixed = fixed_tokens                     # tool schemas
        self.system: Message
        self.omitted: Message

    @classmethod
    async def create(cls, system: str, limit_tokens: int, count: Count,
                     fixed_tokens: int = 0) -> RollingContext:
        ctx = cls(limit_tokens, count, fixed_tokens)
        ctx.system, ctx.omitted = await ctx._make([{"role": "system", "content": system},
                                                   {"role": "user", "content": OMITTED}])
        return ctx

    async def _make(self, bodies: list[dict[str, Any]]) -> list[Message]:
        counts = await self._count(bodies)
        out = []
        for body, tokens in zip(bodies, counts):
            out.append(Message(self._next_id, body, tokens))
            self._next_id += 1
        self.new.extend(out)
        return out

    def take_new(self) -> list[Message]:
        """Messages created since the last call (to store them once)."""
        out, self.new = self.new, []
        return out

    async def add_user(self, text: str) -> None:
        self.units.append(await self._make([{"role": "user", "content": text}]))

    async def add_exchange(self, assistant: dict[str, Any],
                           results: list[dict[str, Any]]) -> None:
        self.units.append(await self._make([assistant, *results]))

    def window(self) -> tuple[list[Message], int]:
        """The messages to send now and their counted tokens."""
        budget = self.limit - self.fixed - self.system.tokens
        chosen: list[list[Message]] = []
        used = 0
        for unit in reversed(self.units):
            size = sum(m.tokens for m in unit)
            if used + size > budget:
                break
            chosen.append(unit)
            used += size
        if not chosen and self.units:
            raise ContextOverflow(
                f"the newest exchange needs {sum(m.tokens for m in self.units[-1])} tokens "
                f"but the context limit leaves {budget}; raise max_context_tokens")
        chosen.reverse()
        msgs = [m for unit in chosen for m in unit]
        if msgs and msgs[0].body["role"] != "user":
            # older units fell out and the window starts mid-day: providers want a user
            # turn first, so a short note (always allowed, a few tokens) says what happened
            msgs.insert(0, self.omitted)
            used += self.omitted.tokens
        return [self.system, *msgs], used + self.system.tokens + self.fixed
