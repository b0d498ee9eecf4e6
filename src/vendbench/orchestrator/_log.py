"""What an LLM trial adds to its record: its messages, requests and replies."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from .._secrets import redact
from ..providers import Attempt
from ..results import ExchangeRow, LoggedRequest, MessageRow, ReservationRow, TrialLog, dumps
from ..results import now as _now
from ._context import Message


class ExchangeLog(TrialLog):
    """A trial's log with its LLM exchanges."""

    last_attempt = 0                     # the number of the last attempt logged

    def messages(self, messages: list[Message]) -> None:
        # key order kept, so that a rebuilt request serialises as the one sent
        self.writer.add([MessageRow(self.trial_id, m.id, m.body["role"],
                                    dumps(m.body, sort_keys=False), m.tokens, m.carried)
                         for m in messages])

    def attempt(self, seq: int, day: int, request: LoggedRequest, attempt: Attempt,
                purpose: str = "act") -> None:
        c, f, u = attempt.completion, attempt.failure, attempt.usage
        assert c is not None or f is not None, "an attempt ends in a reply or a failure"
        self.last_attempt = attempt.number
        # in, out, cache read, cache write, reasoning
        tokens: tuple[int | None, int | None, int | None, int | None, int | None] = \
            (u.prompt_tokens, u.completion_tokens, u.cache_read_tokens,
             u.cache_write_tokens, u.reasoning_tokens) if u else (None, None, None, None, None)
        self.writer.add([ExchangeRow(
            self.trial_id, seq, day, attempt.number, self.model, request.json(),
            dumps(c.raw) if c else None, *tokens,
            attempt.cost, attempt.reserved, round(attempt.latency_ms, 3),
            "ok" if c or f is None else f.kind.value, redact(f.message) if f else None,
            dt.datetime.fromtimestamp(attempt.sent_at, dt.timezone.utc).replace(tzinfo=None),
            None if c is None else attempt.counted is not None,
            dumps(c.normalised(), sort_keys=False, ascii=False) if c else None, purpose)])

    def reservation(self, seq: int, attempt: int, day: int, reserved: Decimal,
                    request: LoggedRequest) -> None:
        """Money held for a request about to be sent (committed before it is)."""
        self.writer.add([ReservationRow(
            self.trial_id, seq, attempt, day, reserved, request.json(), _now())])
