"""One trial: an agent (an LLM through its client, or an in-process policy) in a fresh
environment, until the horizon, a limit, or a failure (design §3, "Agent loop", "Limits").

Failures become data: every way a trial can end is a status with a reason. Only
cancellation (Ctrl-C, SIGTERM) propagates, after the trial is recorded ``interrupted``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .._secrets import mask_url, redact
from ..budgets import Budget
from ..environment import DEFAULT_WORLD_SEED, Environment, Kept, RecordingSession, RecordTable
from ..errors import BudgetExceeded, OverBilled, ProviderError, ResultsError
from ..providers import (Attempt, Completion, CompletionRequest, ContextLengthExceeded,
                         ModelClient)
from ..results import (LoggedRequest, ResultsWriter, Tokens, TrialHistory, TrialRecord,
                       TrialStatus)
from ._calibration import Calibration
from ._config import ModelConfig
from ._context import Carried, ContextOverflow, RollingContext, Window
from ._log import ExchangeLog
from ._replay import ReplayMismatch, replay, replay_in_turns
from ._replies import MAX_SILENT_REPLIES, call_of, nudge, tool_message

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TrialSpec:
    trial_id: str
    run_id: str
    model: ModelConfig
    seed: int
    repeat: int
    budget_usd: Decimal | None
    world_seed: int = DEFAULT_WORLD_SEED   # the frozen world (RunConfig.world_seeds)
    attempt: int = 1          # > 1 when --resume --restart runs the trial again from day 1
    segment: int = 1          # > 1 when --resume continues the trial (or reruns a policy)
    resume: bool = False      # continue from the log (LLM trials), see ``_replay``
    spent_before: Decimal = Decimal(0)     # what earlier segments spent
    history: TrialHistory | None = field(default=None, compare=False, repr=False)
    match_id: str | None = None   # an arena trial: its match (design §23) and seat in it
    seat: int = 0
    replay_only: bool = False     # a resumed match's operator that had already finished:
                                  # its logged calls are replayed until it left


@dataclass
class TrialOutcome:
    spec: TrialSpec
    status: str = TrialStatus.RUNNING
    reason: str | None = None
    final: dict[str, float] = field(default_factory=dict)
    cost: Decimal = Decimal(0)
    priced: bool = True
    # input, output, cache read, cache write (input counts the cached ones too)
    tokens: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    exchanges: int = 0
    tool_calls: int = 0
    days: int = 0
    resumable: bool = True        # an error that --resume may fix (not a refused request)

    def record(self, started: dt.datetime, ended: dt.datetime | None) -> TrialRecord:
        """The trial as it stands, as its row in the results file."""
        spec, final = self.spec, self.final
        return TrialRecord(
            spec.trial_id, spec.run_id, spec.model.label, spec.world_seed, spec.seed,
            spec.repeat, spec.attempt, self.status, self.reason, final.get("initial_cash"),
            final.get("final_cash"), final.get("final_net_assets"), final.get("score"),
            self.cost if self.priced else None, spec.budget_usd, Tokens(*self.tokens),
            self.exchanges, self.tool_calls, self.days, started, ended)

    def as_json(self) -> dict[str, Any]:
        started = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)   # not printed
        return self.record(started, None).as_json() | {
            "resumable": self.status == TrialStatus.ERROR and self.resumable}


@dataclass
class TrialContext:
    """What the scheduler hands a trial: never anything about vending."""

    make_env: Callable[[int, int], Environment]      # (seed, world seed) -> a fresh world
    writer: ResultsWriter
    budget: Budget
    client: ModelClient | None            # None for in-process policies
    count_tokens: Callable[[list[dict[str, Any]]], Awaitable[list[int]]] | None
    tools_tokens: int
    calibration: Calibration | None       # the model's, shared with its other trials
    days: int
    timeout_s: float | None
    max_turns: int | None
    on_progress: Callable[[TrialOutcome, Environment], None] = lambda o, e: None
    records: tuple[RecordTable, ...] = ()  # the tables the world's day rows go to
    # in a match: waits, once the trial's day has ended, until every other operator's
    # has and the world's night has run (None: a trial alone never waits)
    turn: Callable[[], Awaitable[None]] | None = None
    carried: Carried | None = None        # how the provider counts what replies carry back


async def run_trial(spec: TrialSpec, ctx: TrialContext, out: TrialOutcome | None = None
                    ) -> TrialOutcome:
    """Run one trial to its end and record it; returns its outcome (``out``, if given,
    is filled in as the trial goes, so a caller still has it after a cancellation)."""
    if out is None:
        out = TrialOutcome(spec, priced=ctx.client is None or ctx.client.price is not None)
    tlog = ExchangeLog(ctx.writer, spec.trial_id, spec.model.label, ctx.records)
    now = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    started = (spec.history.started_at if spec.history is not None else None) or now
    env: Environment | None = None

    def record(ended: dt.datetime | None) -> None:
        if env is not None:
            out.final = env.final_state()
            out.days = env.summary().get("days_completed", out.days)
        tlog.trial(out.record(started, ended))

    record(None)
    tlog.segment_started(spec.segment, now)
    try:
        env = ctx.make_env(spec.seed, spec.world_seed)
        async with asyncio.timeout(ctx.timeout_s):
            if ctx.client is None:
                await _play_policy(spec, ctx, env, tlog, out)
            else:
                await _play_llm(spec, ctx, env, tlog, out)
        if out.status == TrialStatus.RUNNING:
            out.status = (TrialStatus(env.status) if env.status != TrialStatus.RUNNING
                          else TrialStatus.ERROR)
            if out.status == TrialStatus.ERROR:
                out.reason = "the agent loop ended before the environment did"
            elif out.status == TrialStatus.BANKRUPT:
                out.reason = "cash stayed below zero for too long"
    except TimeoutError:
        out.status = TrialStatus.TIMEOUT
        out.reason = f"wall-clock limit of {ctx.timeout_s:g} s reached"
    except BudgetExceeded as exc:
        out.status, out.reason = TrialStatus.BUDGET_EXHAUSTED, str(exc)
    except ReplayMismatch as exc:
        out.status = TrialStatus.ERROR
        command = "arena" if spec.match_id else "run"
        out.reason = (f"cannot continue from the log: {exc}. Run it again from day 1: "
                      f"vendbench {command} --resume {spec.run_id} --restart")
    except ContextOverflow as exc:
        out.status, out.reason = TrialStatus.CONTEXT_OVERFLOW, str(exc)
    except ProviderError as exc:
        out.status, out.reason = TrialStatus.ERROR, str(exc)
        out.resumable = not exc.permanent
        if exc.permanent:
            who = "the server refuses" if exc.status is not None else "it cannot be sent"
            out.reason += (f" ({who} this request as it stands: a resume would send it "
                           "again; fix the model, its settings or the server and start a "
                           "new run)")
    except asyncio.CancelledError:
        out.status = TrialStatus.INTERRUPTED
        out.reason = "the run was interrupted (Ctrl-C or SIGTERM)"
        ended = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
        record(ended)
        tlog.segment_ended(spec.segment, ended, out.status)
        raise
    except ResultsError:
        raise                                         # the results file failed: the run stops
    except Exception as exc:                          # a bug of ours: recorded, kept apart
        log.exception("trial %s failed", spec.trial_id)
        out.status = TrialStatus.ERROR
        out.reason = redact(f"internal error: {type(exc).__name__}: {exc}")
    ended = dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)
    record(ended)
    tlog.segment_ended(spec.segment, ended, out.status)
    await ctx.writer.flush()              # the trial's end is durable before it counts as done
    return out


async def _play_policy(spec: TrialSpec, ctx: TrialContext, env: Environment, tlog: ExchangeLog,
                       out: TrialOutcome) -> None:
    """An in-process policy: same environment, tools and logging, no LLM exchanges."""
    from ..environment import make_policy, play_day

    policy = make_policy(spec.model.id, env)
    kept = Kept()                   # the policy plays in a thread; the log is the loop's
    session = RecordingSession(env, kept)
    while await _takes_turn(ctx, session):
        day = env.day
        await asyncio.to_thread(play_day, session, policy)
        out.tool_calls += kept.hand_to(tlog)
        out.days = day
        ctx.on_progress(out, env)
        await ctx.writer.flush()
    kept.hand_to(tlog)                # what the match's last night recorded


async def _takes_turn(ctx: TrialContext, session: RecordingSession) -> bool:
    """Whether the trial plays on. In a match, a trial whose day has ended first waits
    for the world's night (``ctx.turn``), and what the night recorded goes to its log."""
    if ctx.turn is not None:
        await ctx.turn()
        session.collect()
    return not session.env.done


async def _play_llm(spec: TrialSpec, ctx: TrialContext, env: Environment, tlog: ExchangeLog,
                    out: TrialOutcome) -> None:
    """The agent loop: the daily report as a user message, tools until the day ends."""
    assert ctx.client is not None and ctx.count_tokens is not None
    m = spec.model
    context = await RollingContext.create(
        env.instructions, m.max_context_tokens - m.max_output_tokens, ctx.count_tokens,
        ctx.tools_tokens, strategy=m.context_strategy, low_water=m.context_low_water,
        carried=ctx.carried)
    seen_day, silent, first_attempt = None, 0, 1
    session = RecordingSession(env, tlog)
    if spec.history is not None:
        assert ctx.calibration is not None
        if ctx.turn is not None:        # a match: the world goes on day by day with the others
            await replay_in_turns(spec.history, env, ctx.turn)
        resumed, counters = replay(spec.history, env, context, ctx.calibration,
                                   m.max_output_tokens, world=ctx.turn is None)
        seen_day, silent, first_attempt = env.day, resumed.silent, resumed.next_attempt
        session.calls = counters.tool_calls
        out.exchanges, out.tool_calls = counters.exchanges, counters.tool_calls
        out.cost, out.tokens = counters.cost, counters.tokens
        out.days = env.summary().get("days_completed", 0)
        tlog.replayed(spec.segment, counters.exchanges + 1, resumed.replayed_calls,
                      resumed.seconds)
        log.info("%s: resumed at exchange %d after replaying %d tool calls in %.2f s",
                 spec.trial_id, counters.exchanges + 1, resumed.replayed_calls,
                 resumed.seconds)
    while await _takes_turn(ctx, session):
        if env.day != seen_day:
            seen_day = env.day
            await context.add_user(env.observe())
        if ctx.max_turns is not None and out.exchanges >= ctx.max_turns:
            out.status = TrialStatus.MAX_TURNS
            out.reason = f"reached {ctx.max_turns} LLM requests"
            return
        completion = await _exchange(spec, ctx, env, context, tlog, out, first_attempt)
        first_attempt = 1
        out.exchanges += 1
        message = completion.message
        calls = message.get("tool_calls") or []
        if not calls:
            silent += 1
            await context.add_exchange(message, [])
            if silent >= MAX_SILENT_REPLIES:
                out.status = TrialStatus.AGENT_STOPPED
                out.reason = f"{MAX_SILENT_REPLIES} replies in a row without a tool call"
                tlog.messages(context.take_new())
                if out.tool_calls == 0 and ctx.calibration is not None:
                    tlog.warning(spec.run_id, "no_tool_calls",
                                 ctx.calibration.no_tool_calls(out.exchanges))
                return
            await context.add_user(nudge(env))
            continue
        silent = 0
        day = env.day
        await context.add_exchange(message, _run_tool_calls(calls, session, day,
                                                             out.exchanges, out))
        out.days = env.summary().get("days_completed", out.days)
        ctx.on_progress(out, env)
    tlog.messages(context.take_new())


async def _exchange(spec: TrialSpec, ctx: TrialContext, env: Environment,
                    context: RollingContext, tlog: ExchangeLog, out: TrialOutcome,
                    attempt: int) -> Completion:
    """One logical request, logged attempt by attempt: each attempt's reservation, with
    everything the trial did before it, is committed before it is sent, and its outcome
    after. A prompt the server finds too long is shortened once (older exchanges
    evicted, the count recalibrated) and sent again; if that fails too, the trial ends
    ``context_overflow`` (a model-side limit, not a harness error)."""
    assert ctx.calibration is not None
    m, cal = spec.model, ctx.calibration
    seq = out.exchanges + 1
    for recovery in range(2):
        # until a reply has calibrated the model's count, its requests go one at a time
        async with cal.until_calibrated():
            try:
                window = context.window(cal.prompt_limit(m.max_output_tokens), cal.ratio)
            except ContextOverflow as exc:
                raise ContextOverflow(f"{exc}; {cal.advice()}") from None
            try:
                return await _send(spec, ctx, env, context, window, tlog, out, seq, attempt)
            except ContextLengthExceeded as exc:
                learned = cal.overflowed(window.tokens, exc.limit, m.max_output_tokens)
                if recovery:
                    raise ContextOverflow(
                        f"the server refused the prompt as too long again after older "
                        f"exchanges were evicted ({learned}); {cal.advice()}") from None
                dropped = context.evict()
                log.info("%s: context-length error on exchange %d; evicted %d exchange(s), "
                         "%s", spec.trial_id, seq, dropped, learned)
                attempt = tlog.last_attempt + 1
    raise AssertionError("unreachable")


async def _send(spec: TrialSpec, ctx: TrialContext, env: Environment, context: RollingContext,
                window: Window, tlog: ExchangeLog, out: TrialOutcome, seq: int, attempt: int
                ) -> Completion:
    """Send ``window`` (with the client's retries) and learn the server's count from the
    reply; raises ContextLengthExceeded if the server finds it too long."""
    assert ctx.client is not None and ctx.calibration is not None
    cal, day = ctx.calibration, env.day
    tlog.messages(context.take_new())
    request = _request(spec, env, window)
    logged = request_log(request, window)

    async def on_send(number: int, reserved: Decimal) -> None:
        tlog.reservation(seq, number, day, reserved, logged)
        await ctx.writer.flush()          # durable before the request leaves

    async def on_attempt(a: Attempt) -> None:
        tlog.attempt(seq, day, logged, a)     # committed with the next reservation
        if a.cost is not None:
            out.cost += a.cost
        u = a.usage
        if u is not None:
            for i, n in enumerate((u.prompt_tokens, u.completion_tokens,
                                   u.cache_read_tokens, u.cache_write_tokens)):
                out.tokens[i] += n
        if a.counted is not None:
            tlog.warning(spec.run_id, "usage_missing", _no_usage(spec, a))
        elif a.completion is not None and a.cost is not None and a.cost > a.reserved:
            _over_billed(spec, ctx, tlog, a, cal.scale(window.tokens))

    completion = await ctx.client.complete(request, ctx.budget, cal.scale(window.tokens),
                                           on_attempt, first_attempt=attempt, on_send=on_send)
    if completion.usage is not None:         # nothing to learn from a reply without usage
        warning = cal.observe(window.tokens, completion.usage.prompt_tokens)
        if warning:
            tlog.warning(spec.run_id, "tools_dropped", warning)
    return completion


def _no_usage(spec: TrialSpec, a: Attempt) -> str:
    """The run's warning (kept once per model) for a reply that reported no usage."""
    m = spec.model
    where = mask_url(m.api_base) if m.api_base else m.id.split("/", 1)[0]
    return (f"{m.label} at {where} answered without usage (token counts), so what its replies "
            f"cost is unknown: each is charged its full reservation (${a.reserved:.6f} for "
            "the first), and the tokens recorded are our own count")


def _over_billed(spec: TrialSpec, ctx: TrialContext, tlog: ExchangeLog, a: Attempt,
                 expected_input: int) -> None:
    """A reply that cost more than its reservation: the provider reported more tokens
    than the request allowed. It was billed, so it is charged in full; the run is told
    which provider did it, and the trial stops if a budget's cap is now crossed."""
    u, m = a.usage, spec.model
    assert u is not None and a.cost is not None
    where = mask_url(m.api_base) if m.api_base else m.id.split("/", 1)[0]
    message = (f"{m.label} at {where} reported usage costing ${a.cost:.6f} for a request "
               f"reserved at ${a.reserved:.6f}: {u.completion_tokens:,} output tokens for "
               f"max_tokens {m.max_output_tokens:,}, {u.prompt_tokens:,} prompt tokens where "
               f"about {expected_input:,} were expected; charged in full")
    tlog.warning(spec.run_id, "over_billed", message)
    over = ctx.budget.overspent()
    if over > 0:
        raise OverBilled(f"{message}, which took spend ${over:.6f} past the budget's cap",
                         over)


def _request(spec: TrialSpec, env: Environment, window: Window) -> CompletionRequest:
    m = spec.model
    return m.request([msg.body for msg in window.messages], env.tools,
                     cache_points=window.cache_points if m.prompt_caching else (),
                     cache_key=spec.trial_id if m.prompt_caching else None)


def request_log(request: CompletionRequest, window: Window) -> LoggedRequest:
    """What the log keeps of a request (``results.LoggedRequest``)."""
    return LoggedRequest(
        request.model, tuple(msg.id for msg in window.messages), request.max_tokens,
        request.temperature, request.reasoning_effort, request.tool_choice,
        tuple(request.cache_points), request.cache_key, window.tokens,
        thinking_budget=request.thinking_budget)


def _run_tool_calls(calls: list[dict[str, Any]], session: RecordingSession, day: int,
                    seq: int, out: TrialOutcome) -> list[dict[str, Any]]:
    """Run a reply's tool calls in order; once the day has ended, the rest are refused."""
    results = []
    for call in calls:
        name, args = call_of(call)
        result = session.call(name, args, day=day, exchange=seq, call_id=call.get("id"))
        out.tool_calls += 1
        results.append(tool_message(call, result))
    return results
