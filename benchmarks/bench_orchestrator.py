"""Orchestrator overhead and throughput against a local OpenAI-compatible server.

    python benchmarks/bench_orchestrator.py [--trials 50] [--requests 3000]
                                            [--slow-trials 100] [--slow-seconds 30]

1. Zero-latency server, 50 trials in flight, logging on: vendbench's exchanges/s as a
   ratio of bare ``litellm.acompletion`` from 50 concurrent loops replaying the very
   requests vendbench sent (rebuilt from its log), same run, same server; runs are
   interleaved ours, bare, ours, bare (target: at least 0.7).
2. A 1 s-latency server, 100 trials in flight: throughput while all 100 are in flight
   against the ideal 100 exchanges/s (target: at least 85 %; the rate from the first
   request to the last, ramps included, is printed beside it), and peak memory of the scheduler and its worker
   processes together, as PSS (target: under 1.5 GB) and as summed RSS.

Both run with the automatic ``--processes`` (LLM trials in worker processes), and once
more in one process for comparison.

The server runs in its own process, so it does not share the client's interpreter.
Not run by CI: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
ROOT = Path(__file__).resolve().parent.parent
# a model in litellm's price map, served by the local fake server (via api_base): an
# unmapped name would make litellm search its price map on every reply, for both sides
MODEL = "openai/gpt-4.1-mini"


def serve(latency: float) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "tests.fakellm", "--port", str(port),
                             "--latency", str(latency)], cwd=ROOT, stdout=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and "serving" in proc.stdout.readline()
    return proc, f"http://127.0.0.1:{port}/v1"


def logged_requests(db: str, limit: int) -> list[dict]:
    """The requests a vendbench run sent, as litellm arguments, from its log."""
    from vendbench.results import Store

    with Store(db, read_only=True) as store:
        keys = store.con.execute("SELECT trial_id, seq FROM exchanges WHERE status = 'ok' "
                                 "ORDER BY sent_at LIMIT ?", [limit]).fetchall()
        out = []
        for trial, seq in keys:
            req = store.stored_request(trial, seq)
            out.append({"messages": req["messages"], "tools": req["tools"],
                        "max_tokens": req["max_tokens"], "tool_choice": req["tool_choice"],
                        "prompt_cache_key": req["cache_key"]})
    return out


async def bare_litellm(url: str, concurrency: int, requests: list[dict]) -> float:
    """Requests/s of bare litellm.acompletion replaying vendbench's own requests."""
    from vendbench.providers._litellm import import_litellm

    litellm = import_litellm()
    queue = list(reversed(requests))

    async def loop() -> None:
        while queue:
            req = queue.pop()
            await litellm.acompletion(model=MODEL, api_base=url, max_retries=0, **req)

    start = time.perf_counter()
    await asyncio.gather(*(loop() for _ in range(concurrency)))
    return len(requests) / (time.perf_counter() - start)


async def ours(url: str, trials: int, days: int, db: str, processes: int | None = None
               ) -> tuple[float, int, float, float]:
    """Exchanges/s of a vendbench run (context, tools, budgets, DuckDB logging all on):
    from its first request to its last, and while every trial was in flight (from the
    last trial's first request to the first trial's last)."""
    from vendbench.orchestrator import build_config, execute
    from vendbench.results import Store

    config = build_config({
        "days": days, "seeds": list(range(1, trials + 1)), "workers": trials,
        "processes": processes,
        "models": [{"id": MODEL, "api_base": url,
                    "max_output_tokens": 256,
                    "max_concurrency": trials, "max_context_tokens": 30_000}]})
    start = time.perf_counter()
    result = await execute(config, db)
    wall = time.perf_counter() - start
    with Store(db, read_only=True) as store:
        exchanges, span = store.con.execute(
            "SELECT count(*), epoch(max(sent_at)) - epoch(min(sent_at)) FROM exchanges"
        ).fetchone()
        in_window, window = store.con.execute("""
            WITH t AS (SELECT min(sent_at) AS first, max(sent_at) AS last FROM exchanges
                       GROUP BY trial_id),
                 w AS (SELECT max(first) AS lo, min(last) AS hi FROM t)
            SELECT count(*), epoch(any_value(hi)) - epoch(any_value(lo))
            FROM exchanges, w WHERE sent_at BETWEEN lo AND hi""").fetchone()
    assert all(t["status"] == "completed" for t in result.as_json()["trials"])
    # from the first request sent to the last: start-up excluded, as it is for the bare
    # loop; ``wall`` (start-up included) is reported beside it
    return (exchanges - 1) / span, exchanges, wall, in_window / window


class TreeMemory:
    """Peak memory of this process plus its worker processes, sampled every 0.2 s: the
    sum of their PSS (shared pages split between the processes that share them: the
    memory the run really holds) and of their RSS (shared pages counted in every
    process). The fake server is not counted."""

    def __init__(self) -> None:
        self.peak_pss_mb = self.peak_rss_mb = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        me = str(os.getpid())
        while not self._stop.wait(0.2):
            pss = rss = 0
            for pid in os.listdir("/proc"):
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                    cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
                    if pid != me and not (re.search(rf"^PPid:\s+{me}$", status, re.M)
                                          and b"_shard_main" in cmd):
                        continue
                    rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
                except OSError:
                    continue
                pss += int(re.search(r"^Pss:\s+(\d+) kB", rollup, re.M).group(1))
                rss += int(re.search(r"^Rss:\s+(\d+) kB", rollup, re.M).group(1))
            self.peak_pss_mb = max(self.peak_pss_mb, pss / 1024)
            self.peak_rss_mb = max(self.peak_rss_mb, rss / 1024)


def fresh(url: str, trials: int, days: int, db: str, processes: int | None = None) -> dict:
    """``ours`` in a fresh interpreter, as ``vendbench run`` would be: its peak memory
    is then that of one run, not of everything this script did before."""
    spec = json.dumps({"url": url, "trials": trials, "days": days, "db": db,
                       "processes": processes})
    out = subprocess.run([sys.executable, __file__, "--one", spec], cwd=ROOT, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def one(spec: dict) -> None:
    from vendbench.providers._litellm import import_litellm

    import_litellm()
    with TreeMemory() as memory:
        rate, n, wall, full = asyncio.run(ours(spec["url"], spec["trials"], spec["days"],
                                               spec["db"], spec["processes"]))
    print(json.dumps({"rate": rate, "exchanges": n, "wall": wall, "all_in_flight": full,
                      "pss_mb": memory.peak_pss_mb, "rss_mb": memory.peak_rss_mb}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--requests", type=int, default=2000, help="requests replayed bare")
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--slow-trials", type=int, default=100)
    ap.add_argument("--slow-days", type=int, default=15)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(json.loads(args.one))
        return
    from vendbench.orchestrator import build_config
    from vendbench.orchestrator._shards import plan_processes
    from vendbench.providers._litellm import import_litellm

    import_litellm()                    # import cost is paid once, outside the timings
    auto = plan_processes(build_config({"seeds": list(range(1, args.trials + 1)),
                                        "workers": args.trials,
                                        "models": [{"id": MODEL,
                                                    "max_concurrency": args.trials}]}))
    print(f"{os.cpu_count()} cores; automatic --processes for these runs: {auto or 1}")
    tmp = tempfile.mkdtemp()
    proc, url = serve(0.0)
    try:
        first = fresh(url, args.trials, args.days, f"{tmp}/fast.duckdb")
        replay = logged_requests(f"{tmp}/fast.duckdb", args.requests)
        bare = asyncio.run(bare_litellm(url, args.trials, replay))
        second = fresh(url, args.trials, args.days, f"{tmp}/fast2.duckdb")
        bare2 = asyncio.run(bare_litellm(url, args.trials, replay))
        single = fresh(url, args.trials, args.days, f"{tmp}/fast1.duckdb", processes=1)
    finally:
        proc.terminate()
    rate = (first["rate"] + second["rate"]) / 2
    bare_mean = (bare + bare2) / 2
    print(f"zero latency, {args.trials} in flight: bare litellm {bare_mean:.1f} req/s "
          f"replaying {len(replay)} of vendbench's requests (runs: {bare:.1f}, {bare2:.1f}); "
          f"vendbench {rate:.1f} exchanges/s (runs: {first['rate']:.1f}, "
          f"{second['rate']:.1f}; {first['exchanges']} exchanges per run, "
          f"{first['wall']:.1f} s with start-up); ratio {rate / bare_mean:.2f} "
          f"(in one process: {single['rate']:.1f}/s, ratio {single['rate'] / bare_mean:.2f})")
    proc, url = serve(1.0)
    try:
        slow = fresh(url, args.slow_trials, args.slow_days, f"{tmp}/slow.duckdb")
        single = fresh(url, args.slow_trials, args.slow_days, f"{tmp}/slow1.duckdb",
                       processes=1)
    finally:
        proc.terminate()
    print(f"1 s latency, {args.slow_trials} in flight: {slow['all_in_flight']:.1f} "
          f"exchanges/s while all were in flight ({slow['all_in_flight'] / args.slow_trials:.0%}"
          f" of the ideal {args.slow_trials}/s), {slow['rate']:.1f}/s from the first request "
          f"to the last ({slow['exchanges']} exchanges, {slow['wall']:.1f} s with start-up); "
          f"peak memory of the "
          f"scheduler and its workers together {slow['pss_mb']:.0f} MB PSS "
          f"({slow['rss_mb']:.0f} MB summed RSS) (in one process: "
          f"{single['all_in_flight'] / args.slow_trials:.0%} of the ideal while all were in "
          f"flight, peak {single['pss_mb']:.0f} MB PSS)")


if __name__ == "__main__":
    main()
