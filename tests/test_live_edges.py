"""Live reads under attack (design §13): the socket's directory and the process that
answers are checked, a hostile reader cannot slow, bloat or break the writing run, and a
reader that meets the run's end reads the file directly."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from vendbench.results import Store, _live, _live_sql, _live_wire
from vendbench.results._live import LiveError

# 10^12 rows: slow, and interrupted between chunks as DuckDB does
SLOW = ("SELECT count(*) FROM " + ", ".join(f"(SELECT unnest(range(1000)) {c})"
                                            for c in "abcd"))
MEDIUM = ("SELECT count(*) FROM " + ", ".join(f"(SELECT unnest(range(1000)) {c})"
                                              for c in "abc"))


@pytest.fixture
def tmp_socket_dir(monkeypatch):
    """A TMPDIR of the test's own, so the socket directory is fresh; short, since a Unix
    socket's path holds at most 107 bytes (pytest's own tmp_path is too long for it)."""
    import shutil
    import tempfile

    short = tempfile.mkdtemp(prefix="vb-", dir="/tmp")
    monkeypatch.setenv("TMPDIR", short)
    monkeypatch.setattr(tempfile, "tempdir", None)
    yield Path(short)
    shutil.rmtree(short, ignore_errors=True)


@pytest.fixture
def writer(tmp_path, tmp_socket_dir):
    store = Store(str(tmp_path / "w.duckdb"))
    store.serve_readers({"run_id": "RUN-1"})
    assert store._server is not None
    yield store
    store.close()


def until(condition, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


# -- who answers -----------------------------------------------------------------------
def test_a_socket_directory_others_can_enter_is_refused_by_writer_and_reader(
        tmp_path, tmp_socket_dir, caplog):
    db = str(tmp_path / "w.duckdb")
    folder = _live.socket_path(db).parent
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)                        # made first by someone else, open to all
    with Store(db) as store:
        store.serve_readers({"run_id": "RUN-1"})
        assert store._server is None           # the run goes on, with live reads off
    assert "can be entered by other users" in caplog.text
    with pytest.raises(LiveError, match="can be entered by other users"):
        _live.connect(db)


def test_a_linked_or_foreign_socket_directory_is_refused(tmp_path, tmp_socket_dir):
    db = str(tmp_path / "w.duckdb")
    folder = _live.socket_path(db).parent
    (tmp_path / "elsewhere").mkdir(mode=0o700)
    folder.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(LiveError, match="is not a directory"):
        _live_wire.private_dir(folder, create=True)
    folder.unlink()
    if os.geteuid() == 0:                      # as root, a directory of another user
        folder.mkdir(mode=0o700)
        os.chown(folder, 65534, 65534)
        with pytest.raises(LiveError, match="belongs to another user"):
            _live.connect(db)


def test_a_process_that_answers_in_the_writers_place_is_not_believed(tmp_path,
                                                                   tmp_socket_dir):
    """A listener at the socket that names another pid (the spoof: 'being written by
    run SPOOFED (pid 4242)') is refused: SO_PEERCRED gives the real pid."""
    db = str(tmp_path / "w.duckdb")
    path = _live.socket_path(db)
    _live_wire.private_dir(path.parent, create=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(1)

    def spoof() -> None:
        conn, _ = listener.accept()
        with conn:
            _live_wire._receive(conn)
            _live_wire._send(conn, {"about": {"run_id": "SPOOFED", "pid": 4242,
                                         "db": os.path.realpath(db)}})
            time.sleep(0.5)

    threading.Thread(target=spoof, daemon=True).start()
    with pytest.raises(LiveError, match=r"is not the one it names \(pid 4242\)"):
        _live.connect(db)
    listener.close()


# -- what a reader may ask -------------------------------------------------------------
@pytest.mark.parametrize("sql,why", [
    ("SELECT count(*) FROM range(1e13)", "table functions"),
    ("SELECT * FROM checkpoint()", "table functions"),
    ("SELECT * FROM read_parquet('http://example.com/x.parquet')", "table functions"),
    ("SELECT * FROM 'elsewhere.csv'", "not files or URLs"),
    ("SELECT * FROM runs WHERE run_id IN (SELECT * FROM glob('/etc/*'))", "table functions"),
    ("DELETE FROM runs", "only one SELECT"),
    ("SELECT 1; SELECT 2", "only one SELECT"),
])
def test_side_effects_and_table_functions_are_refused(writer, sql, why):
    reader = _live.connect(writer.path)
    with pytest.raises(LiveError, match=why):
        reader.execute(sql)
    assert reader.execute("SELECT count(*) FROM runs").fetchone() == (0,)   # still served
    reader.close()


WRITES = [
    "WITH x AS (DELETE FROM runs RETURNING *) SELECT count(*) FROM x",
    "WITH x AS (UPDATE trials SET score = 1e9 RETURNING *) SELECT count(*) FROM x",
    "WITH x AS (INSERT INTO runs (run_id) VALUES ('FORGED') RETURNING *) SELECT * FROM x",
    "SELECT * FROM (WITH x AS (DELETE FROM runs RETURNING run_id) SELECT * FROM x) y",
    "SELECT 1 UNION ALL (WITH x AS (DELETE FROM trials RETURNING 1) SELECT * FROM x)",
]


@pytest.mark.parametrize("sql", WRITES)
def test_a_select_that_writes_is_refused_and_the_file_is_unchanged(writer, sql):
    """design §30: DuckDB calls ``WITH x AS (DELETE … RETURNING …) SELECT …`` a SELECT;
    a live read of one once deleted a running run's row, set every score to 1e9 and
    added a forged run. Reads are judged by their parsed tree's nodes."""
    writer.con.execute("INSERT INTO runs (run_id) VALUES ('RUN-1')")
    before = writer.con.execute("SELECT * FROM runs").fetchall()
    reader = _live.connect(writer.path)
    with pytest.raises(LiveError, match="only reads are answered"):
        reader.execute(sql)
    reader.close()
    assert writer.con.execute("SELECT * FROM runs").fetchall() == before
    assert writer._server.queries == 0


@pytest.mark.parametrize("sql", WRITES[:3])
def test_the_agents_sql_tool_refuses_a_select_that_writes(sql):
    from vendbench.environment import make

    env = make("autovend", seed=1, days=3)
    mine = sql.replace("FROM runs", "FROM _machines").replace("trials SET score = 1e9",
                                                               "_machines SET capacity = 0")
    mine = mine.replace("INTO runs (run_id)", "INTO _machines (machine_id)")
    before = env.call("query_sql", {"sql": "SELECT count(*), sum(capacity) FROM machines"})
    result = env.call("query_sql", {"sql": mine})
    assert not result["ok"] and "only reads are answered" in result["error"], result
    assert env.call("query_sql", {"sql": "SELECT count(*), sum(capacity) FROM machines"}) \
        == before


def test_a_slow_query_is_interrupted_and_a_huge_answer_refused(writer, monkeypatch):
    monkeypatch.setattr(_live, "QUERY_TIMEOUT_S", 0.3)
    monkeypatch.setattr(_live, "MAX_ANSWER_ROWS", 500)
    reader = _live.connect(writer.path)
    with pytest.raises(LiveError, match="ran over 0.3 s"):
        reader.execute(SLOW)
    with pytest.raises(LiveError, match="over 500 rows"):
        reader.execute("SELECT a * 1000 + b FROM (SELECT unnest(range(1000)) a), "
                       "(SELECT unnest(range(100)) b)")
    assert reader.execute("SELECT 41 + 1").fetchone() == (42,)
    reader.close()


def test_an_oversized_request_and_too_many_readers_are_turned_away(writer):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(_live.socket_path(writer.path)))
    sock.sendall(_live_wire._HEADER.pack(1 << 30) + b"x" * 1024)     # declares 1 GiB
    with pytest.raises(ConnectionError):
        _live_wire._receive(sock)                   # closed without reading the rest
    sock.close()
    readers = [_live.connect(writer.path) for _ in range(_live.MAX_READERS)]
    extra = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    extra.connect(str(_live.socket_path(writer.path)))
    assert "readers are reading this file already" in _live_wire._receive(extra)["error"]
    extra.close()
    for r in readers:
        r.close()
    until(lambda: not writer._server._sockets, "the readers to be let go")
    assert _live.connect(writer.path).execute("SELECT 1").fetchone() == (1,)


# -- the run's end ---------------------------------------------------------------------
def test_a_query_running_at_the_runs_end_never_breaks_the_writer(tmp_path, tmp_socket_dir):
    store = Store(str(tmp_path / "w.duckdb"))
    store.serve_readers({"run_id": "RUN-1"})
    server = store._server
    reader = _live.connect(store.path)
    outcome: dict = {}

    def slow() -> None:
        try:
            outcome["rows"] = reader.execute(SLOW).fetchall()
        except Exception as exc:               # what the reader is told
            outcome["error"] = exc

    thread = threading.Thread(target=slow)
    thread.start()
    until(lambda: server._cursors, "the reader's query to run")
    store.close()                              # the run ends: no exception, no damage
    thread.join(30)
    assert not thread.is_alive()
    # the reader is told, and does not rerun its query against the file on its own
    assert isinstance(outcome.get("error"), LiveError), outcome
    assert "the run is ending" in str(outcome["error"])
    with Store(str(tmp_path / "w.duckdb"), read_only=True) as again:  # the file is fine
        assert again.runs() == []


def test_a_reader_that_meets_the_runs_end_reads_the_file_directly(tmp_path, tmp_socket_dir,
                                                                capsys):
    db = str(tmp_path / "w.duckdb")
    store = Store(db)
    store.serve_readers({"run_id": "RUN-1"})
    reader = _live.connect(db)
    assert reader.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    store.close()                              # the run ends between two reads
    assert reader.execute("SELECT count(*) FROM runs").fetchone() == (0,)
    err = capsys.readouterr().err
    assert err.count("just ended; reading the file directly") == 1
    assert json.dumps(reader.execute("SELECT 1").fetchall()) == "[[1]]"
    reader.close()


def test_readers_together_get_a_bounded_share_of_the_runs_time(writer, monkeypatch):
    """A reader that asks slow query after slow query is held to the readers' share: a
    query admitted runs to the query limit, and the next is held back (and refused after
    a wait) until the share has built up again."""
    monkeypatch.setattr(_live, "READER_BURST_S", 0.3)
    monkeypatch.setattr(_live, "READER_SHARE", 0.001)
    monkeypatch.setattr(_live, "READER_WAIT_S", 0.2)
    monkeypatch.setattr(_live, "QUERY_TIMEOUT_S", 0.4)
    reader = _live.connect(writer.path)
    with pytest.raises(LiveError, match="ran over 0.4 s"):
        reader.execute(SLOW)                      # past the burst: cut at the query limit
    with pytest.raises(LiveError, match=r"readers have had their share .* try again in"):
        reader.execute("SELECT 1")
    assert writer._server.refused >= 1


def test_a_query_admitted_on_the_last_of_the_share_is_not_cut_short(writer, monkeypatch):
    """On a loaded machine a leaderboard's fourth query found 0.64 s of the share left
    and was cut there (design §31.5): a query admitted runs to the query limit whatever
    is left of the share (here 0.02 s, for a query of ~0.3 s unloaded), and is charged
    what it took."""
    monkeypatch.setattr(_live, "READER_SHARE", 1e-6)
    monkeypatch.setattr(_live, "READER_BURST_S", 0.02)   # about all the share there is
    reader = _live.connect(writer.path)
    assert reader.execute(MEDIUM).fetchone() == (10**9,)
    until(lambda: writer._server._used > 0.02, "the query to be charged")
    with pytest.raises(LiveError, match=r"readers have had their share"):
        reader.execute("SELECT 1")                # ... and the next waits for the share
    reader.close()


# -- what a reader may not build (design §19.2) --------------------------------------------
@pytest.mark.parametrize("sql,why", [
    ("SELECT len(range(200000000))", "range: its size must be a number written out"),
    ("SELECT repeat('x', 240000000)", "repeat: its size must be"),
    ("SELECT length(lpad('', (SELECT count(*) FROM runs) * 1000000000, 'x'))",
     "lpad: its size must be"),
    ("WITH RECURSIVE t(s) AS (SELECT 'x' UNION ALL SELECT s || s FROM t) SELECT 1",
     "recursive CTEs are not allowed"),
])
def test_a_value_too_large_to_interrupt_is_refused_as_the_sql_tool_refuses_it(writer, sql,
                                                                              why):
    """``SELECT len(range(200000000))`` once ran 189 s against a 1.1 s allowance and took
    the writing run from 168 MB to 14 GB: DuckDB interrupts between chunks, not inside
    one value. Live reads now ask the SQL tool's guard first."""
    reader = _live.connect(writer.path)
    with pytest.raises(LiveError, match=why):
        reader.execute(sql)
    assert writer._server.queries == 0 and writer._server.refused == 1
    assert reader.execute("SELECT len(range(1000))").fetchone() == (1000,)
    reader.close()


def test_the_database_memory_is_capped_while_readers_are_served(writer):
    reader = _live.connect(writer.path)
    (limit,) = reader.execute("SELECT current_setting('memory_limit')").fetchone()
    number, unit = limit.split()
    assert float(number) * {"MiB": 1, "GiB": 1024}[unit] <= 1024, limit
    reader.close()


def test_a_row_too_large_is_refused_before_python_holds_it(writer, monkeypatch):
    """design §35.8: one query that built a list of 1.5 GB took the writing process from
    82 MB to 6.1 GB on its way to Python (DuckDB's memory cap bounds only what DuckDB
    holds). DuckDB now measures each row and refuses one over the cap before it is
    fetched: no value over the cap reaches the answer's encoding. A row of exactly the
    cap is served; the answer keeps its columns' names (twice the same, too) and order."""
    monkeypatch.setattr(_live_sql, "MAX_ROW_BYTES", 10_000)
    for i in range(200):                              # 100 characters each
        writer.con.execute("INSERT INTO messages (trial_id, msg_id, role, content_json, "
                           "tokens) VALUES ('T', ?, 'user', ?, 0)", [i, f"{i:0100d}"])
    seen: list[int] = []
    encode = _live._encode

    def measuring(value):
        seen.append(len(json.dumps(value, default=str)))
        return encode(value)

    monkeypatch.setattr(_live, "_encode", measuring)
    reader = _live.connect(writer.path)
    for sql in ("SELECT list(content_json) FROM messages",               # 20,000 and more
                "SELECT string_agg(content_json, '') FROM messages WHERE msg_id <= 100",
                "SELECT string_agg(content_json, ''), 'y' FROM messages WHERE msg_id < 100"):
        with pytest.raises(LiveError, match="a row of the answer is over 10,000 bytes"):
            reader.execute(sql)
    assert seen and max(seen) < 10_000
    # the cap itself is served: 100 values of 100 characters
    (text,) = reader.execute("SELECT string_agg(content_json, '') FROM messages "
                             "WHERE msg_id < 100").fetchone()
    assert len(text) == 10_000
    result = reader.execute("SELECT msg_id AS a, content_json AS a FROM messages "
                            "ORDER BY msg_id DESC LIMIT 150 -- the newest first\n;")
    assert [d[0] for d in result.description] == ["a", "a"]
    assert result.fetchall() == [(i, f"{i:0100d}") for i in reversed(range(50, 200))]
    assert reader.execute("SELECT ? AS v, role FROM messages WHERE msg_id = $$7$$::INT",
                          [7]).fetchone() == (7, "user")
    reader.close()


def test_a_query_past_its_limit_does_not_lock_out_later_readers(writer, monkeypatch):
    """A query DuckDB cannot stop at its limit is charged its limit (and a grace), not
    its whole run: later readers are not turned away for an hour. The query here takes
    100 s of the writer's clock (a clock the test moves), against a 0.1 s limit."""
    import types

    clock = [time.monotonic()]
    monkeypatch.setattr(_live, "time", types.SimpleNamespace(   # the writer's clock only
        monotonic=lambda: clock[0], sleep=time.sleep))

    def slow() -> int:
        clock[0] += 100.0
        return 1

    writer.con.create_function("slow", slow, [], "INTEGER")
    monkeypatch.setattr(_live, "READER_BURST_S", 0.5)
    monkeypatch.setattr(_live, "READER_SHARE", 0.001)
    monkeypatch.setattr(_live, "READER_WAIT_S", 0.2)
    monkeypatch.setattr(_live, "READER_GRACE_S", 0.0)
    monkeypatch.setattr(_live, "QUERY_TIMEOUT_S", 0.1)
    reader = _live.connect(writer.path)
    assert reader.execute("SELECT slow()").fetchone() == (1,)   # too late to interrupt
    until(lambda: writer._server._used > 0, "the query to be charged")   # after its answer
    assert writer._server._used == pytest.approx(0.1)           # charged its limit only
    assert reader.execute("SELECT 1").fetchone() == (1,)        # the next is answered
    reader.close()


def test_a_reader_turned_away_is_told_why(writer, monkeypatch, capsys):
    """When the readers' share is spent, a new reader hears that (and when to try again),
    not that "another process holds" the file."""
    from vendbench.cli import main
    from vendbench.errors import ResultsError

    monkeypatch.setattr(_live, "READER_WAIT_S", 0.0)
    writer._server._used = 1e6                       # the share is spent
    with pytest.raises(ResultsError, match=r"readers have had their share .* try again"):
        Store(writer.path, read_only=True)
    assert main(["runs", "--db", writer.path]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "readers have had their share" in line and "another process holds" not in line


@pytest.fixture
def stuck_writer(tmp_path, tmp_socket_dir, monkeypatch):
    """A writer whose readers may call ``block()``: a query that holds its connection
    until the test lets it go, deaf to every interrupt (as one step that builds a huge
    value is), so the run's end meets it for certain."""
    monkeypatch.setattr(_live, "refused_sql", lambda sql, con: None)
    monkeypatch.setattr(_live, "END_WAIT_S", 0.2)
    gate, started = threading.Event(), threading.Event()

    def block() -> int:
        started.set()
        gate.wait(60)
        return 1

    store = Store(str(tmp_path / "w.duckdb"))
    store.con.create_function("block", block, [], "INTEGER")
    store.serve_readers({"run_id": "RUN-1"})
    reader = _live.connect(store.path)
    outcome: dict = {}

    def query() -> None:
        try:
            outcome["rows"] = reader.execute("SELECT block()").fetchall()
        except Exception as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=query)
    thread.start()
    # the query itself running, past what an interrupt stops (its cursor registered is
    # not enough: the measuring DESCRIBE before it can still be interrupted)
    assert started.wait(60), "the reader's query never ran"
    yield store, gate
    gate.set()
    thread.join(60)
    assert not thread.is_alive()
    reader.close()


def test_a_query_that_cannot_be_stopped_at_the_runs_end_never_fails_the_run(stuck_writer):
    """The run ends while a reader's query runs on past every interrupt: DuckDB refuses
    to close a connection a query holds (the run used to exit 2, "looks damaged"). The
    close waits for it instead, and the file is whole."""
    store, gate = stuck_writer
    closing = threading.Thread(target=store.close)
    closing.start()
    closing.join(0.5)
    assert closing.is_alive()                  # waiting for the query, not failing
    gate.set()
    closing.join(60)
    assert not closing.is_alive()
    with Store(store.path, read_only=True) as again:
        assert again.runs() == []


def test_a_close_that_cannot_wait_longer_leaves_the_query_and_says_so(
        stuck_writer, monkeypatch, caplog):
    from vendbench.results import _store

    store, gate = stuck_writer
    monkeypatch.setattr(_store, "CLOSE_WAIT_S", 0.0)
    store.close()                              # returns, does not raise
    assert "a reader's query is still running" in caplog.text


def test_an_answer_of_exactly_the_cap_is_served_and_one_row_more_refused(writer, monkeypatch):
    """design §30: the only cap test asked for far more than the cap, so a cap off by one
    passed it. The cap's own number of rows is answered; one more is refused."""
    monkeypatch.setattr(_live, "MAX_ANSWER_ROWS", 500)
    reader = _live.connect(writer.path)
    assert len(reader.execute("SELECT unnest(range(500))").fetchall()) == 500
    with pytest.raises(LiveError, match="over 500 rows"):
        reader.execute("SELECT unnest(range(501))")
    reader.close()

