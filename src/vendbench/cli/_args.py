"""Argument types and flags the commands share."""

from __future__ import annotations

import argparse
import os
import textwrap
from collections.abc import Awaitable, Callable
from typing import NoReturn, TypeVar

T = TypeVar("T")


def wrap(text: str) -> str:
    import textwrap

    return textwrap.fill(text, 79)


class Parser(argparse.ArgumentParser):
    """A parser whose errors are one line and a pointer to the help, not the usage block
    (a command's usage runs to 14 lines)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written, their prose re-filled to the width (at most
    80 columns); indented lines (examples) stay as they are."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        width = min(width, 80) - len(indent)
        out: list[str] = []
        prose: list[str] = []

        def flush() -> None:
            if prose:
                out.extend(textwrap.wrap(" ".join(prose), width) or [""])
                prose.clear()

        for line in text.splitlines():
            if line.strip() and not line.startswith(" "):
                prose.append(line.strip())
                continue
            flush()
            out.append(line)
        flush()
        return "\n".join(indent + line if line else line for line in out)


DB_ENV = "VENDBENCH_DB"        # the results file when --db is not given (design §35.7)


def default_db() -> str:
    """The results file a command uses without --db: $VENDBENCH_DB, else
    ./vendbench.duckdb."""
    from ..results import DEFAULT_DB

    return os.environ.get(DB_ENV) or DEFAULT_DB


def path(text: str) -> str:
    """A file or folder the user names: not empty (``--charts ''`` once drew nothing and
    exited 0; ``--panel ''`` ended in a traceback)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path; name a file or folder")
    return text


def db_flag(parser: argparse.ArgumentParser, writes: bool = False) -> None:
    """Every command's --db, one definition: its default from $VENDBENCH_DB."""
    parser.add_argument("--db", default=default_db(), metavar="PATH", type=path,
                        help=f"results database (default ${DB_ENV}, else "
                             "./vendbench.duckdb); "
                             + ("the trials are written to it" if writes else
                                "a file a run is writing is read as committed so far"))


def cohort_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--days", type=days, metavar="D",
                        help="only runs of this horizon (the newest such run's cohort)")
    parser.add_argument("--scenario", metavar="S", help="only runs of this scenario")
    parser.add_argument("--include-compare", action="store_true",
                        help="also the batches of vendbench compare, left out by default "
                             "(a note says how many)")


MAX_SEED = 2**31 - 1             # the results file keeps seeds as INTEGER


def whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None


def within(what: str, low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``, with one wording for
    every value outside (below, zero or above alike)."""
    def parse(text: str) -> int:
        value = whole(text)
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{what} is {low:,}-{high:,}, got {value:,}")
        return value

    return parse


seed = within("a seed", 0, MAX_SEED)
positive = within("a count", 1, 10**9)
days = within("days", 1, 365)
port = within("a port", 1, 65535)


def usd(text: str) -> str:
    from decimal import Decimal, InvalidOperation

    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"expected an amount in USD, got {text!r}") from None
    if not value.is_finite() or value <= 0:
        raise argparse.ArgumentTypeError(f"a budget must be a positive amount, got {text}")
    return text


def number(what: str, low: float, high: float, *, above_low: bool = False
            ) -> Callable[[str], float]:
    """An argparse type: a number from ``low`` (excluded if ``above_low``) to ``high``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not (low < value if above_low else low <= value) or not value <= high:
            raise argparse.ArgumentTypeError(
                f"expected {what} {'above' if above_low else 'from'} {low:g} up to {high:g}, "
                f"got {text}")
        return value

    return parse


seconds = number("a number of seconds", 0, 86_400, above_low=True)


share = number("a share of the limit", 0.1, 0.9)


temperature = number("a temperature", 0, 2)
top_p = number("a top_p", 0, 1, above_low=True)


def run_until_signalled(main: Callable[[], Awaitable[T]]) -> T:
    """``asyncio.run(main())`` with SIGINT and SIGTERM cancelling it: the caller catches
    ``asyncio.CancelledError`` (and ``KeyboardInterrupt``) and says how to continue."""
    import asyncio
    import signal

    async def cancellable() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, task.cancel)
        return await main()

    return asyncio.run(cancellable())


def progress(what: str) -> Callable[[int, int], None]:
    """A progress line on stderr (``what: done/total``): redrawn on a terminal, else
    every tenth item and the last."""
    import sys

    def show(done: int, total: int) -> None:
        if sys.stderr.isatty() or done == total or done % 10 == 0:
            print(f"\r{what}: {done}/{total}", end="\n" if done == total else "",
                  file=sys.stderr, flush=True)
    return show
