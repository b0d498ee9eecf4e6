"""Simulator speed: simulated days/s and tool calls/s over 180-day reference episodes.

    python benchmarks/bench_sim.py [--days 180] [--seeds 1 2 3] [--json]

Everything is measured inside one run, so the figures are comparable as ratios:
the simulator's share of an episode's wall time, and the cost of one simulated day
against one tool call. The collector is settled first (``vendbench._heap.settle``), as
`vendbench baseline` and a run settle it before their episodes; unsettled, one full pass
over the loaded modules lands in each episode (~0.1 s). Not run by CI (figures depend on
the machine).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict

from vendbench._heap import settle
from vendbench.environment import make
from vendbench.environment import make_policy


def episode(policy: str, seed: int, days: int) -> dict:
    env = make("autovend", seed=seed, days=days)
    agent = make_policy(policy, env)
    spent: dict[str, float] = defaultdict(float)
    count: dict[str, int] = defaultdict(int)

    def call(name, args=None):
        start = time.perf_counter()
        try:
            return env.call(name, args)
        finally:
            spent[name] += time.perf_counter() - start
            count[name] += 1

    wall = time.perf_counter()
    while not env.done:
        start = time.perf_counter()
        report = env.observe()
        spent["observe"] += time.perf_counter() - start
        agent.play_day(call, report)
    wall = time.perf_counter() - wall
    sim = sum(spent.values())
    day_cycle = spent["end_day"] + spent["observe"]
    tools = sim - day_cycle
    calls = sum(n for name, n in count.items() if name != "end_day")
    return {"policy": policy, "seed": seed, "days": days, "wall_s": wall, "sim_s": sim,
            "sim_share": sim / wall, "day_cycle_s": day_cycle, "days_per_s": days / day_cycle,
            "tool_calls": calls, "tool_calls_per_s": calls / tools,
            "net_assets": env.summary()["net_assets"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=180)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    settle()        # as `vendbench baseline` and a run do before their episodes
    rows = [episode(p, s, args.days) for p in ("order-up-to", "oracle") for s in args.seeds]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"{'policy':<13}{'seed':>5}{'sim s':>8}{'wall s':>8}{'sim share':>10}"
          f"{'days/s':>9}{'calls':>7}{'calls/s':>9}")
    for r in rows:
        print(f"{r['policy']:<13}{r['seed']:>5}{r['sim_s']:>8.3f}{r['wall_s']:>8.3f}"
              f"{r['sim_share']:>10.0%}{r['days_per_s']:>9.0f}{r['tool_calls']:>7}"
              f"{r['tool_calls_per_s']:>9.0f}")
    for key in ("sim_s", "days_per_s", "tool_calls_per_s"):
        print(f"median {key}: {statistics.median(r[key] for r in rows):.3f}")


if __name__ == "__main__":
    main()
