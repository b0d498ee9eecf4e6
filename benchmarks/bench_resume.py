"""How long a mid-trial resume takes to catch up (design §7: replaying 179 days ≤ 2 s).

    python benchmarks/bench_resume.py [--days 180] [--seed 1] [--cut-day 180]

A busy operator through the real LLM path: the tool calls of a recorded
``baseline/order-up-to`` episode, one per assistant message (the busiest grouping:
2,639 requests over 180 days), answered by the local test server (``tests.fakellm``).
The run is cancelled while the first request of day ``--cut-day`` is in flight, as a
crash would leave it, then ``vendbench run --resume`` continues it. Measured:

* replay: what the resumed segment records (``segments.replay_seconds``): every logged
  tool call run again into a fresh world and checked, each day's cash and net assets
  compared, the conversation and the window rebuilt, the calibration learned again;
* catch-up: from the start of ``execute(resume=...)`` to the moment the server receives
  the interrupted request again — the replay plus reading the trial's history from the
  results file, settling the in-flight request and the run's set-up.

The resumed trial must end on the recorded episode's net assets, to the fen, and its
re-sent request must equal the interrupted one byte for byte. Not run by CI (about two
minutes on 2 cores, most of it the first segment).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT.parent))
sys.path.insert(0, str(ROOT))

from bench_cost import Replay, record  # noqa: E402
from tests.fakellm import FakeLLM, Reply  # noqa: E402


class CutAt:
    """The replayed model, until the first request of ``day``: that one hangs (the run
    is cancelled meanwhile) and reaches the replay only when it is sent again."""

    def __init__(self, replay: Replay, day: int) -> None:
        self.replay, self.marker = replay, f"Day {day} of"
        self.cut = threading.Event()
        self.resent_at: float | None = None

    def __call__(self, body: dict) -> Reply:
        last = body["messages"][-1]
        starts_day = last["role"] == "user" and isinstance(last.get("content"), str) \
            and last["content"].startswith(self.marker)
        if starts_day and not self.cut.is_set():
            self.cut.set()
            return Reply(tool_calls=[("end_day", "{}")], delay=3600)
        if starts_day and self.resent_at is None:
            self.resent_at = time.perf_counter()
        return self.replay(body)


async def main() -> None:
    from vendbench.orchestrator import build_config, execute
    from vendbench.results import Store

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=180)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cut-day", type=int, default=180)
    args = ap.parse_args()
    episode, net_assets = record(args.seed, args.days)
    script = CutAt(Replay(episode, 1), args.cut_day)
    with tempfile.TemporaryDirectory() as workdir, FakeLLM(script) as llm:
        db = os.path.join(workdir, "resume.duckdb")
        config = build_config({
            "days": args.days, "seeds": [args.seed], "max_attempts": 2,
            "models": [{"id": "openai/gpt-5", "api_base": llm.url, "max_context_tokens": 60_000,
                        "max_output_tokens": 4096, "request_timeout_s": 7200}]})
        start = time.perf_counter()
        task = asyncio.create_task(execute(config, db))
        while not script.cut.is_set():
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)                 # its reservation is committed, it is sent
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        first = time.perf_counter() - start
        cut = len(llm.raw) - 1
        with Store(db, read_only=True) as store:
            run_id = store.runs()[0]["run_id"]
            calls = store.con.execute("SELECT count(*) FROM tool_calls").fetchone()[0]
        print(f"first segment: {cut:,} requests, {calls:,} tool calls in {first:.1f} s; "
              f"cut while the first request of day {args.cut_day} was in flight", flush=True)

        resumed_at = time.perf_counter()
        result = await execute(config, db, resume=run_id)
        if script.resent_at is None:
            raise SystemExit("the interrupted request was never sent again")
        catch_up = script.resent_at - resumed_at
        trial = result.as_json()["trials"][0]
        with Store(db, read_only=True) as store:
            replayed, seconds = store.con.execute(
                "SELECT replayed_calls, replay_seconds FROM segments WHERE segment = 2"
            ).fetchone()
    if trial["status"] != "completed" or trial["final_net_assets"] != net_assets:
        raise SystemExit(f"the resumed trial diverged: {trial['status']}, "
                         f"{trial['final_net_assets']} != {net_assets}")
    if llm.raw[cut + 1] != llm.raw[cut]:
        raise SystemExit("the interrupted request was sent again with another body")
    print(f"resumed: replayed {replayed:,} tool calls ({args.cut_day - 1} days) in "
          f"{seconds:.2f} s (target <= 2 s); {catch_up:.2f} s from resume to the interrupted "
          f"request sent again; finished on {net_assets:,.2f} CNY, as recorded")


if __name__ == "__main__":
    asyncio.run(main())
