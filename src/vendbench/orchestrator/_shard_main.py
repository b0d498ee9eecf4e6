"""A worker process: runs the LLM trials the scheduler hands it (see ``_shards``).

    python -m vendbench.orchestrator._shard_main     (started by the scheduler only)

Messages arrive on stdin; replies leave on the process's original stdout, which is
moved aside at start so that nothing printed by a library can corrupt a frame (fd 1 then
points at stderr). It runs in a process group of its own, so Ctrl-C at a terminal
reaches the scheduler only, and it ignores SIGINT besides (a ``kill -INT`` of its pid):
the scheduler decides. SIGTERM, or the scheduler's end, cancels every running trial,
which records itself ``interrupted`` before the process exits.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from collections.abc import Callable
from decimal import Decimal
from itertools import count
from typing import Any

from ..budgets import Budget
from ..environment import standing
from ..errors import ResultsError
from ..results import Append, AppendRow, Row, as_append
from ._clients import Clients
from ._link import Link, LinkClosed
from ._messages import (Ack, Cancel, Close, Finished, Init, LimitEvents, Progress, Ready, Rows,
                        RunTrial, Started)
from ._spec import TrialOutcome, TrialSpec
from ._trial import run_trial

log = logging.getLogger("vendbench.worker")


class LinkWriter:
    """The results writer as a worker sees it: rows are queued here and sent to the
    scheduler at each ``flush``, which returns once the scheduler has committed them."""

    def __init__(self, link: Link) -> None:
        self._link = link
        self._items: list[Append | Row] = []
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._ids = count(1)

    def put(self, table: str, rows: list[tuple[Any, ...]],
            columns: tuple[str, ...] | None = None
            ) -> None:
        if rows:
            self._items.append(Append(table, rows, columns))

    def add(self, rows: list[AppendRow]) -> None:
        if rows:
            self._items.append(as_append(rows))

    def put_row(self, row: Row) -> None:
        self._items.append(row)

    async def flush(self) -> None:
        flush_id = next(self._ids)
        done = self._waiting[flush_id] = asyncio.get_running_loop().create_future()
        items, self._items = self._items, []
        try:
            send(self._link, Rows(flush_id, items))
        except ResultsError:                   # the scheduler is gone: as when it goes later
            del self._waiting[flush_id]
            raise
        await done

    def acked(self, flush_id: int, failure: str | None) -> None:
        done = self._waiting.pop(flush_id, None)
        if done is not None and not done.done():
            if failure is None:
                done.set_result(None)
            else:
                _fail(done, ResultsError(f"the scheduler could not commit: {failure}"))

    def fail_all(self, why: str) -> None:
        for done in self._waiting.values():
            if not done.done():
                _fail(done, ResultsError(why))
        self._waiting.clear()


def progress_reporter(link: Link, trial_id: str) -> Callable[[TrialOutcome, Any], None]:
    """A trial's progress callback: its counters to the scheduler, a line per simulated
    day (a scheduler gone is a ``ResultsError``, as for a flush: ``send``)."""
    seen_day = -1

    def progress(o: TrialOutcome, env: Any) -> None:
        nonlocal seen_day
        if env.day == seen_day:                  # a line per simulated day is plenty
            return
        seen_day = env.day
        send(link, Progress(trial_id, {"cost": o.cost, "exchanges": o.exchanges,
                                       "tool_calls": o.tool_calls, "days": o.days,
                                       "tokens": o.tokens}, env.day, standing(env)))

    return progress


def send(link: Link, message: Any) -> None:
    """Send from inside a trial. A scheduler gone is a ``ResultsError`` there (nothing
    more can be recorded), which the trial passes on unlogged; a ``LinkClosed`` it would
    take for a bug of ours and print with its traceback."""
    try:
        link.send(message)
    except LinkClosed:
        raise ResultsError("the scheduler has gone") from None


def _fail(done: asyncio.Future[Any], exc: Exception) -> None:
    """Fail a flush. Its trial may have been cancelled already (the run is ending), so
    nobody may await it: the exception is marked retrieved, or asyncio would print
    "Future exception was never retrieved" for each at exit. An awaiter still gets it."""
    done.set_exception(exc)
    done.exception()


async def _stdio_link() -> Link:
    loop = asyncio.get_running_loop()
    out_fd = os.dup(1)
    os.dup2(2, 1)                               # stray prints go to stderr, not the link
    reader = asyncio.StreamReader(limit=2**24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin,
                                                        os.fdopen(out_fd, "wb"))
    return Link(reader, asyncio.StreamWriter(transport, protocol, reader, loop))


class Worker:
    """A worker process's side of the link: the trials the scheduler hands it, run
    concurrently, each reporting as it goes; the scheduler's Cancel and Close obeyed."""

    def __init__(self, link: Link, init: Init) -> None:
        self.link, self.prices = link, init.prices
        self.clients = Clients(init.config, init.prices)
        self.writer = LinkWriter(link)
        self.trials: dict[str, asyncio.Task[Any]] = {}
        self.closing = asyncio.Event()
        self.abort = False              # SIGTERM, or the scheduler is gone: cancel the trials

    async def run_one(self, spec: TrialSpec, limit: Decimal | None) -> None:
        budget = Budget("trial", limit)
        out = TrialOutcome(spec, priced=self.prices.get(spec.model.label) is not None)
        progress = progress_reporter(self.link, spec.trial_id)
        try:
            self.link.send(Started(spec.trial_id))
            await run_trial(spec, self.clients.trial_context(spec, budget, self.writer,
                                                             progress), out)
        except asyncio.CancelledError:
            pass                                 # recorded ``interrupted`` by run_trial
        except (LinkClosed, ResultsError):
            # the scheduler is gone (or could not commit): nothing more can be recorded,
            # and the scheduler, if it lives, records the trial from what it has. Ending
            # quietly here is what keeps "Task exception was never retrieved" off stderr.
            pass
        finally:
            try:
                await self.writer.flush()
                self.link.send(Finished(spec.trial_id, out))
            except (LinkClosed, ResultsError):
                pass
            self.trials.pop(spec.trial_id, None)

    def on_sigterm(self) -> None:
        self.abort = True
        self.closing.set()

    async def read(self) -> None:
        try:
            while True:
                match await self.link.recv():
                    case RunTrial(spec, limit):
                        self.trials[spec.trial_id] = asyncio.create_task(
                            self.run_one(spec, limit))
                    case Ack(flush_id, failure):
                        self.writer.acked(flush_id, failure)
                    case Cancel(trial_id):
                        task = self.trials.get(trial_id)
                        if task is not None:
                            task.cancel()
                    case Close():
                        self.closing.set()
                    case other:
                        raise TypeError(f"unknown message {other!r}")
        except LinkClosed:
            self.abort = True
            self.writer.fail_all("the scheduler has gone")
            self.closing.set()

    async def serve(self) -> None:
        self.clients.warm_up()
        self.link.send(Ready())
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, self.on_sigterm)
        reader = asyncio.create_task(self.read())
        await self.closing.wait()
        if self.abort:
            for task in self.trials.values():
                task.cancel()
        if self.trials:
            await asyncio.wait(list(self.trials.values()), timeout=30)
        try:
            self.link.send(LimitEvents(self.clients.limit_events()))
        except LinkClosed:
            pass
        reader.cancel()


async def serve(link: Link) -> None:
    init = await link.recv()
    if not isinstance(init, Init):
        raise TypeError(f"a worker starts with Init, not {init!r}")
    await Worker(link, init).serve()


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    logging.basicConfig(level=logging.WARNING, format="vendbench worker: %(message)s")

    async def run() -> None:
        link = await _stdio_link()
        try:
            await serve(link)
        finally:
            link.close()

    asyncio.run(run())


if __name__ == "__main__":
    main()
