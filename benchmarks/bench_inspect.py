"""A trial through Inspect AI against vendbench's own runner (design §22), on the same
local server.

    python benchmarks/bench_inspect.py [--days 30] [--repeats 3] [--latency 0]

One AutoVend trial of the fake model (the tests' scripted vending agent), run by each
harness from its own command line, alternating vendbench, Inspect, vendbench, Inspect:
``vendbench run`` and ``inspect eval vendbench/autovend`` (Inspect's openai provider on
the chat completions API, its ReAct agent). For each: the command's wall time (process
start, imports and logging included: what a user waits for) and the trial's own time
(vendbench's trial row, Inspect's sample ``total_time``), the requests served, and the
score (they must agree: the same calls in the same world). Prints medians and the ratios
Inspect / vendbench taken in the same sitting. Not run by CI: the figures depend on the
machine.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_orchestrator import serve      # the fake server in its own process

ROOT = Path(__file__).resolve().parent.parent


def ours(url: str, days: int, work: Path) -> dict:
    db = work / f"ours-{time.monotonic_ns()}.duckdb"
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "vendbench", "run", "--models",
                          "openai/fake-model", "--api-base", url, "--price",
                          "openai/fake-model=0.4,1.6", "--days", str(days), "--seeds", "1",
                          "--db", str(db), "--json"], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    wall = time.perf_counter() - start
    (trial,) = json.loads(out.stdout)["trials"]
    from vendbench.results import Store

    with Store(str(db), read_only=True) as store:
        (seconds,) = store.con.execute("SELECT wall_seconds FROM trials").fetchone()
    return {"wall": wall, "trial": seconds, "score": trial["score"],
            "requests": trial["exchanges"], "status": trial["status"]}


def theirs(url: str, days: int, work: Path) -> dict:
    logs = work / f"inspect-{time.monotonic_ns()}"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "vendbench/autovend",
                    "--model", "openai/fake-model", "--model-base-url", url, "-M",
                    "responses_api=false", "-T", f"days={days}", "--log-dir", str(logs),
                    "--display", "none"], cwd=ROOT, capture_output=True, text=True,
                   check=True, env={**os.environ, "OPENAI_API_KEY": "sk-bench"})
    wall = time.perf_counter() - start
    from inspect_ai.log import read_eval_log

    (path,) = glob.glob(str(logs / "*.eval"))
    sample = read_eval_log(path).samples[0]
    score = sample.scores["world_score"]
    requests = sum(e.event == "model" for e in sample.events)
    return {"wall": wall, "trial": sample.total_time, "score": score.value,
            "requests": requests, "status": score.answer}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--latency", type=float, default=0.0)
    args = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    proc, url = serve(args.latency)
    runs: dict[str, list[dict]] = {"vendbench": [], "inspect": []}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for _ in range(args.repeats):
                runs["vendbench"].append(ours(url, args.days, Path(tmp)))
                runs["inspect"].append(theirs(url, args.days, Path(tmp)))
    finally:
        proc.terminate()
    med = {h: {k: statistics.median(r[k] for r in rs) for k in ("wall", "trial")}
           for h, rs in runs.items()}
    for h, rs in runs.items():
        print(f"{h:9}: command {med[h]['wall']:.2f} s, trial {med[h]['trial']:.2f} s "
              f"(medians of {len(rs)}), {rs[0]['requests']} requests, "
              f"{rs[0]['status']}, score {rs[0]['score']:,.2f}")
    print(f"Inspect / vendbench: command {med['inspect']['wall'] / med['vendbench']['wall']:.2f}x,"
          f" trial {med['inspect']['trial'] / med['vendbench']['trial']:.2f}x "
          f"({args.days} days, server latency {args.latency:g} s)")
    scores = {r["score"] for rs in runs.values() for r in rs}
    print("same score in every run" if len(scores) == 1 else f"scores differ: {scores}")
    print(json.dumps({"days": args.days, "latency": args.latency, "runs": runs}))


if __name__ == "__main__":
    main()
