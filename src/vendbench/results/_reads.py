"""What the reader returns: rows of the results file as typed dicts (keys as the
columns, so existing code and JSON output read them as before). A table both written
and read has its fields written once, in its typed row (``_rows``)."""

from __future__ import annotations

import datetime as dt
from dataclasses import fields
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

from ._rows import RunRecord, TrialRecord


class RunSummary(TypedDict):
    """A run as ``Store.runs`` lists it."""

    run_id: str
    name: str | None
    created_at: dt.datetime
    scenario: str
    days: int
    status: str
    harness: str | None            # "mcp" for serve's runs
    arena: int | None              # an arena run: the operators in each match (design §23)
    comparison: str | None         # a compare batch: its comparison (design §31.2)
    trials: int                    # planned (started, when it plans none)
    started: int
    completed: int
    cost_usd: Decimal | None       # None: no trial of it was priced


# what a run plans, from its stored config: models (or an arena's seats) × worlds × seeds
# × repeats; NULL for a config that plans nothing (a served run's sessions)
PLANNED = """coalesce(json_extract(r.config_json, '$.repeats')::INTEGER, 1)
    * coalesce(json_array_length(json_extract(r.config_json, '$.world_seeds')), 1)
    * json_array_length(json_extract(r.config_json, '$.seeds'))
    * coalesce(json_array_length(json_extract(r.config_json, '$.seats')),
               json_array_length(json_extract(r.config_json, '$.models')))"""
# a compare batch's comparison: its config says so; older ones only by their name
COMPARISON = r"""coalesce(json_extract_string(r.config_json, '$.comparison'),
    nullif(regexp_extract(r.name, '^compare (cmp-\S+) batch \d+$', 1), ''))"""


def _row_dict(name: str, columns: dict[str, Any], doc: str) -> type:
    """A TypedDict with the columns of the typed row that writes the same table."""
    typed = TypedDict(name, columns)   # type: ignore[misc]
    typed.__doc__ = doc
    return typed


# a run's and a trial's row, keys as the columns: what ``Store.run`` and ``Store.trials``
# return (a running trial's counts are what it has committed so far). Built from the
# typed rows' fields when the module loads, which a static checker cannot follow: to it
# they are rows keyed by column name.
if TYPE_CHECKING:
    RunInfo: TypeAlias = dict[str, Any]
    TrialInfo: TypeAlias = dict[str, Any]
else:
    RunInfo = _row_dict("RunInfo", {f.name: f.type for f in fields(RunRecord)},
                        "A run's row (``Store.run``).")
    TrialInfo = _row_dict("TrialInfo", TrialRecord.column_types(),
                          "A trial's row (``Store.trials``).")
