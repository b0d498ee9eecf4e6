"""How a model's server counts tokens, learned from what it reports (design §6.1, §6.3).

We count tokens with litellm's counter; a server counts with its own tokenizer and its
own chat template. A local llama.cpp server counted 1.3–1.5× more prompt tokens than we
did (its tool schemas 1.9×). So each model keeps:

* ``ratio``: the highest ratio of reported to counted prompt tokens seen so far, never
  below 1.0. It scales the context window and every budget reservation.
* ``context_tokens``: the context the server really has, if it turned out smaller than
  ``max_context_tokens`` (learned from a context-length error).

Until a reply has reported the server's count, the model's requests in this process go
one at a time (``until_calibrated``): every reservation before that is made at our own
count, so twenty first requests at once to a server that counts 4× more would overspend
twenty times; one at a time, only the first is reserved blind, and once it has answered
the others reserve at the server's count. The requests held meanwhile then leave
``RELEASE_SPREAD_S`` apart, in the order they came: let go at once, their replies came
back in one wave that queued on the CPU together.

It also notices a server that ignores the tool schemas (llama.cpp's server does unless
``tool_choice`` is sent), two ways; the run is told once:

* the server's prompt count grows with the messages at some rate, and what is left at
  zero messages is its count of the tool schemas: far below what the schemas take means
  they were dropped (measured once the messages have grown by at least their first
  size, and at least ``SLOPE_SPAN`` tokens);
* a trial that stops without its model ever calling a tool (``no_tool_calls``), with the
  last request's counts as evidence.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from ..providers import SERVER_PROFILES, ContextLimit, ServerProfile

TOOLS_DROPPED_BELOW = 0.5     # share of the schemas' tokens the server must at least count
SLOPE_SPAN = 1_000            # message tokens between two replies to measure the rate
RELEASE_SPREAD_S = 0.02       # between the requests held until the first reply
_pause = asyncio.sleep        # (the tests record the pauses instead of waiting them out)


class Calibration:
    """One model's token calibration, shared by its trials in a process."""

    def __init__(self, max_context_tokens: int, tools_tokens: int,
                 profile: ServerProfile = SERVER_PROFILES["local"]) -> None:
        self.profile = profile            # the server's kind: what to advise about it
        self.ratio = 1.0
        self.context_tokens = max_context_tokens
        self.configured = max_context_tokens
        self.server_context: int | None = None   # what a context-length error said
        self._estimated = False                  # (or implied, the server giving no number)
        self.tools_tokens = tools_tokens
        self._first: tuple[int, int] | None = None     # (counted messages, reported)
        self._last: tuple[int, int] | None = None      # (counted, reported)
        self._tools_checked = tools_tokens == 0
        self.calibrated = False          # a reply has reported the server's prompt count
        self._alone: asyncio.Lock | None = None
        self._released = 0               # requests held, then let go, so far

    @asynccontextmanager
    async def until_calibrated(self) -> AsyncIterator[None]:
        """Hold this around a request (window, reservation and send): until a reply has
        calibrated the count, one request at a time gets through; after, all of them,
        those held meanwhile ``RELEASE_SPREAD_S`` apart."""
        if self.calibrated:
            yield
            return
        if self._alone is None:
            self._alone = asyncio.Lock()
        async with self._alone:
            if not self.calibrated:
                yield                    # alone: the others wait for its reply
                return
            place, self._released = self._released, self._released + 1
        if place:                        # calibrated while it waited: go in its turn
            await _pause(place * RELEASE_SPREAD_S)
        yield

    def scale(self, counted: int) -> int:
        """Our count of a prompt, as the server is expected to count it."""
        return math.ceil(counted * self.ratio)

    def advice(self) -> str:
        """What to change when a prompt does not fit: the server's own context when it
        said it is the smaller one, else the configured window."""
        if self.server_context is not None and self.server_context < self.configured:
            about = "about " if self._estimated else ""
            return (f"the server's own context is {about}{self.server_context:,} tokens, below the "
                    f"configured max_context_tokens {self.configured:,}: start the server with a "
                    f"larger context ({self.profile.more_context}) or lower max_output_tokens")
        return "raise max_context_tokens (and the server's context) or lower max_output_tokens"

    def prompt_limit(self, max_output_tokens: int) -> int:
        """Server tokens a prompt may take: the context less the output allowance."""
        return self.context_tokens - max_output_tokens

    def observe(self, counted: int, reported: int) -> str | None:
        """Learn from a reply's reported prompt tokens; returns a warning, once, if the
        server seems to have dropped the tool schemas."""
        if counted <= 0 or reported <= 0:
            return None
        self.ratio = max(self.ratio, reported / counted)
        self.calibrated = True
        self._last = (counted, reported)
        return None if self._tools_checked else self._check_tools(counted, reported)

    def no_tool_calls(self, replies: int) -> str:
        """The warning for a trial whose model never called a tool."""
        evidence = ""
        if self._last is not None:
            counted, reported = self._last
            evidence = (f"; the server counted {reported:,} prompt tokens for the last request, "
                        f"which we count at {counted:,}, {self.tools_tokens:,} of them the tool "
                        "schemas")
        return (f"the model never called a tool ({replies} replies without one){evidence}. If "
                f"the server ignored the tools ({self._tools_hint()}), check its tool-calling "
                "support and chat template")

    def _check_tools(self, counted: int, reported: int) -> str | None:
        messages = counted - self.tools_tokens
        floor = TOOLS_DROPPED_BELOW * self.tools_tokens
        if self._first is None:
            self._first = (messages, reported)
            if reported >= floor:
                return None
            fixed = float(reported)
        else:
            m0, r0 = self._first
            if messages - m0 < max(SLOPE_SPAN, m0):
                return None                  # too close to the first reply to measure
            rate = (reported - r0) / (messages - m0)
            fixed = r0 - rate * m0           # the server's count at zero messages
        self._tools_checked = True
        if fixed >= floor:
            return None
        return (f"the server counts about {max(0, round(fixed)):,} prompt tokens beyond the "
                f"messages, while the tool schemas alone take about {self.tools_tokens:,}: it "
                f"probably ignored the tools ({self._tools_hint()} — check the server's "
                "tool-calling support)")

    def _tools_hint(self) -> str:
        return self.profile.tools_hint or "a server may drop what it cannot template"

    def overflowed(self, counted: int, limit: ContextLimit, max_output_tokens: int) -> str:
        """Learn from a context-length error on a prompt we counted ``counted``; returns
        what was learned, for the log."""
        if limit.prompt_tokens:
            self.ratio = max(self.ratio, limit.prompt_tokens / counted)
        if limit.context_tokens:
            self.server_context, self._estimated = limit.context_tokens, False
            self.context_tokens = min(self.context_tokens, limit.context_tokens)
            self.ratio = max(self.ratio, (limit.context_tokens - max_output_tokens) / counted)
        if not limit.prompt_tokens and not limit.context_tokens:
            # the server gave no numbers: it cannot hold what was sent, so aim lower
            self.context_tokens = min(self.context_tokens,
                                      int(self.scale(counted) * 0.9) + max_output_tokens)
            self.server_context, self._estimated = self.context_tokens, True
        return (f"server context {self.context_tokens:,} tokens, {self.ratio:.2f} server "
                "tokens per counted token")
