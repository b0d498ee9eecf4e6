"""What a model's reasoning settings do, read off the body litellm would send (design §24).

``reasoning_effort`` and a thinking budget mean different things to each provider, and
litellm maps them per model (an effort becomes an Anthropic or Gemini 2.5 thinking
budget, a Gemini 3 thinking level, OpenAI's own effort, or nothing at all for a model it
does not know to reason). So vendbench does not guess: it renders a request with
litellm's own transformation (nothing is sent) and reads what the provider will get.

From that body: whether reasoning is on and how (in words, for ``check``), the thinking
budget where the body states one, the output cap, what a request must reserve beyond
``max_tokens`` (Gemini documents thinking as apart from ``maxOutputTokens``; Anthropic
and OpenAI count it inside), and what the provider would refuse before a run spends
anything: a budget not below ``max_tokens``, Anthropic's minimum budget of 1,024, a
temperature other than 1 or a forced tool choice with Anthropic's thinking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._base import CompletionRequest, Provider
from ._profiles import wire_profile

ANTHROPIC_MIN_BUDGET = 1_024


@dataclass(frozen=True, slots=True)
class ReasoningPlan:
    """What a model's requests ask of its provider's reasoning."""

    on: bool
    how: str                          # in words: "Anthropic thinking, budget 1,024 tokens"
    budget: int | None = None         # thinking tokens a request may spend, where stated
    beyond_max_tokens: int = 0        # thinking a request may spend on top of max_tokens
    problems: tuple[str, ...] = ()    # what the provider would refuse, in a few words each
    notes: tuple[str, ...] = field(default=())   # settings litellm drops, and why

    def as_json(self) -> dict[str, Any]:
        return {"on": self.on, "how": self.how, "thinking_budget": self.budget,
                "reserved_beyond_max_tokens": self.beyond_max_tokens,
                "problems": list(self.problems), "notes": list(self.notes)}


def reasoning_plan(provider: Provider, request: CompletionRequest) -> ReasoningPlan:
    """The plan of ``request``'s settings (its messages and tools do not matter). No
    reasoning setting: off, with nothing rendered (a worker process builds the plan of
    each model it runs, and litellm's first rendering costs it about 2 s)."""
    if request.reasoning_effort is None and request.thinking_budget is None:
        return ReasoningPlan(False, "off")
    probe = CompletionRequest(
        model=request.model, messages=[{"role": "user", "content": "."}], tools=[],
        max_tokens=request.max_tokens, temperature=request.temperature,
        reasoning_effort=request.reasoning_effort, thinking_budget=request.thinking_budget,
        api_base=request.api_base, tool_choice=request.tool_choice)
    body = provider.render_body(probe)
    kind = wire_profile(request.model).kind
    read = {"anthropic": _anthropic, "gemini": _gemini}.get(kind, _openai_like)
    plan = read(body, request)
    asked = request.reasoning_effort is not None or request.thinking_budget is not None
    if asked and not plan.on:
        setting = (f"reasoning_effort={request.reasoning_effort}" if request.reasoning_effort
                   else f"thinking_budget_tokens={request.thinking_budget}")
        return ReasoningPlan(False, "off", notes=(
            f"{setting} has no effect: litellm drops it for {request.model} (the model does "
            "not reason, or litellm does not know that it does)",))
    if request.temperature is not None and "temperature" not in _flat_keys(body) \
            and plan.on:
        plan = ReasoningPlan(plan.on, plan.how, plan.budget, plan.beyond_max_tokens,
                             plan.problems, (*plan.notes, "temperature is dropped: this "
                                             "reasoning model takes only its default"))
    return plan


def _anthropic(body: dict[str, Any], request: CompletionRequest) -> ReasoningPlan:
    thinking = body.get("thinking") or {}
    if thinking.get("type") not in ("enabled", "adaptive"):
        return ReasoningPlan(False, "off")
    problems = []
    budget: int = int(thinking.get("budget_tokens") or 0)
    max_tokens: int = int(body.get("max_tokens") or request.max_tokens)
    if thinking["type"] == "adaptive":
        effort = (body.get("output_config") or {}).get("effort")
        how = f"Anthropic adaptive thinking (effort {effort}), inside max_tokens"
    else:
        how = f"Anthropic extended thinking, budget {budget:,} tokens, inside max_tokens"
        if budget < ANTHROPIC_MIN_BUDGET:
            problems.append(f"Anthropic's smallest thinking budget is "
                            f"{ANTHROPIC_MIN_BUDGET:,} tokens, not {budget:,}")
        if budget >= max_tokens:
            problems.append(_too_small(max_tokens, budget))
    if body.get("temperature") not in (None, 1, 1.0):
        problems.append(f"Anthropic takes temperature 1 only when thinking is on, not "
                        f"{body['temperature']:g}: drop temperature")
    if (body.get("tool_choice") or {}).get("type") in ("any", "tool"):
        problems.append("Anthropic refuses a forced tool choice when thinking is on: use "
                        "tool_choice auto")
    return ReasoningPlan(True, how, budget or None, 0, tuple(problems))


def _gemini(body: dict[str, Any], request: CompletionRequest) -> ReasoningPlan:
    config = body.get("generationConfig") or {}
    thinking = config.get("thinkingConfig") or {}
    budget, level = thinking.get("thinkingBudget"), thinking.get("thinkingLevel")
    if not thinking or budget == 0:
        return ReasoningPlan(False, "off")
    max_tokens = config.get("max_output_tokens") or config.get("maxOutputTokens") or \
        request.max_tokens
    if isinstance(budget, int) and budget > 0:
        problems = (_too_small(max_tokens, budget),) if budget >= max_tokens else ()
        return ReasoningPlan(True, f"Gemini thinking, budget {budget:,} tokens, reserved on "
                                   "top of max_tokens", budget, budget, problems)
    return ReasoningPlan(True, f"Gemini thinking level {level or 'dynamic'} (no token budget "
                               "stated: a reply above its reservation is charged in full)")


def _openai_like(body: dict[str, Any], request: CompletionRequest) -> ReasoningPlan:
    effort = body.get("reasoning_effort")
    thinking = body.get("thinking") or {}
    if effort is None and thinking.get("type") != "enabled":
        return ReasoningPlan(False, "off")
    how = f"reasoning effort {effort}" if effort else "thinking on"
    return ReasoningPlan(True, how + ", inside the output cap (reasoning tokens are billed "
                                     "as output)")


def _too_small(max_tokens: int, budget: int) -> str:
    return (f"max_output_tokens ({max_tokens:,}) must be above the thinking budget "
            f"({budget:,} tokens): raise max_output_tokens")


def dropped_settings(provider: Provider, request: CompletionRequest) -> tuple[str, ...]:
    """The sampling settings of ``request`` (top_p, a sampling seed) that litellm drops
    for its model, read off the body it renders (design §35.7: OpenAI takes a seed,
    Anthropic's API has none); nothing is sent."""
    asked = {"top_p": request.top_p, "seed": request.seed}
    if all(v is None for v in asked.values()):
        return ()
    body = provider.render_body(CompletionRequest(
        model=request.model, messages=[{"role": "user", "content": "."}], tools=[],
        max_tokens=request.max_tokens, top_p=request.top_p, seed=request.seed,
        api_base=request.api_base, tool_choice=request.tool_choice))
    keys = _flat_keys(body)
    names = {"top_p": "top_p", "seed": "the sampling seed"}
    return tuple(f"{names[k]} is dropped: {request.model}'s API takes none"
                 for k, v in asked.items() if v is not None and k not in keys)


def _flat_keys(body: dict[str, Any]) -> set[str]:
    keys = set(body)
    for value in body.values():
        if isinstance(value, dict):
            keys |= set(value)
    return keys
