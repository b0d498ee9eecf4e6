"""Which memory a model needs, and what it costs: ``sliding``, ``block`` and ``compact``
on the same scripted agent (design §27.3).

    python benchmarks/bench_context.py [--days 180] [--seed 1] [--window 60000]

The agent is bench_cost's operator: the tool calls of a recorded ``baseline/order-up-to``
episode, replayed by the tests' local server as a model's replies, through vendbench's
own loop (rolling context, budgets, logging, litellm's provider paths), checked to end
with the episode's net assets to the fen. Asked to compact, the server writes as one of
two scripted models:

    terse     its last twelve distinct tool calls, each cut to 160 characters, its
              previous summary's lines first (``tests.fakellm.summary``)
    faithful  what the compaction prompt asks for: the orders, prices and delistings in
              what it was shown and in its previous summary, whole, the newest first up to
              8,000 characters (about 2,000 tokens)

For each strategy, on an OpenAI-style server (automatic prefix cache) and an
Anthropic-style one (``cache_control`` blocks): requests (of them compactions), input
tokens, cached share, dollars a trial at GPT-5-class and Sonnet-class prices, and how
many of the facts a later day needs each strategy keeps in the prompt. The facts are
scripted from the episode, as a checker would list them:

    orders in transit  each item of an order, from the day it is placed until it
                       arrives (3 days later): its product and quantity
    prices in force    each set_price, until the same machine and product is priced again
    delisted products  each delist, until the product is restocked on that machine

A fact is kept when its words (the call's own JSON, e.g. ``"product_id": "P0446",
"quantity": 111``) are somewhere in the request: a tool call still in the window, or a
summary line. Counted over every request the agent makes; facts in the notebook are
not counted (the operator keeps none). Not run by CI (about 10 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-bench-not-a-real-key")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench_cost import PRICES, Result  # noqa: E402
from bench_cost import one as cost_trial  # noqa: E402
from tests.fakellm._server import summary_lines  # noqa: E402
from tests.operator import record  # noqa: E402

STRATEGIES = ("sliding", "block", "compact")
SUMMARISERS = ("terse", "faithful")
KEPT_CALLS = ("place_order", "set_price", "delist")
LEAD_DAYS = 3
Fact = tuple[str, str, int, int]          # kind, words, first day needed, last day needed


def facts(episode: list[list[tuple[str, str]]]) -> list[Fact]:
    """What a later day needs to know of earlier ones, from the episode's calls."""
    out: list[Fact] = []
    priced: dict[tuple[str, str], tuple[str, int]] = {}
    delisted: dict[tuple[str, str], tuple[str, int]] = {}
    last = len(episode)
    for day, calls in enumerate(episode, start=1):
        for name, arguments in calls:
            args = json.loads(arguments)
            if name == "place_order":
                for item in args["items"]:
                    words = json.dumps(item)[1:-1]
                    out.append(("orders in transit", words, day + 1, day + LEAD_DAYS))
            elif name == "set_price":
                key = (args.get("machine_id"), args.get("product_id"))
                if key in priced:
                    words, since = priced[key]
                    out.append(("prices in force", words, since + 1, day))
                priced[key] = (arguments, day)
            elif name == "delist":
                key = (args.get("machine_id"), args.get("product_id"))
                delisted[key] = (arguments, day)
            elif name == "restock":
                for item in args.get("items", []):
                    key = (item.get("machine_id", args.get("machine_id")), item.get("product_id"))
                    if key in delisted:
                        words, since = delisted.pop(key)
                        out.append(("delisted products", words, since + 1, day))
    out += [("prices in force", w, since + 1, last) for w, since in priced.values()]
    out += [("delisted products", w, since + 1, last) for w, since in delisted.values()]
    return [f for f in out if f[2] <= min(f[3], last)]


@dataclass
class Kept:
    """Facts needed and kept, by kind, over the requests seen."""

    needed: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    kept: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def share(self, kind: str | None = None) -> float:
        kinds = [kind] if kind else list(self.needed)
        need = sum(self.needed[k] for k in kinds)
        return sum(self.kept[k] for k in kinds) / need if need else 1.0


def faithful(chat: dict) -> str:
    """A summary as the compaction prompt asks for one (see the module's docstring)."""
    kept: list[str] = []
    for line in reversed(summary_lines(chat, calls=lambda name: name in KEPT_CALLS)):
        if sum(map(len, kept)) + len(line) > 8_000:
            break
        kept.append(line)
    return "\n".join(reversed(kept)) or "Nothing to keep yet."


def prompt_words(body: dict) -> str:
    """What a request says: each message's text and each tool call's arguments, as
    sent (OpenAI's or Anthropic's shape)."""
    parts = [body.get("system") if isinstance(body.get("system"), str) else ""]
    for m in body.get("messages", []):
        content = m.get("content")
        blocks = content if isinstance(content, list) else [content]
        for b in blocks:
            if isinstance(b, str):
                parts.append(b)
            elif isinstance(b, dict):
                parts.append(b.get("text") or "")
                if b.get("type") == "tool_use":
                    parts.append(json.dumps(b.get("input"), ensure_ascii=False))
        for call in m.get("tool_calls") or []:
            parts.append(call["function"]["arguments"])
    return "\n".join(parts)


def watch(llm, needed: list[Fact], kept: Kept) -> None:
    """Count, as each of the agent's requests arrives, the facts its day needs and the
    ones its prompt holds (compaction requests are not the agent's acting)."""
    replay = llm.script
    original = replay.__call__

    def replying(body: dict):
        reply = original(body)                     # the replay knows which day it is
        if body.get("tool_choice") == "none":
            return reply
        day, words = replay.day + 1, prompt_words(body)
        for kind, text, first, last in needed:
            if first <= day <= last:
                kept.needed[kind] += 1
                kept.kept[kind] += text in words
        return reply

    llm.script = replying


async def one(family: str, strategy: str, window: int, days: int, seed: int,
              episode: list[list[tuple[str, str]]], needed: list[Fact], workdir: str,
              summariser: str = "terse") -> tuple[Result, int, Kept]:
    """bench_cost's trial (one call a message), with the summariser and the facts kept."""
    kept = Kept()

    def prepare(llm: Any) -> None:
        if summariser == "faithful":
            llm.summarise = faithful
        watch(llm, needed, kept)

    r = await cost_trial(family, strategy, window, days, seed, episode, 1, workdir,
                         prepare=prepare, name=f"-{summariser}")
    return r, r.compactions, kept


def table(rows: dict[tuple[str, str], tuple[Result, int, Kept]], kinds: list[str]) -> str:
    """One row a strategy (compact: a row a summariser)."""
    lines = ["| strategy | requests (compactions) | input tokens | cached, OpenAI-style | "
             "cached, Anthropic-style | GPT-5-class $ | Sonnet-class $ | facts kept | "
             + " | ".join(kinds) + " |",
             "|---|---:|---:|---:|---:|---:|---:|---:|" + "---:|" * len(kinds)]
    for strategy in [s for s in STRATEGIES if s != "compact"] + \
            [f"compact, {s}" for s in SUMMARISERS]:
        o, compactions, kept = rows[("openai", strategy)]
        a = rows[("anthropic", strategy)][0]
        lines.append(
            f"| {strategy} | {o.requests:,} ({compactions}) | {o.input_tokens / 1e6:,.1f}M | "
            f"{o.cached:.1%} | {a.cached:.1%} | {o.usd(PRICES['GPT-5-class']):,.2f} | "
            f"{a.usd(PRICES['Sonnet-class']):,.2f} | {kept.share():.0%} | "
            + " | ".join(f"{kept.share(k):.0%}" if kept.needed[k] else "none needed"
                         for k in kinds) + " |")
    return "\n".join(lines)


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=180)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--window", type=int, default=60_000,
                    help="max_context_tokens, output included (default 60000)")
    args = ap.parse_args()
    episode, net_assets = record(args.seed, args.days)
    needed = facts(episode)
    kinds = sorted({k for k, *_ in needed})
    print(f"recorded baseline/order-up-to seed {args.seed}, {args.days} days: "
          f"{sum(map(len, episode)):,} tool calls, final net assets {net_assets:,.2f}; "
          f"{len(needed):,} facts a later day needs", flush=True)
    rows = {}
    with tempfile.TemporaryDirectory() as workdir:
        runs = [(s, "terse") for s in STRATEGIES] + [("compact", "faithful")]
        for family in ("openai", "anthropic"):
            for strategy, summariser in runs:
                r, compactions, kept = await one(family, strategy, args.window, args.days,
                                                 args.seed, episode, needed, workdir,
                                                 summariser)
                if r.net_assets != net_assets:
                    raise SystemExit(f"the replay diverged: {r.net_assets} != {net_assets}")
                if strategy == "compact":
                    strategy = f"compact, {summariser}"
                print(f"{family:9} {strategy:17}: {r.requests:,} requests ({compactions} "
                      f"compactions), {r.input_tokens / 1e6:.1f}M input tokens, "
                      f"{r.cached:.1%} cached, facts kept {kept.share():.0%} "
                      f"({r.seconds:.0f} s)", flush=True)
                rows[(family, strategy)] = (r, compactions, kept)
    print()
    print(f"{args.days} days, {args.window // 1000}k window, seed {args.seed}:")
    print(table(rows, kinds))


if __name__ == "__main__":
    asyncio.run(main())
