"""A year of nightly panels published as a site (design §33.2).

    python benchmarks/bench_site.py [--nights 365] [--models 10] [--seeds 5] [--days 30]

The panel: a results file a night, each one run of ``--models`` priced LLM models ×
``--seeds`` seeds of AutoVend at ``--days`` days (trials, their days, two exchanges a
day with tokens and costs, the oracle's and doing nothing's kept scores), built once
through ``Store`` and copied night by night with new run and trial ids, dates and
scores (no LLM is run: this measures the site, not the panel). Then ``vendbench site``'s
code in a child process: its wall time, its peak memory (the child's max RSS, and its
largest worker's: the workers run one a core), the size of what it wrote; then one more night and a rebuild: its time and how many files
it rewrote. The newest night's diagnostics replay its trials, which here hold no calls:
a real panel's adds about 0.8 s a 180-day trial (bench_diagnostics.py).
Not run by CI (tests/site builds a real small panel).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from vendbench.environment import record_tables  # noqa: E402
from vendbench.results import CeilingRow, FloorRow, Store  # noqa: E402

T0 = dt.datetime(2026, 1, 1, 2, 0)
INITIAL = 40_000.0


def template(path: Path, models: int, seeds: int, days: int) -> None:
    """One night: its run, trials, days, exchanges and the kept anchors."""
    rng = random.Random(0)
    names = [f"openai/model-{i:02d}" for i in range(models)]
    prices = {m: {"input_usd_per_mtok": 0.1 * (i + 1), "output_usd_per_mtok": 0.4 * (i + 1)}
              for i, m in enumerate(names)}
    with Store(path) as store:
        store.ensure_records(record_tables("autovend"))
        store.con.execute(
            "INSERT INTO runs (run_id, name, created_at, scenario, days, config_json, "
            "code_version, prompt_sha256, tools_sha256, prices_json, status, world_seeds) "
            "VALUES ('night', 'nightly', ?, 'autovend', ?, ?, 'bench', 'p', 't', ?, "
            "'completed', '[2026]')",
            [T0, days, json.dumps({"models": [{"id": m} for m in names],
                                   "seeds": list(range(1, seeds + 1))}), json.dumps(prices)])
        idle = INITIAL - days * 160
        for seed in range(1, seeds + 1):
            store.write(CeilingRow("autovend", 2026, seed, "", days, "baseline/oracle",
                                   INITIAL + 150 * days, T0))
            store.write(FloorRow("autovend", 2026, seed, "", days, "baseline/idle", idle, T0))
        trials, day_rows, exchanges = [], [], []
        for i, model in enumerate(names):
            for seed in range(1, seeds + 1):
                tid = f"night-{model}-s{seed}"
                gain = (i - 3) * 20 * days + rng.gauss(0, 15 * days)
                status = "completed" if rng.random() > 0.05 else "budget_exhausted"
                final = INITIAL + gain if status == "completed" else 0.0
                cost = Decimal(str(round(0.002 * (i + 1) * days * rng.uniform(0.9, 1.1), 6)))
                trials.append((tid, "night", model, seed, 1, 1, status, INITIAL, final, final,
                               final, cost, Decimal(5), 60_000 * days, 800 * days,
                               40_000 * days, days, 2 * days, 3 * days, T0, 2026))
                for d in range(1, days + 1):
                    value = INITIAL + gain * d / days + rng.gauss(0, 50)
                    day_rows.append((tid, d, value - 500, value, 300.0, 180.0, 200.0,
                                     160.0, 0.0, 0.0, 2.0, 60, 0, 0, 0.0))
                    for k in (1, 2):
                        exchanges.append((tid, 2 * d + k - 2, d, 1, model, 30_000, 400,
                                          20_000, cost / (2 * days)))
        store.con.executemany(
            'INSERT INTO trials (trial_id, run_id, model, seed, "repeat", attempt, status, '
            "initial_cash, final_cash, final_net_assets, score, cost_usd, budget_usd, "
            "input_tokens, output_tokens, cache_read_tokens, days_completed, exchanges, "
            "tool_calls, started_at, world_seed) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", trials)
        store.con.executemany(
            "INSERT INTO days (trial_id, day, cash, net_assets, revenue, cogs, purchases, "
            "fees, visit_fees, fines, waste_cost, units_sold, expired_units_sold, "
            "machines_visited, transfers) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            day_rows)
        store.con.executemany(
            "INSERT INTO exchanges (trial_id, seq, day, attempt, model, input_tokens, "
            "output_tokens, cache_read_tokens, cost_usd, status, request_json, purpose) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'ok', '{}', 'agent')", exchanges)


def night(template_path: Path, folder: Path, n: int) -> Path:
    """Night ``n``: the template with its own ids, date and scores."""
    import duckdb

    path = folder / f"night-{n:03d}.duckdb"
    shutil.copyfile(template_path, path)
    run = f"run-{n:03d}"
    con = duckdb.connect(str(path))
    con.execute("UPDATE runs SET run_id = ?, created_at = ?", [run, T0 + dt.timedelta(days=n)])
    for table in ("days", "exchanges"):
        con.execute(f"UPDATE {table} SET trial_id = replace(trial_id, 'night-', ?)",
                    [f"{run}-"])
    con.execute("UPDATE trials SET run_id = ?, trial_id = replace(trial_id, 'night-', ?), "
                "score = CASE WHEN status = 'completed' THEN score + "
                "(hash(trial_id || ?) % 600) - 300 ELSE score END",
                [run, f"{run}-", str(n)])
    con.execute("UPDATE trials SET final_net_assets = score, final_cash = score")
    con.close()
    return path


BUILD = """
import json, resource, sys, time
sys.path.insert(0, {src!r})
from vendbench.site import build_site
files = json.load(open({files!r}))
start = time.perf_counter()
built = build_site({out!r}, files)
print(json.dumps({{"seconds": time.perf_counter() - start, "pages": built.pages,
                  "files": built.files, "written": built.written,
                  "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "worker_rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}}))
"""


def build(files: list[Path], out: Path, work: Path) -> dict:
    listing = work / "files.json"
    listing.write_text(json.dumps([str(f) for f in files]))
    code = BUILD.format(src=str(ROOT / "src"), files=str(listing), out=str(out))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"the build failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def size_mb(folder: Path) -> float:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) / 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nights", type=int, default=365)
    ap.add_argument("--models", type=int, default=10)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--days", type=int, default=30)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        start = time.perf_counter()
        template(work / "template.duckdb", args.models, args.seeds, args.days)
        files = [night(work / "template.duckdb", work, n) for n in range(1, args.nights + 1)]
        made = time.perf_counter() - start
        print(f"{args.nights} nights × {args.models} models × {args.seeds} seeds "
              f"({args.days} days): {size_mb(work):,.0f} MB of results made in {made:.0f} s")
        out = work / "public"
        first = build(files, out, work)
        print(f"site: {first['pages']:,} pages, {first['files']:,} files, "
              f"{size_mb(out):,.0f} MB (of which the cache "
              f"{size_mb(out / '.vendbench-site'):,.0f} MB) in {first['seconds']:.1f} s; "
              f"peak memory {first['max_rss_mb']:,.0f} MB, the largest worker "
              f"{first['worker_rss_mb']:,.0f} MB ({os.cpu_count()} at once: at most "
              f"{first['max_rss_mb'] + (os.cpu_count() or 1) * first['worker_rss_mb']:,.0f}"
              " MB together)")
        more = [*files, night(work / "template.duckdb", work, args.nights + 1)]
        again = build(more, out, work)
        print(f"one more night: {again['written']:,} of {again['files']:,} files rewritten "
              f"in {again['seconds']:.1f} s, peak memory {again['max_rss_mb']:,.0f} MB")
        print(f"this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f}"
              " MB")


if __name__ == "__main__":
    main()
