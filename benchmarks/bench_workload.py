"""A scenario's workload for the cost forecast (design §16, §21): what a busy operator asks
of a model, measured on the scenario's own reference episode.

    python benchmarks/bench_workload.py [--scenario autovend network] [--seed 1]

Plays ``baseline/order-up-to`` (the scenario's reference policy) over the scenario's long
horizon (AutoVend 180 days, the network 365) and measures, one tool call per request as
``bench_cost.py`` replays it: the requests in each 30 days, the tokens each request adds
to the conversation (the call's arguments, its result as vendbench logs it, and each
day's opening report: litellm's counter, as vendbench counts) and the tokens of the
assistant message that carries the call (what the model writes). These are the numbers
``budgets.Workload`` holds for each scenario; for AutoVend the same counts were taken
through the whole LLM path by ``bench_cost.py`` (2,239 and 390 a request), so the two
methods are printed side by side there. About 30 s.
"""

from __future__ import annotations

import argparse
import json
import os

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

HORIZON = {"autovend": 180, "network": 365}


def call_texts(arguments: str, result: dict) -> list[str]:
    """What one tool call adds to the conversation: its arguments and its result, as the
    agent loop sends it (UTF-8 JSON, ``tool_message``)."""
    from vendbench.results import dumps

    return [arguments, dumps(result, ascii=False)]


def fresh_tokens(texts: list[str]) -> int:
    """litellm's count of texts sent once each (as vendbench counts a message)."""
    from vendbench.providers import TokenCounter

    counter = TokenCounter("openai/gpt-5")
    return sum(counter.count_now([{"role": "user", "content": t} for t in texts]))


def measure(scenario: str, seed: int, days: int) -> dict:
    from vendbench.environment import find_scenario, make, make_policy
    from vendbench.providers import TokenCounter

    counter = TokenCounter("openai/gpt-5")
    env = make(scenario, seed=seed, days=days)
    policy = make_policy(find_scenario(scenario).reference_model, env)
    texts, writes, by_day = [], [], []
    while not env.done:
        day, calls = env.day, 0
        texts.append(env.observe())

        def call(name: str, arguments: dict | None = None) -> dict:
            nonlocal calls
            calls += 1
            args = json.dumps(arguments if arguments is not None else {})
            result = env.call(name, arguments)
            texts.extend(call_texts(args, result))
            writes.append({"role": "assistant", "content": "", "tool_calls": [
                {"id": "c", "type": "function", "function": {"name": name,
                                                             "arguments": args}}]})
            return result

        policy.play_day(call, env.observe())
        if not env.done and env.day == day:
            call(env.day_tool, {})
        by_day.append(calls)
    requests = sum(by_day)
    fresh = fresh_tokens(texts)
    written = sum(counter.count_now(writes))
    months = [sum(by_day[i:i + 30]) for i in range(0, len(by_day), 30)]
    if len(by_day) % 30:                  # a last part-month, scaled to 30 days
        months[-1] = round(months[-1] * 30 / (len(by_day) % 30))
    return {"scenario": scenario, "seed": seed, "days": days, "requests": requests,
            "requests_by_month": months, "new_tokens_per_request": round(fresh / requests),
            "output_tokens_per_request": round(written / requests),
            "score": env.final_state()["score"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", nargs="+", default=list(HORIZON))
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    for scenario in args.scenario:
        m = measure(scenario, args.seed, HORIZON[scenario])
        print(f"{scenario}, seed {m['seed']}, {m['days']} days: {m['requests']:,} requests; "
              f"by 30 days {m['requests_by_month']}; {m['new_tokens_per_request']:,} new "
              f"tokens and {m['output_tokens_per_request']:,} written a request",
              flush=True)


if __name__ == "__main__":
    main()
