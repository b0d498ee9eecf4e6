"""Reading a results file while a run writes it (design §9): `runs`, `leaderboard` and
`trend` against a live run in another process, a second writer refused, and the
read-only door of the writing process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from vendbench.errors import ResultsError
from vendbench.results import Store
from vendbench.results._live import LiveError, connect

from ..fakellm import FakeLLM
from .conftest import CANARY, model
from .test_resume import start


def cli(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENAI_API_KEY": CANARY}
    return subprocess.run([sys.executable, "-m", "vendbench", *args], env=env,
                          capture_output=True, text=True, timeout=120)


def wait_for(condition, what: str, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    pytest.fail(f"timed out waiting for {what}")


def test_readers_see_a_live_run_and_a_second_writer_is_refused(tmp_path):
    db = str(tmp_path / "live.duckdb")
    panel = tmp_path / "panel.toml"
    with FakeLLM(latency=0.05) as llm:
        entry = model(llm)
        panel.write_text("days = 30\nseeds = [1, 2]\n[[models]]\n" + "\n".join(
            f"{k} = {json.dumps(v)}" for k, v in entry.items()) +
            "\n[[models]]\nid = \"baseline/order-up-to\"\n")
        proc = start(llm, db, "--panel", str(panel))
        try:
            wait_for(lambda: llm.served >= 5 or proc.poll() is not None, "requests")
            assert proc.poll() is None, proc.communicate()
            llm.gate.clear()              # the run stays in place (live) until released
            # what the server has answered becomes visible to a reader within seconds
            answered = llm.served

            def visible() -> dict | None:
                out = cli("runs", "--db", db, "--run", "latest", "--json")
                assert out.returncode == 0, out.stderr
                data = json.loads(out.stdout)
                llm_trials = [t for t in data["trials"] if t["model"] == entry["id"]]
                return data if sum(t["exchanges"] for t in llm_trials) >= answered - 2 \
                    else None

            data = wait_for(visible, "the answered requests in a live read", timeout=10)
            assert data["run"]["status"] == "running"
            assert data["live"]["run_id"] == data["run"]["run_id"]
            running = [t for t in data["trials"] if t["status"] == "running"]
            assert running and all(t["status"] != "stopped" for t in data["trials"])

            listing = cli("runs", "--db", db)
            assert listing.returncode == 0 and "running" in listing.stdout
            assert f"live: run {data['run']['run_id']} is writing this file" in listing.stdout

            board = cli("leaderboard", "--db", db, "--format", "json")
            assert board.returncode == 0, board.stderr
            assert json.loads(board.stdout)["runs"] == [data["run"]["run_id"]]
            trend = cli("trend", "--db", db, "--format", "json")
            assert trend.returncode == 0, trend.stderr

            second = cli("run", "--models", "baseline/oracle", "--days", "2", "--db", db)
            assert second.returncode == 2
            assert f"is being written by run {data['run']['run_id']}" in second.stderr
            assert "Traceback" not in second.stderr
            # an LLM run is refused before its checks print its forecast (design §35.6)
            third = cli("run", "--models", "openai/other", "--api-base", llm.url,
                        "--price", "openai/other=1,1", "--days", "2", "--db", db)
            assert third.returncode == 2 and "cost forecast" not in third.stderr
            assert third.stderr.strip().splitlines() == [
                f"vendbench: error: {db} is being written by run {data['run']['run_id']} "
                f"(pid {data['live']['pid']}); one run writes a file at a time. Watch it "
                f"with `vendbench runs --db {db} --run {data['run']['run_id']}`, wait for "
                "it to finish, or pass another --db"], third.stderr
        finally:
            llm.gate.set()
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
            proc.communicate(timeout=60)
    # the writer is gone: the file opens directly again, and nothing is left behind
    with Store(db, read_only=True) as store:
        assert store.live is None
        assert store.run("latest")["status"] == "interrupted"


def test_the_writers_door_answers_only_selects(tmp_path):
    db = str(tmp_path / "w.duckdb")
    with Store(db) as writer:
        writer.serve_readers({"run_id": "r1"})
        writer.con.execute("INSERT INTO meta VALUES ('probe', 'x')")
        reader = connect(db)
        assert reader is not None and reader.about["run_id"] == "r1"
        assert reader.execute("SELECT value FROM meta WHERE key = ?", ["probe"]
                              ).fetchone() == ("x",)
        for sql in ("DELETE FROM meta", "SELECT 1; DELETE FROM meta",
                    "DROP TABLE runs", "COPY meta TO '/tmp/x.csv'"):
            with pytest.raises(LiveError, match="only one SELECT"):
                reader.execute(sql)
        assert writer.con.execute("SELECT count(*) FROM meta WHERE key = 'probe'"
                                  ).fetchone() == (1,)
        # a Store opened read-only in this process reads through the same door
        with Store(db, read_only=True) as store:
            assert store.live["run_id"] == "r1"
            assert store.runs() == []
        reader.close()
    assert connect(db) is None           # closed with the writer


def test_a_file_held_by_another_writer_without_a_door_is_refused_in_one_line(tmp_path,
                                                                           monkeypatch):
    monkeypatch.setattr("vendbench.results._store.HOLD_WAIT_S", 0.3)
    db = str(tmp_path / "held.duckdb")
    Store(db).close()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
         "print('held', flush=True); time.sleep(60)", db], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(ResultsError, match="another process holds it"):
            Store(db, read_only=True)
    finally:
        holder.kill()
        holder.wait()


def test_a_run_goes_on_when_its_socket_cannot_be_made(tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setattr("vendbench.results._live.socket_path",
                        lambda db: blocker / "x.sock")
    db = str(tmp_path / "r.duckdb")
    with Store(db) as store:
        store.serve_readers({"run_id": "r"})
        store.con.execute("SELECT 1")
    assert "cannot read this file while the run writes it" in caplog.text
