"""Prices per model, resolved once per run and stored with it (design §3, "Budgets").

Prices come from, field by field: ``--price MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]]``,
the panel file, litellm's price map. A model with no price anywhere does not run: a
cost is never silently $0. USD per million tokens are kept as ``Decimal`` and every
cost is computed from them, so a run's costs can be re-derived from its stored table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from decimal import Decimal
from typing import Any

from ..errors import UnknownPriceError

MILLION = Decimal(1_000_000)


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens.

    ``cache_read`` prices prompt tokens read from the provider's prompt cache and
    ``cache_write`` those written to it (Anthropic bills writes at ~1.25x input); either
    None means the provider bills them as plain input. ``reasoning`` prices reasoning
    tokens when the provider prices them apart (else they are output).
    """

    input: Decimal
    output: Decimal
    cache_read: Decimal | None = None
    cache_write: Decimal | None = None
    reasoning: Decimal | None = None
    source: str = "config"

    def cost(self, prompt_tokens: int, completion_tokens: int, cache_read_tokens: int = 0,
             cache_write_tokens: int = 0, reasoning_tokens: int = 0) -> Decimal:
        """The USD cost of one reply's usage.

        ``prompt_tokens`` counts every input token, cached or not (OpenAI's convention,
        and litellm's for Anthropic: input + cache writes + cache reads).
        """
        read = min(cache_read_tokens, prompt_tokens)
        write = min(cache_write_tokens, prompt_tokens - read)
        reasoning = min(reasoning_tokens, completion_tokens) if self.reasoning is not None else 0
        total = ((prompt_tokens - read - write) * self.input
                 + read * _or(self.cache_read, self.input)
                 + write * _or(self.cache_write, self.input)
                 + (completion_tokens - reasoning) * self.output
                 + reasoning * (self.reasoning or Decimal(0)))
        return total / MILLION

    def worst_case(self, input_tokens: int, output_tokens: int) -> Decimal:
        """The most ``input_tokens`` in and ``output_tokens`` out can cost: every input
        token at the dearest input-side price, every output token at the dearest output
        price (what a reservation must cover)."""
        dearest_in = max(self.input, _or(self.cache_read, self.input),
                         _or(self.cache_write, self.input))
        dearest_out = max(self.output, self.reasoning or Decimal(0))
        return (input_tokens * dearest_in + output_tokens * dearest_out) / MILLION

    def to_json(self) -> dict[str, str | None]:
        return {k: (str(v) if isinstance(v, Decimal) else v) for k, v in asdict(self).items()}

    @classmethod
    def from_json(cls, data: dict[str, str | None]) -> Price:
        """The inverse of ``to_json`` (a run's stored price table)."""
        values: dict[str, Any] = {k: (Decimal(v) if k != "source" and v is not None else v)
                                  for k, v in data.items()}
        return cls(**values)


def _or(value: Decimal | None, default: Decimal) -> Decimal:
    return default if value is None else value


FIELDS = ("input", "output", "cache_read", "cache_write")


def parse_price_flag(text: str) -> tuple[str, dict[str, Decimal]]:
    """Parse ``MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]]`` (USD per million tokens) into
    the price fields it gives."""
    model, sep, numbers = text.rpartition("=")
    parts = numbers.split(",")
    if not sep or not model or not 2 <= len(parts) <= 4:
        raise UnknownPriceError(
            "--price takes MODEL=IN,OUT[,CACHE_READ[,CACHE_WRITE]] in USD per million "
            f"tokens, e.g. openai/gpt-4.1-mini=0.4,1.6 or anthropic/x=3,15,0.3,3.75; "
            f"got {text!r}")
    try:
        values = [Decimal(p.strip()) for p in parts]
    except ArithmeticError:
        raise UnknownPriceError(f"--price {text!r}: prices must be numbers") from None
    if any(not v.is_finite() or v < 0 for v in values):
        raise UnknownPriceError(f"--price {text!r}: prices must be finite and non-negative")
    return model, dict(zip(FIELDS, values))


def resolve_prices(models: list[str], given: dict[str, dict[str, Decimal]], *,
                   lookup: Callable[[str], Price | None],
                   allow_unpriced: bool = False) -> dict[str, Price | None]:
    """Price every model, or fail closed naming the models without one and the fix.

    ``given`` holds the fields the user set per model (``input``, ``output``,
    ``cache_read``, ``cache_write``, ``reasoning``; from ``--price`` or the panel). They
    override litellm's price map field by field; a cache price given nowhere is billed
    as plain input. ``lookup`` gives a model's price in a price map (litellm's: see
    ``providers.litellm_price``), or None. In-process policies (``baseline/...``) cost
    nothing.
    """
    table: dict[str, Price | None] = {}
    missing = []
    for model in dict.fromkeys(models):
        if model.startswith("baseline/"):
            table[model] = Price(Decimal(0), Decimal(0), source="in-process")
            continue
        fields = {k: v for k, v in given.get(model, {}).items() if v is not None}
        complete = {"input", "output", "cache_read", "cache_write"} <= fields.keys()
        mapped = None if complete else lookup(model)
        if mapped is None and not {"input", "output"} <= fields.keys():
            if not allow_unpriced:
                missing.append(model)
            table[model] = None
            continue
        if mapped is None:
            table[model] = Price(**fields, source="config")
        else:
            source = "litellm" if not fields else (
                "config+litellm" if {"input", "output"} <= fields.keys() else "litellm+config")
            table[model] = replace(mapped, **fields, source=source)
    if missing:
        flags = " ".join(f"--price {m}=IN,OUT" for m in missing)
        raise UnknownPriceError(
            f"no price known for {', '.join(missing)}: give USD per million tokens with "
            f"{flags} (or input_usd_per_mtok/output_usd_per_mtok in the panel file), or "
            "pass --allow-unpriced to run without costs (no API efficiency, no USD budget)")
    return table
