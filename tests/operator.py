"""A realistic operator behind the local test server: the tool calls of a recorded
``baseline/order-up-to`` episode, replayed as a model's replies, by a server that counts
tokens as vendbench does and caches prompts as the providers do (``benchmarks/bench_cost``,
``bench_forecast`` and the forecast's test use it)."""

from __future__ import annotations

import json
from functools import lru_cache

from .fakellm import FakeLLM, Reply


def record(seed: int, days: int) -> tuple[list[list[tuple[str, str]]], float]:
    """The policy's tool calls, day by day, and the episode's final net assets."""
    from vendbench.environment import make
    from vendbench.environment import make_policy

    env = make("autovend", seed=seed, days=days)
    policy = make_policy("baseline/order-up-to", env)
    episode: list[list[tuple[str, str]]] = []
    while not env.done:
        day, calls = env.day, []

        def call(name: str, arguments: dict | None = None) -> dict:
            calls.append((name, json.dumps(arguments if arguments is not None else {})))
            return env.call(name, arguments)

        policy.play_day(call, env.observe())
        if not env.done and env.day == day:
            call("end_day", {})
        episode.append(calls)
    return episode, env.final_state()["score"]


class Replay:
    """A model that answers with the recorded episode's next tool calls."""

    def __init__(self, episode: list[list[tuple[str, str]]], per_message: int) -> None:
        from vendbench.providers import TokenCounter

        self.messages = [[day[i:i + per_message] for i in range(0, len(day), per_message)]
                         for day in episode]
        self.day, self.index, self.misaligned = 0, 0, 0
        self._counter = TokenCounter("openai/gpt-5")

    def __call__(self, body: dict) -> Reply:
        last = body["messages"][-1]
        if last["role"] == "user" and isinstance(last.get("content"), str) \
                and last["content"].startswith("Day ") and self.index:
            self.day, self.index = self.day + 1, 0          # the env moved to a new day
        if self.day >= len(self.messages) or self.index >= len(self.messages[self.day]):
            self.misaligned += 1
            return Reply(tool_calls=[("end_day", "{}")])
        calls = self.messages[self.day][self.index]
        self.index += 1
        assistant = {"role": "assistant", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": n, "arguments": a}}
            for n, a in calls]}
        return Reply(tool_calls=calls, completion_tokens=self._counter.count_now([assistant])[0])


def server(episode: list[list[tuple[str, str]]], per_message: int) -> FakeLLM:
    """The replay behind a server that counts as vendbench does and caches as the
    providers do."""
    from vendbench.providers import TokenCounter
    from vendbench.providers._tokens import message_texts

    counter = TokenCounter("openai/gpt-5")

    @lru_cache(maxsize=None)
    def text_tokens(text: str) -> int:
        return counter.count_now([{"role": "user", "content": text}])[0]

    def count_message(message: dict) -> int:
        text, framing = message_texts(message)
        return text_tokens(text) - 4 + framing

    def count_block(block: dict) -> int:
        if block.get("type") == "tool_use":
            text = block["name"] + "\n" + json.dumps(block["input"])
        elif block.get("type") == "tool_result":
            text = block["content"] if isinstance(block["content"], str) else \
                json.dumps(block["content"])
        else:
            text = block.get("text", "")
        return text_tokens(text)

    tools_tokens: dict[str, int] = {}

    def count_tools(tools: list) -> int:
        key = json.dumps(tools)
        if key not in tools_tokens:
            tools_tokens[key] = counter.tools(tools)
        return tools_tokens[key]

    return FakeLLM(Replay(episode, per_message), count_message=count_message,
                   count_block=count_block, keep_requests=False,
                   count_tools=count_tools)
