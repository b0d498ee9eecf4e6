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
    compact  as ``block``, but before the oldest units go the model is asked, in one
             request of its own, to summarise what it will need of them; its summary
             takes their place after the system prompt (and the previous summary's), so
             what follows grows at the end again (design §27).

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
STRATEGIES = ("block", "sliding", "compact")
# compact (design §27): what the model is asked when its window is full, and how its
# summary stands in the window afterwards (version 1; its SHA-256 is kept with the run)
COMPACT_PROMPT = (
    "[vendbench: compaction] Your context window is full: the conversation above, back to "
    "your previous summary, is about to leave it. Write what you will need later to run "
    "the business: orders in transit and when they arrive, prices you set and why, what "
    "sells where, expiry dates, commitments and plans. Your summary will replace that "
    "conversation (your notebook stays as it is). Reply with the summary only; call no "
    "tool.")
SUMMARY_HEAD = ("[vendbench: your summary] Earlier conversation left your context window; "
                "this is your summary of it. Your notebook (read_notes) is your memory too, "
                "and the daily report has today's state.\n\n")


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
        self.summary: Message | None = None          # compact: what stands for the evicted
        self._prompt_tokens = 0                      # compact: the prompt's count
        self._squeezed = False                       # compact: the server found it too long

    @classmethod
    async def create(cls, system: str, limit_tokens: int, count: Count, fixed_tokens: int = 0,
                     *, strategy: str = "block", low_water: float = 0.5,
                     carried: Carried | None = None) -> RollingContext:
        ctx = cls(limit_tokens, count, fixed_tokens, strategy=strategy, low_water=low_water,
                  carried=carried)
        ctx.system, ctx.omitted = await ctx._make([{"role": "system", "content": system},
                                                   {"role": "user", "content": OMITTED}])
        if strategy == "compact":
            ctx._prompt_tokens = (await count([{"role": "user", "content": COMPACT_PROMPT}]))[0]
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
        note = self._note.tokens if start > 0 else 0
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
        msgs = [self.system, *([self._note] if self.start > 0 else []),
                *(m for unit in self.units[self.start:] for m in unit)]
        return Window(msgs, self.size(), self._cache_points(msgs), dropped)

    @property
    def _note(self) -> Message:
        """What stands after the system prompt once older units are gone: the model's
        summary of them (compact), or the note that they are gone."""
        return self.summary if self.summary is not None else self.omitted

    # -- compact (design §27) -----------------------------------------------------------------
    def compaction(self, limit: float, scale: float = 1.0) -> int | None:
        """``compact``: the unit the window would start at once the model has summarised
        the units before it, if the next request does not fit ``limit`` (None: it fits,
        or the strategy is another). As ``block``, down to the low-water mark, but only
        as far as a compaction request of those units still fits; raises ContextOverflow
        when not even the oldest unit does."""
        if self.strategy != "compact" or (self.size() * scale <= limit and not self._squeezed):
            return None
        target, cut = limit * self.low_water, self.start
        while cut < len(self.units) - 1 and self.size(cut) * scale > target:
            cut += 1
        if self._squeezed:             # the server refused what we counted as fitting
            cut = max(cut, min(self.start + 1, len(self.units) - 1))
        while cut > self.start and self._compaction_size(cut) * scale > limit:
            cut -= 1
        if cut == self.start:
            need = math.ceil(self._compaction_size(self.start + 1) * scale)
            raise ContextOverflow(
                f"a compaction of the oldest exchange alone makes a prompt of about {need:,} "
                f"tokens (as the server counts them) but the context leaves {int(limit):,} "
                "for the prompt")
        return cut

    def _compaction_size(self, cut: int) -> int:
        """Our count of the request that asks for a summary of units[start:cut]."""
        note = self._note.tokens if self.start > 0 else 0
        return (self.fixed + self.system.tokens + note + self._ends[cut]
                - self._ends[self.start] + self._carried_ends[cut]
                - self._carried_ends[self.start] + self._prompt_tokens)

    async def compaction_window(self, cut: int) -> Window:
        """The request that asks the model to summarise units[start:cut]: the system
        prompt, the previous summary (or the note), those units, and the prompt."""
        prompt, = await self._make([{"role": "user", "content": COMPACT_PROMPT}])
        msgs = [self.system, *([self._note] if self.start > 0 else []),
                *(m for unit in self.units[self.start:cut] for m in unit), prompt]
        self._previous = [m.id for m in msgs]
        return Window(msgs, self._compaction_size(cut), (0, len(msgs) - 1), 0)

    async def compacted(self, cut: int, summary: str) -> None:
        """The model's ``summary`` of units[start:cut] takes their place."""
        self.summary, = await self._make([{"role": "user",
                                           "content": SUMMARY_HEAD + summary.strip()}])
        self.start, self._squeezed = cut, False

    async def compacted_before(self, summary: str) -> None:
        """After a resume whose last request sent was a compaction that was answered:
        its ``summary`` takes the place of the units that request carried."""
        sent = set(self._previous)
        cut = 1 + max((i for i, unit in enumerate(self.units) if unit[0].id in sent),
                      default=self.start - 1)
        await self.compacted(max(cut, self.start), summary)

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
        # a compaction's prompt and its summaries are not units: the summary the last
        # request carried stands after the system prompt again
        self.summary = next((m for m in messages if m.id in last_window
                             and _marked(m, SUMMARY_HEAD)), None)
        unit: list[Message] = []
        for m in sorted((m for m in messages if m.id > self.omitted.id and not
                         _marked(m, SUMMARY_HEAD) and not _marked(m, COMPACT_PROMPT)),
                        key=lambda m: m.id):
            if m.body["role"] == "tool" and unit:
                unit.append(m)
                continue
            if unit:
                self._add(unit)
            unit = [m]
        if unit:
            self._add(unit)
        self._next_id = max([self._next_id, *(m.id + 1 for m in messages)])
        units = {m.id for unit in self.units for m in unit}
        first = next((i for i in last_window if i in units), None)
        self.start = next((i for i, unit in enumerate(self.units) if unit[0].id == first), 0)
        self._previous = list(last_window)

    def evict(self) -> int:
        """Drop the oldest units down to the low-water mark of the last window's limit
        (after the server refused a prompt as too long); returns how many went."""
        limit, scale = self._last
        if self.strategy == "compact":    # nothing leaves unsummarised: compact first
            self._squeezed = True
            return 0
        return self._drop_to(limit * self.low_water, scale)


def _marked(message: Message, head: str) -> bool:
    """Whether ``message`` is one of compact's own (its prompt, or a summary)."""
    content = message.body.get("content")
    return message.body.get("role") == "user" and isinstance(content, str) and \
        content.startswith(head[:30])
