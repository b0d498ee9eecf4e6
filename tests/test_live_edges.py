"""Live reads under attack (SPEC §13): the socket's directory and the process that
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

from vendbench.results import Store, _live, _live_wire
from vendbench.results._live import LiveError

SLOW = ("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t WHERE n < 1e12) "
        "SELECT count(*) FROM t")


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


def test_a_slow_query_is_interrupted_and_a_huge_answer_refused(writer, monkeypatch):
    monkeypatch.setattr(_live, "QUERY_TIMEOUT_S", 0.3)
    monkeypatch.setattr(_live, "MAX_ANSWER_ROWS", 500)
    reader = _live.connect(writer.path)
    with pytest.raises(LiveError, match="ran over 0.3 s"):
        reader.execute(SLOW)
    with pytest.raises(LiveError, match="over 500 rows"):
        reader.execute("WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t "
                       "WHERE n < 100000) SELECT n FROM t")
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
    """A reader that asks slow query after slow query is held to the readers' share: its
    queries are cut at what is left of it, then held back (and refused after a wait)
    until it has built up again."""
    monkeypatch.setattr(_live, "READER_BURST_S", 0.3)
    monkeypatch.setattr(_live, "READER_SHARE", 0.001)
    monkeypatch.setattr(_live, "READER_WAIT_S", 0.2)
    reader = _live.connect(writer.path)
    started = time.monotonic()
    with pytest.raises(LiveError, match="ran over 0.3 s"):
        reader.execute(SLOW)                      # cut at the allowance, not at 10 s
    assert time.monotonic() - started < 5
    with pytest.raises(LiveError, match=r"readers have had their share .* try again in"):
        reader.execute("SELECT 1")
    assert writer._server.refused >= 1
