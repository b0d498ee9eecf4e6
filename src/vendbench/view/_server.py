"""``vendbench view``: the transcript viewer, served read-only on this machine.

An ASGI app under uvicorn: GET (and HEAD) only, the Host and Origin of every request
checked against this machine's names (against DNS rebinding by a web page), and each
page rendered in a thread from a read-only open of the results file (``_pages``).
"""

from __future__ import annotations

import asyncio
import socket
import sys
import urllib.parse
from dataclasses import dataclass
from typing import Any

from .._localhttp import foreign, local_name, loopback, reply
from ..errors import ConfigError
from ..results import Store
from ._pages import Pages
from ._templates import CSP

# the pages' own policy (their one script by its hash, no other), and what only a
# header can say: no page may frame them
SECURITY_HEADERS = [(b"x-content-type-options", b"nosniff"),
                    (b"referrer-policy", b"no-referrer"),
                    (b"content-security-policy",
                     f"{CSP}; frame-ancestors 'none'".encode())]


@dataclass(frozen=True)
class ViewConfig:
    db: str = "vendbench.duckdb"
    host: str = "127.0.0.1"
    port: int = 8766
    start: str | None = None            # a run or trial id to open at

    def check(self) -> None:
        if not loopback(self.host):
            raise ConfigError(f"--host {self.host} is reachable from other machines: the "
                              "viewer shows every prompt and reply in the file; bind "
                              "127.0.0.1 (or use --static DIR and publish the files)")
        if not local_name(self.host):
            raise ConfigError(f"--host {self.host}: a browser would name it in the Host "
                              "header, which the viewer refuses (it answers localhost, "
                              "127.0.0.1 and ::1 only, against DNS rebinding); bind one of "
                              "those")


def app(pages: Pages, port: int) -> Any:
    """The ASGI app answering ``pages``."""

    async def serve(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        refused = foreign(scope, port)
        if refused is not None:
            await reply(send, 403, refused)
            return
        if scope["method"] not in ("GET", "HEAD"):
            await reply(send, 405, "the viewer is read-only", {"allow": "GET, HEAD"})
            return
        query = dict(urllib.parse.parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        page = await asyncio.to_thread(pages.get, urllib.parse.unquote(scope["path"]), query)
        body = page.body.encode()
        await send({"type": "http.response.start", "status": page.status, "headers": [
            (b"content-type", page.content_type.encode()), (b"cache-control", b"no-store"),
            (b"content-length", str(len(body)).encode()), *SECURITY_HEADERS]})
        await send({"type": "http.response.body",
                    "body": b"" if scope["method"] == "HEAD" else body})

    return serve


def start_path(pages: Pages, start: str | None) -> str:
    """The page to open first: a run's, a trial's, or the runs."""
    if not start:
        return "/index.html"
    for path in (f"/run/{start}.html", f"/trial/{start}/index.html"):
        if pages.get(path).status == 200:
            return path
    raise ConfigError(f"no run or trial {start!r} in {pages.db} (vendbench runs --db "
                      f"{pages.db} lists them)")


def view(config: ViewConfig) -> None:
    """Serve until Ctrl-C."""
    import os

    import uvicorn

    config.check()
    if not os.path.exists(config.db):
        raise ConfigError(f"{config.db} does not exist: pass the results file with --db")
    with Store(config.db, read_only=True):     # a damaged file: one line now, not a 500
        pass                                   # a page
    pages = Pages(config.db)
    first = start_path(pages, config.start)
    sock = socket.socket(socket.AF_INET6 if ":" in config.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((config.host, config.port))
    except OSError as exc:
        raise ConfigError(f"cannot listen on {config.host}:{config.port} ({exc.strerror}); "
                          "pass another --port (0: any free one)") from None
    sock.listen(128)          # before the URL is printed: a client may connect at once
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app(pages, port), lifespan="off",
                                           log_level="warning"))
    host = f"[{config.host}]" if ":" in config.host else config.host
    print(f"vendbench view: http://{host}:{port}{first} (read-only; Ctrl-C stops)",
          file=sys.stderr, flush=True)
    try:
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
