"""The ``vendbench`` command line: parse arguments, call the library, print results.
One module per command (``add`` its parser, then the command itself).

Heavy imports (numpy, duckdb, litellm) happen inside the commands, so ``--help`` is
instant and commands that need no LLM never import one.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence

from .. import __version__
from .._text import printable
from ..errors import VendbenchError

_EPILOG = """\
examples:
  vendbench list                            # scenarios, policies, metrics
  vendbench baseline                        # order-up-to, seed 1, 180 days
  vendbench baseline --policy all --seeds 1 2 3 --days 180
  vendbench run --models openai/gpt-4.1-mini baseline/order-up-to \\
                --days 30 --seeds 1 2 3 --budget 2 --total-budget 10
  vendbench run --panel examples/nightly.toml
  vendbench runs
  vendbench leaderboard --run all --charts report/
  vendbench trend --db nightly.duckdb --fail-on-regression
  vendbench screen --judge openai/gpt-4.1-mini --budget 2   # how they got it
  vendbench site public/ --db nights/*.duckdb     # publish the panel as a site
  vendbench compare openai/gpt-4.1-mini baseline/order-up-to --days 30 \\
                    --budget 20
  vendbench arena baseline/oracle baseline/order-up-to --seeds 1 2 3 4
  vendbench serve --days 30          # the world over MCP, for another harness
  vendbench import-inspect logs/*.eval     # Inspect AI's logs of our tasks
  vendbench export-inspect logs/           # our runs, for inspect view

Amounts are the scenario's (CNY for autovend, EUR for network); budgets and
prices are USD.
"""


def _parser() -> argparse.ArgumentParser:
    from . import (arena, baseline, board, catalogue, check, compare, inspect_logs, run, runs,
                   screen, serve, site, view)
    from ._args import HelpFormatter, Parser

    parser = Parser(
        prog="vendbench",
        description="Evaluate LLM agents on long-horizon vending-business operations "
                    "(the AutoVend world: 20 machines, one warehouse, 180 days).",
        formatter_class=HelpFormatter, epilog=_EPILOG)
    parser.add_argument("--version", action="version", version=f"vendbench {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    baseline.add(sub)
    run.add(sub)
    arena.add(sub)
    check.add(sub)
    compare.add(sub)
    runs.add(sub)
    board.add(sub)
    screen.add(sub)
    serve.add(sub)
    view.add(sub)
    site.add(sub)
    inspect_logs.add(sub)
    inspect_logs.add_export(sub)
    catalogue.add(sub)
    return parser


class _RedactingFilter(logging.Filter):
    """No secret reaches a log line, whoever logs it; nor a control sequence (a model's
    name may carry one): the terminal shows it as its escape."""

    def filter(self, record: logging.LogRecord) -> bool:
        from .._secrets import redact

        record.msg = printable(redact(record.getMessage()), keep="\n")
        record.args = ()
        return True


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(_RedactingFilter())
    for noisy in ("LiteLLM", "litellm", "httpx", "httpcore", "openai", "aiohttp"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def _is_duckdb_error(exc: BaseException) -> bool:
    duckdb = sys.modules.get("duckdb")
    return duckdb is not None and isinstance(exc, duckdb.Error)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    _setup_logging(args.verbose)
    # results go to stdout, progress and warnings to stderr: piped into one file (2>&1),
    # a block-buffered stdout would put a run's table after the warnings that follow it
    if hasattr(sys.stdout, "reconfigure") and not sys.stdout.line_buffering:
        sys.stdout.reconfigure(line_buffering=True)
    try:
        code: int = args.func(args)
        return code
    except VendbenchError as exc:
        from .._secrets import redact

        # a name in it may carry a control sequence (an 8-bit OSC hyperlink once reached
        # the terminal raw): shown as its escape
        message = printable(redact(str(exc)), keep="\n")
        print(f"vendbench: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError:             # `vendbench runs | head`: the reader has enough
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:
        if not _is_duckdb_error(exc):
            raise
        from ..results import open_error

        # a damaged page can surface only when a query first reads it
        db = getattr(args, "db", None) or "?"
        db = ", ".join(db) if isinstance(db, list) else db       # site takes many
        print(f"vendbench: error: {printable(open_error(db, exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("vendbench: interrupted", file=sys.stderr)
        return 130


__all__ = ["main"]
