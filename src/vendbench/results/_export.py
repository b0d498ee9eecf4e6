"""The panel's trials and exchanges as Parquet, for pandas, polars or a datasets hub
(design §33): each results file's rows written by DuckDB, then merged. Exchanges keep
their counts, costs, timings and status; what was said (requests, replies) stays in the
transcripts, published only when asked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import duckdb

from ._store import Store

# what an exchange's row says besides its content
CONTENT = ("request_json", "response_json", "reply_json")


def _literal(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def export_part(store: Store, source: str, trials: Path, exchanges: Path) -> None:
    """Write ``store``'s trials and exchanges (without their content), each row with
    ``source`` (the file it came from), to the Parquet files ``trials`` and
    ``exchanges``."""
    content = ", ".join(f"'{c}'" for c in CONTENT)
    store.con.execute(f"COPY (SELECT ? AS source, * FROM trials ORDER BY trial_id) "
                      f"TO {_literal(trials)} (FORMAT parquet)", [source])
    store.con.execute(f"COPY (SELECT ? AS source, COLUMNS(lambda c: c NOT IN ({content})) "
                      f"FROM exchanges ORDER BY trial_id, seq, attempt) "
                      f"TO {_literal(exchanges)} (FORMAT parquet)", [source])


def merge_parts(parts: Sequence[Path], out: Path) -> int:
    """One Parquet file ``out`` of ``parts`` (columns matched by name; a column an
    older file lacks is null there); returns its rows."""
    con = duckdb.connect()
    try:
        files = "[" + ", ".join(_literal(p) for p in parts) + "]"
        if not parts:
            con.execute(f"COPY (SELECT NULL::VARCHAR AS source LIMIT 0) TO {_literal(out)} "
                        "(FORMAT parquet)")
            return 0
        con.execute(f"COPY (SELECT * FROM read_parquet({files}, union_by_name = true)) "
                    f"TO {_literal(out)} (FORMAT parquet)")
        row = con.execute(f"SELECT count(*) FROM read_parquet({_literal(out)})").fetchone()
        return int(row[0]) if row else 0
    finally:
        con.close()
