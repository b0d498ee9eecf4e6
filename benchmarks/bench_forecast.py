"""The cost forecast (design §16) against what the local test server bills.

    python benchmarks/bench_forecast.py [--days 30] [--seeds 1 2 3] [--windows 60000]

For each seed, strategy and window: ``bench_cost``'s operator (a recorded
``baseline/order-up-to`` episode replayed through vendbench's real LLM path, the
server emulating OpenAI's and Anthropic's prompt caches) runs one trial; its bill at the
three price sets of ``bench_cost`` is set against the forecast ``vendbench run`` prints
before it starts (``orchestrator.panel_forecast``, the same code). The forecast's profile
was measured on seed 1 over 180 days; other seeds and horizons test it out of sample.
About 30 s a trial on 2 cores; not run by CI (its tests run the 30-day check on seed 1).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
os.environ.setdefault("ANTHROPIC_API_KEY", "sk-ant-bench-not-a-real-key")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_cost import MODELS, PRICES, one  # noqa: E402

from tests.operator import record  # noqa: E402


def predicted(family: str, strategy: str, window: int, days: int, prices: tuple) -> Decimal:
    """What ``run`` forecasts for this model before it starts."""
    from vendbench.budgets import Price
    from vendbench.orchestrator import build_config
    from vendbench.orchestrator._clients import Clients
    from vendbench.orchestrator._forecast import panel_forecast

    _, inp, out, read, write = prices
    config = build_config({"days": days, "seeds": [1], "models": [{
        "id": MODELS[family], "max_context_tokens": window, "max_output_tokens": 4096,
        "context_strategy": strategy}]})
    clients = Clients(config, {MODELS[family]: Price(inp, out, read, write)})
    clients.prepare()
    return panel_forecast(config, clients).models[0].trial.usd


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--windows", type=int, nargs="+", default=[60_000])
    args = ap.parse_args()
    print("| seed | strategy | window | requests | price set | billed $ | forecast $ | error |")
    print("|---:|---|---:|---:|---|---:|---:|---:|")
    errors = []
    with tempfile.TemporaryDirectory() as workdir:
        for seed in args.seeds:
            episode, _ = record(seed, args.days)
            for window in args.windows:
                for strategy in ("block", "sliding"):
                    runs = {f: await one(f, strategy, window, args.days, seed, episode, 1,
                                         workdir) for f in ("openai", "anthropic")}
                    for name, prices in PRICES.items():
                        family = prices[0]
                        billed = runs[family].usd(prices)
                        forecast = predicted(family, strategy, window, args.days, prices)
                        error = float((forecast - billed) / billed)
                        errors.append(error)
                        print(f"| {seed} | {strategy} | {window // 1000}k | "
                              f"{runs[family].requests:,} | {name} | {billed:,.2f} | "
                              f"{forecast:,.2f} | {error:+.1%} |", flush=True)
    print(f"\nforecast error: {min(errors):+.1%} to {max(errors):+.1%} over {len(errors)} "
          "trials x price sets")


if __name__ == "__main__":
    asyncio.run(main())
