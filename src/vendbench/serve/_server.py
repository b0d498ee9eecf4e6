"""`vendbench serve`: the world's tools as an MCP server, each session a logged trial."""

from __future__ import annotations

import contextvars
import datetime as dt
import hmac
import ipaddress
import json
import logging
import re
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

from .. import __version__
from ..environment import SALT_ENV, Environment, make
from ..errors import ConfigError
from ..results import Store, append, dumps

log = logging.getLogger(__name__)

REPORT_URI = "vendbench://daily-report"
HARNESS = "mcp"


@dataclass
class ServeConfig:
    scenario: str = "autovend"
    seed: int = 1
    world_seed: int | None = None
    days: int = 180
    transport: str = "stdio"            # or "http" (streamable HTTP)
    host: str = "127.0.0.1"
    port: int = 8765
    db: str = "vendbench.duckdb"
    name: str | None = None             # the trial's label, instead of the client's name
    token: str | None = field(default=None, repr=False)   # never stored or printed

    def check(self) -> None:
        from ..environment import scenario

        scenario(self.scenario)
        if self.transport not in ("stdio", "http"):
            raise ConfigError(f"--transport must be stdio or http, got {self.transport!r}")
        if self.transport == "http" and not _loopback(self.host) and not self.token:
            raise ConfigError(f"--host {self.host} is reachable from other machines: give "
                              "--token SECRET, and clients must send 'Authorization: Bearer "
                              "SECRET' (or bind 127.0.0.1)")
        if self.name is not None and not re.fullmatch(r"[\w.@+-]{1,64}", self.name):
            raise ConfigError("--name takes 1-64 letters, digits or ._@+-")

    def stored(self) -> dict[str, Any]:
        """What the run row keeps of this config: everything but the token."""
        out = asdict(self)
        out.pop("token")
        return {**out, "harness": HARNESS}


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class _DirectWriter:
    """The ``put``/``put_sql`` a ``TrialLog`` writes through, committing at once (an MCP
    session makes one call at a time; there is no request in flight to protect)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def put(self, table: str, rows: list[tuple]) -> None:
        if rows:
            append(self.store.con, table, rows)

    def put_sql(self, sql: str, params: list[Any]) -> None:
        self.store.con.execute(sql, params)


class Session:
    """One MCP session's world and its trial."""

    def __init__(self, server: WorldServer, client: str) -> None:
        from ..orchestrator._log import TrialLog

        self.server = server
        self.model = f"{HARNESS}/{client}"
        self.repeat = server.next_repeat(self.model)
        slug = re.sub(r"[^A-Za-z0-9]+", "-", client).strip("-").lower() or "client"
        self.trial_id = f"{server.run_id}-mcp-{slug}-s{server.config.seed}-r{self.repeat}"
        self.env: Environment = server.make_env()
        self.started = _now()
        self.tool_calls = 0
        self.status = "running"
        self.log = TrialLog(server.writer, self.trial_id, self.model)
        self._record(None)
        self.log.segment_started(1, self.started)
        log.info("session %s: trial %s", client, self.trial_id)

    def call(self, name: str, arguments: Any) -> dict[str, Any]:
        if self.env.done:
            s = self.env.summary()
            return {"ok": False, "error": (
                f"the episode is over ({self.env.status} after day {s.get('days_completed')} "
                f"of {self.server.config.days}; net assets {s.get('net_assets'):,.2f}): the "
                "result is final. Start a new MCP session for a new world.")}
        day = self.env.day
        result = self.env.call(name, arguments)
        self.tool_calls += 1
        self.log.tool_call(None, day, None, name, arguments, result)
        self.log.records(self.env.drain_records())
        if self.env.done:
            self.end(self.env.status, None)
        return result

    def report(self) -> str:
        return self.env.observe()

    def end(self, status: str, reason: str | None) -> None:
        if self.status != "running":
            return
        self.status = status
        ended = _now()
        self._record(ended, reason)
        self.log.segment_ended(1, ended, status)
        log.info("trial %s: %s", self.trial_id, status)

    def _record(self, ended: dt.datetime | None, reason: str | None = None) -> None:
        summary = self.env.summary()
        final = self.env.final_state() if ended is not None else \
            {"initial_cash": summary.get("initial_cash")}
        self.log.trial_row(
            run_id=self.server.run_id, seed=self.server.config.seed, repeat=self.repeat,
            attempt=1, world_seed=self.server.world_seed, status=self.status, reason=reason,
            final=final, cost=None,
            budget=None, tokens=(0, 0, 0, 0), exchanges=0, tool_calls=self.tool_calls,
            days=summary.get("days_completed", 0), started=self.started, ended=ended)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


_session: contextvars.ContextVar[dict[str, Session | None]] = \
    contextvars.ContextVar("vendbench_mcp_session")


class WorldServer:
    """The MCP server: tools, the daily report as a resource, the briefing as its
    instructions; one world per MCP session, recorded in ``store``."""

    def __init__(self, config: ServeConfig, store: Store) -> None:
        import os

        from ..orchestrator._scheduler import insert_run, new_run_id

        self.config = config
        self.store = store
        self.writer = _DirectWriter(store)
        self.salt = os.environ.get(SALT_ENV) or None
        probe = self.make_env()
        self.world_seed = probe.summary().get("world_seed", config.world_seed)
        self.tools = probe.tools
        self.instructions = probe.instructions
        self.run_id = new_run_id()
        insert_run(store, run_id=self.run_id, name=f"mcp:{config.name or 'clients'}",
                   scenario=config.scenario, days=config.days,
                   config_json=json.dumps(config.stored()), env=probe,
                   prices_json=dumps({}), total_budget=None,
                   world_seeds=[self.world_seed])
        store.serve_readers({"run_id": self.run_id})
        self.sessions: list[Session] = []
        self._repeats: dict[str, int] = {}
        self.mcp = self._build()

    def make_env(self) -> Environment:
        kwargs: dict[str, Any] = {"seed": self.config.seed, "days": self.config.days}
        if self.config.world_seed is not None:
            kwargs["world_seed"] = self.config.world_seed
        if self.salt:
            kwargs["world_salt"] = self.salt
        return make(self.config.scenario, **kwargs)

    def next_repeat(self, model: str) -> int:
        self._repeats[model] = self._repeats.get(model, 0) + 1
        return self._repeats[model]

    def _session(self) -> Session:
        holder = _session.get()
        if holder["session"] is None:
            params = self.mcp.request_context.session.client_params
            client = self.config.name or (params.clientInfo.name if params else "client")
            holder["session"] = Session(self, client)
            self.sessions.append(holder["session"])
        return holder["session"]

    def _build(self) -> Any:
        import mcp.types as types
        from mcp.server.lowlevel import Server
        from mcp.server.lowlevel.helper_types import ReadResourceContents

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
                        holder["session"].end("interrupted", "the MCP session ended before "
                                                             "the horizon (the client left)")

        server = PerSession("vendbench", version=__version__, instructions=self.instructions)
        mcp_tools = [types.Tool(name=t["function"]["name"],
                                description=t["function"].get("description"),
                                inputSchema=t["function"]["parameters"]) for t in self.tools]

        @server.list_tools()
        async def list_tools() -> list[types.Tool]:
            return mcp_tools

        # arguments are validated by the world itself, exactly as for an LLM's calls
        @server.call_tool(validate_input=False)
        async def call_tool(name: str, arguments: dict[str, Any]) -> types.CallToolResult:
            result = outer._session().call(name, arguments)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=json.dumps(result))],
                structuredContent=result, isError=not result.get("ok", False))

        @server.list_resources()
        async def list_resources() -> list[types.Resource]:
            return [types.Resource(uri=REPORT_URI, name="daily-report",
                                   description="today's daily report (what get_daily_report "
                                               "shows at the start of the day)",
                                   mimeType="text/plain")]

        @server.read_resource()
        async def read_resource(uri: Any) -> list[ReadResourceContents]:
            if str(uri) != REPORT_URI:
                raise ValueError(f"no resource {uri}; there is {REPORT_URI}")
            return [ReadResourceContents(content=outer._session().report(),
                                         mime_type="text/plain")]

        return server

    def close(self, status: str = "completed") -> None:
        for s in self.sessions:
            s.end("interrupted", "the server stopped before the horizon")
        self.store.con.execute("UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ?",
                               [status, _now(), self.run_id])


async def _stdio(world: WorldServer) -> None:
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read, write):
        await world.mcp.run(read, write, world.mcp.create_initialization_options())


async def _http(world: WorldServer, config: ServeConfig) -> None:
    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    manager = StreamableHTTPSessionManager(app=world.mcp)
    expected = f"Bearer {config.token}".encode() if config.token else None

    async def app(scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["path"].rstrip("/") != "/mcp":
            await _reply(send, 404, "not found: the MCP endpoint is /mcp")
            return
        if expected is not None:
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                await _reply(send, 401, "a bearer token is required (Authorization: Bearer "
                                        "...)", {"www-authenticate": "Bearer"})
                return
        await manager.handle_request(scope, receive, send)

    server = uvicorn.Server(uvicorn.Config(app, host=config.host, port=config.port,
                                           lifespan="off", log_level="warning"))
    print(f"vendbench: serving MCP on http://{config.host}:{config.port}/mcp (run "
          f"{world.run_id}, results in {config.db})", file=sys.stderr, flush=True)
    async with manager.run():
        await server.serve()


async def _reply(send: Any, status: int, text: str, headers: dict[str, str] | None = None
                 ) -> None:
    body = json.dumps({"error": text}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            *((k.encode(), v.encode()) for k, v in (headers or {}).items())]})
    await send({"type": "http.response.body", "body": body})


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
