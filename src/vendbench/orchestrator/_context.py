"""The rolling context window (design §3 "Rolling context", §6.1).

The conversation is a list of units, each a whole exchange that must travel together:
a user message (a daily report, a nudge), or an assistant message with all of its tool
results. A request carries the system prompt and the newest units that fit the limit,
so a tool result is never sent without its call. Once older units have fallen out, a
short note after the system prompt says so (the agent's notebook is its memory across
the window); it is counted inside the limit.

Two strategies decide when units fall out:

    block    (default) the window only grows at its end, so each request's prefix is
             byte-identical to the previous request's and a provider's prompt cache
             covers all but the newest exchange. When the next request would not fit,
             the oldest units go at once, down to a low-water mark (half the limit by
             default), and the window grows again from there.
    sliding  the oldest units go one by one, just enough for each request to fit; the
             prefix then changes on every request once the window is full.

Counts are ours (litellm's counter); ``scale`` turns them into the server's count (the
calibration), and ``limit`` is in the server's tokens. Every message gets an id once,
so the log can store it once.

What a reply carries back to its provider (Anthropic's signed thinking, Gemini's thought
signatures: ``providers.ServerProfile.sent_back``) is counted apart, as the provider
counts it (``Carried``): Anthropic counts only the current turn's (the assistant
messages since the last user message) and strips earlier turns' from the context, so
it counts nothing in an older exchange; the others count it wherever it is sent.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

OMITTED = ("(Earlier conversation is outside your context window. Your notebook — "
           "read_notes — is your memory; the daily report has today's state.)")
STRATEGIES = ("block", "sliding")


class ContextOverflow(Exception):
    """The newest exchange alone does not fit the limit."""


@dataclass(slots=True)
class Message:
    id: int
    body: dict[str, Any]
    tokens: int
    carried: int = 0        # tokens of what it carries back to the provider (design §24.1)


@dataclass(frozen=True, slots=True)
class Window:
    """What one request carries."""

    messages: list[Message]
    tokens: int                      # our count: tool schemas, system prompt, messages
    cache_points: tuple[int, ...]    # indices of messages that end a reusable prefix
    dropped: int                     # units dropped for this request (0: it only grew)


Count = Callable[[list[dict[str, Any]]], Awaitable[list[int]]]


@dataclass(frozen=True, slots=True)
class Carried:
    """How a provider counts what replies carry back to it: ``count`` gives each
    message's tokens of it (0 for none); ``turn_only``: only the current turn's count."""

    count: Count
    turn_only: bool = False


class RollingContext:
    """Whole exchanges within ``limit_tokens`` (tool schemas and system prompt included).

    Build it with ``await RollingContext.create(...)``: counting tokens may leave the
    event loop.
    """

    def __init__(self, limit_tokens: int, count: Count, fixed_tokens: int, *,
                 strategy: str, low_water: float, carried: Carried | None = None
                 ) -> None:                                           # defaults: ``create``
        if strategy not in STRATEGIES:
            raise ValueError(f"unknown context strategy {strategy!r}; use one of {STRATEGIES}")
        if not 0 < low_water < 1:
            raise ValueError("low_water is a share of the limit, between 0 and 1")
        self._count = count
        self._next_id = 0
        self.new: list[Message] = []                 # created since the caller last looked
        self.units: list[list[Message]] = []
        self._ends = [0]                             # _ends[i]: tokens of units[:i]
        self._carried = carried
        self._carried_ends = [0]                     # ... what units[:i] carry back
        self._turn = 0                               # the current turn's first unit
        self.start = 0                               # the oldest unit still in the window
        self.limit = limit_tokens
        self.fixed = fixed_tokens                    # tool schemas
        self.strategy, self.low_water = strategy, low_water
        self._previous: list[int] = []               # message ids of the last window
        self._last = (float(limit_tokens), 1.0)      # the last window's limit and scale
        self.system: Message
        self.omitted: Message

    @classmethod
    async def create(cls, system: str, limit_tokens: int, count: Count, fixed_tokens: int = 0,
                     *, strategy: str = "block", low_water: float = 0.5,
                     carried: Carried | None = None) -> RollingContext:
        ctx = cls(limit_tokens, count, fixed_tokens, strategy=strategy, low_water=low_water,
                  carried=carried)
        ctx.system, ctx.omitted = await ctx._make([{"role": "system", "content": system},
                                                   {"role": "user", "content": OMITTED}])
        return ctx

    async def _make(self, bodies: list[dict[str, Any]]) -> list[Message]:
        counts = await self._count(bodies)
        carried = await self._carried.count(bodies) if self._carried else [0] * len(bodies)
        out = []
        for body, tokens, back in zip(bodies, counts, carried):
            out.append(Message(self._next_id, body, tokens, back))
            self._next_id += 1
        self.new.extend(out)
        return out

    def take_new(self) -> list[Message]:
        """Messages created since the last call (to store them once)."""
        out, self.new = self.new, []
        return out

    def _add(self, unit: list[Message]) -> None:
        self.units.append(unit)
        self._ends.append(self._ends[-1] + sum(m.tokens for m in unit))
        self._carried_ends.append(self._carried_ends[-1] + sum(m.carried for m in unit))
        if unit[0].body["role"] == "user":
            self._turn = len(self.units)                 # a new turn begins after it

    async def add_user(self, text: str) -> None:
        self._add(await self._make([{"role": "user", "content": text}]))

    async def add_exchange(self, assistant: dict[str, Any],
                           results: list[dict[str, Any]]) -> None:
        self._add(await self._make([assistant, *results]))

    # -- the window ------------------------------------------------------------------------
    def size(self, start: int | None = None) -> int:
        """Our count of a request that starts at unit ``start`` (default: the window's)."""
        start = self.start if start is None else start
        note = self.omitted.tokens if start > 0 else 0
        counted = max(start, self._turn) if self._carried and self._carried.turn_only \
            else start
        return (self.fixed + self.system.tokens + note + self._ends[-1] - self._ends[start]
                + self._carried_ends[-1] - self._carried_ends[min(counted, len(self.units))])

    def _drop_to(self, target: float, scale: float) -> int:
        """Drop the oldest units (never the newest) until the request is within
        ``target`` server tokens; returns how many went."""
        before = self.start
        while self.start < len(self.units) - 1 and self.size() * scale > target:
            self.start += 1
        return self.start - before

    def window(self, limit: float | None = None, scale: float = 1.0) -> Window:
        """The messages to send now. ``limit`` (default: the one given at creation) is
        in the server's tokens; ``scale`` is the server's tokens per token we count."""
        limit = float(self.limit if limit is None else limit)
        self._last = (limit, scale)
        dropped = 0
        if self.size() * scale > limit:
            target = limit * self.low_water if self.strategy == "block" else limit
            dropped = self._drop_to(target, scale)
        if self.units and self.size() * scale > limit:
            need = math.ceil(self.size() * scale)
            raise ContextOverflow(
                f"the newest exchange alone makes a prompt of about {need:,} tokens (as the "
                f"server counts them) but the context leaves {int(limit):,} for the prompt")
        msgs = [self.system, *([self.omitted] if self.start > 0 else []),
                *(m for unit in self.units[self.start:] for m in unit)]
        return Window(msgs, self.size(), self._cache_points(msgs), dropped)

    def _cache_points(self, msgs: list[Message]) -> tuple[int, ...]:
        """The static prefix (system prompt, and the tool schemas before it), the end of
        the previous request when this one extends it, and this request's end (the next
        request extends it unless it has to evict: always with ``block`` between
        evictions, often with ``sliding`` when a small exchange still fits)."""
        ids = [m.id for m in msgs]
        previous, self._previous = self._previous, ids
        points = [0, len(msgs) - 1]
        if len(previous) > 1 and ids[:len(previous)] == previous:
            points.append(len(previous) - 1)
        return tuple(sorted(set(points)))

    def restore(self, messages: list[Message], last_window: list[int]) -> None:
        """Take back a conversation stored earlier (a resumed trial): its messages, grouped
        into units as they were made, and ``last_window``, the ids of the last request
        sent, so that the next request continues where it stopped."""
        stored = {m.id for m in messages}
        for fixed in (self.system, self.omitted):
            old = next((m for m in messages if m.id == fixed.id), None)
            if old is not None and old.body != fixed.body:
                raise ValueError(f"stored message {fixed.id} differs from this code's "
                                 "(the system prompt changed?)")
        self.new = [m for m in self.new if m.id not in stored]     # stored once already
        self.units, self._ends, self._carried_ends, self._turn = [], [0], [0], 0
        unit: list[Message] = []
        for m in sorted((m for m in messages if m.id > self.omitted.id), key=lambda m: m.id):
            if m.body["role"] == "tool" and unit:
                unit.append(m)
                continue
            if unit:
                self._add(unit)
            unit = [m]
        if unit:
            self._add(unit)
        self._next_id = max([self._next_id, *(m.id + 1 for m in messages)])
        first = next((i for i in last_window if i > self.omitted.id), None)
        self.start = next((i for i, unit in enumerate(self.units) if unit[0].id == first), 0)
        self._previous = list(last_window)

    def evict(self) -> int:
        """Drop the oldest units down to the low-water mark of the last window's limit
        (after the server refused a prompt as too long); returns how many went."""
        limit, scale = self._last
        return self._drop_to(limit * self.low_water, scale)
