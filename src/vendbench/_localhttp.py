"""What both local web servers (``serve`` over HTTP, ``view``) check of a request: that
it comes from this machine's own clients, not from a web page that rebinds its name."""

from __future__ import annotations

import ipaddress
import json
import urllib.parse
from typing import Any

LOCAL_NAMES = ("localhost", "127.0.0.1", "[::1]")


def loopback(host: str) -> bool:
    """Whether ``host`` is an address only this machine reaches."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def local_name(host: str, origins: tuple[str, ...] = ()) -> bool:
    """Whether a client that reaches ``host`` names it in a Host header ``foreign``
    admits: a local name, or the host of an allowed origin."""
    names = {n.strip("[]") for n in LOCAL_NAMES}
    allowed = {urllib.parse.urlsplit(o).hostname or "" for o in origins}
    return host.strip("[]").lower() in names | allowed


def foreign(scope: dict[str, Any], port: int, origins: tuple[str, ...] = ()) -> str | None:
    """Why a request must be refused as coming from elsewhere than this machine's own
    clients, or None. The Host header must name this machine (localhost, 127.0.0.1 or
    [::1], with the port or without) or an allowed origin's host, and an Origin header,
    when a browser sends one, must be one of those origins: a web page that rebinds its
    own name to 127.0.0.1 sends its own name in both (the MCP specification requires
    the check)."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1")
               for k, v in scope.get("headers") or []}
    local = [f"http://{name}:{port}" for name in LOCAL_NAMES]
    allowed = [*local, *(o.rstrip("/") for o in origins)]
    hosts = {o.split("://", 1)[1] for o in allowed} | set(LOCAL_NAMES)
    host = headers.get("host", "")
    if host not in hosts:
        return (f"refused: Host {host!r} is not this server's (localhost names only; "
                "--allow-origin admits another)")
    origin = headers.get("origin")
    if origin is not None and origin.rstrip("/") not in allowed:
        return (f"refused: Origin {origin!r} may not use this server (localhost only; "
                "--allow-origin admits another)")
    return None


async def reply(send: Any, status: int, text: str, headers: dict[str, str] | None = None
                 ) -> None:
    body = json.dumps({"error": text}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            *((k.encode(), v.encode()) for k, v in (headers or {}).items())]})
    await send({"type": "http.response.body", "body": body})
