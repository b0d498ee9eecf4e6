"""The tables a scenario's trials record day by day, declared by the scenario.

Each scenario's metrics module lists its ``RECORDS``; ``results`` creates them (or adds
the columns a table lacks, when two scenarios share one) and appends the rows that
``drain_records`` hands out, keyed by table name. Every scenario records a ``days``
table with at least ``day``, ``cash`` and ``net_assets`` (the leaderboard draws its
score column from it, and a resumed trial checks its books against it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DAYS = "days"
DAY_COLUMNS = ("day", "cash", "net_assets")        # what every ``days`` table has
_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]{0,62}")
_TYPES = frozenset({"INTEGER", "BIGINT", "DOUBLE", "VARCHAR", "DATE", "BOOLEAN",
                    "TIMESTAMP"})


@dataclass(frozen=True)
class RecordTable:
    """One table: its name and its columns after ``trial_id``, as (name, SQL type)."""

    name: str
    columns: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        for name in (self.name, *(c for c, _ in self.columns)):
            if not _IDENTIFIER.fullmatch(name):
                raise ValueError(f"record table {self.name}: {name!r} is not a plain "
                                 "lower-case identifier")
        for column, kind in self.columns:
            if kind not in _TYPES:
                raise ValueError(f"record table {self.name}: column {column} has type "
                                 f"{kind!r}; use one of {', '.join(sorted(_TYPES))}")
        if self.name == DAYS and not set(DAY_COLUMNS) <= {c for c, _ in self.columns}:
            raise ValueError(f"a days table needs the columns {', '.join(DAY_COLUMNS)}")

    @property
    def names(self) -> tuple[str, ...]:
        """Its column names, ``trial_id`` first (the order rows are appended in)."""
        return ("trial_id", *(c for c, _ in self.columns))


DIRECTIONS = ("higher", "lower", "neither")


@dataclass(frozen=True, slots=True)
class Metric:
    """One operational metric of a scenario, declared once (design §21): the key its
    ``trial_metrics`` returns, which way is better ("neither": a description, not a
    merit), and how the leaderboard shows it (``header`` None: kept in the JSON output and
    the charts, not a table column; the value times ``scale``, to ``decimals``)."""

    name: str
    direction: str
    header: str | None = None
    scale: float = 1
    decimals: int = 1
    # an operator that does nothing wins it by default (no stock-outs of nothing listed,
    # no waste of nothing bought): it ranks only operators that ran the business
    # (design §34.3: charts leave it uncoloured for a model at doing nothing's share)
    idle_wins: bool = False

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ValueError(f"metric {self.name}: direction is one of {DIRECTIONS}, "
                             f"not {self.direction!r}")
