"""Results: one DuckDB file per deployment, written by one task, read by anyone after."""

from ._ceilings import (Job, anchor_rows, anchor_rows_apart, anchors_for, missing_anchors, salt_hash,
                        shares, trial_score)
from ._comparisons import (ComparisonRow, ComparisonStep, comparison, comparison_ids,
                           comparison_steps, run_named)
from ._export import export_part, merge_parts
from ._findings import FLAG_SEVERITIES, SEVERITIES, FindingRow, Screening
from ._pacing import cpus_busy, no_core_spare
from ._log import DirectWriter, Sink, TrialLog, now
from ._rows import (APPENDED as APPENDED_TYPES, Append, AppendRow, CeilingRow, ExchangeRow, FloorRow, MatchSeat, MessageRow, ProviderEventRow,
                    ReservationRow, Row, RunEnded, RunRecord, RunWarning, SegmentEnded,
                    SegmentReplayed, SegmentStarted, LoggedRequest, ToolCallRow, TrialRecord, Tokens, as_append,
                    cached_share)
from ._reads import RunInfo, RunSummary, TrialInfo
from ._runs import begin_run, code_version, new_run_id
from ._schema import COLUMNS, DDL
from ._open_errors import open_error
from ._store import DEFAULT_DB, Store, TrialHistory, being_written
from ._transcripts import SEARCH_LIMIT, Transcripts, path_id
from ._trials import FINISHED, PairKey, RANKED, SET_APART, TrialKey, TrialStatus, latest_attempts
from ._writer import ResultsWriter, append, dumps

__all__ = ["comparison_ids", "export_part", "merge_parts", "FLAG_SEVERITIES", "SEVERITIES", "FindingRow", "Screening", "being_written", "SEARCH_LIMIT", "Transcripts", "open_error", "Append", "append", "APPENDED_TYPES", "AppendRow", "as_append", "begin_run",
           "cached_share", "cpus_busy", "no_core_spare", "anchor_rows", "anchor_rows_apart", "anchors_for", "CeilingRow", "FloorRow", "Job", "code_version", "COLUMNS", "comparison", "ComparisonRow",
           "ComparisonStep", "comparison_steps", "DDL", "DEFAULT_DB", "DirectWriter", "dumps",
           "ExchangeRow", "FINISHED", "LoggedRequest", "latest_attempts", "MatchSeat", "MessageRow", "new_run_id",
           "missing_anchors", "now", "PairKey", "path_id", "ProviderEventRow", "RANKED", "ReservationRow", "ResultsWriter",
           "Row", "RunEnded", "RunInfo", "RunRecord", "RunSummary", "run_named", "RunWarning", "salt_hash", "shares",
           "SegmentEnded", "SegmentReplayed", "SegmentStarted", "SET_APART", "Sink",
           "Store", "Tokens", "ToolCallRow", "TrialHistory", "TrialInfo", "TrialKey", "TrialLog",
           "TrialRecord", "trial_score", "TrialStatus"]
