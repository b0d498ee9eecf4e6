"""Prices per model, resolved once per run and stored with it (SPEC §3, "Budgets").

Prices come from, in order: ``--price MODEL=IN,OUT``, the panel file, litellm's price
map. A model with no price anywhere does not run: a cost is never silently $0. USD per
million tokens are kept as ``Decimal`` and every cost is computed from them, so a run's
costs can be re-derived from its stored table.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import Decimal

from ..errors import UnknownPriceError

MILLION = Decimal(1_000_000)


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens. ``cached_input`` prices cache reads; ``reasoning`` prices
    reasoning tokens when the provider prices them apart (else they are output)."""

    input: Decimal
    output: Decimal
    cached_input: Decimal | None = None
    reasoning: Decimal | None = None
    source: str = "config"

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0,
             reasoning_tokens: int = 0) -> Decimal:
        """The USD cost of one reply's usage."""
        cached = min(cached_tokens, prompt_tokens) if self.cached_input is not None else 0
        reasoning = min(reasoning_tokens, completion_tokens) if self.reasoning is not None else 0
        total = ((prompt_tokens - cached) * self.input
                 + cached * (self.cached_input or Decimal(0))
                 + (completion_tokens - reasoning) * self.output
                 + reasoning * (self.reasoning or Decimal(0)))
        return total / MILLION

    def to_json(self) -> dict[str, str | None]:
        return {k: (str(v) if isinstance(v, Decimal) else v) for k, v in asdict(self).items()}


def parse_price_flag(text: str) -> tuple[str, Price]:
    """Parse ``MODEL=IN,OUT`` (USD per million input and output tokens)."""
    model, sep, numbers = text.rpartition("=")
    parts = numbers.split(",")
    if not sep or not model or len(parts) != 2:
        raise UnknownPriceError(f"--price takes MODEL=IN,OUT in USD per million tokens, "
                                f"e.g. openai/gpt-4.1-mini=0.4,1.6; got {text!r}")
    try:
        inp, out = (Decimal(p.strip()) for p in parts)
    except ArithmeticError:
        raise UnknownPriceError(f"--price {text!r}: prices must be numbers") from None
    if inp < 0 or out < 0 or not inp.is_finite() or not out.is_finite():
        raise UnknownPriceError(f"--price {text!r}: prices must be finite and non-negative")
    return model, Price(inp, out, source="--price")


def litellm_price(model: str) -> Price | None:
    """The price in litellm's (local, offline) price map, or None when it has none."""
    from ..providers._litellm import import_litellm

    litellm = import_litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception:      # litellm raises bare Exception subclasses for unmapped models
        return None
    inp, out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if inp is None or out is None:
        return None

    def per_m(v: float | None) -> Decimal | None:
        return None if v is None else (Decimal(str(v)) * MILLION).normalize()

    return Price(per_m(inp), per_m(out), per_m(info.get("cache_read_input_token_cost")),
                 per_m(info.get("output_cost_per_reasoning_token")), source="litellm")


def resolve_prices(models: list[str], given: dict[str, Price], *, allow_unpriced: bool = False
                   ) -> dict[str, Price | None]:
    """Price every model, or fail closed naming the models without one and the fix.

    In-process policies (``baseline/...``) cost nothing and need no price.
    """
    table: dict[str, Price | None] = {}
    missing = []
    for model in dict.fromkeys(models):
        if model.startswith("baseline/"):
            table[model] = Price(Decimal(0), Decimal(0), source="in-process")
        elif model in given:
            table[model] = given[model]
        else:
            price = litellm_price(model)
            if price is None and not allow_unpriced:
                missing.append(model)
            table[model] = price
    if missing:
        flags = " ".join(f"--price {m}=IN,OUT" for m in missing)
        raise UnknownPriceError(
            f"no price known for {', '.join(missing)}: give USD per million tokens with "
            f"{flags} (or input_usd_per_mtok/output_usd_per_mtok in the panel file), or "
            "pass --allow-unpriced to run without costs (no API efficiency, no USD budget)")
    return table
