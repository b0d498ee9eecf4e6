"""``vendbench serve``: the world over MCP."""

from __future__ import annotations

import argparse
import logging
from typing import Any

from ..environment import DEFAULT_SCENARIO
from ._args import HelpFormatter, days, db_flag, path, port, seed, wrap

SERVE_EPILOG = """\
Each MCP session plays one fresh world of --seed and is logged as a trial of this
server's run: model mcp/<the client's name from initialize, or --name>, its tool calls,
days and sales (no LLM exchanges: the client's model, and its cost, are outside
vendbench). After the horizon every call returns an error and the result is final; a
session that ends before it is recorded 'interrupted'. The leaderboard ranks these
trials beside API models of the same cohort (vendbench leaderboard --run all), with
their harness named.

A client configuration (stdio):
  {"mcpServers": {"vendbench": {"command": "vendbench",
      "args": ["serve", "--days", "30", "--db", "mcp.duckdb"]}}}

examples:
  vendbench serve --days 30 --db mcp.duckdb      # stdio, for a local client
  vendbench serve --transport http --port 8765   # http://127.0.0.1:8765/mcp
  vendbench serve --transport http --host 0.0.0.0 \\
                  --token-file ~/.vendbench-token
"""


def add(sub: Any) -> None:
    serve = sub.add_parser(
        "serve", help="serve the world's tools over MCP (stdio or streamable HTTP)",
        description=wrap("Serve the world to an MCP client: the same 18 tools, schemas, "
                          "validation and results as the JSON tools an LLM trial calls, the "
                          "daily report as a resource, and the system prompt's briefing as "
                          "the server's instructions."),
        formatter_class=HelpFormatter, epilog=SERVE_EPILOG)
    serve.add_argument("--scenario", default=DEFAULT_SCENARIO, metavar="S",
                       help="autovend (default) or network (Prosus-style)")
    serve.add_argument("--seed", type=seed, default=1, metavar="N",
                       help="trial seed of every session's world (default 1)")
    serve.add_argument("--world-seed", type=seed, default=None, metavar="W",
                       help="frozen world (default 2026, the paper's)")
    serve.add_argument("--days", type=days, default=None, metavar="D",
                       help="horizon, 1-365 (default: the scenario's, 180 for autovend, 30 "
                            "for network)")
    serve.add_argument("--transport", choices=["stdio", "http"], default="stdio",
                       help="stdio (default; the client starts the server) or streamable "
                            "HTTP at /mcp")
    serve.add_argument("--host", default="127.0.0.1",
                       help="http: address to bind (default 127.0.0.1; any other needs "
                            "a token)")
    serve.add_argument("--port", type=port, default=8765, help="http: port (default 8765)")
    serve.add_argument("--token-env", metavar="NAME",
                       help="http: require 'Authorization: Bearer <token>', the token read "
                            "from environment variable NAME (never stored or printed)")
    serve.add_argument("--token-file", metavar="PATH", type=path,
                       help="http: the same, the token read from a file only you can read "
                            "(mode 600)")
    serve.add_argument("--token", help=argparse.SUPPRESS)   # refused: argv is public
    serve.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                       help="http: also admit requests with this Host and Origin (e.g. "
                            "http://myhost:8765); by default only localhost names, against "
                            "DNS rebinding by web pages")
    serve.add_argument("--idle-timeout", type=float, metavar="SECONDS",
                       help="http: end a session that sends nothing this long (default "
                            "1800); its trial is recorded interrupted")
    serve.add_argument("--max-sessions", type=int, metavar="N",
                       help="http: sessions at once (default 32); more are refused")
    db_flag(serve, writes=True)
    serve.add_argument("--name", metavar="LABEL",
                       help="the trials' model label mcp/LABEL, instead of the client's name")
    serve.set_defaults(func=command)


def command(args: argparse.Namespace) -> int:
    from ..serve import ServeConfig, serve

    if not args.verbose:        # the SDK logs a client's disconnect as a traceback
        logging.getLogger("mcp").setLevel(logging.CRITICAL)
    from ..environment import default_days

    serve(ServeConfig(scenario=args.scenario, seed=args.seed, world_seed=args.world_seed,
                      days=args.days or default_days(args.scenario),
                      transport=args.transport, host=args.host, port=args.port, db=args.db,
                      name=args.name, token=token(args),
                      allow_origins=tuple(args.allow_origin),
                      # the limits' defaults are ServeConfig's own (serve's constants)
                      **{k: v for k, v in (("idle_timeout_s", args.idle_timeout),
                                           ("max_sessions", args.max_sessions))
                         if v is not None}))
    return 0


def token(args: argparse.Namespace) -> str | None:
    """The bearer token ``serve`` requires, from an environment variable or a file: never
    from argv, which every local user sees in ``ps``."""
    import os
    import stat

    from ..errors import ConfigError

    if args.token is not None:
        raise ConfigError("--token puts the token where every local user sees it (ps); use "
                          "--token-env NAME or --token-file PATH")
    if args.token_env and args.token_file:
        raise ConfigError("give --token-env or --token-file, not both")
    if args.token_env:
        token = os.environ.get(args.token_env, "")
        if not token.strip():
            raise ConfigError(f"--token-env {args.token_env}: that variable is not set or "
                              "empty")
        return token.strip()
    if args.token_file:
        try:
            mode = os.stat(args.token_file).st_mode
            token = open(args.token_file, encoding="utf-8").read().strip()
        except OSError as exc:
            raise ConfigError(f"--token-file {args.token_file}: {exc.strerror}") from None
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise ConfigError(f"--token-file {args.token_file} can be read by other users "
                              f"(mode {stat.S_IMODE(mode):o}); chmod 600 it")
        if not token:
            raise ConfigError(f"--token-file {args.token_file} is empty")
        return token
    return None
