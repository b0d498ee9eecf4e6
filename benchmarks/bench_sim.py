"""Simulator speed: simulated days/s and tool calls/s over 180-day reference episodes.

    python benchmarks/bench_sim.py [--days 180] [--seeds 1 2 3] [--json] [--floor]

Everything is measured inside one run, so the figures are comparable as ratios:
the simulator's share of an episode's wall time, and the cost of one simulated day
against one tool call. The collector is settled first (``vendbench._heap.settle``), as
`vendbench baseline` and a run settle it before their episodes; unsettled, one full pass
over the loaded modules lands in each episode (~0.1 s). Not run by CI (figures depend on
the machine).

``--floor`` measures, for ``order-up-to``, what any simulator behind the same 18 tools
must still spend on an episode whatever its business code: validating every call's
arguments with the tools' own pydantic models, building every result the agent reads
(each one unpickled: the same dicts and lists built at C speed, a lower bound for Python
code) and the hidden demand's draws and customer choice (timed inside the episode).
Its business code (moving units, orders, prices, the books, the daily report) comes on
top; the counts of what it handles are printed beside.
"""

from __future__ import annotations

import argparse
import json
import pickle
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


def floor(seed: int, days: int) -> dict:
    """Lower bounds of one ``order-up-to`` episode's simulator time (see ``--floor``)."""
    from vendbench.environment.autovend import _demand, _state
    from vendbench.environment.autovend._tools import TOOLS, _list_adapter

    demand_s = [0.0]
    wrapped = {}

    def timed(owner, name):
        fn = wrapped[(owner, name)] = getattr(owner, name)

        def run(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                demand_s[0] += time.perf_counter() - start
        setattr(owner, name, run)

    for owner, name in ((_demand.Arrivals, "draw"), (_state.demand, "customer_draws"),
                        (_state.demand, "day_sales")):
        timed(owner, name)
    try:
        env = make("autovend", seed=seed, days=days)
        agent = make_policy("order-up-to", env)
        log = []
        sim = 0.0

        def call(name, args=None):
            nonlocal sim
            start = time.perf_counter()
            result = env.call(name, args)
            sim += time.perf_counter() - start
            log.append((name, args, pickle.dumps(result, pickle.HIGHEST_PROTOCOL)))
            return result

        while not env.done:
            start = time.perf_counter()
            report = env.observe()
            sim += time.perf_counter() - start
            agent.play_day(call, report)
    finally:
        for (owner, name), fn in wrapped.items():
            setattr(owner, name, fn)
    start = time.perf_counter()
    for name, args, _ in log:
        tool = TOOLS[name]
        if tool.item is not None:
            _list_adapter(tool.item).validate_python(args["items"])
        else:
            tool.model.model_validate(args or {})
    validate = time.perf_counter() - start
    start = time.perf_counter()
    for *_, blob in log:
        pickle.loads(blob)
    build = time.perf_counter() - start
    items = sum(len(args["items"]) for name, args, _ in log if TOOLS[name].item is not None)
    rows = sum(len(pickle.loads(blob)["listings"]) for name, _, blob in log
               if name == "get_machine_inventory")
    sold = sum(int((day[:, 5] > 0).sum()) for day in env.business.sales)
    return {"seed": seed, "sim_s": sim, "validate_s": validate, "build_results_s": build,
            "demand_s": demand_s[0], "floor_s": validate + build + demand_s[0],
            "tool_calls": len(log), "batch_items": items, "inventory_rows": rows,
            "listing_days_sold": sold}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=180)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--floor", action="store_true",
                    help="lower bounds of an order-up-to episode's simulator time")
    args = ap.parse_args()
    settle()        # as `vendbench baseline` and a run do before their episodes
    if args.floor:
        rows = [floor(s, args.days) for s in args.seeds]
        columns = [("seed", "seed", 4, "d"), ("sim s", "sim_s", 8, ".3f"),
                   ("validate", "validate_s", 10, ".3f"), ("results", "build_results_s", 9, ".3f"),
                   ("demand", "demand_s", 8, ".3f"), ("floor", "floor_s", 7, ".3f"),
                   ("calls", "tool_calls", 7, "d"), ("items", "batch_items", 7, "d"),
                   ("inv rows", "inventory_rows", 9, "d"), ("sold", "listing_days_sold", 7, "d")]
    else:
        rows = [episode(p, s, args.days) for p in ("order-up-to", "oracle") for s in args.seeds]
        columns = [("policy", "policy", -13, "s"), ("seed", "seed", 5, "d"),
                   ("sim s", "sim_s", 8, ".3f"), ("wall s", "wall_s", 8, ".3f"),
                   ("sim share", "sim_share", 10, ".0%"), ("days/s", "days_per_s", 9, ".0f"),
                   ("calls", "tool_calls", 7, "d"), ("calls/s", "tool_calls_per_s", 9, ".0f")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    align = ["<" if width < 0 else ">" for _, _, width, _ in columns]
    print("".join(f"{title:{a}{abs(width)}}" for a, (title, _, width, _) in zip(align, columns)))
    for r in rows:
        print("".join(f"{r[key]:{a}{abs(width)}{fmt}}"
                      for a, (_, key, width, fmt) in zip(align, columns)))
    if not args.floor:
        for key in ("sim_s", "days_per_s", "tool_calls_per_s"):
            print(f"median {key}: {statistics.median(r[key] for r in rows):.3f}")


if __name__ == "__main__":
    main()
