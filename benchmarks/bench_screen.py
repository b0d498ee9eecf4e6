"""What screening a 180-day trial costs and takes (design §32.3).

    python benchmarks/bench_screen.py [--days 180] [--seed 1] [--judge openai/gpt-4.1-mini]

The trial: ``bench_cost``'s operator (a recorded ``baseline/order-up-to`` episode
replayed through vendbench's real LLM path as openai/gpt-5, one call a message, block
context at 60,000 tokens). Then ``vendbench screen``'s code on it: the scanners, then
the judge through litellm's HTTP path against the local server, priced at litellm's map
for ``--judge``. The server counts prompt tokens with the judge's tokenizer and answers
each chunk with 50-550 output tokens (uniform, seeded: a real judge's length is not
known here) and no finding. Reported: the trial's unique message tokens against what
its requests re-sent, chunks, the judge's prompt and output tokens, its cost, the time
of each part, the forecast's error against what was billed, and a second screen's cost.
Not run by CI (tests/screen runs the same code on small trials).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_cost import one  # noqa: E402

from tests.fakellm import FakeLLM, Reply  # noqa: E402
from tests.operator import record  # noqa: E402


def judge_server(model: str) -> FakeLLM:
    """A judge that finds nothing, in 50-550 tokens, counting prompts as ``model``."""
    from vendbench.providers import TokenCounter

    counter = TokenCounter(model)

    def answer(body: dict) -> Reply:
        chunk = body["messages"][-1]["content"]
        n = 50 + int(hashlib.sha256(chunk.encode()).hexdigest(), 16) % 501
        return Reply(content=json.dumps({"findings": []}), completion_tokens=n)

    return FakeLLM(script=answer, count_message=lambda m: counter.count_now([m])[0],
                   prompt_cache=False, keep_requests=False)


async def main() -> None:
    from vendbench.results import Screening, Store
    from vendbench.screen import Judge, JudgePlan, judge_model, screen

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=180)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--judge", default="openai/gpt-4.1-mini")
    ap.add_argument("--chunk-tokens", type=int, default=24_000)
    args = ap.parse_args()
    workdir = tempfile.mkdtemp(prefix="bench-screen-")
    episode, _ = record(args.seed, args.days)
    start = time.perf_counter()
    trial = await one("openai", "block", 60_000, args.days, args.seed, episode, 1, workdir)
    print(f"trial: {args.days} days, {trial.requests:,} requests, "
          f"{trial.input_tokens:,} prompt tokens sent ({time.perf_counter() - start:.0f} s)")
    db = next(str(p) for p in Path(workdir).glob("*.duckdb"))
    with Store(db) as store:
        unique, messages = store.con.execute(
            "SELECT sum(tokens), count(*) FROM messages").fetchone()
        t0 = time.perf_counter()
        scanned = await screen(store, None)
        scan_s = time.perf_counter() - t0
        with judge_server(args.judge) as llm:
            judge = Judge.of(judge_model({"id": args.judge, "api_base": llm.url,
                                          "max_output_tokens": 2_048,
                                          "max_context_tokens": 2 * args.chunk_tokens,
                                          "request_timeout_s": 60}))
            plan = JudgePlan(judge, Decimal(50), chunk_tokens=args.chunk_tokens)
            t1 = time.perf_counter()
            judged = await screen(store, None, only=[], plan=plan)
            judge_s = time.perf_counter() - t1
            t2 = time.perf_counter()
            again = await screen(store, None, only=[], plan=plan)
            again_s = time.perf_counter() - t2
        log = f"screen:{judged.screen_id}"
        inp, out = store.con.execute("SELECT sum(input_tokens), sum(output_tokens) FROM "
                                     "exchanges WHERE trial_id = ?", [log]).fetchone()
        found = Screening(store).findings()
    j, f = judged.judge, judged.judge["forecast"] if judged.judge else {}
    assert j is not None
    billed = Decimal(str(j["spent_usd"]))
    error = (Decimal(str(f["expected_usd"])) - billed) / billed if billed else Decimal(0)
    print(f"messages: {messages:,}, {unique:,} tokens unique against {trial.input_tokens:,} "
          f"re-sent ({trial.input_tokens / unique:.0f}x)")
    print(f"scanners: {scan_s:.2f} s, {len(found)} findings "
          f"({', '.join(f'{k}: {v}' for k, v in scanned.found.items())})")
    print(f"judge {args.judge} at litellm's price {judge.price.input:.2f}/"
          f"{judge.price.output:.2f} $/M: {j['asked']} chunks of <= "
          f"{args.chunk_tokens:,} tokens, {inp:,} prompt + {out:,} output tokens, "
          f"${billed:.4f}, {judge_s:.1f} s (local server, no latency)")
    print(f"forecast: expected ${f['expected_usd']:.4f} (error {error:+.1%} of billed), at "
          f"most ${f['at_most_usd']:.4f} reserved")
    print(f"second screen: {again.judge['asked'] if again.judge else '?'} chunks asked, "
          f"${again.judge['spent_usd'] if again.judge else '?'}, {again_s:.1f} s")


if __name__ == "__main__":
    asyncio.run(main())
