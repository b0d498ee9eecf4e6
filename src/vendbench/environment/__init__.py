"""Environments (scenarios) behind one small protocol.

    >>> from vendbench.environment import make
    >>> env = make("autovend", seed=1, days=180)
    >>> env.call("end_day", "{}")["ok"]
    True
"""

from __future__ import annotations

from ._protocol import Environment, Match
from ._policies import (Idle, InProcessPolicy, ceiling_score, evaluate_policy, floor_score,
                        make_policy, play_day, play_match, policy_names, reference_anchors,
                        run_policy)
from ._records import DAY_COLUMNS, DAYS, Metric, RecordTable
from ._registry import (DEFAULT_SCENARIO, DEFAULT_WORLD_SEED, ENTRY_POINTS, REGISTRY,
                        SALT_ENV, Scenario, currency,
                        default_days, display_columns, make_market, arena_names, find as find_scenario, installed, make,
                        names as scenario_names, Workload, metric_directions, metrics as scenario_metrics,
                        record_tables, register,
                        scenario, scenario_class, score_column, score_name, standing,
                        trial_metrics, diagnose, diagnostics, failure_modes, not_applicable)
from ._arguments import canonical
from ._market import NAMES as OPERATOR_NAMES
from ._diagnostics import Diagnosis, Diagnostic, FailureMode, Incident, windows
from ._share import Anchors, divisible, lowest, no_share, share, share_bounds
from ._session import (DAY_OVER, MAX_REPEATED_FAILURES, MAX_SILENT_REPLIES, Kept, Recorder,
                       RecordingSession, Repeats,
                       ToolCall, day_tool, nudge)

__all__ = ["canonical", "OPERATOR_NAMES", "Anchors", "Idle", "divisible", "floor_score", "lowest", "no_share",
           "reference_anchors", "scenario_metrics", "share", "DEFAULT_SCENARIO", "DEFAULT_WORLD_SEED", "Match", "make_market", "arena_names", "DAYS", "DAY_COLUMNS", "DAY_OVER", "MAX_REPEATED_FAILURES", "MAX_SILENT_REPLIES", "Repeats", "ENTRY_POINTS", "Environment", "find_scenario",
           "InProcessPolicy", "installed", "Kept", "Metric", "scenario_names", "Workload",
           "REGISTRY", "Recorder", "RecordTable", "RecordingSession", "SALT_ENV", "Scenario",
           "ToolCall", "currency", "day_tool", "default_days", "display_columns",
           "ceiling_score", "evaluate_policy", "make", "make_policy", "metric_directions",
           "nudge", "play_day", "play_match", "policy_names", "record_tables", "register", "run_policy",
           "scenario", "scenario_class", "score_column", "score_name", "share_bounds", "standing",
           "trial_metrics", "Diagnosis", "Diagnostic", "FailureMode", "Incident", "diagnose",
           "diagnostics", "failure_modes", "not_applicable", "windows"]
