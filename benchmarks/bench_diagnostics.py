"""The diagnostics of design §32.1 on the reference policies (docs/metrics.md's table):
a 180-day AutoVend panel (order-up-to, the oracle, doing nothing; seeds 1-5) and a
30-day network panel, each trial diagnosed from the results file with its world
replayed. Prints each model's means (with their spread over seeds) and failure modes
per trial, and the time each trial's diagnostics took (median and most; the target is
under 2 s for a 180-day trial).

    python benchmarks/bench_diagnostics.py            # both worlds, seeds 1-5
    python benchmarks/bench_diagnostics.py --seeds 3 --scenario autovend
"""

from __future__ import annotations

import argparse
import contextlib
import io
import statistics
import tempfile
import time
from pathlib import Path

from vendbench.cli import main as cli
from vendbench.environment import diagnose, diagnostics, failure_modes, record_tables
from vendbench.results import Store

PANELS = {"autovend": 180, "network": 30}
MODELS = ["baseline/order-up-to", "baseline/oracle", "baseline/idle"]


def panel(scenario: str, days: int, seeds: int, folder: Path) -> None:
    db = str(folder / f"{scenario}.duckdb")
    with contextlib.redirect_stdout(io.StringIO()):       # the run's own JSON
        assert cli(["run", "--scenario", scenario, "--models", *MODELS, "--days",
                    str(days), "--seeds", *map(str, range(1, seeds + 1)), "--db", db,
                    "--json"]) == 0
    times: list[float] = []
    by_model: dict[str, list] = {}
    with Store(db, read_only=True) as store:
        for t in store.trials(store.run("latest")["run_id"]):
            records = store.trial_records(t["trial_id"], record_tables(scenario))
            calls = store.trial_calls(t["trial_id"])
            start = time.perf_counter()
            found = diagnose(scenario, records, calls, seed=t["seed"],
                             world_seed=t["world_seed"], days=days,
                             initial=float(t["initial_cash"]))
            times.append(time.perf_counter() - start)
            by_model.setdefault(t["model"], []).append(found)
    print(f"\n{scenario}, {days} days, seeds 1-{seeds}: diagnostics took median "
          f"{statistics.median(times):.2f} s a trial, at most {max(times):.2f} s "
          "(the first trial pays scipy's import)")
    declared, modes = diagnostics(scenario), failure_modes(scenario)
    for model, found in by_model.items():
        print(f"  {model}")
        for x in declared:
            values = [f.values[x.name] for f in found if f.values.get(x.name) is not None]
            if values:
                lo, hi = min(values), max(values)
                print(f"    {x.name}: mean {statistics.fmean(values) * x.scale:,.{x.decimals}f}"
                      f" (seeds {lo * x.scale:,.{x.decimals}f} to {hi * x.scale:,.{x.decimals}f}) "
                      f"{'%' if x.scale == 100 else x.unit}")
            else:
                print(f"    {x.name}: undefined")
        for m in modes:
            counts = [f.counts([m.kind])[m.kind] for f in found]
            print(f"    {m.kind}: {statistics.fmean(counts):.1f} a trial "
                  f"(seeds {min(counts)} to {max(counts)})")


def run() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--scenario", choices=sorted(PANELS))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for scenario, days in PANELS.items():
            if args.scenario in (None, scenario):
                panel(scenario, days, args.seeds, Path(tmp))


if __name__ == "__main__":
    run()
