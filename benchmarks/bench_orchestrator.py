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

3. Live reads (design §9): the zero-latency run again, with and without two reader
   processes that read it the way `vendbench runs --run latest` does, every 0.5 s,
   through the writing process (interleaved without, with, without, with). The cost to
   write throughput (target: at most 5 % lost), the readers' query time, and the
   staleness of what they saw: how long before the read the newest reply they saw had
   arrived (``--live-only`` runs just this part).
4. A hostile reader (design §13), ``--hostile-only``: the zero-latency run with and
   without one process attacking its file back to back (a four-way cross join, table
   functions, a SELECT of everything), alternating; the run must exit 0 and lose at
   most 5 % of its throughput.

5. An A/B against another commit (design §25.2), ``--against COMMIT [--rounds N]``: the
   commit is checked out in a temporary clone and its ``src/`` run through this very
   harness (same server, same requests, same measurements), alternating rounds in one
   sitting: this tree, the other, bare litellm (the order turned each round). It prints
   both commits' exchanges/s, their ratios to bare litellm and to each other, CPU an
   exchange, the 1 s-latency share of the ideal and peak memory.

Both run with the automatic ``--processes`` (LLM trials in worker processes), and once
more in one process for comparison. Each run also reports the CPU it spent an exchange
(the scheduler and its workers, the workers' start-up included): on a host whose speed
drifts, it moves less than exchanges/s do.

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
    """Peak memory of this process plus its worker processes, sampled every second (a sample walks each process's page tables: every 0.2 s, that took ~15 % of a core away from the run being measured): the
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
        while not self._stop.wait(1.0):
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


def fresh(url: str, trials: int, days: int, db: str, processes: int | None = None,
          src: Path | None = None) -> dict:
    """``ours`` in a fresh interpreter, as ``vendbench run`` would be: its peak memory
    is then that of one run, not of everything this script did before. ``src``: run
    the vendbench of that source tree (another commit's) instead of this one's."""
    spec = json.dumps({"url": url, "trials": trials, "days": days, "db": db,
                       "processes": processes})
    env = {**os.environ, **({"PYTHONPATH": str(src)} if src else {})}
    out = subprocess.run([sys.executable, __file__, "--one", spec], cwd=ROOT, check=True,
                         stdout=subprocess.PIPE, text=True, env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def checkout(commit: str, into: str) -> Path:
    """``commit`` of this repository in a temporary clone; its ``src/``."""
    tree = Path(into) / f"at-{commit}"
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", str(ROOT), str(tree)],
                   check=True)
    subprocess.run(["git", "-C", str(tree), "checkout", "--quiet", commit], check=True)
    return tree / "src"


def against(commit: str, trials: int, days: int, requests: int, rounds: int,
            slow_trials: int, slow_days: int) -> None:
    """This tree against ``commit``, alternating rounds in one sitting (design §25.2)."""
    import statistics

    tmp = tempfile.mkdtemp()
    other = checkout(commit, tmp)
    here = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          check=True, stdout=subprocess.PIPE, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "src"],
                           stdout=subprocess.PIPE, text=True).stdout.strip()
    name = here + ("+changes" if dirty else "")
    runs: dict[str, list[dict]] = {name: [], commit: []}
    bare: list[float] = []
    proc, url = serve(0.0)
    try:
        replay: list[dict] = []
        for r in range(rounds):
            order = [(name, None), (commit, other)]
            order = order if r % 2 == 0 else order[::-1]
            for who, src in order:
                runs[who].append(fresh(url, trials, days, f"{tmp}/{who}-{r}.duckdb",
                                       src=src))
            if not replay:
                replay = logged_requests(f"{tmp}/{name}-0.duckdb", requests)
            bare.append(asyncio.run(bare_litellm(url, trials, replay)))
            print(f"round {r + 1}: " + ", ".join(
                f"{who} {runs[who][-1]['rate']:.1f}/s ({runs[who][-1]['cpu_ms']:.1f} ms CPU)"
                for who in runs) + f", bare litellm {bare[-1]:.1f}/s", flush=True)
    finally:
        proc.terminate()
    slow: dict[str, dict] = {}
    proc, url = serve(1.0)
    try:
        for who, src in ((name, None), (commit, other)):
            slow[who] = fresh(url, slow_trials, slow_days, f"{tmp}/{who}-slow.duckdb",
                              src=src)
    finally:
        proc.terminate()
    base = statistics.median(bare)
    rate = {who: statistics.median(r["rate"] for r in rs) for who, rs in runs.items()}
    oracle = oracle_cpu(trials, days) / runs[name][0]["exchanges"] * 1000
    print(f"zero latency, {trials} in flight, {rounds} alternating rounds; bare litellm "
          f"median {base:.1f} req/s")
    for who, rs in runs.items():
        cpu = sorted(r["cpu_ms"] for r in rs)
        print(f"  {who}: median {rate[who]:.1f} exchanges/s = {rate[who] / base:.2f}x bare "
              f"litellm; CPU an exchange {cpu[0]:.1f}-{cpu[-1]:.1f} ms; 1 s latency, "
              f"{slow_trials} in flight: {slow[who]['all_in_flight'] / slow_trials:.0%} of "
              f"the ideal; peak {slow[who]['pss_mb']:.0f} MB PSS")
    print(f"  {name} / {commit}: {rate[name] / rate[commit]:.2f}x; {name}'s CPU includes "
          f"about {oracle:.1f} ms an exchange for the oracle's scores of its {trials} seeds "
          "(design §18.1: a fixed cost a seed, in a process of its own at the lowest priority)")


def oracle_cpu(trials: int, days: int) -> float:
    """CPU seconds this tree spends on the oracle's scores of a run's seeds (its
    ``ceilings``), measured alone in a fresh process."""
    code = ("import resource, sys; from vendbench.results import ceiling_rows; "
            f"ceiling_rows('autovend', {days}, [(2026, s) for s in range(1, {trials} + 1)], "
            "None); r = resource.getrusage(resource.RUSAGE_SELF); "
            "print(r.ru_utime + r.ru_stime)")
    before = subprocess.run([sys.executable, "-c", "import resource, vendbench.results; "
                             "r = resource.getrusage(resource.RUSAGE_SELF); "
                             "print(r.ru_utime + r.ru_stime)"], check=True,
                            stdout=subprocess.PIPE, text=True).stdout
    after = subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.PIPE,
                           text=True).stdout
    return float(after) - float(before)


READER = """
import json, sys, time
from vendbench.results import Store
db, interval = sys.argv[1], float(sys.argv[2])
stale, rtt, live = [], [], 0
while True:
    try:
        t0 = time.time()
        with Store(db, read_only=True) as store:
            run = store.run("latest")
            trials = store.trials(run["run_id"])
            newest = store.con.execute(
                "SELECT max(epoch(sent_at) + latency_ms / 1000) FROM exchanges").fetchone()[0]
            live += store.live is not None
        rtt.append(time.time() - t0)
        if newest is not None and run["status"] == "running":
            stale.append(t0 - newest)
        if run["status"] != "running":
            break
    except Exception as exc:                    # not created yet, or between runs
        if "no results database" not in str(exc) and "no run" not in str(exc) \
                and "no runs" not in str(exc):
            raise
    time.sleep(interval)
print(json.dumps({"stale": stale, "rtt": rtt, "live": live}))
"""


HOSTILE = """
import os, sys, time
from vendbench.results import _live
db = sys.argv[1]


def ended(self, sql, params):                    # the run is over: so is the attack
    print(asked, refused, flush=True)
    os._exit(0)


_live.LiveConnection._again = ended
attacks = ["SELECT count(*) FROM exchanges a, exchanges b, exchanges c, exchanges d",
           "SELECT count(*) FROM range(1e13)", "SELECT * FROM checkpoint()",
           "SELECT a.* FROM exchanges a, exchanges b", "SELECT * FROM exchanges"]
asked = refused = 0
while True:
    try:
        reader = _live.connect(db)
    except Exception:
        reader = None
    if reader is None:
        if asked:
            break                                # the run has ended
        time.sleep(0.05)
        continue
    for sql in attacks:
        try:
            reader.execute(sql)
        except Exception:
            refused += 1
        asked += 1
    reader.close()
print(asked, refused)
"""


def with_hostile_reader(url: str, trials: int, days: int, db: str) -> dict:
    """``fresh`` with one process attacking the file while the run writes it: back to
    back, a four-way cross join, table functions, a huge SELECT."""
    proc = subprocess.Popen([sys.executable, "-c", HOSTILE, db], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    result = fresh(url, trials, days, db)
    asked, refused = map(int, proc.communicate(timeout=300)[0].split())
    return {**result, "asked": asked, "refused": refused}


def hostile(url: str, trials: int, days: int, tmp: str, pairs: int = 4) -> None:
    """Runs without and with a hostile reader, alternating; the run must finish (exit
    0) and lose at most 5 % of its throughput."""
    import statistics

    plain, read = [], []
    for i in range(pairs):
        plain.append(fresh(url, trials, days, f"{tmp}/calm{i}.duckdb"))
        read.append(with_hostile_reader(url, trials, days, f"{tmp}/hostile{i}.duckdb"))
    base = statistics.median(r["rate"] for r in plain)
    rate = statistics.median(r["rate"] for r in read)
    print(f"a hostile reader, zero latency, {trials} in flight: median {rate:.1f} "
          f"exchanges/s with it vs {base:.1f} without (runs, alternating: "
          f"{', '.join(f'{x:.1f}' for x in (r['rate'] for r in read))} vs "
          f"{', '.join(f'{x:.1f}' for x in (r['rate'] for r in plain))})"
          f": {1 - rate / base:.1%} lost; {sum(r['asked'] for r in read)} attacks, "
          f"{sum(r['refused'] for r in read)} refused or cut")


def with_readers(url: str, trials: int, days: int, db: str, readers: int,
                 interval: float) -> dict:
    """``fresh`` with ``readers`` processes reading the file while the run writes it,
    each every ``interval`` seconds."""
    procs = [subprocess.Popen([sys.executable, "-c", READER, db, str(interval)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True) for _ in range(readers)]
    result = fresh(url, trials, days, db)
    reads = [json.loads(p.communicate(timeout=120)[0]) for p in procs]
    result["stale"] = sorted(x for r in reads for x in r["stale"])
    result["rtt"] = sorted(x for r in reads for x in r["rtt"])
    result["live_reads"] = sum(r["live"] for r in reads)
    return result


def _pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))] if values else float("nan")


SERVE = """
import sys, time
from vendbench.results import Store
store = Store(sys.argv[1])
store.serve_readers({"run_id": "bench"})
store.con.execute("UPDATE trials SET status = 'running'")      # read it as a live run
print("ready", flush=True)
time.sleep(600)
"""


def writer_cpu_per_read(db: str, reads: int = 40) -> tuple[float, float]:
    """What one read costs the writing process, in CPU (its handler thread and DuckDB's
    threads), and the read's wall time, on a copy of a finished run served as if live
    (no other load)."""
    from vendbench.results import Store

    writer = subprocess.Popen([sys.executable, "-c", SERVE, db], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"

        def cpu() -> float:
            fields = Path(f"/proc/{writer.pid}/stat").read_text().split()
            return (int(fields[13]) + int(fields[14])) / os.sysconf("SC_CLK_TCK")

        c0, t0 = cpu(), time.perf_counter()
        for _ in range(reads):
            with Store(db, read_only=True) as store:
                assert store.live is not None
                store.trials(store.run("latest")["run_id"])
                store.con.execute("SELECT max(sent_at) FROM exchanges").fetchone()
        return (cpu() - c0) / reads, (time.perf_counter() - t0) / reads
    finally:
        writer.kill()
        writer.wait()


def live_reads(url: str, trials: int, days: int, tmp: str, pairs: int = 4) -> None:
    """Runs without and with readers, alternating (the machine's speed drifts between
    runs by more than the effect): one reader every 2 s (someone watching with `watch
    -n 2`), ``pairs`` times; then two readers every 0.5 s, twice."""
    import shutil
    import statistics

    for readers, interval, n in ((1, 2.0, pairs), (2, 0.5, 2)):
        plain, read = [], []
        for i in range(n):
            plain.append(fresh(url, trials, days, f"{tmp}/plain{readers}{i}.duckdb"))
            read.append(with_readers(url, trials, days, f"{tmp}/read{readers}{i}.duckdb",
                                     readers, interval))
        base = statistics.median(r["rate"] for r in plain)
        rate = statistics.median(r["rate"] for r in read)
        stale = sorted(x for r in read for x in r["stale"])
        rtt = sorted(x for r in read for x in r["rtt"])
        with_r = ", ".join(f"{r['rate']:.1f}" for r in read)
        without = ", ".join(f"{r['rate']:.1f}" for r in plain)
        print(f"live reads, zero latency, {trials} in flight, {readers} reader(s) every "
              f"{interval:g} s: median {rate:.1f} exchanges/s with readers vs {base:.1f} "
              f"without (runs, alternating: {with_r} vs {without}): {1 - rate / base:.1%} "
              f"lost; {sum(r['live_reads'] for r in read)} reads through the writer; read "
              f"time p50 {_pct(rtt, 0.5) * 1000:.0f} ms, p95 {_pct(rtt, 0.95) * 1000:.0f} ms;"
              f" the newest reply seen had arrived p50 {_pct(stale, 0.5) * 1000:.0f} ms, p95 "
              f"{_pct(stale, 0.95) * 1000:.0f} ms, max {stale[-1] * 1000 if stale else 0:.0f}"
              " ms before the read began")
    copy = f"{tmp}/served.duckdb"
    shutil.copy(f"{tmp}/plain10.duckdb", copy)
    cpu, wall = writer_cpu_per_read(copy)
    print(f"one read of a {trials}-trial live run (the run, its trials with their counts so "
          f"far, the newest exchange) costs the writing process {cpu * 1000:.1f} ms of CPU "
          f"and takes {wall * 1000:.1f} ms, unloaded")


def one(spec: dict) -> None:
    from vendbench.providers._litellm import import_litellm

    import_litellm()
    before = _cpu()
    with TreeMemory() as memory:
        rate, n, wall, full = asyncio.run(ours(spec["url"], spec["trials"], spec["days"],
                                               spec["db"], spec["processes"]))
    print(json.dumps({"rate": rate, "exchanges": n, "wall": wall, "all_in_flight": full,
                      "pss_mb": memory.peak_pss_mb, "rss_mb": memory.peak_rss_mb,
                      "cpu_ms": (_cpu() - before) / n * 1000}))


def _cpu() -> float:
    """CPU seconds of this process and of its children that have ended (the workers:
    they end with the run). On a host whose speed drifts, CPU an exchange moves less
    than exchanges/s."""
    import resource

    return sum(r.ru_utime + r.ru_stime for r in (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=50)
    ap.add_argument("--requests", type=int, default=2000, help="requests replayed bare")
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--slow-trials", type=int, default=100)
    ap.add_argument("--slow-days", type=int, default=15)
    ap.add_argument("--live-only", action="store_true", help="only the live-reads part")
    ap.add_argument("--hostile-only", action="store_true",
                    help="only runs with and without a hostile reader of the file")
    ap.add_argument("--against", metavar="COMMIT",
                    help="A/B this tree against COMMIT, alternating rounds (design §25.2)")
    ap.add_argument("--rounds", type=int, default=3, help="--against: alternating rounds")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(json.loads(args.one))
        return
    if args.against:
        against(args.against, args.trials, args.days, args.requests, args.rounds,
                args.slow_trials, args.slow_days)
        return
    only = hostile if args.hostile_only else live_reads if args.live_only else None
    if only is not None:
        from vendbench.providers._litellm import import_litellm

        import_litellm()
        proc, url = serve(0.0)
        try:
            only(url, args.trials, args.days, tempfile.mkdtemp())
        finally:
            proc.terminate()
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
          f"{first['wall']:.1f} s with start-up; CPU an exchange, scheduler and workers: "
          f"{first['cpu_ms']:.1f} and {second['cpu_ms']:.1f} ms); "
          f"ratio {rate / bare_mean:.2f} "
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
          f"to the last ({slow['exchanges']} exchanges, {slow['wall']:.1f} s with start-up, "
          f"{slow['cpu_ms']:.1f} ms of CPU an exchange); "
          f"peak memory of the "
          f"scheduler and its workers together {slow['pss_mb']:.0f} MB PSS "
          f"({slow['rss_mb']:.0f} MB summed RSS) (in one process: "
          f"{single['all_in_flight'] / args.slow_trials:.0%} of the ideal while all were in "
          f"flight, peak {single['pss_mb']:.0f} MB PSS)")
    proc, url = serve(0.0)
    try:
        live_reads(url, args.trials, args.days, tmp)
    finally:
        proc.terminate()


if __name__ == "__main__":
    main()
