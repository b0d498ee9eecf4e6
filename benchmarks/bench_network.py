"""The network scenario's speed: a scripted 30-day (and 365-day) episode.

    python benchmarks/bench_network.py [--seeds 1 2 3 4 5] [--repeat 5]

Each reference policy plays each seed ``--repeat`` times in this process (after a
warm-up episode); the best wall time per seed is kept, and the simulator's share
(time inside ``env.call``) is printed beside it. Prosus reports 0.07 s for its 30-day
scripted episode. The collector is settled after the warm-up (``vendbench._heap``), as
`vendbench baseline` and a run settle it. Not run by CI (figures depend on the machine).
"""

from __future__ import annotations

import argparse
import statistics
import time

from vendbench._heap import settle
from vendbench.environment import make
from vendbench.environment import make_policy, run_policy


def episode(policy: str, seed: int, days: int) -> tuple[float, float, int, float]:
    """Wall time, simulator time, tool calls and score of one episode."""
    env = make("network", seed=seed, days=days)
    agent = make_policy(policy, env)
    wall = time.perf_counter()
    summary = run_policy(env, agent)
    return (time.perf_counter() - wall, summary["sim_seconds"], summary["tool_calls"],
            env.score())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    episode("oracle", 1, 30)                                     # imports, caches
    settle()                    # as `vendbench baseline` and a run do before their episodes
    for days in (30, 365):
        for policy in ("oracle", "order-up-to"):
            runs = [min((episode(policy, s, days) for _ in range(args.repeat)),
                        key=lambda r: r[0]) for s in args.seeds]
            walls = [r[0] for r in runs]
            print(f"{days} days, {policy}: wall {statistics.median(walls):.3f} s median "
                  f"(seeds {', '.join(f'{w:.3f}' for w in walls)}), simulator "
                  f"{statistics.median(r[1] for r in runs):.3f} s, "
                  f"{statistics.median(r[2] for r in runs):.0f} tool calls, final bank balance "
                  f"{statistics.fmean(r[3] for r in runs):,.2f} EUR mean")


if __name__ == "__main__":
    main()
