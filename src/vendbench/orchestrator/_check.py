"""``vendbench check``: before spending anything, what each model of a panel will do.

Per LLM model: the model string and endpoint (``providers.model_problem``, something
listening), its API key variable, its price, what one request reserves, and then one
real request (the world's briefing and first report, its tools, a small reply): does the
model call a tool, how many prompt tokens the server counts against ours, and what that
request cost. Each problem is one line; nothing is written.
"""

from __future__ import annotations

import asyncio
import time
from decimal import Decimal
from typing import Any

from .._secrets import mask_url
from ..errors import ConfigError
from ..providers import dropped_settings, make_provider, model_problem, unreachable
from ._clients import Clients
from ._config import ModelConfig, RunConfig
from ._forecast import panel_forecast
from ._preflight import run_prices

PROBE_MAX_TOKENS = 256        # the check's one request: enough for a tool call
PROBE_TIMEOUT_S = 10.0        # ... and how long it may take (design §16: check is quick)


async def check(config: RunConfig, send: bool = True) -> dict[str, Any]:
    """``models``: one record per LLM model of ``config`` (``send``: make the one real
    request); ``forecast``: the run's cost forecast, as ``run`` prints it."""
    # a gap in prices is reported; without the request, a missing key is a warning only
    # (a forecast needs none: design §35.2)
    clients = Clients(config, run_prices(config, allow_unpriced=True), keys=send)
    llms = [m for m in config.models if not m.in_process]
    records = [await _one(clients, m, send) for m in llms]
    for r in records:
        lacks = clients.missing_keys.get(r["model"])
        r["warnings"] = [f"{lacks}: a run needs it, the forecast does not"] if lacks else []
    # a forecast for each model whose client could be built (its first request counted)
    ready = [m for m, r in zip(llms, records) if r["first_prompt_tokens"] is not None]
    forecast = panel_forecast(config.model_copy(update={"models": ready}), clients) \
        if ready else None
    return {"models": records, "forecast": forecast.as_json() if forecast else None}


async def _one(clients: Clients, model: ModelConfig, send: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"model": model.label, "problems": [], "price": None,
                           "reserves_usd": None, "first_prompt_tokens": None,
                           "reasoning": None}
    problem = model_problem(model.id, model.api_base)
    if problem is None and model.api_base:
        problem = unreachable(model.api_base)
    if problem is not None:
        out["problems"].append(problem)
        return out
    price = clients.prices.get(model.label)
    out["price"] = price.to_json() if price is not None else None
    if price is None:
        out["problems"].append(f"{model.label}: no price known: give --price "
                               f"{model.id}=IN,OUT (USD per million tokens) or run with "
                               "--allow-unpriced")
    try:
        out["reasoning"] = clients.reasoning(model).as_json()
        out["dropped"] = list(dropped_settings(make_provider(model.id),
                                               model.request([], [])))
        client = clients.client(model)
    except ConfigError as exc:
        out["problems"].append(str(exc))
        return out
    tokens = clients.first_prompt_tokens(model)
    out["first_prompt_tokens"] = tokens
    if price is not None:
        out["reserves_usd"] = float(clients.first_request_cost(model))
    if send and client is not None:
        out.update(await _probe(clients, model))
        if out.get("error"):
            out["problems"].append(f"{model.label}: the request failed: {out['error']}")
        elif not out.get("called_tool"):
            out["problems"].append(
                f"{model.label}: answered without calling a tool; a trial needs tool calls "
                "(try --tool-choice required, or a model that supports tools)")
    return out


async def _probe(clients: Clients, model: ModelConfig) -> dict[str, Any]:
    """One request as a trial's first, with a small reply."""
    import os

    env = clients.probe()
    messages = [{"role": "system", "content": env.instructions},
                {"role": "user", "content": env.observe()}]
    # a small reply, but room for the thinking the model's settings ask for
    plan = clients.reasoning(model)
    request = model.request(messages, env.tools, timeout_s=PROBE_TIMEOUT_S, max_tokens=min(
        model.max_output_tokens, PROBE_MAX_TOKENS + (plan.budget or 0)))
    key = os.environ.get(model.api_key_env) if model.api_key_env else None
    provider = make_provider(model.id, key)
    counter, tools_tokens = clients.counter(model)
    ours = tools_tokens + sum(counter.count_now(messages))
    start = time.perf_counter()
    try:
        # litellm's own timeout, and ours a little later in case it does not fire
        completion = await asyncio.wait_for(provider.complete(request),
                                            PROBE_TIMEOUT_S + 2)
    except Exception as exc:                  # any failure is the answer to report
        failure = provider.classify(exc)
        if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
            where = mask_url(model.api_base) if model.api_base else model.id
            return {"error": f"{where} did not answer within {PROBE_TIMEOUT_S:g} s (it "
                             "accepts connections: is the model still loading, or the "
                             "server stuck? A run waits up to "
                             f"{model.timeout_s:g} s a request: --request-timeout)"}
        return {"error": failure.message[:300]}          # in words, its kind aside
    usage = completion.usage
    latency = round(time.perf_counter() - start, 2)
    called = bool(completion.message.get("tool_calls"))
    if usage is None:           # nothing to calibrate against, nothing to price exactly
        return {"called_tool": called, "server_prompt_tokens": None,
                "our_prompt_tokens": ours, "token_ratio": None, "latency_s": latency,
                "probe_cost_usd": None, "usage_missing": True}
    price = clients.prices.get(model.label)
    cost = price.cost(usage.prompt_tokens, usage.completion_tokens, usage.cache_read_tokens,
                      usage.cache_write_tokens, usage.reasoning_tokens) if price else None
    return {"called_tool": called,
            "server_prompt_tokens": usage.prompt_tokens, "our_prompt_tokens": ours,
            "token_ratio": round(usage.prompt_tokens / ours, 3) if ours else None,
            "latency_s": latency,
            "probe_cost_usd": float(cost) if isinstance(cost, Decimal) else None}
