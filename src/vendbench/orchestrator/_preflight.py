"""What can be checked of a run's LLM models before anything is written or sent."""

from __future__ import annotations

from ..budgets import Price, resolve_prices
from ..errors import ConfigError
from ..providers import litellm_price, model_problem, unreachable
from ._config import RunConfig


def preflight(config: RunConfig) -> None:
    """What can be checked of the LLM models before a run touches its file: each model
    string and endpoint (``providers.model_problem``), and that something listens at
    each given endpoint. One line each, in seconds, instead of a failure at the first
    request after its retries."""
    problems = []
    for model in (m for m in config.models if not m.in_process):
        problem = model_problem(model.id, model.api_base)
        if problem is None and model.api_base:
            problem = unreachable(model.api_base)
        if problem is not None:
            problems.append(problem)
    if problems:
        raise ConfigError("; ".join(dict.fromkeys(problems)))


def run_prices(config: RunConfig, allow_unpriced: bool | None = None
               ) -> dict[str, Price | None]:
    """Each model's price, field by field from the flags, the panel and litellm's map
    (an unknown price is an error unless ``allow_unpriced``, by default the run's)."""
    ids = {m.label: m.id for m in config.models}
    return resolve_prices(list(ids), {m.label: m.price_fields() for m in config.models},
                          lookup=lambda label: litellm_price(ids[label]),
                          allow_unpriced=config.allow_unpriced if allow_unpriced is None
                          else allow_unpriced)
