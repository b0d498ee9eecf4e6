"""`vendbench serve`: the world's tools as an MCP server, each session a logged trial."""

from __future__ import annotations

import asyncio
import contextvars
import datetime as dt
import itertools
import hmac
import json
import logging
import re
import socket
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import __version__
from ..environment import (DEFAULT_SCENARIO, SALT_ENV, Environment, Kept, RecordingSession, make,
                           record_tables, score_name)
from .._localhttp import foreign, local_name, loopback, reply
from ..errors import ConfigError
from ..results import (DirectWriter, RunEnded, Store, Tokens, TrialLog, TrialRecord,
                       TrialStatus, begin_run, dumps, new_run_id, now)

log = logging.getLogger(__name__)

REPORT_URI = "vendbench://daily-report"
HARNESS = "mcp"
IDLE_TIMEOUT_S = 1800.0      # an HTTP session with no request this long ends ``interrupted``
MAX_SESSIONS = 32            # HTTP sessions at once; more are refused until one ends


@dataclass
class ServeConfig:
    scenario: str = DEFAULT_SCENARIO
    seed: int = 1
    world_seed: int | None = None
    days: int = 180
    transport: str = "stdio"            # or "http" (streamable HTTP)
    host: str = "127.0.0.1"
    port: int = 8765
    db: str = "vendbench.duckdb"
    name: str | None = None             # the trial's label, instead of the client's name
    token: str | None = field(default=None, repr=False)   # never stored or printed
    idle_timeout_s: float = IDLE_TIMEOUT_S
    max_sessions: int = MAX_SESSIONS
    allow_origins: tuple[str, ...] = ()  # browser origins admitted beside localhost's

    def check(self) -> None:
        from ..environment import scenario

        scenario(self.scenario)
        if self.transport not in ("stdio", "http"):
            raise ConfigError(f"--transport must be stdio or http, got {self.transport!r}")
        if self.transport == "http" and not loopback(self.host) and not self.token:
            raise ConfigError(f"--host {self.host} is reachable from other machines: give a "
                              "token (--token-env NAME or --token-file PATH), and clients "
                              "must send 'Authorization: Bearer <token>' (or bind 127.0.0.1)")
        if self.name is not None and not re.fullmatch(r"[\w.@+-]{1,64}", self.name):
            raise ConfigError("--name takes 1-64 letters, digits or ._@+-")
        for origin in self.allow_origins:
            if not re.fullmatch(r"https?://[\w.\-\[\]:]+", origin):
                raise ConfigError(f"--allow-origin takes an origin like "
                                  f"http://myhost:8765, got {origin!r}")
        wildcard = self.host in ("0.0.0.0", "::", "[::]")   # local names reach it too
        if self.transport == "http" and not wildcard and \
                not local_name(self.host, self.allow_origins):
            raise ConfigError(
                f"--host {self.host}: clients would name it in the Host header, which the "
                "server refuses (localhost names only, against DNS rebinding): add "
                f"--allow-origin http://{self.host}:{self.port}, or bind 127.0.0.1")
        if not 0 < self.idle_timeout_s <= 7 * 86_400:
            raise ConfigError("--idle-timeout is 1 second to 7 days")
        if not 1 <= self.max_sessions <= 10_000:
            raise ConfigError("--max-sessions is 1-10,000")

    def stored(self) -> dict[str, Any]:
        """What the run row keeps of this config: everything but the token."""
        out = asdict(self)
        out.pop("token")
        return {**out, "harness": HARNESS}


class Session:
    """One MCP session's world and its trial."""

    def __init__(self, server: WorldServer, client: str) -> None:
        self.server = server
        self.model = f"{HARNESS}/{client}"
        self.repeat = server.next_repeat(self.model)
        slug = re.sub(r"[^A-Za-z0-9]+", "-", client).strip("-").lower() or "client"
        # the session's number makes the id unique: "x y", "x-y" and "X.Y" share a slug
        self.trial_id = (f"{server.run_id}-mcp{server.next_session()}-{slug}-"
                         f"s{server.config.seed}-r{self.repeat}")
        self.log = TrialLog(server.writer, self.trial_id, self.model,
                            record_tables(server.config.scenario))
        self.env: Environment | None = server.make_env()
        self.kept = Kept()        # the world plays in a thread; the loop writes its record
        self.world = RecordingSession(self.env, self.kept)
        self.lock = asyncio.Lock()                  # one call at a time per session
        self.final = "this session's trial has ended; start a new MCP session"
        self.started = now()
        self.status: str = TrialStatus.RUNNING
        self._record(None)
        self.log.segment_started(1, self.started)
        log.info("session %s: trial %s", client, self.trial_id)

    async def call(self, name: str, arguments: Any) -> dict[str, Any]:
        """A tool call; the world works in a thread, so one session's slow call (a heavy
        SQL query) does not stall the others, and the results file is written from the
        event loop."""
        async with self.lock:
            env = self.env
            if env is None:
                return {"ok": False, "error": self.final}
            if env.done:
                return {"ok": False, "error": self._over(env)}
            result = await asyncio.to_thread(self.world.call, name, arguments)
            self.kept.hand_to(self.log)
            if env.done:
                self.end(env.status, None)
            return result

    def _over(self, env: Environment) -> str:
        s = env.summary()
        return (f"the episode is over ({env.status} after day {s.get('days_completed')} of "
                f"{self.server.config.days}; {score_name(self.server.config.scenario)} "
                f"{env.final_state()['score']:,.2f}): the result is final. Start "
                "a new MCP session for a new world.")

    def report(self) -> str:
        return self.final if self.env is None else self.env.observe()

    def end(self, status: str, reason: str | None) -> None:
        """Record the trial's end, once, and let its world go (an ended session keeps
        no memory)."""
        if self.status != TrialStatus.RUNNING:
            return
        self.status = status
        ended = now()
        self._record(ended, reason)
        self.log.segment_ended(1, ended, status)
        log.info("trial %s: %s", self.trial_id, status)
        if self.env is not None and self.env.done:
            self.final = self._over(self.env)
        self.env = None
        self.server.forget(self)

    def _record(self, ended: dt.datetime | None, reason: str | None = None) -> None:
        assert self.env is not None
        summary = self.env.summary()
        final = self.env.final_state() if ended is not None else \
            {"initial_cash": summary.get("initial_cash")}
        self.log.trial(TrialRecord(
            self.trial_id, self.server.run_id, self.model, self.server.world_seed,
            self.server.config.seed, self.repeat, 1, self.status, reason,
            final.get("initial_cash"), final.get("final_cash"), final.get("final_net_assets"),
            final.get("score"), None, None, Tokens(), 0, self.world.calls, summary.get("days_completed", 0),
            self.started, ended))


_session: contextvars.ContextVar[dict[str, Session | None]] = \
    contextvars.ContextVar("vendbench_mcp_session")


class WorldServer:
    """The MCP server: tools, the daily report as a resource, the briefing as its
    instructions; one world per MCP session, recorded in ``store``."""

    def __init__(self, config: ServeConfig, store: Store) -> None:
        import os

        self.config = config
        self.store = store
        self.writer = DirectWriter(store)
        self.salt = os.environ.get(SALT_ENV) or None
        probe = self.make_env()
        self.world_seed = int(probe.summary().get("world_seed", config.world_seed or 0))
        self.tools = probe.tools
        self.instructions = probe.instructions
        self.run_id = new_run_id()
        begin_run(store, run_id=self.run_id, name=f"mcp:{config.name or 'clients'}",
                  scenario=config.scenario, days=config.days,
                  config_json=json.dumps(config.stored()), env=probe,
                  prices_json=dumps({}), total_budget=None,
                  world_seeds=[self.world_seed])
        store.serve_readers({"run_id": self.run_id})
        self.sessions: list[Session] = []          # the live ones
        self._repeats: dict[str, int] = {}
        self._numbers = itertools.count(1)
        self.mcp = self._build()

    def make_env(self) -> Environment:
        kwargs: dict[str, Any] = {"seed": self.config.seed, "days": self.config.days}
        if self.config.world_seed is not None:
            kwargs["world_seed"] = self.config.world_seed
        if self.salt:
            kwargs["world_salt"] = self.salt
        return make(self.config.scenario, **kwargs)

    def next_session(self) -> int:
        return next(self._numbers)

    def forget(self, session: Session) -> None:
        if session in self.sessions:
            self.sessions.remove(session)

    def next_repeat(self, model: str) -> int:
        self._repeats[model] = self._repeats.get(model, 0) + 1
        return self._repeats[model]

    def _session(self) -> Session:
        holder = _session.get()
        session = holder["session"]
        if session is None:
            params = self.mcp.request_context.session.client_params
            client = self.config.name or (params.clientInfo.name if params else "client")
            session = holder["session"] = Session(self, client)
            self.sessions.append(session)
        return session

    def _build(self) -> Any:
        import mcp.types as types
        from mcp.server.lowlevel import Server
        from mcp.server.lowlevel.helper_types import ReadResourceContents
        from pydantic import AnyUrl

        outer = self

        class PerSession(Server):
            async def run(self, *args: Any, **kwargs: Any) -> Any:
                # everything a session's handlers do runs in tasks started from here, so
                # they share this holder: one world per session, made on first use
                holder: dict[str, Session | None] = {"session": None}
                _session.set(holder)
                try:
                    return await super().run(*args, **kwargs)
                finally:
                    if holder["session"] is not None:
                        holder["session"].end(TrialStatus.INTERRUPTED, (
                            "the MCP session ended before the horizon (the client left, or "
                            f"sent nothing for {outer.config.idle_timeout_s:g} s)"))

        server = PerSession("vendbench", version=__version__, instructions=self.instructions)
        mcp_tools = [types.Tool(name=t["function"]["name"],
                                description=t["function"].get("description"),
                                inputSchema=t["function"]["parameters"]) for t in self.tools]

        # the MCP library's decorators are untyped
        @server.list_tools()                    # type: ignore[untyped-decorator, no-untyped-call]
        async def list_tools() -> list[types.Tool]:
            return mcp_tools

        # arguments are validated by the world itself, exactly as for an LLM's calls
        @server.call_tool(validate_input=False)         # type: ignore[untyped-decorator]
        async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
            result = await outer._session().call(name, arguments)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=json.dumps(result))],
                structuredContent=result, isError=not result.get("ok", False))

        @server.list_resources()                # type: ignore[untyped-decorator, no-untyped-call]
        async def list_resources() -> list[types.Resource]:
            return [types.Resource(uri=AnyUrl(REPORT_URI), name="daily-report",
                                   description="today's daily report (what get_daily_report "
                                               "shows at the start of the day)",
                                   mimeType="text/plain")]

        @server.read_resource()                 # type: ignore[untyped-decorator, no-untyped-call]
        async def read_resource(uri: Any) -> list[ReadResourceContents]:
            if str(uri) != REPORT_URI:
                raise ValueError(f"no resource {uri}; there is {REPORT_URI}")
            return [ReadResourceContents(content=outer._session().report(),
                                         mime_type="text/plain")]

        return server

    def close(self, status: str = "completed") -> None:
        for s in list(self.sessions):
            s.end(TrialStatus.INTERRUPTED, "the server stopped before the horizon")
        self.store.write(RunEnded(self.run_id, status, now()))


async def _stdio(world: WorldServer) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await world.mcp.run(read, write, world.mcp.create_initialization_options())


async def _http(world: WorldServer, config: ServeConfig) -> None:
    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    manager = StreamableHTTPSessionManager(app=world.mcp,
                                           session_idle_timeout=config.idle_timeout_s,
                                           max_sessions=config.max_sessions)
    expected = f"Bearer {config.token}".encode() if config.token else None

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        refused = foreign(scope, config.port, config.allow_origins)
        if refused is not None:                 # DNS rebinding: a web page's request
            await reply(send, 403, refused)
            return
        if scope["path"].rstrip("/") != "/mcp":
            await reply(send, 404, "not found: the MCP endpoint is /mcp")
            return
        if expected is not None:
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                await reply(send, 401, "a bearer token is required (Authorization: Bearer "
                                        "<token>)", {"www-authenticate": "Bearer"})
                return
        await manager.handle_request(scope, receive, send)

    server = uvicorn.Server(uvicorn.Config(app, host=config.host, port=config.port,
                                           lifespan="off", log_level="warning"))
    # bound and listening before the address is printed: a client may connect at once
    sock = socket.socket(socket.AF_INET6 if ":" in config.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((config.host, config.port))
    except OSError as exc:
        raise ConfigError(f"cannot listen on {config.host}:{config.port} ({exc.strerror}); "
                          "pass another --port") from None
    sock.listen(128)
    print(f"vendbench: serving MCP on http://{config.host}:{config.port}/mcp (run "
          f"{world.run_id}, results in {config.db})", file=sys.stderr, flush=True)
    async with manager.run():
        await server.serve(sockets=[sock])


def serve(config: ServeConfig) -> None:
    """Serve until the client (stdio) or the process (HTTP: Ctrl-C) stops."""
    import signal

    import anyio

    config.check()

    def stop(*_: Any) -> None:
        raise KeyboardInterrupt             # SIGTERM ends the run as Ctrl-C does

    signal.signal(signal.SIGTERM, stop)
    with Store(config.db) as store:
        world = WorldServer(config, store)
        try:
            if config.transport == "stdio":
                print(f"vendbench: serving MCP on stdio (run {world.run_id}, results in "
                      f"{config.db})", file=sys.stderr, flush=True)
                anyio.run(_stdio, world)
            else:
                anyio.run(_http, world, config)
        except* KeyboardInterrupt:          # Ctrl-C or SIGTERM: how a server is stopped
            pass
        finally:
            world.close()
    print(f"vendbench: stopped; results in {config.db} (vendbench leaderboard --db "
          f"{config.db} --run all)", file=sys.stderr)
