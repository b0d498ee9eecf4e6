"""The judge's requests, through the same path as a trial's (design §32.2): its price
from the flags or litellm's map (none known: an error, never $0), each request reserved
from the screen's budget before it is sent and its reservation committed first, the
client's retries, and every attempt logged as an exchange of purpose ``screen`` (under
the log ``screen:<screen id>``, its system prompt stored once, each chunk once)."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ..budgets import Budget, Price, resolve_prices
from ..errors import ConfigError
from ..orchestrator import Clients, ExchangeLog, ModelConfig, build_config
from ..orchestrator import Message as Sent
from ..providers import Attempt, ModelClient, TokenCounter, litellm_price, reservation
from ..results import DirectWriter, LoggedRequest, Store
from ._judge import SYSTEM, Chunk

PURPOSE = "screen"
# what a judge's reply is expected to take, for the forecast (its cap is max_output_tokens)
EXPECTED_OUTPUT_TOKENS = 300


@dataclass
class Judge:
    """The judge model, its price and client, and its token count."""

    model: ModelConfig
    price: Price
    client: ModelClient | None          # None: a forecast only (no key needed)
    counter: TokenCounter
    system_tokens: int

    @classmethod
    def of(cls, model: ModelConfig, *, send: bool = True) -> Judge:
        """``model``'s judge; ConfigError when its price is unknown, or (``send``) its API
        key missing."""
        if model.in_process:
            raise ConfigError(f"{model.id} is an in-process policy; a judge is a model "
                              "(e.g. openai/gpt-4.1-mini)")
        prices = resolve_prices([model.label], {model.label: model.price_fields()},
                                lookup=lambda _: litellm_price(model.id))
        price = prices[model.label]
        assert price is not None                     # resolve_prices fails closed
        client = None
        if send:                       # built as a trial's: its key, limits and retries
            config = build_config({"models": [model.model_dump(exclude_none=True)],
                                   "days": 1, "seeds": [1], "retry_backoff_s": 0.5})
            client = Clients(config, {model.label: price}).client(config.models[0])
        counter = TokenCounter(model.id)
        system = counter.count_now([{"role": "system", "content": SYSTEM}])[0]
        return cls(model, price, client, counter, system)

    def count(self, text: str) -> int:
        return self.counter.count_now([{"role": "user", "content": text}])[0]

    def prompt_tokens(self, chunk: Chunk) -> int:
        return self.system_tokens + chunk.tokens

    def expected(self, chunk: Chunk) -> Decimal:
        """What reading ``chunk`` is expected to cost."""
        return self.price.cost(self.prompt_tokens(chunk), EXPECTED_OUTPUT_TOKENS, 0, 0, 0)

    def at_most(self, chunk: Chunk) -> Decimal:
        """What reading ``chunk`` reserves (its prompt and a full reply, with a margin)."""
        return reservation(self.price, self.prompt_tokens(chunk), self.model.max_output_tokens)


class JudgeLog:
    """The judge's requests of one screen, logged as exchanges (purpose ``screen``)."""

    def __init__(self, store: Store, screen_id: str, judge: Judge) -> None:
        self.log = ExchangeLog(DirectWriter(store), f"screen:{screen_id}", judge.model.label)
        self.judge, self.seq, self.next_id = judge, 0, 1
        self.log.messages([Sent(0, {"role": "system", "content": SYSTEM},
                                judge.system_tokens)])

    async def ask(self, chunk: Chunk, budget: Budget) -> tuple[str, Decimal]:
        """The judge's answer to ``chunk`` and what it cost; BudgetExceeded (nothing sent)
        when the budget cannot hold its reservation; ProviderError when it gave up."""
        judge, client = self.judge, self.judge.client
        assert client is not None
        self.seq += 1
        seq, msg_id, self.next_id = self.seq, self.next_id, self.next_id + 1
        user = {"role": "user", "content": chunk.text}
        self.log.messages([Sent(msg_id, user, chunk.tokens)])
        request = judge.model.request([{"role": "system", "content": SYSTEM}, user], [],
                                      cache_key=None)
        logged = LoggedRequest(request.model, (0, msg_id), request.max_tokens,
                               request.temperature, request.reasoning_effort, "none",
                               counted_tokens=judge.prompt_tokens(chunk), tools="none",
                               thinking_budget=request.thinking_budget, top_p=request.top_p,
                               seed=request.seed)
        cost = Decimal(0)
        day = chunk.days[0]

        async def on_send(number: int, reserved: Decimal) -> None:
            self.log.reservation(seq, number, day, reserved, logged)

        async def on_attempt(a: Attempt) -> None:
            nonlocal cost
            self.log.attempt(seq, day, logged, a, PURPOSE)
            cost += a.cost or 0

        completion = await client.complete(request, budget, judge.prompt_tokens(chunk),
                                           on_attempt, on_send=on_send)
        return str(completion.message.get("content") or ""), cost


def judge_model(entry: dict[str, Any]) -> ModelConfig:
    """The judge's model entry (``--judge`` and its flags) as a checked ModelConfig."""
    from pydantic import ValidationError

    try:
        return ModelConfig(**entry)
    except ValidationError as exc:
        problems = "; ".join(e["msg"] for e in exc.errors())
        raise ConfigError(f"--judge {entry.get('id')}: {problems}") from None
