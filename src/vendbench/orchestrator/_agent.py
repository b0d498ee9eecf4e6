"""An LLM's trial, as an object (design §3 "Agent loop", §26): the daily report as a
user message, the model's tool calls run in order, their results sent back, until the
day ends; each request through the model's client with its reservation committed before
it leaves, the rolling window, and a context-length refusal shortened once.

The loop holds what every step needs (the spec, the trial's context, its world, its log,
its outcome, its window), so no step carries them as parameters.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from decimal import Decimal
from typing import Any

from .._secrets import mask_url
from ..environment import Environment, RecordingSession
from ..errors import OverBilled
from ..providers import Attempt, Completion, CompletionRequest, ContextLengthExceeded
from ..results import LoggedRequest, TrialStatus
from ._context import ContextOverflow, RollingContext, Window
from ._log import ExchangeLog
from ._replay import replay, replay_in_turns
from ._replies import MAX_SILENT_REPLIES, call_of, nudge, tool_message

from ._spec import TrialContext, TrialOutcome, TrialSpec

log = logging.getLogger(__name__)


class AgentLoop:
    """One LLM trial's play: ``await AgentLoop(...).play()``."""

    def __init__(self, spec: TrialSpec, ctx: TrialContext, env: Environment,
                 tlog: ExchangeLog, out: TrialOutcome) -> None:
        assert ctx.client is not None and ctx.count_tokens is not None \
            and ctx.calibration is not None
        self.spec, self.ctx, self.env, self.tlog, self.out = spec, ctx, env, tlog, out
        self.client, self.calibration, self.count = ctx.client, ctx.calibration, \
            ctx.count_tokens
        self.session = RecordingSession(env, tlog)
        self.seen_day: int | None = None
        self.silent = 0                  # replies in a row without a tool call
        self.first_attempt = 1           # the next request's first attempt number
        self.context: RollingContext

    async def play(self) -> None:
        """Until the world is done, a limit is reached or the agent stops."""
        m = self.spec.model
        self.context = await RollingContext.create(
            self.env.instructions, m.max_context_tokens - m.max_output_tokens,
            self.count, self.ctx.tools_tokens,
            strategy=m.context_strategy, low_water=m.context_low_water,
            carried=self.ctx.carried)
        if self.spec.history is not None:
            await self._resume()
        while await takes_turn(self.ctx.turn, self.session):
            if self.env.day != self.seen_day:
                self.seen_day = self.env.day
                await self.context.add_user(self.env.observe())
            if self.ctx.max_turns is not None and self.out.exchanges >= self.ctx.max_turns:
                self.out.status = TrialStatus.MAX_TURNS
                self.out.reason = f"reached {self.ctx.max_turns} LLM requests"
                return
            if not await self._step():
                return
        self.tlog.messages(self.context.take_new())


    async def _resume(self) -> None:
        """Continue from the log (design §7): the world, the window, the counters."""
        history, out = self.spec.history, self.out
        assert history is not None
        if self.ctx.turn is not None:   # a match: the world goes on day by day with the others
            await replay_in_turns(history, self.env, self.ctx.turn)
        resumed, counters = replay(history, self.env, self.context, self.calibration,
                                   self.spec.model.max_output_tokens,
                                   world=self.ctx.turn is None)
        if resumed.summary is not None:
            await self.context.compacted_before(resumed.summary)
        self.seen_day, self.silent = self.env.day, resumed.silent
        self.session.repeats = resumed.repeats
        self.first_attempt = resumed.next_attempt
        self.session.calls = counters.tool_calls
        out.exchanges, out.tool_calls = counters.exchanges, counters.tool_calls
        out.cost, out.tokens = counters.cost, counters.tokens
        out.days = self.env.summary().get("days_completed", 0)
        self.tlog.replayed(self.spec.segment, counters.exchanges + 1, resumed.replayed_calls,
                           resumed.seconds)
        log.info("%s: resumed at exchange %d after replaying %d tool calls in %.2f s",
                 self.spec.trial_id, counters.exchanges + 1, resumed.replayed_calls,
                 resumed.seconds)

    async def _step(self) -> bool:
        """One exchange: a request, and the reply's tool calls run; False when the agent
        has stopped (too many replies without a tool call)."""
        out = self.out
        completion = await self._exchange()
        self.first_attempt = 1
        out.exchanges += 1
        message = completion.message
        calls = message.get("tool_calls") or []
        if not calls:
            self.silent += 1
            await self.context.add_exchange(message, [])
            if self.silent >= MAX_SILENT_REPLIES:
                out.status = TrialStatus.AGENT_STOPPED
                out.reason = f"{MAX_SILENT_REPLIES} replies in a row without a tool call"
                self.tlog.messages(self.context.take_new())
                if out.tool_calls == 0:
                    self.tlog.warning(self.spec.run_id, "no_tool_calls",
                                      self.calibration.no_tool_calls(out.exchanges))
                return False
            await self.context.add_user(nudge(self.env))
            return True
        self.silent = 0
        await self.context.add_exchange(message, self._run_tool_calls(calls))
        out.days = self.env.summary().get("days_completed", out.days)
        self.ctx.on_progress(out, self.env)
        if (stuck := self.session.repeats.stuck()) is not None:   # design §35.0
            out.status, out.reason = TrialStatus.AGENT_STOPPED, stuck
            self.tlog.messages(self.context.take_new())
            return False
        return True

    def _run_tool_calls(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A reply's tool calls in order; once the day has ended, the rest are refused."""
        day, results = self.env.day, []
        for call in calls:
            name, args = call_of(call)
            result = self.session.call(name, args, day=day, exchange=self.out.exchanges,
                                       call_id=call.get("id"))
            self.out.tool_calls += 1
            results.append(tool_message(call, result))
        return results

    async def _exchange(self) -> Completion:
        """One logical request, logged attempt by attempt. A prompt the server finds too
        long is shortened once (older exchanges evicted, the count recalibrated) and sent
        again; if that fails too, the trial ends ``context_overflow`` (a model-side
        limit, not a harness error)."""
        m, cal = self.spec.model, self.calibration
        for recovery in range(2):
            # until a reply has calibrated the model's count, its requests go one at a time
            async with cal.until_calibrated():
                limit = cal.prompt_limit(m.max_output_tokens)
                while (cut := self.context.compaction(limit, cal.ratio)) is not None:
                    await self._compact(cut)
                seq, attempt = self.out.exchanges + 1, self.first_attempt
                try:
                    window = self.context.window(limit, cal.ratio)
                except ContextOverflow as exc:
                    raise ContextOverflow(f"{exc}; {cal.advice()}") from None
                try:
                    return await self._send(window, seq, attempt)
                except ContextLengthExceeded as exc:
                    learned = cal.overflowed(window.tokens, exc.limit, m.max_output_tokens)
                    if recovery:
                        raise ContextOverflow(
                            f"the server refused the prompt as too long again after older "
                            f"exchanges were evicted ({learned}); {cal.advice()}") from None
                    dropped = self.context.evict()
                    log.info("%s: context-length error on exchange %d; evicted %d "
                             "exchange(s), %s", self.spec.trial_id, seq, dropped, learned)
                    self.first_attempt = self.tlog.last_attempt + 1
        raise AssertionError("unreachable")

    async def _compact(self, cut: int) -> None:
        """``compact`` (design §27): the model summarises the units that are to leave the
        window, in one request through the same budget, reservation and log (its
        exchange's purpose ``compaction``); its summary takes their place. A refusal or
        a failure is a request's (retries, then the trial's usual end), never a silent
        loss of what it held."""
        m, cal, seq = self.spec.model, self.calibration, self.out.exchanges + 1
        for recovery in range(2):
            window = await self.context.compaction_window(cut)
            try:
                completion = await self._send(window, seq, self.first_attempt,
                                              purpose="compaction")
                break
            except ContextLengthExceeded as exc:
                learned = cal.overflowed(window.tokens, exc.limit, m.max_output_tokens)
                self.first_attempt = self.tlog.last_attempt + 1
                shorter = self.context.compaction(cal.prompt_limit(m.max_output_tokens),
                                                  cal.ratio)
                if recovery or shorter is None or shorter >= cut:
                    raise ContextOverflow(f"the server refused the compaction request as "
                                          f"too long ({learned}); {cal.advice()}") from None
                cut = shorter           # fewer exchanges summarised, as recalibrated
        self.first_attempt = 1
        self.out.exchanges += 1
        dropped = cut - self.context.start
        await self.context.compacted(cut, completion.message.get("content") or "")
        log.info("%s: compacted %d exchange(s) into a summary on exchange %d",
                 self.spec.trial_id, dropped, seq)

    async def _send(self, window: Window, seq: int, attempt: int, purpose: str = "act"
                    ) -> Completion:
        """Send ``window`` (with the client's retries) and learn the server's count from
        the reply; raises ContextLengthExceeded if the server finds it too long. A
        compaction asks for text: no tool is to be called (``tool_choice`` none)."""
        cal, day, out = self.calibration, self.env.day, self.out
        self.tlog.messages(self.context.take_new())
        request = self.request(window, tool_choice="none" if purpose == "compaction"
                               else None)
        logged = request_log(request, window)

        async def on_send(number: int, reserved: Decimal) -> None:
            self.tlog.reservation(seq, number, day, reserved, logged)
            await self.ctx.writer.flush()          # durable before the request leaves

        async def on_attempt(a: Attempt) -> None:
            self.tlog.attempt(seq, day, logged, a, purpose)   # committed with the next one
            if a.cost is not None:
                out.cost += a.cost
            if a.usage is not None:
                u = a.usage
                for i, n in enumerate((u.prompt_tokens, u.completion_tokens,
                                       u.cache_read_tokens, u.cache_write_tokens)):
                    out.tokens[i] += n
            if a.counted is not None:
                self.tlog.warning(self.spec.run_id, "usage_missing", self._no_usage(a))
            elif a.completion is not None and a.cost is not None and a.cost > a.reserved:
                self._over_billed(a, cal.scale(window.tokens))

        completion = await self.client.complete(request, self.ctx.budget,
                                                cal.scale(window.tokens), on_attempt,
                                                first_attempt=attempt, on_send=on_send)
        if completion.usage is not None:         # nothing to learn from a reply without usage
            warning = cal.observe(window.tokens, completion.usage.prompt_tokens)
            if warning:
                self.tlog.warning(self.spec.run_id, "tools_dropped", warning)
        return completion

    def request(self, window: Window, tool_choice: str | None = None) -> CompletionRequest:
        m = self.spec.model
        return m.request([msg.body for msg in window.messages], self.env.tools,
                         cache_points=window.cache_points if m.prompt_caching else (),
                         cache_key=self.spec.trial_id if m.prompt_caching else None,
                         tool_choice=tool_choice or m.tool_choice)

    def _where(self) -> str:
        m = self.spec.model
        return mask_url(m.api_base) if m.api_base else m.id.split("/", 1)[0]

    def _no_usage(self, a: Attempt) -> str:
        """The run's warning (kept once per model) for a reply that reported no usage."""
        return (f"{self.spec.model.label} at {self._where()} answered without usage (token "
                "counts), so what its replies cost is unknown: each is charged its full "
                f"reservation (${a.reserved:.6f} for the first), and the tokens recorded "
                "are our own count")

    def _over_billed(self, a: Attempt, expected_input: int) -> None:
        """A reply that cost more than its reservation: the provider reported more tokens
        than the request allowed. It was billed, so it is charged in full; the run is told
        which provider did it, and the trial stops if a budget's cap is now crossed."""
        u, m = a.usage, self.spec.model
        assert u is not None and a.cost is not None
        message = (f"{m.label} at {self._where()} reported usage costing ${a.cost:.6f} for a "
                   f"request reserved at ${a.reserved:.6f}: {u.completion_tokens:,} output "
                   f"tokens for max_tokens {m.max_output_tokens:,}, {u.prompt_tokens:,} "
                   f"prompt tokens where about {expected_input:,} were expected; charged in "
                   "full")
        self.tlog.warning(self.spec.run_id, "over_billed", message)
        over = self.ctx.budget.overspent()
        if over > 0:
            raise OverBilled(f"{message}, which took spend ${over:.6f} past the budget's "
                             "cap", over)


async def takes_turn(turn: Callable[[], Awaitable[None]] | None,
                     session: RecordingSession) -> bool:
    """Whether a trial plays on. In a match (``turn``), a trial whose day has ended first
    waits for the world's night, and what the night recorded goes to its log."""
    if turn is not None:
        await turn()
        session.collect()
    return not session.env.done


def request_log(request: CompletionRequest, window: Window) -> LoggedRequest:
    """What the log keeps of a request (``results.LoggedRequest``)."""
    return LoggedRequest(
        request.model, tuple(msg.id for msg in window.messages), request.max_tokens,
        request.temperature, request.reasoning_effort, request.tool_choice,
        tuple(request.cache_points), request.cache_key, window.tokens,
        thinking_budget=request.thinking_budget, top_p=request.top_p, seed=request.seed)
