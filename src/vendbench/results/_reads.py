"""What the reader returns: rows of the results file as typed dicts (keys as the
columns, so existing code and JSON output read them as before)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import TypedDict


class RunSummary(TypedDict):
    """A run as ``Store.runs`` lists it."""

    run_id: str
    name: str | None
    created_at: dt.datetime
    scenario: str
    days: int
    status: str
    harness: str | None            # "mcp" for serve's runs
    trials: int
    completed: int
    cost_usd: Decimal | None       # None: no trial of it was priced


class RunInfo(TypedDict):
    """A run's row (``Store.run``)."""

    run_id: str
    name: str | None
    created_at: dt.datetime
    scenario: str
    days: int
    config_json: str
    code_version: str
    prompt_sha256: str
    tools_sha256: str
    prompts_json: str
    tools_json: str
    prices_json: str
    total_budget_usd: Decimal | None
    status: str
    finished_at: dt.datetime | None
    world_seeds: str
    world_salt_sha256: str | None


class TrialInfo(TypedDict):
    """A trial's row (``Store.trials``); a running trial's counts are what it has
    committed so far."""

    trial_id: str
    run_id: str
    model: str
    seed: int
    repeat: int
    attempt: int
    status: str
    reason: str | None
    initial_cash: float | None
    final_cash: float | None
    final_net_assets: float | None
    cost_usd: Decimal | None
    budget_usd: Decimal | None
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    exchanges: int
    tool_calls: int
    days_completed: int
    started_at: dt.datetime
    ended_at: dt.datetime | None
    wall_seconds: float | None
    world_seed: int
