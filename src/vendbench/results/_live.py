"""Reading a results file while a run writes it.

DuckDB lets one process open a file for writing, and then no other process may open it
at all. So the writing process serves reads: while a run is live, a thread in it
answers read-only queries over a Unix socket (``serve``), on a cursor of its own
connection. Another process that finds the file locked connects there instead
(``connect``), and its ``Store`` works as before: the same SQL, the same rows.

What a reader sees is what the run has committed when the query starts (DuckDB's
snapshot isolation): no copy, no polling interval, so no staleness beyond the group
commit of the results writer (milliseconds). A reader costs the run one thread while
its query runs; the run's own commits do not wait for readers.

Only single SELECT statements are answered. The socket lives in a directory only this
user can enter, named by the file's real path, so every process of the user that
opens the same file finds the same socket.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import socket
import socketserver
import struct
import tempfile
import threading
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

from ..errors import ResultsError

log = logging.getLogger(__name__)

_HEADER = struct.Struct("!I")
MAX_MESSAGE = 1 << 30


def socket_path(db: str) -> Path:
    """Where the process writing ``db`` answers reads."""
    real = os.path.realpath(db)
    digest = hashlib.sha256(real.encode()).hexdigest()[:20]
    return Path(tempfile.gettempdir()) / f"vendbench-{os.getuid()}" / f"{digest}.sock"


# -- the wire: length-prefixed JSON, with the few types DuckDB returns that JSON lacks --

def _encode(value: Any) -> Any:
    if isinstance(value, Decimal):
        return {"$d": str(value)}
    if isinstance(value, dt.datetime):
        return {"$t": value.isoformat()}
    if isinstance(value, dt.date):
        return {"$date": value.isoformat()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        return {"$map": [[_encode(k), _encode(v)] for k, v in value.items()]}
    if isinstance(value, bytes):
        return {"$b": value.hex()}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, list):
        return [_decode(v) for v in value]
    if isinstance(value, dict):
        if "$d" in value:
            return Decimal(value["$d"])
        if "$t" in value:
            return dt.datetime.fromisoformat(value["$t"])
        if "$date" in value:
            return dt.date.fromisoformat(value["$date"])
        if "$b" in value:
            return bytes.fromhex(value["$b"])
        return {_decode(k): _decode(v) for k, v in value["$map"]}
    return value


def _send(sock: socket.socket, obj: Any) -> None:
    data = json.dumps(obj, separators=(",", ":")).encode()
    sock.sendall(_HEADER.pack(len(data)) + data)


def _receive(sock: socket.socket) -> Any:
    head = _read(sock, _HEADER.size)
    (size,) = _HEADER.unpack(head)
    if size > MAX_MESSAGE:
        raise ConnectionError("message too large")
    return json.loads(_read(sock, size))


def _read(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the writing process closed the connection")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


# -- the writing side ---------------------------------------------------------------------

class LiveServer:
    """Answers read-only queries on ``con``'s database from other processes, in a thread,
    until ``close``. ``about`` says who writes (a run id, the pid), for readers and for a
    second writer that is refused."""

    def __init__(self, con: Any, db: str, about: dict[str, Any]) -> None:
        import duckdb

        self.path = socket_path(db)
        self.path.parent.mkdir(mode=0o700, exist_ok=True)
        os.chmod(self.path.parent, 0o700)
        self.path.unlink(missing_ok=True)         # left by a process that was killed
        self.about = {**about, "pid": os.getpid(), "db": os.path.realpath(db)}
        self.queries = 0
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                cursor = con.cursor()
                try:
                    while True:
                        try:
                            request = _receive(self.request)
                        except (ConnectionError, OSError, ValueError):
                            return
                        _send(self.request, server._answer(cursor, request, duckdb))
                finally:
                    cursor.close()

        self._server = socketserver.ThreadingUnixStreamServer(str(self.path), Handler)
        self._server.daemon_threads = True
        os.chmod(self.path, 0o600)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.2},
                                        name="results-readers", daemon=True)
        self._thread.start()

    def _answer(self, cursor: Any, request: dict[str, Any], duckdb: Any) -> dict[str, Any]:
        if request.get("about"):
            return {"about": self.about}
        sql = request.get("sql", "")
        try:
            statements = duckdb.extract_statements(sql)
            if len(statements) != 1 or statements[0].type != duckdb.StatementType.SELECT:
                return {"error": "only one SELECT statement at a time is answered while a "
                                 "run writes this file"}
            cur = cursor.execute(sql, _decode(request.get("params") or []))
            rows = cur.fetchall()
            self.queries += 1
            return {"columns": [d[0] for d in cur.description],
                    "rows": [_encode(list(r)) for r in rows]}
        except duckdb.Error as exc:
            return {"error": str(exc), "kind": type(exc).__name__}

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self.path.unlink(missing_ok=True)


# -- the reading side ---------------------------------------------------------------------

class LiveError(ResultsError):
    """A query the writing process refused or could not run."""


class _Result:
    def __init__(self, columns: list[str], rows: list[tuple]) -> None:
        self.description = [(c,) for c in columns]
        self._rows = rows

    def fetchall(self) -> list[tuple]:
        return list(self._rows)

    def fetchone(self) -> tuple | None:
        return self._rows[0] if self._rows else None


class LiveConnection:
    """The part of a DuckDB connection a ``Store`` uses, served by the writing process."""

    def __init__(self, sock: socket.socket, about: dict[str, Any]) -> None:
        self._sock = sock
        self.about = about
        self._lock = threading.Lock()

    def execute(self, sql: str, params: list[Any] | dict[str, Any] | None = None
                ) -> _Result:
        with self._lock:
            _send(self._sock, {"sql": sql, "params": _encode(params or [])})
            answer = _receive(self._sock)
        if "error" in answer:
            raise LiveError(answer["error"])
        return _Result(answer["columns"], [tuple(_decode(r)) for r in answer["rows"]])

    def close(self) -> None:
        self._sock.close()


def connect(db: str, wait_s: float = 0.0) -> LiveConnection | None:
    """A connection to the process writing ``db``, or None if none answers (waiting up
    to ``wait_s`` for one that is starting)."""
    path = socket_path(db)
    deadline = time.monotonic() + wait_s
    while True:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(path))
            _send(sock, {"about": True})
            about = _receive(sock)["about"]
            if about.get("db") == os.path.realpath(db):
                return LiveConnection(sock, about)
            sock.close()
            return None
        except (OSError, ConnectionError, ValueError, KeyError):
            sock.close()
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.1)
