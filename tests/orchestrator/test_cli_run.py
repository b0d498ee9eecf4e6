"""``vendbench run`` / ``runs`` as a user runs them: subprocesses, signals, resume, secrets."""

from __future__ import annotations

import json
import re
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .conftest import CANARY, query


def vendbench(*args: str, env_extra: dict | None = None, **kw) -> subprocess.Popen:
    env = {**os.environ, "OPENAI_API_KEY": CANARY, "PYTHONUNBUFFERED": "1", **(env_extra or {})}
    return subprocess.Popen([sys.executable, "-m", "vendbench", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def finish(proc: subprocess.Popen, timeout: float = 240) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=timeout)
    return proc.returncode, out, err


def llm_args(llm, *extra: str) -> list[str]:
    return ["--api-base", llm.url, "--price", "openai/fake=0.4,1.6", "--max-output-tokens",
            "256", *extra]


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """``vendbench ARGS`` in this process (the same entry point, no interpreter start):
    exit code, stdout, stderr."""
    from vendbench.cli import main

    try:
        rc = main(list(args))
    except SystemExit as exc:                 # argparse's own errors
        rc = exc.code
    out, err = capsys.readouterr()
    return rc, out, err


def test_run_json_and_runs_listing(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    rc, out, err = finish(vendbench("run", "--models", "openai/fake", "baseline/order-up-to",
                                    *llm_args(llm), "--seeds", "1", "2", "--days", "3",
                                    "--db", db, "--json", "--name", "smoke"))
    assert rc == 0, err
    payload = json.loads(out)
    assert set(payload) >= {"run_id", "trials"}
    assert len(payload["trials"]) == 4
    for t in payload["trials"]:
        assert set(t) >= {"trial_id", "model", "seed", "repeat", "status", "final_net_assets",
                          "cost_usd", "exchanges", "tool_calls"}
        assert t["status"] == "completed"
    rc, out, err = finish(vendbench("runs", "--db", db))
    assert rc == 0 and payload["run_id"] in out and "smoke" not in out     # 80 columns
    assert max(len(line) for line in out.splitlines() if not line.startswith("#")) <= 80
    rc, out, err = finish(vendbench("runs", "--db", db, "--wide"))
    assert rc == 0 and "smoke" in out and "started" in out                  # every column
    rc, out, err = finish(vendbench("runs", "--db", db, "--run", "latest"))
    assert rc == 0 and max(len(line) for line in out.splitlines()
                           if not line.startswith("#")) <= 80     # the title names the file
    assert "openai/fake" in out and "requests" not in out
    assert all(line == line.rstrip() for line in out.splitlines())        # no trailing spaces
    listed = out
    rc, out, err = finish(vendbench("runs", "--db", db, "--run", "latest", "--wide"))
    assert rc == 0 and "requests" in out and "calls" in out and "cached" in out
    # the run's own table and `runs --run`: the same column names and number formats
    ran = finish(vendbench("run", "--models", "baseline/oracle", "--days", "2", "--db",
                           str(Path(db).with_name("again.duckdb"))))[1]
    def columns(text: str) -> set[str]:
        return set(re.split(r"\s{2,}", next(ln for ln in text.splitlines()
                                            if ln.startswith("model"))))

    assert {"seed", "status", "net assets", "cost USD"} <= columns(ran) & columns(listed)
    assert re.search(r"\d{1,3}(,\d{3})*\.\d\d  +0\.0000", ran)     # 39,520.00  0.0000
    assert re.search(r"\d{1,3}(,\d{3})*\.\d\d  +0\.0000", listed)
    rc, out, err = finish(vendbench("runs", "--db", db, "--run", "latest", "--json"))
    assert rc == 0 and len(json.loads(out)["trials"]) == 4
    rc, out, err = finish(vendbench("leaderboard", "--db", db, "--format", "json"))
    assert rc == 0, err
    rows = {r["model"]: r for r in json.loads(out)["rows"]}
    fake = rows["openai/fake"]
    assert fake["trials"] == 2 and fake["cost_total_usd"] > 0
    assert fake["api_efficiency"] is not None and fake["baseline_pairs"] == 2
    assert rows["baseline/order-up-to"]["api_efficiency"] is None


def test_plain_progress_lines_when_not_a_terminal(llm, tmp_path):
    rc, out, err = finish(vendbench("run", "--models", "openai/fake", *llm_args(llm),
                                    "--days", "2", "--db", str(tmp_path / "r.duckdb")))
    assert rc == 0
    assert "[1/1] openai/fake seed 1 rep 1: completed" in err
    assert "openai/fake" in out and "completed" in out and "spent $" in out


def test_panel_file(llm, tmp_path):
    panel = tmp_path / "nightly.toml"
    panel.write_text(f"""
name = "nightly"
scenario = "autovend"
days = 2
seeds = [1, 2]
repeats = 1
workers = 4
total_budget_usd = 1.0
[[models]]
id = "openai/fake"
budget_usd = 0.2
input_usd_per_mtok = 0.4
output_usd_per_mtok = 1.6
max_context_tokens = 20000
max_output_tokens = 256
api_base = "{llm.url}"
rpm = 6000
max_concurrency = 4
[[models]]
id = "baseline/order-up-to"
""")
    db = str(tmp_path / "r.duckdb")
    rc, out, err = finish(vendbench("run", "--panel", str(panel), "--db", db, "--json"))
    assert rc == 0, err
    assert len(json.loads(out)["trials"]) == 4
    assert query(db, "SELECT name, total_budget_usd FROM runs")[0] == ("nightly", 1)
    panel.write_text(panel.read_text().replace("rpm = 6000", "rpm = 6000\ncolour = 'red'"))
    rc, out, err = finish(vendbench("run", "--panel", str(panel), "--db", db))
    assert rc == 2 and "colour" in err and "Extra inputs" in err


def test_bad_input_is_a_clear_error(llm, tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "r.duckdb")
    cases = [
        (["--models", "openai/fake", "--api-base", llm.url], "no price known"),
        (["--models", "gpt4"], "not a litellm model string"),
        (["--models", "baseline/clever"], "unknown reference policy"),
        (["--models", "openai/fake", "--price", "openai/fake=cheap"], "MODEL=IN,OUT"),
        (["--models", "openai/fake", "--price", "openai/fake=a,b"], "must be numbers"),
        (["--models", "openai/fake", "--price", "openai/other=1,2"], "not in the run"),
        (["--models", "openai/fake", "--budget", "-1"], "positive amount"),
    ]
    for args, message in cases:
        rc, out, err = cli(capsys, "run", *args, "--db", db)
        assert rc == 2 and message in err and "Traceback" not in err, (args, err)
    assert not os.path.exists(db)               # a refused run leaves no file behind
    rc, out, err = cli(capsys, "run", "--resume", "nope", "--db", db)
    assert rc == 2 and "no results database" in err
    rc, out, err = cli(capsys, "run", "--resume", "r", "--temperature", "0.5",
                       "--no-prompt-caching", "--db", db)
    assert rc == 2 and "drop --temperature, --no-prompt-caching" in err
    for flag, value, message in (("--context-strategy", "rolling", "invalid choice"),
                                 ("--context-low-water", "0.95", "from 0.1 up to 0.9"),
                                 ("--temperature", "3", "temperature from 0 up to 2"),
                                 ("--request-timeout", "inf", "seconds above 0 up to 86400"),
                                 ("--timeout", "-1", "seconds above 0 up to 86400"),
                                 ("--tool-choice", "any", "invalid choice"),
                                 ("--max-context-tokens", "3000", "first request alone")):
        rc, out, err = cli(capsys, "run", "--models", "openai/fake", *llm_args(llm), flag,
                           value, "--db", db)
        assert rc == 2 and message in err and "Traceback" not in err, (flag, err)
    assert not os.path.exists(db)
    monkeypatch.setenv("OPENAI_API_KEY", "")
    rc, out, err = cli(capsys, "run", "--models", "openai/fake", *llm_args(llm), "--db", db)
    assert rc == 2 and "OPENAI_API_KEY" in err
    # and once as a user types it, in a process of its own
    rc, out, err = finish(vendbench("run", "--models", "gpt4", "--db", db))
    assert rc == 2 and "not a litellm model string" in err and "Traceback" not in err


def test_per_model_flags_reach_every_request_and_the_stored_config(llm, tmp_path, capsys):
    """--temperature, --request-timeout, --tool-choice, --context-strategy and
    --no-prompt-caching as a user gives them, on --models and over a panel."""
    db = str(tmp_path / "r.duckdb")
    llm.inject("hang", seconds=3)                         # beyond the 0.5 s timeout
    rc, out, err = cli(
        capsys, "run", "--models", "openai/fake", *llm_args(llm), "--days", "2", "--db", db,
        "--temperature", "0.25", "--request-timeout", "0.5", "--tool-choice", "required",
        "--context-strategy", "sliding", "--context-low-water", "0.3", "--no-prompt-caching",
        "--json")
    assert rc == 0, err
    assert json.loads(out)["trials"][0]["status"] == "completed"
    for body in llm.requests:
        assert body["temperature"] == 0.25 and body["tool_choice"] == "required"
        assert "prompt_cache_key" not in body
    (status, latency), = query(db, "SELECT status, latency_ms FROM exchanges "
                                   "WHERE seq = 1 AND attempt = 1")
    assert status == "unknown" and 400 < latency < 2_500       # timed out after ~0.5 s
    stored = json.loads(query(db, "SELECT config_json FROM runs")[0][0])["models"][0]
    assert (stored["context_strategy"], stored["context_low_water"], stored["prompt_caching"],
            stored["request_timeout_s"]) == ("sliding", 0.3, False, 0.5)
    panel = tmp_path / "p.toml"
    panel.write_text(f"""
days = 2
[[models]]
id = "openai/fake"
api_base = "{llm.url}"
input_usd_per_mtok = 0.4
output_usd_per_mtok = 1.6
temperature = 1.0
[[models]]
id = "baseline/oracle"
""")
    sent = len(llm.requests)
    rc, out, err = cli(capsys, "run", "--panel", str(panel), "--temperature", "0.7",
                       "--db", str(tmp_path / "p.duckdb"))
    assert rc == 0, err
    assert {b["temperature"] for b in llm.requests[sent:]} == {0.7}   # overrides the panel


def test_sigterm_marks_trials_interrupted_and_resume_finishes_the_run(llm, tmp_path):
    llm.latency = 0.05
    db = str(tmp_path / "r.duckdb")
    proc = vendbench("run", "--models", "openai/fake", "baseline/order-up-to", *llm_args(llm),
                     "--seeds", "1", "2", "--days", "30", "--db", db)
    def under_way() -> bool:                  # both LLM trials have answered requests
        keys = [r.get("prompt_cache_key") for r in list(llm.requests)]
        return llm.served >= 20 and len(set(keys)) >= 2

    deadline = time.monotonic() + 200         # an event, with a bound against a hang
    while not under_way() and proc.poll() is None:
        assert time.monotonic() < deadline, "the trials never got under way"
        time.sleep(0.05)
    assert proc.poll() is None, finish(proc)
    llm.gate.clear()                          # no trial can finish while the signal lands
    proc.send_signal(signal.SIGTERM)
    rc, out, err = finish(proc)
    llm.gate.set()
    assert rc == 130 and "--resume" in err
    run_id = err.split("vendbench run --resume ")[1].split()[0]
    trials = dict(query(db, "SELECT model || '/' || seed, status FROM trials"))
    assert "running" not in trials.values()
    assert trials["openai/fake/1"] == trials["openai/fake/2"] == "interrupted"
    assert query(db, "SELECT status FROM runs")[0][0] == "interrupted"
    logged = query(db, "SELECT count(*) FROM exchanges")[0][0]
    assert logged >= 20                                  # nothing it had done was lost
    kept = dict(query(db, "SELECT trial_id, ended_at FROM trials WHERE status = 'completed'"))
    trials_before = [t for t, in query(db, "SELECT trial_id FROM trials")]

    spent_before = query(db, "SELECT sum(cost_usd) FROM trials")[0][0]

    rc, out, err = finish(vendbench("run", "--resume", run_id, "--db", db, "--json"))
    assert rc == 0, err
    payload = json.loads(out)
    assert payload["run_id"] == run_id and len(payload["trials"]) == 4
    assert {t["status"] for t in payload["trials"]} == {"completed"}
    # the interrupted trials continued where they stopped, under their own ids
    assert {t["trial_id"] for t in payload["trials"]} == set(trials_before)
    after = dict(query(db, "SELECT trial_id, ended_at FROM trials"))
    assert all(after[t] == ended for t, ended in kept.items())     # kept, not rerun
    segments = query(db, "SELECT t.model, s.segment, s.status, s.from_seq FROM segments s "
                         "JOIN trials t USING (trial_id) ORDER BY t.model, t.seed, s.segment")
    llm_segments = [r for r in segments if r[0] == "openai/fake"]
    assert [r[1:3] for r in llm_segments] == [(1, "interrupted"), (2, "completed")] * 2
    assert all(r[3] > 1 for r in llm_segments if r[1] == 2)      # not from the first request
    assert query(db, "SELECT sum(cost_usd) FROM trials")[0][0] > spent_before
    assert query(db, "SELECT status FROM runs")[0][0] == "completed"
    days = query(db, "SELECT trial_id, count(*), count(DISTINCT day) FROM days GROUP BY 1")
    assert all(n == distinct for _, n, distinct in days)            # no duplicate rows
    assert sum(1 for _, n, _ in days if n == 30) == 4               # four full trials
    calls = query(db, "SELECT trial_id, count(*), count(DISTINCT seq) FROM tool_calls "
                      "GROUP BY 1")
    assert all(n == distinct for _, n, distinct in calls)


def test_no_secret_reaches_the_database_logs_or_output(llm, tmp_path):
    db = str(tmp_path / "r.duckdb")
    llm.inject("500", times=2, echo_auth=True)     # a provider that echoes the key back
    llm.inject("401", echo_auth=True)
    rc, out, err = finish(vendbench("-v", "run", "--models", "openai/fake", *llm_args(llm),
                                    "--days", "2", "--db", db))
    assert rc == 3                                   # a provider error, kept apart
    assert "Bearer" in llm.headers[0]["Authorization"] and \
        CANARY in llm.headers[0]["Authorization"]   # the key really was sent…
    assert CANARY not in out and CANARY not in err   # …and never printed
    reasons = query(db, "SELECT reason FROM trials")[0][0]
    assert "injected 401" in reasons and "***" in reasons
    for table, in query(db, "SELECT table_name FROM information_schema.tables"):
        cols = query(db, "SELECT column_name FROM information_schema.columns WHERE "
                         "table_name = ? AND data_type = 'VARCHAR'", [table])
        for col, in cols:
            hits = query(db, f'SELECT count(*) FROM "{table}" WHERE "{col}" LIKE ?',
                         [f"%{CANARY}%"])[0][0]
            assert hits == 0, (table, col)
    assert CANARY.encode() not in Path(db).read_bytes()


def test_run_status_and_hints_say_what_happened(llm, tmp_path, capsys):
    """A run whose only trial errored is `failed`, not `completed`; a request refused as
    asked gets no resume hint (resume would send it again); reasons are whole."""
    db = str(tmp_path / "r.duckdb")
    llm.inject("400")                      # not retried: the same request would fail
    rc, out, err = cli(capsys, "run", "--models", "openai/fake", *llm_args(llm),
                       "--days", "2", "--db", db)
    assert rc == 3
    assert query(db, "SELECT status FROM runs")[0][0] == "failed"
    assert "(failed)" in out
    assert "vendbench run --resume" not in err and "that one cannot succeed as sent" in err
    assert "1 trial ended" in err and "trial(s)" not in err and "1 the server" not in err
    reason = query(db, "SELECT reason FROM trials")[0][0]
    assert len(reason) > 60 and "start a new run" in reason
    assert " ".join(out.split()).count(" ".join(reason.split())) == 1   # printed whole
    assert max(len(line) for line in out.splitlines() if db not in line) <= 80, out

    # one trial of two erring: completed_with_errors, and an error resume may fix
    db2 = str(tmp_path / "r2.duckdb")
    panel = tmp_path / "p.toml"
    panel.write_text(f'days = 2\nmax_attempts = 2\nretry_backoff_s = 0.01\n[[models]]\n'
                     f'id = "openai/fake"\napi_base = "{llm.url}"\ninput_usd_per_mtok = 0.4\n'
                     f'output_usd_per_mtok = 1.6\nmax_output_tokens = 256\n'
                     f'[[models]]\nid = "baseline/order-up-to"\n')
    llm.inject("500", times=2)
    rc, out, err = cli(capsys, "run", "--panel", str(panel), "--db", db2)
    assert rc == 3
    assert query(db2, "SELECT status FROM runs")[0][0] == "completed_with_errors"
    assert "vendbench run --resume" in err and "cannot succeed as sent" not in err
    assert max(len(line) for line in out.splitlines() if db2 not in line) <= 80, out


def test_a_password_in_the_endpoint_is_refused_in_one_line_and_never_kept(tmp_path, capsys):
    """``--api-base http://user:pass@host/v1`` cannot work (litellm's HTTP client refuses
    credentials in the URL beside the key's Authorization header): refused before the
    results file exists, with the password masked. Should such an endpoint reach a
    config anyway, what is stored of it (the run's config, the provider's limits and
    events) is masked."""
    from vendbench.cli import main
    from vendbench.orchestrator import build_config
    from vendbench.orchestrator._clients import Clients

    from ..fakellm import FakeLLM

    password = "pw-9f3e1d0c"
    db = tmp_path / "r.duckdb"
    with FakeLLM() as llm:
        secret_base = llm.url.replace("http://", f"http://alice:{password}@")
        for command in (["run", "--db", str(db)], ["check"]):
            code = main([*command, "--models", "openai/fake", "--api-base", secret_base,
                         "--price", "openai/fake=0.4,1.6", "--days", "2"])
            out, err = capsys.readouterr()
            assert code == 2 and password not in out + err
            assert f"{llm.url.replace('http://', 'http://***@')} carries a user and " \
                   "password" in err
        assert not db.exists() and llm.served == 0
        config = build_config({"models": [{"id": "openai/fake", "api_base": secret_base,
                                           "input_usd_per_mtok": 1, "output_usd_per_mtok": 1}]})
        assert password not in config.stored().model_dump_json()
        assert "http://***@127.0.0.1" in config.stored().model_dump_json()
        clients = Clients(config, {"openai/fake": None})
        clients.client(config.models[0])
        assert list(clients.limits) == [llm.url.replace("http://", "http://***@")]


def test_a_request_left_waiting_shows_in_the_progress(tmp_path, monkeypatch):
    """A server that accepts a request and holds it: the run used to be silent for as long
    as it waited. Not on a terminal, the progress says how many requests wait and for how
    long, every WAIT_REPORT_S."""
    import io
    import threading

    from vendbench import ui
    from vendbench.cli import main

    from ..fakellm import FakeLLM

    class Stderr(io.StringIO):
        """What the run prints, and an event once it says a request waits."""
        seen = threading.Event()

        def write(self, text: str) -> int:
            if "1 request waiting for a reply, for" in text:
                self.seen.set()
            return super().write(text)

    err = Stderr()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(ui, "WAIT_REPORT_S", 0.3)
    with FakeLLM() as llm:
        llm.gate.clear()                        # every reply waits until the run says so

        def release() -> None:
            err.seen.wait(60)
            llm.gate.set()

        threading.Thread(target=release, daemon=True).start()
        code = main(["run", "--models", "openai/fake", "--api-base", llm.url, "--price",
                     "openai/fake=0.4,1.6", "--days", "1", "--db", str(tmp_path / "r.duckdb")])
    assert err.seen.is_set(), err.getvalue()
    assert code == 0


def test_output_stays_in_order_when_piped_into_one_stream(llm, tmp_path):
    """``vendbench run ... 2>&1 | cat``: the run's table (stdout) came after the warnings
    that follow it (stderr), stdout being block-buffered in a pipe."""
    llm.inject("401", times=5)
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"},
           "OPENAI_API_KEY": CANARY}                         # stdout buffered, as in a pipe
    proc = subprocess.run([sys.executable, "-m", "vendbench", "run", "--models", "openai/fake",
                           "baseline/oracle", *llm_args(llm), "--days", "1", "--db",
                           str(tmp_path / "r.duckdb")], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=240)
    rc, out = proc.returncode, proc.stdout
    lines = out.splitlines()
    table = next(i for i, ln in enumerate(lines) if ln.startswith("# run "))
    warned = next(i for i, ln in enumerate(lines) if "ended in a harness or provider" in ln)
    forecast = next(i for i, ln in enumerate(lines) if ln.startswith("cost forecast"))
    assert rc == 3 and forecast < table < warned, out
