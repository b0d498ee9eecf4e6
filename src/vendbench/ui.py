"""Terminal output: tables and progress. Rich when a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any


def _is_tty() -> bool:
    return sys.stderr.isatty()


def print_table(title: str, headers: list[str], rows: list[list[Any]]) -> None:
    """Print a table: a rich table on a terminal, tab-separated text otherwise."""
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title)
        for i, h in enumerate(headers):
            table.add_column(h, justify="left" if i < 2 else "right")
        for r in rows:
            table.add_row(*[str(v) for v in r])
        Console().print(table)
        return
    print(f"# {title}")
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    print("  ".join(str(h).ljust(w) for h, w in zip(headers, widths)))
    for r in rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(r, widths)))


class DayProgress:
    """Progress over simulated days: a rich bar on a terminal, quiet otherwise."""

    def __init__(self, total_days: int, enabled: bool = True) -> None:
        self._enabled = enabled and _is_tty()
        self._total = total_days
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> DayProgress:
        if self._enabled:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn)

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                      MofNCompleteColumn(), TextColumn("days"),
                                      TimeElapsedColumn(), transient=True)
            self._progress.__enter__()
            self._task = self._progress.add_task("starting", total=self._total)
        return self

    def start(self, label: str) -> None:
        if self._progress is not None:
            self._progress.update(self._task, description=label)

    def advance(self, env: Any = None) -> None:
        if self._progress is not None:
            self._progress.advance(self._task)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)
