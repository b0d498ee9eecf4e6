"""Results: one DuckDB file per deployment, written by one task, read by anyone after."""

from ._rows import (Append, Row, RunEnded, RunRecord, RunWarning, SegmentEnded, SegmentReplayed,
                    SegmentStarted, TrialRow)
from ._log import Sink, TrialLog, now
from ._runs import begin_run, code_version, new_run_id
from ._schema import COLUMNS, DDL
from ._store import DEFAULT_DB, Store, TrialHistory, cached_share
from ._trials import FINISHED, RANKED, SET_APART, TrialKey, TrialStatus, latest_attempts
from ._writer import ResultsWriter, append, dumps

__all__ = ["Append", "COLUMNS", "DDL", "DEFAULT_DB", "FINISHED", "RANKED", "ResultsWriter", "Row",
           "RunEnded", "RunRecord", "RunWarning", "SET_APART", "SegmentEnded", "SegmentReplayed",
           "SegmentStarted", "Sink", "Store", "TrialHistory", "TrialKey", "TrialLog", "TrialRow", "TrialStatus",
           "append", "begin_run", "cached_share", "code_version", "dumps", "latest_attempts", "new_run_id", "now"]
