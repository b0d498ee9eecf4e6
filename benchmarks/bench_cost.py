"""What a 180-day trial costs, measured through the real LLM path (design §6.4).

    python benchmarks/bench_cost.py [--days 180] [--seed 1] [--windows 60000 120000]

A realistic operator: the tool calls of a recorded ``baseline/order-up-to`` episode
(seed 1: 2,639 calls), replayed by a local server (``tests.fakellm``) as a model's
replies — a few calls per assistant message (1 and 3 by default), in the policy's order,
the day's last message ending it — so that vendbench's own loop (rolling context, tools, budgets, logging, litellm's
provider paths) carries the conversation a busy operator has. The replay is checked: the
trial must end with the recorded episode's net assets, to the fen.

The server emulates each provider's prompt cache — OpenAI style on
``/v1/chat/completions`` (the longest earlier prefix of 1,024+ tokens, per
``prompt_cache_key``; Gemini's implicit cache behaves alike) and Anthropic style on
``/v1/messages`` (only prefixes ending at a ``cache_control`` block) — and counts
tokens with litellm's counter, as vendbench does. Replies are billed as many output
tokens as their tool calls take.

For each grouping, ``sliding`` and ``block``, at each window: requests, input tokens,
cached share, and USD per trial at three price sets (USD per million tokens):

    Sonnet-class   3 in, 15 out, 0.30 cache read, 3.75 cache write (Anthropic-style run)
    GPT-5-class    1.25 in, 10 out, 0.125 cache read               (OpenAI-style run)
    Gemini-class   1.25 in, 10 out, 0.31 cache read                (OpenAI-style run)

Targets: ``block`` caches at least 85 % of input tokens, and costs at most 0.25x of
``sliding`` at the Sonnet-class prices. The new content of the conversation (reports,
tool results, the calls themselves) can never be read from a cache: its share of the
input is printed as the floor of what no strategy can cache. Not run by CI (about 20
minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-bench-not-a-real-key")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.operator import record, server  # noqa: E402

PRICES = {  # USD per million: input, output, cache read, cache write
    "Sonnet-class": ("anthropic", Decimal("3"), Decimal("15"), Decimal("0.30"), Decimal("3.75")),
    "GPT-5-class": ("openai", Decimal("1.25"), Decimal("10"), Decimal("0.125"), None),
    "Gemini-class": ("openai", Decimal("1.25"), Decimal("10"), Decimal("0.31"), None),
}
MODELS = {"openai": "openai/gpt-5", "anthropic": "anthropic/claude-sonnet-4-5"}


@dataclass
class Result:
    family: str
    strategy: str
    window: int
    per_message: int
    requests: int
    input_tokens: int
    read: int
    write: int
    output: int
    net_assets: float | None
    seconds: float
    compactions: int = 0          # context_strategy "compact": the summarising requests

    @property
    def cached(self) -> float:
        return self.read / self.input_tokens

    def usd(self, prices: tuple) -> Decimal:
        _, inp, out, read, write = prices
        write = inp if write is None else write
        plain = self.input_tokens - self.read - self.write
        return (plain * inp + self.read * read + self.write * write + self.output * out) \
            / Decimal(1_000_000)


async def one(family: str, strategy: str, window: int, days: int, seed: int,
              episode: list[list[tuple[str, str]]], per_message: int, workdir: str,
              prepare: Callable[[Any], None] | None = None, name: str = "") -> Result:
    """One trial of the replayed operator; ``prepare`` sets up the server first
    (bench_context: its summariser and its fact counter), ``name`` tells its file apart."""
    from vendbench.orchestrator import build_config, execute
    from vendbench.results import Store

    db = os.path.join(workdir, f"{family}-{strategy}-{window}-{per_message}{name}.duckdb")
    with server(episode, per_message) as llm:
        replay = llm.script
        if prepare is not None:
            prepare(llm)
        config = build_config({
            "days": days, "seeds": [seed], "max_attempts": 2,
            "models": [{"id": MODELS[family], "api_base": llm.base if family == "anthropic"
                        else llm.url, "max_context_tokens": window, "max_output_tokens": 4096,
                        "context_strategy": strategy, "request_timeout_s": 60}]})
        start = time.perf_counter()
        result = await execute(config, db)
        seconds = time.perf_counter() - start
        if replay.misaligned:
            raise SystemExit(f"{family}/{strategy}: the replay lost its place "
                             f"{replay.misaligned} times")
    trial = result.as_json()["trials"][0]
    if trial["status"] != "completed":
        raise SystemExit(f"{family}/{strategy}/{window}: {trial['status']}: {trial['reason']}")
    with Store(db, read_only=True) as store:
        requests, inp, read, write, out, compactions = store.con.execute(
            "SELECT count(*), sum(input_tokens), sum(cache_read_tokens), "
            "sum(cache_write_tokens), sum(output_tokens), "
            "count(*) FILTER (WHERE purpose = 'compaction') FROM exchanges "
            "WHERE status = 'ok' AND trial_id = ?", [trial["trial_id"]]).fetchone()
    return Result(family, strategy, window, per_message, requests, inp, read, write, out,
                  trial["final_net_assets"], seconds, compactions)


def table(results: list[Result]) -> str:
    by = {(r.family, r.strategy, r.window, r.per_message): r for r in results}
    lines = ["| calls / message | strategy | window | requests | input tokens | cached "
             "(OpenAI-style) | cached (Anthropic-style) | Sonnet-class $ | GPT-5-class $ | "
             "Gemini-class $ |", "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for per in sorted({r.per_message for r in results}):
        for window in sorted({r.window for r in results}):
            for strategy in ("sliding", "block"):
                o = by[("openai", strategy, window, per)]
                a = by[("anthropic", strategy, window, per)]
                lines.append(
                    f"| {per} | {strategy} | {window // 1000}k | {o.requests:,} | "
                    f"{o.input_tokens / 1e6:,.1f}M | {o.cached:.1%} | {a.cached:.1%} | "
                    f"{a.usd(PRICES['Sonnet-class']):,.2f} | "
                    f"{o.usd(PRICES['GPT-5-class']):,.2f} | "
                    f"{o.usd(PRICES['Gemini-class']):,.2f} |")
    return "\n".join(lines)


def new_content_tokens(episode: list[list[tuple[str, str]]], seed: int, days: int) -> int:
    """Tokens of what the conversation brings that was never sent before: reports, tool
    results, the calls' arguments (litellm's counter), counted as ``bench_workload.py``
    counts them."""
    from bench_workload import call_texts, fresh_tokens
    from vendbench.environment import make

    env = make("autovend", seed=seed, days=days)
    texts = []
    for calls in episode:
        texts.append(env.observe())
        for name, arguments in calls:
            texts += call_texts(arguments, env.call(name, arguments))
    return fresh_tokens(texts)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=180)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--windows", type=int, nargs="+", default=[60_000, 120_000])
    ap.add_argument("--calls-per-message", type=int, nargs="+", default=[1, 3],
                    help="tool calls per assistant message (default: 1 and 3)")
    args = ap.parse_args()
    episode, net_assets = record(args.seed, args.days)
    fresh = new_content_tokens(episode, args.seed, args.days)
    print(f"recorded baseline/order-up-to seed {args.seed}, {args.days} days: "
          f"{sum(map(len, episode)):,} tool calls, final net assets {net_assets:,.2f}; "
          f"{fresh / 1e6:.2f}M tokens of new content", flush=True)
    results = []
    with tempfile.TemporaryDirectory() as workdir:
        for per in args.calls_per_message:
            for window in args.windows:
                for family in ("openai", "anthropic"):
                    for strategy in ("sliding", "block"):
                        r = await one(family, strategy, window, args.days, args.seed, episode,
                                      per, workdir)
                        if r.net_assets != net_assets:
                            raise SystemExit(f"the replay diverged: {r.net_assets} != "
                                             f"{net_assets}")
                        print(f"{per} per message, {family:9} {strategy:7} "
                              f"{window // 1000:>3}k: {r.requests:,} requests, "
                              f"{r.input_tokens / 1e6:.1f}M input tokens, {r.cached:.1%} "
                              f"cached, {r.write / 1e6:.2f}M written, {r.output / 1e6:.2f}M "
                              f"output ({r.seconds:.0f} s)",
                              flush=True)
                        results.append(r)
    print()
    print(table(results))
    print()
    by = {(r.family, r.strategy, r.window, r.per_message): r for r in results}
    for per in args.calls_per_message:
        for window in args.windows:
            block = by[("anthropic", "block", window, per)]
            sliding = by[("anthropic", "sliding", window, per)]
            ratio = block.usd(PRICES["Sonnet-class"]) / sliding.usd(PRICES["Sonnet-class"])
            cached = min(by[(f, "block", window, per)].cached for f in ("openai", "anthropic"))
            floor = fresh / by[("openai", "block", window, per)].input_tokens
            print(f"{per} per message, {window // 1000}k: block caches >= {cached:.1%} of input "
                  f"tokens (target 85 %; new content is {floor:.1%} of its input); block / "
                  f"sliding at Sonnet-class prices = {ratio:.3f} (target <= 0.25)")


if __name__ == "__main__":
    asyncio.run(main())
