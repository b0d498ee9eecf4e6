"""How fast the transcript viewer opens the biggest trial (design §15).

    python benchmarks/bench_view.py [--days 180] [--keep DIR]

The trial: ``bench_cost``'s replay of a recorded ``baseline/order-up-to`` episode
(seed 1) through the real LLM path, one tool call per request (180 days: ~2,640
requests), against the local test server. Then ``vendbench view`` serves it, and this
times, over HTTP on this machine: the trial page, every day page, a sample of request
windows and a search (medians and the slowest), and reads the server's resident memory
before, after one pass over every day and after a second pass (bounded: the second pass
adds nothing). Targets: the trial page under 1 s, a day under 0.2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def build(days: int, workdir: str) -> tuple[str, str]:
    """The biggest trial: a results file and its trial id."""
    import bench_cost

    episode, _ = bench_cost.record(1, days)
    result = asyncio.run(bench_cost.one("openai", "block", 60_000, days, 1, episode, 1,
                                        workdir))
    db = os.path.join(workdir, "openai-block-60000-1.duckdb")
    from vendbench.results import Store

    with Store(db, read_only=True) as store:
        (trial,) = store.trials(store.run("latest")["run_id"])
    print(f"built: {result.requests:,} requests over {days} days ({result.seconds:.0f} s)",
          flush=True)
    return db, trial["trial_id"]


def rss_mb(pid: int) -> float:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1)) / 1024


def timed(client: httpx.Client, path: str, **params: str) -> float:
    start = time.perf_counter()
    reply = client.get(path, params=params or None)
    seconds = time.perf_counter() - start
    if reply.status_code != 200:
        raise SystemExit(f"{path}: {reply.status_code}")
    return seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--days", type=int, default=180)
    ap.add_argument("--keep", metavar="DIR", help="build the trial here and keep it")
    args = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    workdir = args.keep or tempfile.mkdtemp(prefix="bench-view-")
    os.makedirs(workdir, exist_ok=True)
    db, trial = build(args.days, workdir)
    proc = subprocess.Popen([sys.executable, "-m", "vendbench", "view", "--db", db,
                             "--port", "0"], stderr=subprocess.PIPE, text=True)
    url = re.search(r"(http://[\d.]+:\d+)/", proc.stderr.readline()).group(1)
    try:
        with httpx.Client(base_url=url, timeout=60) as client:
            base = f"/trial/{trial}"
            timed(client, "/index.html")                       # the first open of the file
            before = rss_mb(proc.pid)
            trial_page = [timed(client, f"{base}/index.html") for _ in range(5)]
            days = [timed(client, f"{base}/day-{d}.html") for d in range(1, args.days + 1)]
            after_one = rss_mb(proc.pid)
            again = [timed(client, f"{base}/day-{d}.html") for d in range(1, args.days + 1)]
            after_two = rss_mb(proc.pid)
            windows = [timed(client, f"{base}/window-{s}-1.html")
                       for s in range(1, 2_600, 130)]
            search = [timed(client, f"{base}/search.html", q="restock") for _ in range(3)]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    ms = lambda xs: f"median {statistics.median(xs) * 1000:.0f} ms, slowest {max(xs) * 1000:.0f} ms"  # noqa: E731
    print(f"trial page: {ms(trial_page)} (target < 1 s)")
    print(f"day pages ({args.days}): {ms(days)}; second pass {ms(again)} (target < 0.2 s)")
    print(f"request windows ({len(windows)}): {ms(windows)}")
    print(f"search: {ms(search)}")
    print(f"server memory: {before:.0f} MB before, {after_one:.0f} MB after every day, "
          f"{after_two:.0f} MB after a second pass")


if __name__ == "__main__":
    main()
