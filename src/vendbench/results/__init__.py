"""Results: one DuckDB file per deployment, written by one task, read by anyone after."""

from ._schema import COLUMNS, DDL
from ._store import DEFAULT_DB, Store, TrialHistory, cached_share
from ._writer import ResultsWriter, append, dumps

__all__ = ["COLUMNS", "DDL", "DEFAULT_DB", "ResultsWriter", "Store", "TrialHistory", "append",
           "cached_share", "dumps"]
