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

Only single SELECT statements are answered, over the results tables only: no table
function (checkpoint, range, read_csv …), no file or URL, nothing that could build a
value too large to interrupt (``_sqlguard``, as the agent's SQL tool), and the writer's
connection refuses external access. The writer protects itself from its readers: a
query is interrupted after ``QUERY_TIMEOUT_S``, the database's memory is capped at
``MEMORY_LIMIT`` while readers are served, each row of an answer is measured by DuckDB
and refused over ``MAX_ROW_BYTES`` before Python holds it (``measured_rows``), an answer
is capped in rows and bytes, a request in size, and readers in number; at the run's end their queries are interrupted
and their connections closed before the file is, so a reader never makes a run fail
(``Store.close`` waits for a query that cannot be interrupted, and leaves it running
rather than fail the run: every row is committed by then).

The socket lives in a directory only this user can enter, named by the file's real
path, so every process of the user that opens the same file finds the same socket.
Both sides check that directory (this user's, mode 0700, not a link), and a reader
checks who answers (SO_PEERCRED: this user, the pid the writer announces) before it
trusts an answer.

A performance device, fenced in this module (design §21), with what it costs, measured
(``bench_orchestrator.py --live-only`` and ``--hostile-only``, benchmarks/README.md): one
reader every 2 s costs a run 1.5 % of its exchanges/s, two every 0.5 s 14.7 %, 18 ms of
the writer's CPU a read; a hostile reader 1.7 %.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import socketserver
import sys
import threading
import time
from typing import Any

from . import _live_sql
from ._live_sql import FETCH_ROWS, TOO_LARGE, measured_rows, refused_sql
from ._live_wire import (MAX_ANSWER_BYTES, LiveError, _decode, _encode, _peer, _receive,
                         _send, private_dir, socket_path)

log = logging.getLogger(__name__)

MAX_REQUEST = 1 << 20            # bytes of a reader's request (a query is small)
MAX_ANSWER_ROWS = 200_000        # rows of one answer
MAX_READERS = 8                  # reader connections at once
QUERY_TIMEOUT_S = 10.0           # a reader's query is interrupted after this
READER_SHARE = 0.05              # readers together: this share of the run's time, over
                                 # time (a query admitted may overdraw it by its length)
READER_BURST_S = 1.0             # ... plus this much, for a first look at a busy file
READER_WAIT_S = 5.0              # a request waits this long at most for the share
READER_GRACE_S = 1.0             # a query past its limit is charged this much more at most
# the database's memory while readers are served: DuckDB limits a database, not a query,
# so this bounds readers and run alike; the run's own writes need far less (appends to a
# file of a few hundred MB), and a reader's query that needs more fails in DuckDB's words
MEMORY_LIMIT = "1GB"
END_WAIT_S = 5.0                 # at the run's end: for readers' answers, then their exits


# -- the wire: length-prefixed JSON, with the few types DuckDB returns that JSON lacks --


# -- the writing side ---------------------------------------------------------------------

class LiveServer:
    """Answers read-only queries on ``con``'s database from other processes, in a thread,
    until ``close``. ``about`` says who writes (a run id, the pid), for readers and for a
    second writer that is refused."""

    def __init__(self, con: Any, db: str, about: dict[str, Any]) -> None:
        import duckdb

        self.path = socket_path(db)
        private_dir(self.path.parent, create=True)
        self.path.unlink(missing_ok=True)         # left by a process that was killed
        con.execute("SET enable_external_access = false")   # no file, URL or extension
        con.execute("SET threads = 1")         # a reader's query takes one core at most
        con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")
        self.about = {**about, "pid": os.getpid(), "db": os.path.realpath(db)}
        self.queries = 0
        self.refused = 0
        self._lock = threading.Lock()
        self._cursors: set[Any] = set()            # readers' cursors with a query running
        self._sockets: set[socket.socket] = set()
        self._closing = False
        self._answering = 0                       # requests between receipt and answer
        self._since = time.monotonic()
        self._used = 0.0              # seconds readers' requests have taken (not waited)
        server = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                if not server._admit(self.request):
                    return
                cursor = con.cursor()
                try:
                    while not server._closing:
                        try:
                            request = _receive(self.request, MAX_REQUEST)
                        except (ConnectionError, OSError, ValueError):
                            return
                        if request.get("about"):    # who writes: never held back
                            _send(self.request, {"about": server.about})
                            continue
                        waited = server._wait_for_share()     # sleeping costs nothing
                        started = time.monotonic()
                        server._busy(+1)
                        limit = 0.0
                        try:
                            if waited:
                                answer, limit = server._answer(cursor, request, duckdb)
                            else:
                                server.refused += 1
                                answer = {"error": server._spent()}
                            _send(self.request, answer)
                        finally:
                            server._busy(-1)
                        # a query that ran on past its limit (DuckDB could not interrupt
                        # it in time) is the writer's failure, not a debt later readers
                        # pay for an hour: charged its limit and a grace at most
                        server._charge(min(time.monotonic() - started,
                                           limit + READER_GRACE_S))
                except OSError:
                    return                         # the reader went away mid-answer
                finally:
                    cursor.close()
                    server._leave(self.request)

        self._server = socketserver.ThreadingUnixStreamServer(str(self.path), Handler)
        self._server.daemon_threads = True
        os.chmod(self.path, 0o600)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.2},
                                        name="results-readers", daemon=True)
        self._thread.start()

    def _admit(self, sock: socket.socket) -> bool:
        with self._lock:
            if self._closing or len(self._sockets) >= MAX_READERS:
                full = not self._closing
            else:
                self._sockets.add(sock)
                return True
        try:
            _send(sock, {"error": f"{MAX_READERS} readers are reading this file already; "
                                  "try again in a moment" if full else "the run is ending"})
        except OSError:
            pass
        return False

    def _leave(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.discard(sock)

    def _allowance(self) -> float:
        """Seconds readers may still take: their share of the time since the server
        started, plus the burst, less what they have had."""
        return READER_BURST_S + READER_SHARE * (time.monotonic() - self._since) - self._used

    def _wait_for_share(self) -> bool:
        """Hold a request until the readers' share allows it (back-pressure: a reader
        that asks back to back is slowed down, at no cost to the run); False if it did
        not within ``READER_WAIT_S``."""
        deadline = time.monotonic() + READER_WAIT_S
        while not self._closing:
            with self._lock:
                short = -self._allowance()
            if short < 0:
                return True
            if time.monotonic() + short / READER_SHARE > deadline:
                return False
            time.sleep(min(0.5, short / READER_SHARE + 0.001))
        return True                            # answered at once: "the run is ending"

    def _spent(self) -> str:
        with self._lock:
            wait = -self._allowance() / READER_SHARE
        return (f"readers have had their share of the writing run's time "
                f"({READER_SHARE:.0%}); try again in {max(1, round(wait))} s")

    def _busy(self, change: int) -> None:
        with self._lock:
            self._answering += change

    def _charge(self, seconds: float) -> None:
        with self._lock:
            self._used += seconds

    def _answer(self, cursor: Any, request: dict[str, Any], duckdb: Any
                ) -> tuple[dict[str, Any], float]:
        """The answer to a reader's query, and the seconds it was allowed."""
        sql = request.get("sql", "")
        if not isinstance(sql, str):
            return {"error": "a query is a string"}, 0.0
        with self._lock:
            why = None if self._closing else refused_sql(sql, cursor)
            if self._closing:
                why = "the run is ending"
            elif why is None:
                self._cursors.add(cursor)
                # admitted while the readers' share is not spent, a query may take the
                # whole QUERY_TIMEOUT_S, charged after: the share paces when the next may
                # start, never cuts one short (a limit from what was left of the share
                # once cut a leaderboard's query at 0.64 s on a loaded machine)
                limit = QUERY_TIMEOUT_S
        if why is not None:
            self.refused += 1
            return {"error": why}, 0.0
        return self._run(cursor, sql, request, limit, duckdb), limit

    def _run(self, cursor: Any, sql: str, request: dict[str, Any], limit: float,
             duckdb: Any) -> dict[str, Any]:
        timer = threading.Timer(limit, cursor.interrupt)
        timer.start()
        try:
            params = _decode(request.get("params") or [])
            measured, columns = measured_rows(cursor, sql, params)
            cur = cursor.execute(measured, params)
            rows, size = [], 0
            while True:
                batch = cur.fetchmany(FETCH_ROWS)
                if not batch:
                    break
                for r in batch:
                    row = _encode(list(r)[:len(columns)])     # less the measure
                    size += len(json.dumps(row, separators=(",", ":")))
                    rows.append(row)
                if len(rows) > MAX_ANSWER_ROWS or size > MAX_ANSWER_BYTES:
                    self.refused += 1
                    return {"error": f"the answer is over {MAX_ANSWER_ROWS:,} rows or "
                                     f"{MAX_ANSWER_BYTES >> 20} MB while a run writes this "
                                     "file; narrow the query (WHERE, LIMIT)"}
            self.queries += 1
            return {"columns": columns, "rows": rows}
        except duckdb.InterruptException:
            return {"error": "the run is ending" if self._closing else
                    f"the query ran over {limit:.3g} s while a run writes this file (readers "
                    f"get {QUERY_TIMEOUT_S:g} s a query and {READER_SHARE:.0%} of the run's "
                    "time); narrow it, or read the file once the run has finished"}
        except duckdb.OutOfMemoryException:
            self.refused += 1
            return {"error": f"the query needs more than the {MEMORY_LIMIT} of memory readers "
                             "and the run share while a run writes this file; narrow it, or "
                             "read the file once the run has finished"}
        except duckdb.Error as exc:
            if TOO_LARGE in str(exc):
                self.refused += 1
                return {"error": f"a row of the answer is over {_live_sql.row_cap()} "
                                 "while a run writes this file; narrow the query (fewer "
                                 "or shorter values: left(), length())"}
            return {"error": str(exc), "kind": type(exc).__name__}
        finally:
            timer.cancel()
            with self._lock:
                self._cursors.discard(cursor)

    def close(self) -> None:
        """Stop answering: readers' running queries are interrupted and their connections
        closed, so the writer's own connection can close cleanly after."""
        with self._lock:
            self._closing = True
            sockets = list(self._sockets)
        deadline = time.monotonic() + END_WAIT_S    # their answers ("the run is ending")
        interrupted = -1.0
        while time.monotonic() < deadline:          # go out before the connections close
            with self._lock:
                if not self._answering:
                    break
                cursors = list(self._cursors)
            # interrupted again every 50 ms while they answer: a query admitted just
            # before the run ended may not have begun when the first interrupt came
            # (lost: it then ran to its 10 s limit, past a loaded test's patience)
            if time.monotonic() - interrupted >= 0.05:
                interrupted = time.monotonic()
                for cursor in cursors:
                    try:
                        cursor.interrupt()
                    except Exception:       # a cursor that just finished
                        pass
            time.sleep(0.005)
        self._server.shutdown()
        self._server.server_close()
        for sock in sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        deadline = time.monotonic() + END_WAIT_S
        while time.monotonic() < deadline:
            with self._lock:
                if not self._sockets and not self._cursors:
                    break
            time.sleep(0.005)
        self.path.unlink(missing_ok=True)


# -- the reading side ---------------------------------------------------------------------


class _Result:
    def __init__(self, columns: list[str], rows: list[tuple[Any, ...]]) -> None:
        self.description = [(c,) for c in columns]
        self._rows = rows

    def fetchall(self) -> list[tuple[Any, ...]]:
        return list(self._rows)

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None


class LiveConnection:
    """The part of a DuckDB connection a ``Store`` uses, served by the writing process.
    When the run ends under it (the connection drops), it tries the socket once more,
    then says so in one line and reads the file directly."""

    def __init__(self, sock: socket.socket, about: dict[str, Any], db: str) -> None:
        self._sock: socket.socket | None = sock
        self.about = about
        self.db = db
        self._direct: Any = None            # the file itself, once the run has ended
        self._lock = threading.Lock()

    def execute(self, sql: str, params: list[Any] | dict[str, Any] | None = None) -> Any:
        with self._lock:
            if self._direct is None:
                answer: dict[str, Any] | None
                try:
                    answer = self._ask(sql, params)
                except (ConnectionError, OSError):
                    answer = self._again(sql, params)
                if answer is not None:
                    if "error" in answer:
                        raise LiveError(answer["error"])
                    return _Result(answer["columns"],
                                   [tuple(_decode(r)) for r in answer["rows"]])
            return self._direct.execute(sql, params or [])

    def _ask(self, sql: str, params: Any) -> dict[str, Any]:
        assert self._sock is not None
        _send(self._sock, {"sql": sql, "params": _encode(params or [])})
        answer: dict[str, Any] = _receive(self._sock)
        return answer

    def _again(self, sql: str, params: Any) -> dict[str, Any] | None:
        """The writer dropped the connection: ask once more (a new connection), else the
        run has ended and the file is read directly (None)."""
        import duckdb

        self._close_socket()
        try:
            live = connect(self.db)
        except LiveError:
            live = None
        if live is not None:
            self._sock, live._sock = live._sock, None
            try:
                return self._ask(sql, params)
            except (ConnectionError, OSError):
                self._close_socket()
        print(f"vendbench: the run writing {self.db} just ended; reading the file directly",
              file=sys.stderr)
        deadline = time.monotonic() + 5            # its process lets go of the file
        while True:
            try:
                self._direct = duckdb.connect(self.db, read_only=True)
                return None
            except duckdb.Error:
                if time.monotonic() >= deadline:
                    raise LiveError(f"the run writing {self.db} ended, and the file could "
                                    "not be opened after it; try again") from None
                time.sleep(0.05)

    def _close_socket(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def close(self) -> None:
        self._close_socket()
        if self._direct is not None:
            self._direct.close()


def connect(db: str, wait_s: float = 0.0) -> LiveConnection | None:
    """A connection to the process writing ``db``, or None if none answers (waiting up
    to ``wait_s`` for one that is starting). LiveError if the socket's directory is not
    this user's own, or if the process answering is not this user's writer."""
    path = socket_path(db)
    deadline = time.monotonic() + wait_s
    while True:
        if path.parent.exists() or os.path.islink(path.parent):
            private_dir(path.parent, create=False)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(str(path))
            pid, uid = _peer(sock)
            if uid != os.getuid():
                raise LiveError(f"live reads refused: the process answering at {path} runs "
                                f"as another user (uid {uid})")
            _send(sock, {"about": True})
            answer = _receive(sock)
            if "error" in answer:          # the writer turned this reader away: say why
                raise LiveError(f"{db} is being written by a run, which turned this read "
                                f"away: {answer['error']}")
            about = answer["about"]
            if about.get("pid") != pid:
                raise LiveError(f"live reads refused: the process answering at {path} (pid "
                                f"{pid}) is not the one it names (pid {about.get('pid')})")
            if about.get("db") == os.path.realpath(db):
                return LiveConnection(sock, about, db)
            sock.close()
            return None
        except LiveError:
            sock.close()
            raise
        except (OSError, ConnectionError, ValueError, KeyError):
            sock.close()
            if time.monotonic() >= deadline:
                return None
            time.sleep(0.1)
