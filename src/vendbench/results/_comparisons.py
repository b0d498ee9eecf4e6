"""A comparison's rows (``vendbench compare``): the comparison, then one step per batch.

A comparison runs its batches as runs of the same file; each step names its run, the
pairs so far, the models still in the race and every pairwise interval, so the whole
sequence can be shown again, charted, or continued after a crash.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from ._store import Store


@dataclass(frozen=True, slots=True)
class ComparisonRow:
    """A comparison as it stands (written when it starts and after every step)."""

    comparison_id: str
    created_at: dt.datetime
    scenario: str
    days: int
    models: list[str]
    config_json: str
    status: str                 # running, decided, interrupted
    verdict: str | None         # winner, equivalent, inconclusive
    best: str | None
    reason: str | None
    pairs: int
    spent_usd: Decimal
    finished_at: dt.datetime | None

    def statement(self) -> tuple[str, list[Any]]:
        return ("INSERT OR REPLACE INTO comparisons VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [self.comparison_id, self.created_at, self.scenario, self.days,
                 json.dumps(self.models), self.config_json, self.status, self.verdict,
                 self.best, self.reason, self.pairs, self.spent_usd, self.finished_at])


@dataclass(frozen=True, slots=True)
class ComparisonStep:
    """One batch: its run, the pairs so far, the survivors, every pairwise interval."""

    comparison_id: str
    step: int
    run_id: str
    pairs: int
    survivors: list[str]
    intervals: list[dict[str, Any]]
    spent_usd: Decimal
    decided_at: dt.datetime

    def statement(self) -> tuple[str, list[Any]]:
        return ("INSERT OR REPLACE INTO comparison_steps VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [self.comparison_id, self.step, self.run_id, self.pairs,
                 json.dumps(self.survivors), json.dumps(self.intervals), self.spent_usd,
                 self.decided_at])


def comparison(store: Store, comparison_id: str) -> ComparisonRow:
    """One comparison (``latest``: the newest); KeyError when there is none."""
    if comparison_id == "latest":
        row = store.con.execute("SELECT * FROM comparisons ORDER BY created_at DESC "
                                "LIMIT 1").fetchone()
    else:
        row = store.con.execute("SELECT * FROM comparisons WHERE comparison_id = ?",
                                [comparison_id]).fetchone()
    if row is None:
        raise KeyError(comparison_id)
    values = list(row)
    values[4] = json.loads(values[4])
    return ComparisonRow(*values)


def comparison_steps(store: Store, comparison_id: str) -> list[ComparisonStep]:
    rows = store.con.execute("SELECT * FROM comparison_steps WHERE comparison_id = ? "
                             "ORDER BY step", [comparison_id]).fetchall()
    return [ComparisonStep(r[0], r[1], r[2], r[3], json.loads(r[4]), json.loads(r[5]),
                           r[6], r[7]) for r in rows]


def run_named(store: Store, name: str) -> str | None:
    """The id of the newest run called ``name`` (a comparison's batch), if any."""
    row = store.con.execute("SELECT run_id FROM runs WHERE name = ? ORDER BY created_at "
                            "DESC LIMIT 1", [name]).fetchone()
    return row[0] if row else None


def comparison_ids(store: Store) -> list[str]:
    """Every comparison of the file, oldest first."""
    return [r[0] for r in store.con.execute(
        "SELECT comparison_id FROM comparisons ORDER BY created_at").fetchall()]
