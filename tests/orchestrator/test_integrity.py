"""Nothing silently lost or leaked: secrets in successful replies, distinct trial ids,
a results file that cannot be written (issue: "Never lose a paid-for trial or a cent")."""

from __future__ import annotations

import json
import logging
from pathlib import Path

from ..fakellm import Reply
from .conftest import CANARY, model, query, run


def test_a_key_echoed_in_a_successful_reply_is_never_stored_shown_or_sent_back(
        llm, tmp_path, capsys, caplog):
    def echo(body):
        if body["messages"][-1]["role"] == "tool":
            return Reply(tool_calls=[("end_day", "{}")], content=f"noted {CANARY}")
        notes = json.dumps({"text": f"the key is {CANARY}, Bearer {CANARY}"})
        return Reply(tool_calls=[("write_notes", notes)], content=f"my key: {CANARY}")

    llm.script = echo
    db = str(tmp_path / "r.duckdb")
    caplog.set_level(logging.DEBUG)
    result = run(db, days=3, models=[model(llm)])
    assert result.as_json()["trials"][0]["status"] == "completed"
    out, err = capsys.readouterr()
    assert CANARY not in out + err + caplog.text
    assert CANARY.encode() not in Path(db).read_bytes()
    assert all(CANARY.encode() not in raw for raw in llm.raw[1:])   # never sent back
    assert "***" in json.dumps(llm.requests[-1])                      # masked, not dropped
    notes = query(db, "SELECT args_json FROM tool_calls WHERE name = 'write_notes'")
    assert notes and all("***" in n for n, in notes)


def test_model_strings_that_slug_alike_get_distinct_trials(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    result = run(db, days=2, models=[model(llm, "openai/fake-a"), model(llm, "openai/Fake_A")])
    trials = result.as_json()["trials"]
    assert len({t["trial_id"] for t in trials}) == 2
    rows = query(db, "SELECT trial_id, model FROM trials")
    assert len(rows) == 2 and {m for _, m in rows} == {"openai/fake-a", "openai/Fake_A"}
    mixed = query(db, """SELECT count(*) FROM exchanges e JOIN trials t USING (trial_id)
                         WHERE e.model <> t.model""")
    assert mixed == [(0,)]
    keys = query(db, "SELECT trial_id, seq, attempt, count(*) FROM exchanges GROUP BY ALL "
                     "HAVING count(*) > 1")
    assert keys == []


class SmallDisk:
    """A directory on a filesystem that fills up: a tmpfs of a few MB where this user may
    mount one (root, as in CI), otherwise a per-process file-size limit (RLIMIT_FSIZE)
    that makes writes past it fail the same way. ``grow()`` makes room again."""

    def __init__(self, path: Path, size_mb: int) -> None:
        import os
        import subprocess

        self.path, self.size_mb = path, size_mb
        path.mkdir()
        self.tmpfs = not os.environ.get("FORCE_RLIMIT") and subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(path)],
            capture_output=True).returncode == 0
        self.limited = True

    def preexec(self) -> None:
        import resource
        import signal

        if self.limited and not self.tmpfs:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)       # a failed write, not a kill
            size = self.size_mb * 2**20
            resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    def grow(self) -> None:
        import subprocess

        self.limited = False
        if self.tmpfs:
            subprocess.run(["mount", "-o", "remount,size=512m", str(self.path)], check=True)

    def close(self) -> None:
        import subprocess

        if self.tmpfs:
            subprocess.run(["umount", "-l", str(self.path)], check=False)


def test_a_full_disk_stops_the_run_with_its_cause_on_one_line_and_resume_finishes(
        llm, tmp_path):
    """The results file's filesystem fills up mid-run: the run stops at once, says why on
    one line with the resume hint, sends no request it could not record; once there is
    room, --resume finishes every trial under its own id, as an uninterrupted run would."""
    import os
    import subprocess
    import sys

    args = ["--models", "openai/fake", "baseline/order-up-to", "--price",
            "openai/fake=0.4,1.6", "--seeds", "1", "--days", "40", "--api-base", llm.url]
    env = {**os.environ, "OPENAI_API_KEY": CANARY}
    reference = str(tmp_path / "reference.duckdb")       # the same run, with room to spare
    run(reference, days=40, models=[model(llm, "openai/fake"), {"id": "baseline/order-up-to"}])
    uninterrupted = len(llm.requests)
    llm.requests.clear()

    disk = SmallDisk(tmp_path / "small", size_mb=2)
    try:
        db = str(disk.path / "r.duckdb")
        first = subprocess.run([sys.executable, "-m", "vendbench", "run", *args, "--db", db],
                               env=env, capture_output=True, text=True,
                               preexec_fn=disk.preexec)
        lines = first.stderr.strip().splitlines()     # progress lines, then the error
        errors = [line for line in lines if "error" in line.lower()]
        assert first.returncode == 2, first.stderr
        assert "Traceback" not in first.stderr and errors == lines[-1:], first.stderr
        assert errors[0].startswith("vendbench: error: could not write to " + db)
        assert ("No space left on device" if disk.tmpfs else "File too large") in errors[0], \
            errors[0]
        run_id = errors[0].split("vendbench run --resume ")[1].split()[0]
        before = len(llm.requests)
        assert 0 < before < uninterrupted               # it stopped mid-run
        shown = subprocess.run([sys.executable, "-m", "vendbench", "runs", "--db", db],
                               env=env, capture_output=True, text=True)
        assert shown.returncode == 0 and "stopped" in shown.stdout, shown.stdout + shown.stderr
        assert f"vendbench run --resume {run_id}" in shown.stdout     # not "running" forever

        disk.grow()
        second = subprocess.run([sys.executable, "-m", "vendbench", "run", "--resume", run_id,
                                 "--db", db, "--json"], env=env, capture_output=True,
                                text=True)
        assert second.returncode == 0, second.stderr
        trials = json.loads(second.stdout)["trials"]
        assert {t["status"] for t in trials} == {"completed"}
        # nothing was sent that the file could not record: at most the request that was
        # in flight when the commit failed is sent again
        assert len(llm.requests) <= uninterrupted + 1
        ours = query(db, "SELECT model, final_net_assets, tool_calls FROM trials ORDER BY 1")
        assert ours == query(reference, "SELECT model, final_net_assets, tool_calls FROM "
                                        "trials ORDER BY 1")
        assert {t for t, in query(db, "SELECT DISTINCT attempt FROM trials")} == {1}
    finally:
        disk.close()
