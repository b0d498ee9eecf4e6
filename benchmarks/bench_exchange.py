"""What one exchange costs in CPU: vendbench's trial loop against bare litellm.

    python benchmarks/bench_exchange.py [--trials 20] [--days 5] [--rounds 3]

Wall-clock throughput (``bench_orchestrator.py``) moves with whatever else the machine
does; CPU time per exchange moves much less. Both sides run in this one process against
the tests' zero-latency server (in its own process): vendbench's run with one process
(context, tools, simulator, budgets, DuckDB logging all on), then bare
``litellm.acompletion`` replaying the very requests vendbench sent, from as many
concurrent loops, alternating, ``--rounds`` times. Each side's CPU time (all threads of
this process, ``time.process_time``) is divided by its exchanges; the difference is what
vendbench does per exchange that bare litellm does not.

A last round of each side runs under cProfile on the event loop thread's CPU clock, to
split that difference by where the time went (the simulator, the context and token
counts, the results log, the budgets, litellm and its HTTP client, asyncio); the
profiled split is scaled to that thread's unprofiled CPU, and the other threads' CPU
(the results writer's commits, litellm's callbacks) is shown as measured. Not run by CI: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_orchestrator import MODEL, bare_litellm, logged_requests, serve  # noqa: E402

# where a function's own time is counted, by the first pattern its file matches
PARTS = (
    ("simulator", ("/vendbench/environment/",)),
    ("context and token counts", ("/vendbench/orchestrator/_context", "/tiktoken",
                                  "/vendbench/providers/_tokens")),
    ("results log (our side) and DuckDB", ("/vendbench/results/", "duckdb")),
    ("budgets and prices", ("/vendbench/budgets/",)),
    ("the rest of vendbench", ("/vendbench/",)),
    ("litellm", ("/litellm/",)),
    ("HTTP client (httpx, openai, aiohttp)", ("/httpx/", "/httpcore/", "/openai/",
                                              "/aiohttp/", "/anyio/", "/h11/")),
    ("pydantic", ("/pydantic",)),
    ("json", ("json",)),
    ("asyncio and sockets", ("asyncio", "selectors", "socket", "ssl")),
)


def part_of(filename: str) -> str:
    for name, patterns in PARTS:
        if any(p in filename for p in patterns):
            return name
    return "other (builtins, stdlib)"


def split(profile: cProfile.Profile) -> tuple[dict[str, float], dict[str, float]]:
    """Own time of every function, summed by part, and by function."""
    parts: dict[str, float] = defaultdict(float)
    functions: dict[str, float] = {}
    for (filename, line, name), (_, _, tottime, _, _) in pstats.Stats(profile).stats.items():
        parts[part_of(filename)] += tottime
        where = filename.split("site-packages/")[-1].split("/src/")[-1]
        functions[f"{where}:{line}({name})"] = tottime
    return parts, functions


async def ours(url: str, trials: int, days: int, db: str) -> int:
    from vendbench.orchestrator import build_config, execute
    from vendbench.results import Store

    config = build_config({
        "days": days, "seeds": list(range(1, trials + 1)), "workers": trials,
        "processes": 1,
        "models": [{"id": MODEL, "api_base": url, "max_output_tokens": 256,
                    "max_concurrency": trials, "max_context_tokens": 30_000}]})
    await execute(config, db)
    with Store(db, read_only=True) as store:
        return store.con.execute("SELECT count(*) FROM exchanges").fetchone()[0]


def measured(run, profile: cProfile.Profile | None = None
             ) -> tuple[float, float, float, int]:
    """(CPU seconds of all threads, of this thread, wall seconds, exchanges) of ``run()``."""
    cpu, mine, wall = time.process_time(), time.thread_time(), time.perf_counter()
    if profile is not None:
        profile.enable()
    n = run()
    if profile is not None:
        profile.disable()
    return (time.process_time() - cpu, time.thread_time() - mine,
            time.perf_counter() - wall, n)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--days", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--top", type=int, default=12,
                    help="list the functions that cost most more per exchange than bare")
    args = ap.parse_args()
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
    from vendbench.providers._litellm import import_litellm

    import_litellm()                              # paid once, outside every timing
    tmp = tempfile.mkdtemp()
    proc, url = serve(0.0)
    count = iter(range(10**6))
    try:
        def run_ours() -> int:
            return asyncio.run(ours(url, args.trials, args.days, f"{tmp}/{next(count)}.duckdb"))

        run_ours()                                # warm-up: caches, the price map
        replay = logged_requests(f"{tmp}/0.duckdb", 100_000)

        def run_bare() -> int:
            asyncio.run(bare_litellm(url, args.trials, replay))
            return len(replay)

        run_bare()
        per = {"ours": [], "bare": []}
        for _ in range(args.rounds):
            for side, run in (("ours", run_ours), ("bare", run_bare)):
                cpu, mine, wall, n = measured(run)
                per[side].append((cpu / n * 1e6, n / wall, mine / n * 1e6))
        profiles = {}
        for side, run in (("ours", run_ours), ("bare", run_bare)):
            profile = cProfile.Profile(time.thread_time)    # this thread's CPU, not waits
            measured(run, profile)
            profiles[side] = split(profile)
    finally:
        proc.terminate()
    us = {side: statistics.median(r[0] for r in rows) for side, rows in per.items()}
    main_us = {side: statistics.median(r[2] for r in rows) for side, rows in per.items()}
    print(f"{args.trials} trials of {args.days} days, one process, zero latency; "
          f"median of {args.rounds} alternating rounds")
    for side in ("ours", "bare"):
        rows = per[side]
        print(f"  {side:5s} {us[side]:7.0f} µs of CPU an exchange (rounds: "
              + ", ".join(f"{r[0]:.0f}" for r in rows) + "); "
              + ", ".join(f"{r[1]:.0f}" for r in rows) + " exchanges/s")
    print(f"  difference: {us['ours'] - us['bare']:.0f} µs an exchange "
          f"({us['ours'] / us['bare']:.2f}x)")
    print("where the CPU goes, µs an exchange (the event loop's thread split by a "
          "profiled round, scaled to its unprofiled CPU; other threads as measured):")
    shares, functions = {}, {}
    for side, (parts, funcs) in profiles.items():
        total = sum(parts.values())
        shares[side] = {p: v / total * main_us[side] for p, v in parts.items()}
        functions[side] = {f: v / total * main_us[side] for f, v in funcs.items()}
        shares[side]["other threads (results commits, litellm's callbacks)"] = \
            us[side] - main_us[side]
    names = sorted(set(shares["ours"]) | set(shares["bare"]),
                   key=lambda p: -(shares["ours"].get(p, 0) - shares["bare"].get(p, 0)))
    print(f"  {'part':40s}{'ours':>8s}{'bare':>8s}{'extra':>8s}")
    for p in names:
        a, b = shares["ours"].get(p, 0.0), shares["bare"].get(p, 0.0)
        print(f"  {p:40s}{a:8.0f}{b:8.0f}{a - b:8.0f}")
    extra = sorted(((v - functions["bare"].get(f, 0.0), f) for f, v in functions["ours"].items()),
                   reverse=True)[:args.top]
    print("the event loop thread's functions that cost most more than bare, µs an exchange:")
    for us_more, f in extra:
        print(f"  {us_more:7.0f}  {f}")


if __name__ == "__main__":
    main()
