"""One trial: an agent (an LLM through its client, or an in-process policy) in a fresh
environment, until the horizon, a limit, or a failure (design §3, "Agent loop", "Limits").

Failures become data: every way a trial can end is a status with a reason. Only
cancellation (Ctrl-C, SIGTERM) propagates, after the trial is recorded ``interrupted``.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging

from .._secrets import redact
from ..environment import Environment, Kept, RecordingSession
from ..errors import BudgetExceeded, ProviderError, ResultsError
from ..results import TrialStatus
from ._agent import AgentLoop, takes_turn
from ._context import ContextOverflow
from ._log import ExchangeLog
from ._replay import ReplayMismatch
from ._spec import TrialContext, TrialOutcome, TrialSpec

log = logging.getLogger(__name__)


async def run_trial(spec: TrialSpec, ctx: TrialContext, out: TrialOutcome | None = None
                    ) -> TrialOutcome:
    """Run one trial to its end and record it; returns its outcome (``out``, if given,
    is filled in as the trial goes, so a caller still has it after a cancellation)."""
    if out is None:
        out = TrialOutcome(spec, priced=ctx.client is None or ctx.client.price is not None)
    tlog = ExchangeLog(ctx.writer, spec.trial_id, spec.model.label, ctx.records)
    now = _now()
    started = (spec.history.started_at if spec.history is not None else None) or now
    env: Environment | None = None

    def record(ended: dt.datetime | None) -> None:
        if env is not None:
            out.final = env.final_state()
            out.days = env.summary().get("days_completed", out.days)
        tlog.trial(out.record(started, ended))
        if ended is not None:
            tlog.segment_ended(spec.segment, ended, out.status)

    record(None)
    tlog.segment_started(spec.segment, now)
    try:
        env = ctx.make_env(spec.seed, spec.world_seed)
        async with asyncio.timeout(ctx.timeout_s):
            if ctx.client is None:
                await _play_policy(spec, ctx, env, tlog, out)
            else:
                await AgentLoop(spec, ctx, env, tlog, out).play()
        if out.status == TrialStatus.RUNNING:
            _ended_with_world(out, env)
    except asyncio.CancelledError:
        out.status = TrialStatus.INTERRUPTED
        out.reason = "the run was interrupted (Ctrl-C or SIGTERM)"
        record(_now())
        raise
    except ResultsError:
        raise                                         # the results file failed: the run stops
    except Exception as exc:
        _ended_by(out, exc, spec, ctx)
    record(_now())
    await ctx.writer.flush()              # the trial's end is durable before it counts as done
    return out


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


def _ended_with_world(out: TrialOutcome, env: Environment) -> None:
    """A trial whose loop ended with its world: the world's status is the trial's."""
    out.status = (TrialStatus(env.status) if env.status != TrialStatus.RUNNING
                  else TrialStatus.ERROR)
    if out.status == TrialStatus.ERROR:
        out.reason = "the agent loop ended before the environment did"
    elif out.status == TrialStatus.BANKRUPT:
        out.reason = "cash stayed below zero for too long"


def _ended_by(out: TrialOutcome, exc: Exception, spec: TrialSpec, ctx: TrialContext) -> None:
    """The status and reason of a trial that ``exc`` ended (failures become data)."""
    if isinstance(exc, TimeoutError):
        out.status = TrialStatus.TIMEOUT
        out.reason = f"wall-clock limit of {ctx.timeout_s:g} s reached"
    elif isinstance(exc, BudgetExceeded):
        out.status, out.reason = TrialStatus.BUDGET_EXHAUSTED, str(exc)
    elif isinstance(exc, ReplayMismatch):
        out.status = TrialStatus.ERROR
        command = "arena" if spec.match_id else "run"
        out.reason = (f"cannot continue from the log: {exc}. Run it again from day 1: "
                      f"vendbench {command} --resume {spec.run_id} --restart")
    elif isinstance(exc, ContextOverflow):
        out.status, out.reason = TrialStatus.CONTEXT_OVERFLOW, str(exc)
    elif isinstance(exc, ProviderError):
        out.status, out.reason = TrialStatus.ERROR, str(exc)
        out.resumable = not exc.permanent
        if exc.permanent:
            who = "the server refuses" if exc.status is not None else "it cannot be sent"
            out.reason += (f" ({who} this request as it stands: a resume would send it "
                           "again; fix the model, its settings or the server and start a "
                           "new run)")
    else:                                             # a bug of ours: recorded, kept apart
        log.error("trial %s failed", spec.trial_id, exc_info=exc)
        out.status = TrialStatus.ERROR
        out.reason = redact(f"internal error: {type(exc).__name__}: {exc}")


async def _play_policy(spec: TrialSpec, ctx: TrialContext, env: Environment, tlog: ExchangeLog,
                       out: TrialOutcome) -> None:
    """An in-process policy: same environment, tools and logging, no LLM exchanges."""
    from ..environment import make_policy, play_day

    policy = make_policy(spec.model.id, env)
    kept = Kept()                   # the policy plays in a thread; the log is the loop's
    session = RecordingSession(env, kept)
    while await takes_turn(ctx.turn, session):
        day = env.day
        await asyncio.to_thread(play_day, session, policy)
        out.tool_calls += kept.hand_to(tlog)
        out.days = day
        ctx.on_progress(out, env)
        await ctx.writer.flush()
    kept.hand_to(tlog)                # what the match's last night recorded
