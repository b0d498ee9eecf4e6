"""Reading the results files for the site (design §33.2): what the site needs of each
file, JSON-ready, kept in the site's cache while the file is unchanged (its path, size
and time), with the file's trials and exchanges as Parquet parts; files not yet read are
read by worker processes, one a core."""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, fields
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..leaderboard import Filters, Night, arena_seats, run_cohorts, run_nights
from ..results import PairKey, Store, comparison_ids, export_part

@dataclass(frozen=True)
class Source:
    """A results file, and the short name its pages use."""

    path: str
    key: str


PARALLEL_FROM = 4            # fewer files to read are read here: a worker costs a second


def plain(value: Any) -> Any:
    """JSON-ready: non-finite floats as null, decimals as floats, dates and the rest as
    text (``str``: the same whether read now or from the cache)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Decimal):
        return plain(float(value))
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


def fingerprint(path: str) -> str:
    """What changes when a results file does: its place, size and time (and its
    write-ahead log's)."""
    st = os.stat(path)
    wal = Path(path + ".wal")
    extra = f"{wal.stat().st_size}:{wal.stat().st_mtime_ns}" if wal.exists() else ""
    key = f"{Path(path).resolve()}:{st.st_size}:{st.st_mtime_ns}:{extra}"
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def kept(path: Path) -> Any:
    """What an earlier build kept at ``path`` as JSON, or None (nothing there, or not
    readable: then it is made again)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _night_json(n: Night) -> dict[str, Any]:
    return {**plain(n.as_json()), "shares": [[k.world_seed, k.seed, k.repeat, v]
                                             for k, v in n.shares.items()],
            "bounds": list(n.bounds)}


def _night(data: dict[str, Any]) -> Night:
    """A ``Night`` again from ``_night_json``."""
    plain_fields = {f.name: data[f.name] for f in fields(Night)
                    if f.name not in ("ci_oracle_share", "shares", "bounds")}
    ci = data["ci_oracle_share"]
    return Night(**plain_fields, ci_oracle_share=tuple(ci) if ci else None,
                 shares={PairKey(w, s, r): v for w, s, r, v in data["shares"]},
                 bounds=(data["bounds"][0], data["bounds"][1]))


def parts(cache: Path, src: Source) -> tuple[Path, Path]:
    """Where the file's trials and exchanges are kept as Parquet."""
    stem = f"{src.key}-{fingerprint(src.path)}"
    return cache / f"{stem}-trials.parquet", cache / f"{stem}-exchanges.parquet"


def read_file(src: Source, cache: Path | None = None) -> dict[str, Any]:
    """What the site needs of one file, JSON-ready (so it can be kept while the file
    does not change): its runs with their trials, each ranked run's nights, whether it
    has comparisons, its arena runs; with ``cache``, its Parquet parts written there and
    all of it kept."""
    out: dict[str, Any] = {"runs": [], "nights": []}
    with Store(src.path, read_only=True) as store:
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
            export_part(store, src.key, *parts(cache, src))
        summaries = store.runs()
        ranked = [r for r in summaries if Filters().admits(r)]
        keys = run_cohorts(store, ranked) if ranked else {}
        started = set()
        for r in summaries:
            kind = "arena" if arena_seats(r) else "compare" if r.get("comparison") \
                else "ranked"
            trials = store.trials(r["run_id"])
            if trials:
                started.add(r["run_id"])
            out["runs"].append(plain({"summary": r, "info": store.run(r["run_id"]),
                                      "trials": trials, "kind": kind,
                                      "warnings": store.warnings(r["run_id"])}))
        for r in ranked:
            if r["run_id"] not in started:
                continue                          # a run with no trial yet: no night
            out["nights"].append({
                "key": plain(keys[r["run_id"]]), "run_id": r["run_id"], "name": r["name"],
                "date": str(r["created_at"])[:16], "created_at": str(r["created_at"]),
                "status": r["status"],
                "models": [_night_json(n) for n in run_nights(store, r)]})
        out["comparisons"] = bool(comparison_ids(store))
        out["arenas"] = [r["run_id"] for r in summaries if arena_seats(r)]
    return out


def _keep(cache: Path, src: Source, data: dict[str, Any]) -> None:
    path = cache / f"{src.key}-{fingerprint(src.path)}.json"
    keep = {path.name, *(p.name for p in parts(cache, src))}
    for old in cache.glob(f"{src.key}-*"):
        if old.name not in keep:
            old.unlink()
    path.write_text(json.dumps(data))


def _kept(cache: Path, src: Source) -> dict[str, Any] | None:
    if not all(p.is_file() for p in parts(cache, src)):
        return None
    data: dict[str, Any] | None = kept(cache / f"{src.key}-{fingerprint(src.path)}.json")
    return data


def _read_and_keep(src: Source, cache: Path) -> dict[str, Any]:
    data = read_file(src, cache)
    _keep(cache, src, data)
    return data


def read_all(files: Sequence[Source], cache: Path | None,
             say: Callable[[str], None]) -> dict[str, dict[str, Any]]:
    """Each file's data by its key: kept, or read now (by worker processes when there
    are ``PARALLEL_FROM`` or more to read and more than one core)."""
    if cache is None:
        return {src.key: read_file(src) for src in files}
    out: dict[str, dict[str, Any]] = {}
    todo = []
    for src in files:
        data = _kept(cache, src)
        if data is None:
            todo.append(src)
        else:
            out[src.key] = data
    if todo:
        say(f"reading {len(todo):,} of {len(files):,} results files "
            f"({len(files) - len(todo):,} unchanged since the last build)")
    workers = min(os.cpu_count() or 1, 8)
    if len(todo) < PARALLEL_FROM or workers < 2:
        for i, src in enumerate(todo, 1):
            out[src.key] = _read_and_keep(src, cache)
            _progress(say, i, len(todo))
        return out
    import multiprocessing
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(workers,
                                 mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {pool.submit(_read_and_keep, src, cache): src for src in todo}
            for i, future in enumerate(as_completed(futures), 1):
                out[futures[future].key] = future.result()
                _progress(say, i, len(todo))
    except BrokenProcessPool:       # a caller's script without a __main__ guard: spawned
        say("worker processes could not start (a script calling build_site needs "     # noqa
            "`if __name__ == \"__main__\":`); reading here")
        for src in todo:
            if src.key not in out:
                out[src.key] = _read_and_keep(src, cache)
    return out


def _progress(say: Callable[[str], None], done: int, total: int) -> None:
    if done == total or done % 50 == 0:
        say(f"read {done:,} of {total:,}")
