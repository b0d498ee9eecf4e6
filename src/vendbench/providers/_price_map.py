"""Prices from litellm's price map (local, offline): the lookup ``budgets.resolve_prices``
falls back to for a model whose price the user did not give in full."""

from __future__ import annotations

from decimal import Decimal

from ..budgets import MILLION, Price
from ._litellm import import_litellm


def litellm_price(model: str) -> Price | None:
    """The price in litellm's (local, offline) price map, or None when it has none.

    ``get_model_info`` also answers for names its map does not list, by pattern (for
    ``openai/gpt-9-turbo`` it answers $0 in and out): such a guess is not a price. A
    price counts only when the entry it came from is in the map; a listed $0 (a local
    provider's, such as Ollama's) is a price.
    """
    litellm = import_litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception:      # litellm raises bare Exception subclasses for unmapped models
        return None
    inp, out = info.get("input_cost_per_token"), info.get("output_cost_per_token")
    if inp is None or out is None:
        return None
    listed = {model, model.split("/", 1)[-1], info.get("key")} & litellm.model_cost.keys()
    if not listed:
        return None

    def per_m(v: float) -> Decimal:
        return (Decimal(str(v)) * MILLION).normalize()

    def listed_per_m(key: str) -> Decimal | None:
        v = info.get(key)
        return None if v is None else per_m(v)

    return Price(per_m(inp), per_m(out), cache_read=listed_per_m("cache_read_input_token_cost"),
                 cache_write=listed_per_m("cache_creation_input_token_cost"),
                 reasoning=listed_per_m("output_cost_per_reasoning_token"), source="litellm")
