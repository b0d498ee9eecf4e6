"""What the site shows, read from one or many results files (design §33): each cohort's
nights across the files, its latest night's leaderboard (the board ``leaderboard``
builds), its trend, the frontier; the runs, comparisons and arenas of every file.

A night is a run (as ``leaderboard --trend`` counts them), wherever its file; a cohort
(world, horizon, starting cash, prompts, tools, worlds) is ranked on its newest night.
"""

from __future__ import annotations

import hashlib
import json
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._text import days as days_text
from ..environment import currency, find_scenario, score_name
from ..errors import ConfigError, ResultsError
from ..leaderboard import (ArenaBoard, Board, Frontier, Night, Trend, board_frontier, build,
                           build_arena, judged)
from ..results import (ComparisonRow, ComparisonStep, Screening, Store, comparison,
                       comparison_ids, comparison_steps, path_id)
from ._read import Source, _night, read_all


@dataclass
class RunPage:
    source: Source
    summary: dict[str, Any]             # as ``Store.runs`` lists it
    info: dict[str, Any]                # the runs row: config, prices, hashes
    trials: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    kind: str                           # ranked, arena, compare

    @property
    def run_id(self) -> str:
        return str(self.summary["run_id"])


@dataclass
class Cohort:
    id: str
    key: dict[str, Any]
    nights: list[dict[str, Any]]        # file, run_id, name, date, status; oldest first
    board: Board                        # the newest night's
    latest: dict[str, Any]
    trend: Trend
    frontier: Frontier
    provenance: dict[str, Any]
    money: dict[str, list[dict[str, Any]]] = field(default_factory=dict)   # per model

    @property
    def label(self) -> str:
        k = self.key
        cash = "" if k["initial_cash"] is None else \
            f", {k['initial_cash']:,.0f} {currency(k['scenario'])} to start"
        return f"{k['scenario']}, {days_text(k['days'])}{cash}"

    @property
    def score_name(self) -> str:
        return score_name(self.key["scenario"])


@dataclass
class Panel:
    sources: list[Source]
    cohorts: list[Cohort]
    runs: list[RunPage]
    comparisons: list[tuple[Source, ComparisonRow, list[ComparisonStep]]]
    arenas: list[tuple[Source, str, ArenaBoard]]
    notes: list[str] = field(default_factory=list)

    def models(self) -> list[str]:
        return sorted({r.model for c in self.cohorts for r in c.board.rows})


def sources(paths: Sequence[str]) -> list[Source]:
    """Each file with a short, stable name (its stem; a hash of its path beside it when
    two files share one). A path named twice, or missing, is refused."""
    seen: dict[str, str] = {}
    for p in paths:
        full = str(Path(p).resolve())
        if full in seen.values():
            raise ConfigError(f"--db {p} is named twice; pass each results file once")
        if not Path(p).is_file():
            raise ConfigError(f"--db {p}: no results file there"
                              + (" (a folder: pass its files)" if Path(p).is_dir() else ""))
        seen[p] = full
    stems = [re.sub(r"[^A-Za-z0-9._-]", "_", Path(p).stem) or "results" for p in paths]
    out = []
    for p, stem in zip(paths, stems):
        key = stem if stems.count(stem) == 1 else \
            f"{stem}-{hashlib.sha256(seen[p].encode()).hexdigest()[:8]}"
        out.append(Source(p, path_id(key)))
    return out


def cohort_id(key: dict[str, Any]) -> str:
    """A cohort's name in paths: its world and horizon, and a hash of the whole key."""
    digest = hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode())
    return f"{key['scenario']}-{key['days']}d-{digest.hexdigest()[:8]}"


def collect(files: Sequence[Source], *, diagnostics: bool = True,
            on_step: Callable[[str], None] | None = None,
            cache: Path | None = None) -> Panel:
    """Read every file once for its runs and nights (``_read``: kept in ``cache`` while
    the file is unchanged, with its Parquet rows), then build each cohort's newest night
    in full (``diagnostics``: with §32.1's diagnostics)."""
    say = on_step or (lambda _: None)
    runs: list[RunPage] = []
    comparisons: list[tuple[Source, ComparisonRow, list[ComparisonStep]]] = []
    arenas: list[tuple[Source, str, ArenaBoard]] = []
    by_cohort: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    read = read_all(files, cache, say)
    for src in files:
        data = read[src.key]
        runs += [RunPage(src, r["summary"], r["info"], r["trials"], r["warnings"], r["kind"])
                 for r in data["runs"]]
        for n in data["nights"]:
            entry = by_cohort.setdefault(cohort_id(n["key"]), {"key": n["key"], "nights": []})
            entry["nights"].append({**n, "file": src.key, "path": src.path,
                                    "models": [_night(m) for m in n["models"]]})
        if data["comparisons"]:
            with Store(src.path, read_only=True) as store:
                for cid in comparison_ids(store):
                    comparisons.append((src, comparison(store, cid),
                                        comparison_steps(store, cid)))
        for run_id in data["arenas"]:
            try:
                arenas.append((src, run_id, build_arena(src.path, run_id)))
            except ResultsError as exc:
                notes.append(f"arena run {run_id} of {src.path} not ranked: {exc}")
    cohorts = []
    for cid, entry in sorted(by_cohort.items()):
        say(f"ranking {cid}")
        cohorts.append(_cohort(cid, entry, diagnostics))
    return Panel(list(files), cohorts, runs, comparisons, arenas, notes)


def _cohort(cid: str, entry: dict[str, Any], diagnostics: bool) -> Cohort:
    nights = sorted(entry["nights"], key=lambda n: (n["created_at"], n["file"]))
    latest = nights[-1]
    board = build(latest["path"], latest["run_id"],
                  diagnostics=diagnostics and find_scenario(entry["key"]["scenario"])
                  is not None)
    every: list[Night] = [m for n in nights for m in n["models"]]
    trend = judged(Trend(entry["key"], [{k: n[k] for k in ("file", "run_id", "name", "date",
                                                            "status")} for n in nights],
                         every, [], ci="t"))
    money = _money(board)
    return Cohort(cid, entry["key"], [{k: v for k, v in n.items() if k not in
                                        ("models", "created_at", "path", "key")}
                                       for n in nights],
                  board, {"file": latest["file"], "run_id": latest["run_id"],
                          "date": latest["date"]},
                  trend, board_frontier(board), _provenance(latest["path"], board), money)


def _money(board: Board) -> dict[str, list[dict[str, Any]]]:
    """Each model's trials' score day by day (Vending-Bench's chart), one per trial."""
    out: dict[str, list[dict[str, Any]]] = {}
    seen: dict[str, int] = {}
    for p in board.points:
        i = seen.get(p["model"], 0)
        seen[p["model"]] = i + 1
        values = board.trajectories.get(p["model"], [])[i:i + 1]
        out.setdefault(p["model"], []).append(
            {"trial_id": p["trial_id"], "seed": p["seed"], "world_seed": p["world_seed"],
             "status": p["status"], "values": values[0] if values else []})
    return out


def mean_band(series: Sequence[Sequence[float]]) -> tuple[list[float], list[float],
                                                           list[float]]:
    """Day by day over the trials that reached the day: the mean, and mean ± one
    standard error (the band drawn around it; none where one trial is left)."""
    longest = max((len(s) for s in series), default=0)
    mean, low, high = [], [], []
    for d in range(longest):
        values = [s[d] for s in series if len(s) > d]
        m = statistics.fmean(values)
        se = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else 0.0
        mean.append(m)
        low.append(m - se)
        high.append(m + se)
    return mean, low, high


def _provenance(path: str, board: Board) -> dict[str, Any]:
    """Where the board's numbers come from: code versions, world and prompt hashes,
    prices, scanners, trials counted."""
    with Store(path, read_only=True) as store:
        infos = [store.run(r) for r in board.selection.runs]
        scanners = Screening(store).versions([t["trial_id"] for t in board.selection.trials])
    prices = sorted({r.get("prices_json") or "" for r in infos})
    return {"file": path, "runs": board.selection.runs,
            "code_versions": sorted({str(r.get("code_version")) for r in infos}),
            "prompt_sha256": board.selection.cohort.get("prompt_sha256"),
            "tools_sha256": board.selection.cohort.get("tools_sha256"),
            "world_seeds": board.selection.cohort.get("world_seeds"),
            "world_salt_sha256": board.selection.cohort.get("world_salt_sha256"),
            "prices_sha256": [hashlib.sha256(p.encode()).hexdigest()[:12] for p in prices],
            "prices": [json.loads(p) if p else None for p in prices],
            "scanners": scanners, "trials": len(board.selection.trials),
            "interval": board.as_json()["interval_method"]}
