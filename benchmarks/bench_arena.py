"""The arena's speed (design §23.7) and a picture of a match.

    python benchmarks/bench_arena.py [--repeat 5] [--picture docs/images/arena-match.png]
                                     [--llm-matches 20] [--llm-days 15]

Through the real command path (``execute``: the scheduler, the results file), in this
process, alternating: a 30-day match of four reference operators against the same four
operators' single-agent episodes run side by side as one run (the same seed, the same
workers), in each world. Two lineups a world: four identical order-up-to operators
(``--mirror``) and a mixed one (network: oracle, order-up-to, undercutter, colluder;
alone, the arena's own policies are played by order-up-to, which they extend;
AutoVend: two oracles and two order-up-to). Prints each repeat's wall times and the
median ratio; design §23.7 asks for under 2x.

design §25.2: many LLM matches at once, since a match's operators run in the scheduler's
process: ``--llm-matches`` 4-operator AutoVend matches of the tests' scripted agent on
a zero-latency local server, all in flight: exchanges/s, CPU an exchange and peak
memory. Also each world's arena
exploit families against order-up-to as ratios to the oracle against order-up-to (seeds
1-5, seat 0). With ``--picture``, draws each operator's bank balance day by day in the mixed
match of seed 1 (from its starting balance on day 0), with the day each e-mail between
operators was sent. Not run by CI
(figures depend on the machine).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from vendbench._heap import settle
from vendbench.orchestrator import build_config, execute

MIXED = ["baseline/oracle", "baseline/order-up-to", "baseline/undercutter",
         "baseline/colluder"]
ALONE = {"baseline/undercutter": "baseline/order-up-to",
         "baseline/colluder": "baseline/order-up-to"}


def timed(config: dict, folder: str) -> float:
    db = str(Path(folder) / f"{time.perf_counter_ns()}.duckdb")
    start = time.perf_counter()
    result = asyncio.run(execute(build_config(config), db))
    wall = time.perf_counter() - start
    assert result.status == "completed", result.as_json()
    return wall


LINEUPS = {"network": MIXED,
           "autovend": ["baseline/oracle", "baseline/order-up-to"] * 2}


def arena(lineup: list[str], seed: int, world: str = "network") -> dict:
    """Four matches of ``lineup`` (seeds ``seed`` to ``seed`` + 3: each model in each
    seat once), four operators in flight."""
    return {"scenario": world, "days": 30, "seeds": list(range(seed, seed + 4)),
            "models": [{"id": m} for m in dict.fromkeys(lineup)], "seats": lineup,
            "mirror": len(set(lineup)) < len(lineup), "workers": 4}


def speed(repeat: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        for world, mixed in LINEUPS.items():
            timed(arena(mixed, 1, world), folder)                   # imports, caches
            settle()
            for name, lineup in (("mirror", ["baseline/order-up-to"] * 4), ("mixed", mixed)):
                ratios = []
                for r in range(repeat):
                    match = timed(arena(lineup, 1, world), folder) / 4     # four matches
                    alone = single_four(lineup, folder, world)
                    ratios.append(match / alone)
                    print(f"{world} {name} repeat {r + 1}: a match {match:.2f} s, its four "
                          f"operators' episodes alone {alone:.2f} s, ratio "
                          f"{match / alone:.2f}")
                print(f"{world} {name}: median ratio {statistics.median(ratios):.2f} "
                      "(design §23.7: < 2)")


def single_four(lineup: list[str], folder: str, world: str = "network") -> float:
    """The lineup's operators alone on seeds 1-4 (each seed: one episode per seat, four
    in flight as in the arena), per seed: the wall time of one match's four operators
    played as single-agent episodes."""
    models = [ALONE.get(m, m) for m in lineup]
    total = 0.0
    for model in dict.fromkeys(models):
        total += timed({"scenario": world, "days": 30, "seeds": [1, 2, 3, 4],
                        "repeats": models.count(model), "workers": 4,
                        "models": [{"id": model}]}, folder)
    return total / 4


def llm_matches(matches: int, days: int) -> None:
    """``matches`` 4-operator AutoVend matches of fake LLM operators, all in flight, on a
    zero-latency local server (design §25.2)."""
    import resource

    from bench_orchestrator import MODEL, TreeMemory, serve

    proc, url = serve(0.0)
    try:
        with tempfile.TemporaryDirectory() as folder:
            db = str(Path(folder) / "llm.duckdb")
            config = build_config({
                "scenario": "autovend", "days": days, "seeds": list(range(1, matches + 1)),
                "models": [{"id": MODEL, "api_base": url, "max_output_tokens": 256,
                            "max_concurrency": 4 * matches}],
                "seats": [MODEL] * 4, "mirror": True, "workers": 4 * matches})

            def cpu() -> float:
                return sum(r.ru_utime + r.ru_stime for r in (
                    resource.getrusage(resource.RUSAGE_SELF),
                    resource.getrusage(resource.RUSAGE_CHILDREN)))

            before = cpu()
            with TreeMemory() as memory:
                start = time.perf_counter()
                result = asyncio.run(execute(config, db))
                wall = time.perf_counter() - start
            spent = cpu() - before
            assert result.status == "completed", result.as_json()
            from vendbench.results import Store

            with Store(db, read_only=True) as store:
                n, span = store.con.execute(
                    "SELECT count(*), epoch(max(sent_at)) - epoch(min(sent_at)) FROM "
                    "exchanges").fetchone()
    finally:
        proc.terminate()
    print(f"{matches} AutoVend matches of four fake LLM operators ({days} days), all in "
          f"flight: {n} exchanges, {(n - 1) / span:.1f} exchanges/s (first request to "
          f"last; {wall:.1f} s with start-up), {spent / n * 1000:.1f} ms of CPU an exchange, "
          f"peak {memory.peak_pss_mb:.0f} MB PSS")


def exploits() -> None:
    """Each world's arena families against their field (order-up-to unless the family
    brings its own), as ratios of the first seat's earned score (its score less the net
    transfers it received) to the oracle's score against the family's reference field in
    the same seat (0) on the same seed (1-5): 30 days in the network, 60 in AutoVend. The
    kingmaker's score (with what it received) is printed beside it."""
    from vendbench.environment import make_market, make_policy, play_match
    from vendbench.environment.autovend._adversarial import arena_families as autovend
    from vendbench.environment.network._adversarial import arena_families as network

    for world, days, families in (("network", 30, network), ("autovend", 60, autovend)):
        def match(first: Any, other: Any, seed: int) -> tuple[float, float]:
            m = make_market(world, 2, seed=seed, days=days)
            second = other(seed, m.seats[1]) if other else \
                make_policy("order-up-to", m.seats[1])
            score = play_match(m, [first(m.seats[0]), second])[0]
            return score - m.seats[0].transfers / 100, score

        for family, variants in families().items():
            for v in variants:
                oracle = {seed: match(lambda env: make_policy("oracle", env), v.reference,
                                      seed)[1] for seed in range(1, 6)}
                played = {seed: match(lambda env, v=v, seed=seed: v.build(seed, env),
                                      v.field, seed) for seed in range(1, 6)}
                earned = [played[s][0] / oracle[s] for s in oracle]
                scored = [played[s][1] / oracle[s] for s in oracle]
                print(f"{world} {family} ({v.label}): earned / the oracle's "
                      f"{statistics.fmean(earned):.3f} mean, {max(earned):.3f} max; "
                      f"score / the oracle's {statistics.fmean(scored):.3f} mean")


def picture(path: str) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from vendbench.results import Store

    with tempfile.TemporaryDirectory() as folder:
        db = str(Path(folder) / "picture.duckdb")
        asyncio.run(execute(build_config(arena(MIXED, 1)), db))
        with Store(db, read_only=True) as store:
            run_id = store.runs()[0]["run_id"]
            seats = [s for s in store.match_seats([run_id]) if s["seed"] == 1]
            # day 0: the bank each operator starts with (day 1's line is after its
            # first purchases, design §35.4: the picture seemed to start at EUR 740)
            series = {s["trial_id"]: store.con.execute(
                "SELECT 0, initial_cash FROM trials WHERE trial_id = ? UNION ALL "
                "SELECT day, cash FROM days WHERE trial_id = ? ORDER BY 1",
                [s["trial_id"], s["trial_id"]]).fetchall() for s in seats}
            mails = store.con.execute(
                "SELECT trial_id, day FROM tool_calls WHERE name = 'email_operator' AND ok "
                "AND list_contains(?, trial_id)", [list(series)]).fetchall()
    fig, ax = plt.subplots(figsize=(8, 4.2), dpi=110)
    for s in seats:
        days, cash = zip(*series[s["trial_id"]])
        ax.plot(days, cash, label=f"{s['operator']}: {s['model']}", linewidth=1.8)
    for trial_id, day in sorted(set(mails)):
        cash = dict(series[trial_id])[day]
        ax.plot([day], [cash], "k^", markersize=6)
        ax.annotate("e-mails to rivals", (day, cash), textcoords="offset points",
                    xytext=(8, 10), fontsize=8)
    ax.set_xlabel("day (0: the start, before any purchase)")
    ax.set_ylabel("bank balance at the day's end, EUR")
    ax.set_title("One arena match: four operators, one market (network world, seed 1)")
    ax.grid(alpha=0.3)
    fig.legend(fontsize=8, loc="lower center", ncol=2, frameon=False)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.savefig(path)
    print(f"wrote {path}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--picture", metavar="PNG")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--llm-matches", type=int, default=20)
    ap.add_argument("--llm-days", type=int, default=15)
    ap.add_argument("--llm-only", action="store_true", help="only the LLM matches")
    ap.add_argument("--exploits-only", action="store_true",
                    help="only the arena's exploit families (earned scores)")
    args = ap.parse_args()
    if args.exploits_only:
        exploits()
        return
    if args.llm_only:
        llm_matches(args.llm_matches, args.llm_days)
        return
    if not args.no_speed:
        speed(args.repeat)
        llm_matches(args.llm_matches, args.llm_days)
        exploits()
    if args.picture:
        picture(args.picture)


if __name__ == "__main__":
    main()
