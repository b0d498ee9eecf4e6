"""The worlds inside Inspect AI (design §22): `inspect eval vendbench/autovend` through
Inspect's own CLI and entry point, its logs imported and ranked beside vendbench's own
runs; a trial through Inspect's agent plays as vendbench's loop plays it; any solver can
replace the agent; bad logs are refused in one line with nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ChatMessageAssistant, ModelOutput, get_model
from inspect_ai.solver import generate
from inspect_ai.tool import ToolCall

from vendbench.cli import main
from vendbench.environment import DAY_OVER
from vendbench.errors import ConfigError
from vendbench.inspect import autovend, import_logs, network
from vendbench.results import Store

from ..fakellm import FakeLLM

ROOT = Path(__file__).resolve().parents[2]


def calls(*names: str, args: dict | None = None) -> ModelOutput:
    """A mock reply that calls the named tools, in order."""
    return ModelOutput.from_message(ChatMessageAssistant(content="", tool_calls=[
        ToolCall(id=f"c{i}", function=n, arguments=args or {}) for i, n in enumerate(names)]),
        stop_reason="tool_calls")


def mock(*outputs: ModelOutput):
    return get_model("mockllm/model", custom_outputs=list(outputs))


def _text(content) -> str:
    """A message's text, whether sent as a string or as parts."""
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content)
    return content or ""


def run_eval(task, model, tmp_path, **kwargs) -> Path:
    (log,) = inspect_eval(task, model=model, log_dir=str(tmp_path / "logs"), display="none",
                          **kwargs)
    return Path(log.location)


def rows(db: str, sql: str) -> list[tuple]:
    with Store(db, read_only=True) as store:
        return store.con.execute(sql).fetchall()


def test_inspect_eval_cli_runs_the_task_and_its_log_ranks_on_the_leaderboard(tmp_path, capsys):
    """The issue's check: Inspect's CLI finds vendbench/autovend through the entry point;
    the mock model never calls a tool, so the default agent stops after three replies
    (agent_stopped, scored 0, as vendbench's loop scores it)."""
    logs = tmp_path / "logs"
    out = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "vendbench/autovend",
                          "--model", "mockllm/model", "-T", "days=6", "--log-dir", str(logs),
                          "--display", "none"], capture_output=True, text=True, timeout=200)
    assert out.returncode == 0, out.stdout + out.stderr
    (log,) = logs.glob("*.eval")
    sample = read_eval_log(str(log)).samples[0]
    score = sample.scores["world_score"]
    assert (score.value, score.answer) == (0.0, "agent_stopped")
    # its share (design §34): the stopped trial's 0 lost more than the oracle gains over
    # doing nothing in 6 days, so -100 %
    assert score.metadata["oracle_share"] == -1.0 and score.metadata["oracle_score"] > \
        score.metadata["idle_score"] == 40_000 - 6 * (80 + 20 * 4)

    db = str(tmp_path / "panel.duckdb")
    assert main(["run", "--models", "baseline/order-up-to", "--days", "6", "--seeds", "1",
                 "--db", db, "--json"]) == 0
    assert main(["import-inspect", str(log), "--db", db, "--json"]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--run", "all", "--format", "json"]) == 0
    board = json.loads(capsys.readouterr().out)
    ranked = {r["model"]: r for r in board["rows"]}
    assert set(ranked) == {"baseline/order-up-to", "inspect/mockllm/model"}  # one cohort
    mock_row = ranked["inspect/mockllm/model"]
    assert (mock_row["trials"], mock_row["completed"], mock_row["harness"]) == (1, 0, "inspect")
    assert mock_row["mean_net_assets"] == 0 and mock_row["beats_baseline"] == 0
    assert rows(db, "SELECT status, reason, input_tokens > 0, exchanges FROM trials WHERE "
                    "model = 'inspect/mockllm/model'") == [
        ("agent_stopped", "3 replies in a row without a tool call", True, 3)]
    # imported twice: skipped, nothing doubled
    assert main(["import-inspect", str(log), "--db", db]) == 0
    assert "already imported" in capsys.readouterr().out
    assert rows(db, "SELECT count(*) FROM trials") == [(2,)]


def test_a_trial_through_inspect_plays_as_vendbench_plays_it(tmp_path, monkeypatch, capsys):
    """The same scripted model on the tests' local server, once through vendbench's loop
    and once through Inspect's openai provider and agent: the same calls, the same world,
    the same score; imported, the two pair on the leaderboard."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-inspect")
    db = str(tmp_path / "both.duckdb")
    with FakeLLM() as llm:
        assert main(["run", "--models", "openai/fake-model", "--api-base", llm.url,
                     "--price", "openai/fake-model=0.4,1.6", "--days", "3", "--seeds", "1",
                     "--db", db, "--json"]) == 0
        ours = [r for r in llm.requests]
        log = run_eval(autovend(days=3), get_model("openai/fake-model", base_url=llm.url,
                                                   responses_api=False), tmp_path)
        theirs = llm.requests[len(ours):]
    # what the model was sent: the same briefing, report, tools and turns (Inspect's
    # openai provider sends the system message as OpenAI's "developer")
    def turns(request: dict) -> list[tuple[str, str]]:
        return [({"developer": "system"}.get(m["role"], m["role"]), _text(m.get("content")))
                for m in request["messages"]]

    assert [r for r, _ in turns(theirs[-1])] == [r for r, _ in turns(ours[-1])]
    assert turns(theirs[0])[:2] == turns(ours[0])[:2]
    assert [t["function"]["name"] for t in theirs[0]["tools"]] == \
        [t["function"]["name"] for t in ours[0]["tools"]]

    capsys.readouterr()
    assert main(["import-inspect", str(log), "--db", db, "--json"]) == 0
    (imported,) = json.loads(capsys.readouterr().out)
    assert imported["completed"] == 1
    trials = rows(db, "SELECT model, status, score, tool_calls, days_completed FROM trials "
                      "ORDER BY model")
    assert trials[0][1:] == trials[1][1:] and trials[0][1] == "completed"
    assert [t[0] for t in trials] == ["inspect/openai/fake-model", "openai/fake-model"]
    # the replay wrote what vendbench's own runs keep: a row per day, every call
    assert rows(db, "SELECT t.model, count(DISTINCT d.day), count(DISTINCT c.seq) FROM trials t "
                    "JOIN days d USING (trial_id) JOIN tool_calls c USING (trial_id) "
                    "GROUP BY t.model ORDER BY t.model") == [
        ("inspect/openai/fake-model", 3, trials[0][3]), ("openai/fake-model", 3, trials[0][3])]
    assert main(["leaderboard", "--db", db, "--run", "all", "--format", "json"]) == 0
    board = {r["model"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    assert board["inspect/openai/fake-model"]["mean_net_assets"] == \
        board["openai/fake-model"]["mean_net_assets"]
    # the viewer shows the imported trial day by day, with its calls
    site = tmp_path / "site"
    assert main(["view", "--db", db, "--static", str(site)]) == 0
    (page,) = (site / "trial").glob("inspect-*/day-1.html")
    text = page.read_text()
    assert "place_order" in text and "write_notes" in text
    assert "Day 1 of 3" in text                     # the report the model read
    # its requests are exchanges as vendbench's own: the same count, each carrying the
    # messages it was sent, the calls linked to the reply that made them
    assert rows(db, "SELECT t.model, count(*), max(json_array_length(json_extract("
                    "e.request_json, '$.message_ids'))) FROM exchanges e JOIN trials t "
                    "USING (trial_id) GROUP BY t.model ORDER BY t.model") == [
        ("inspect/openai/fake-model", 6, len(theirs[-1]["messages"])),
        ("openai/fake-model", 6, len(ours[-1]["messages"]))]
    assert rows(db, "SELECT count(*) FROM tool_calls c JOIN trials t USING (trial_id) "
                    "WHERE t.model LIKE 'inspect/%' AND c.exchange_seq IS NULL") == [(0,)]


def test_calls_made_after_their_day_ended_are_refused_and_replayed_so(tmp_path):
    log = run_eval(autovend(days=2), mock(calls("end_day", "read_notes"),
                                          calls("end_day")), tmp_path)
    sample = read_eval_log(str(log)).samples[0]
    results = [json.loads(m.text) for m in sample.messages if m.role == "tool"]
    assert results[1] == DAY_OVER and results[2]["ok"]
    assert sample.scores["world_score"].answer == "completed"
    db = str(tmp_path / "r.duckdb")
    import_logs([str(log)], db)
    assert rows(db, "SELECT day, name, ok FROM tool_calls ORDER BY seq") == [
        (1, "end_day", True), (1, "read_notes", False), (2, "end_day", True)]


def test_any_solver_can_replace_the_agent(tmp_path):
    """``generate()`` reads the world's tools from the state the setup filled."""
    log = run_eval(network(days=2), mock(calls("wait_for_next_day"),
                                         calls("wait_for_next_day"),
                                         ModelOutput.from_content("mockllm/model", "done")),
                   tmp_path, solver=generate())
    score = read_eval_log(str(log)).samples[0].scores["world_score"]
    assert score.answer == "completed" and score.metadata["days_completed"] == 2
    assert score.value == score.metadata["standing"] != 0


def test_bad_logs_are_refused_in_one_line_and_nothing_is_written(tmp_path):
    good = run_eval(autovend(days=2), mock(calls("end_day"), calls("end_day")), tmp_path)
    db = str(tmp_path / "none.duckdb")

    def refused(path: Path, words: str) -> None:
        with pytest.raises(ConfigError) as err:
            import_logs([str(good), str(path)], db)       # the good one is not written either
        assert words in str(err.value) and "\n" not in str(err.value)
        assert not Path(db).exists() or rows(db, "SELECT count(*) FROM runs") == [(0,)]

    # a log of another task
    from inspect_ai import Task
    from inspect_ai.dataset import Sample
    other = run_eval(Task(dataset=[Sample(input="hi")]), "mockllm/model", tmp_path / "o")
    refused(other, "not of vendbench's")
    # a truncated file
    cut = tmp_path / "cut.eval"
    cut.write_bytes(good.read_bytes()[:2000])
    refused(cut, "not a readable Inspect log")
    # a log without scores
    unscored = run_eval(autovend(days=2), mock(calls("end_day"), calls("end_day")),
                        tmp_path / "u", score=False)
    refused(unscored, "has no vendbench score")
    # a log whose calls do not replay: a tool result changed after the fact
    log = read_eval_log(str(good))
    for event in log.samples[0].events:
        if getattr(event, "event", None) == "tool" and event.function == "end_day":
            event.result = event.result.replace('"closed_day":1', '"closed_day":7')
            break
    forged = tmp_path / "forged.eval"
    write_eval_log(log, str(forged))
    refused(forged, "answers differently when replayed")
    # a score whose metadata was edited
    log = read_eval_log(str(good))
    del log.samples[0].scores["world_score"].metadata["standing"]
    edited = tmp_path / "edited.eval"
    write_eval_log(log, str(edited))
    refused(edited, "its vendbench scores are not as the task writes them (KeyError")
    # design §30: forged numbers: a negative or infinite cost, an infinite or huge seed
    from inspect_ai.model import ModelUsage

    for cost, words in ((-1000.0, "-1000.0 is not a cost"), (float("inf"), "inf is not a cost")):
        log = read_eval_log(str(good))
        log.samples[0].model_usage = {"mockllm/model": ModelUsage(
            input_tokens=1, output_tokens=1, total_tokens=2, total_cost=cost)}
        forged = tmp_path / f"cost-{cost}.eval"
        write_eval_log(log, str(forged))
        refused(forged, words)
    for key, value in (("seed", float("inf")), ("seed", 10**30), ("world_seed", -1),
                       ("days", 2.5)):
        log = read_eval_log(str(good))
        log.samples[0].scores["world_score"].metadata[key] = value
        forged = tmp_path / f"{key}-{value}.eval"
        write_eval_log(log, str(forged))
        refused(forged, f"its {key} {value!r} is not a whole number")
    # a member that expands far past its compressed size (a zip bomb), refused unread
    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            z.writestr(info, src.read(info))
        z.writestr("samples/padding.json", b" " * (80 << 20))
    assert bomb.stat().st_size < 1 << 20
    refused(bomb, "would expand from")
    # the good one alone goes in (listed twice: once)
    first, again = import_logs([str(good), str(good)], db)
    assert (first.skipped, again.skipped) == (None, "listed twice")
    assert rows(db, "SELECT count(*), min(status) FROM trials") == [(1, "completed")]
    assert zipfile.is_zipfile(good)


def test_a_private_world_replays_only_with_its_salt(tmp_path, monkeypatch):
    monkeypatch.setenv("VENDBENCH_WORLD_SALT", "s3cret-salt-for-the-test")
    log = run_eval(autovend(days=2), mock(calls("end_day"), calls("end_day")), tmp_path)
    assert "s3cret" not in log.read_bytes().decode("latin-1")     # never in the log
    db = str(tmp_path / "p.duckdb")
    monkeypatch.delenv("VENDBENCH_WORLD_SALT")
    with pytest.raises(ConfigError, match="played private worlds; set VENDBENCH_WORLD_SALT"):
        import_logs([str(log)], db)
    monkeypatch.setenv("VENDBENCH_WORLD_SALT", "another salt")
    with pytest.raises(ConfigError, match="not a log of this world"):
        import_logs([str(log)], db)
    monkeypatch.setenv("VENDBENCH_WORLD_SALT", "s3cret-salt-for-the-test")
    import_logs([str(log)], db)
    assert rows(db, "SELECT t.status, r.world_salt_sha256 IS NOT NULL FROM trials t JOIN runs r "
                    "USING (run_id)") == [("completed", True)]


def test_vendbench_without_inspect_works_and_points_to_the_extra(tmp_path):
    """The core install does not pull Inspect: vendbench imports without it, and what
    needs it says how to install it, in one line."""
    blocked = ("import sys; sys.modules['inspect_ai'] = None\n"
               "import vendbench, vendbench.cli, vendbench.orchestrator, vendbench.leaderboard\n")
    ok = subprocess.run([sys.executable, "-c", blocked + "print('ok')"], capture_output=True,
                        text=True, timeout=60)
    assert ok.stdout.strip() == "ok", ok.stderr
    # what Inspect's entry-point loader would meet (it logs the message of what it catches)
    entry = subprocess.run([sys.executable, "-c", blocked + (
        "try:\n    import vendbench.inspect._registry\n"
        "except ImportError as exc:\n    print('ImportError:', exc)")],
        capture_output=True, text=True, timeout=60)
    assert entry.stdout.startswith("ImportError: Inspect AI is not installed: pip install "
                                   "'vendbench[inspect]'"), entry.stdout + entry.stderr
    cli = subprocess.run([sys.executable, "-c", blocked + "sys.exit(vendbench.cli.main("
                          f"['import-inspect', 'x.eval', '--db', {str(tmp_path / 'x.duckdb')!r}]))"],
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode != 0 and "Traceback" not in cli.stderr
    assert cli.stderr.strip().count("\n") == 0 and "vendbench[inspect]" in cli.stderr
    import tomllib
    core = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert not any(d.startswith("inspect") for d in core)


def test_a_path_that_is_no_log_file_is_named_for_what_it_is(tmp_path):
    """design §30: import-inspect said "no such file" of /dev/zero, a FIFO and a
    directory, which all exist."""
    import os

    from vendbench.inspect._logs import read_log

    fifo = tmp_path / "pipe.eval"
    os.mkfifo(fifo)
    for path, words in ((str(tmp_path / "missing.eval"), "no such file"),
                        (str(tmp_path), "a directory, not a log"),
                        (str(fifo), "a named pipe, not an Inspect log file"),
                        ("/dev/zero", "a character device, not an Inspect log file")):
        with pytest.raises(ConfigError) as err:
            read_log(path)
        assert words in str(err.value) and "\n" not in str(err.value), (path, err.value)


def test_export_inspect_writes_a_run_as_logs_inspect_reads(tmp_path, monkeypatch, capsys):
    """design §35.7: the other direction. A run of an LLM and a policy becomes a log a
    model that Inspect reads: a sample a trial, scored as the task scores it, the LLM's
    conversation as stored and its calls as the world ran them; a policy's calls as
    assistant and tool messages. import-inspect refuses the export (its trials are
    vendbench's already)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-export")
    db = str(tmp_path / "run.duckdb")
    with FakeLLM() as llm:
        assert main(["run", "--models", "openai/fake-model", "baseline/order-up-to",
                     "--api-base", llm.url, "--price", "openai/fake-model=0.4,1.6",
                     "--days", "6", "--seeds", "1", "--db", db, "--json"]) == 0
        sent = llm.requests[0]["messages"]
    capsys.readouterr()
    assert main(["leaderboard", "--db", db, "--format", "json"]) == 0
    board = {r["model"]: r for r in json.loads(capsys.readouterr().out)["rows"]}
    out = tmp_path / "logs"
    assert main(["export-inspect", str(out), "--db", db]) == 0
    paths = capsys.readouterr().out.split()
    logs = {read_eval_log(p).eval.model: read_eval_log(p) for p in paths}
    assert set(logs) == {"openai/fake-model", "baseline/order-up-to"}
    for model, log in logs.items():
        (sample,) = log.samples
        (trial,) = rows(db, "SELECT trial_id, score, status, cost_usd FROM trials WHERE "
                            f"model = '{model}'")
        score = sample.scores["world_score"]
        assert (sample.id, score.value, score.answer) == (trial[0], trial[1], "completed")
        assert score.metadata["oracle_share"] == pytest.approx(board[model]["oracle_share"])
        assert log.results.scores[0].metrics["mean"].value == trial[1]
        assert log.eval.task == "vendbench/autovend" and log.eval.task_args == {"days": 6}
        # every call the world ran, in order, as the assistant's tool calls
        made = [c.function for m in sample.messages if m.role == "assistant"
                for c in m.tool_calls or []]
        assert made == [n for (n,) in rows(db, "SELECT c.name FROM tool_calls c JOIN trials "
                                               f"t USING (trial_id) WHERE t.model = '{model}' "
                                               "ORDER BY c.seq")] and made
        answered = [m.tool_call_id for m in sample.messages if m.role == "tool"]
        assert len(answered) == len(made) and all(answered)
    llm_sample = logs["openai/fake-model"].samples[0]
    # the LLM's conversation begins as it was sent: the briefing and day 1's report
    assert [(m.role, m.text) for m in llm_sample.messages[:2]] == \
        [(m["role"], _text(m["content"])) for m in sent[:2]]
    assert llm_sample.metadata["cost_usd"] > 0
    assert logs["openai/fake-model"].stats.model_usage["openai/fake-model"].output_tokens > 0
    assert logs["baseline/order-up-to"].stats.model_usage == {}
    # the export is no Inspect run to import
    with pytest.raises(ConfigError, match="written by vendbench export-inspect"):
        import_logs([paths[0]], str(tmp_path / "other.duckdb"))
    # a run imported from Inspect exports with its system prompt first too (its messages
    # are numbered from 1, where vendbench's own keep the window's note)
    played = run_eval(autovend(days=2), mock(calls("end_day"), calls("end_day")), tmp_path)
    (imported,) = import_logs([str(played)], db)
    assert main(["export-inspect", str(out), "--db", db, "--run", imported.run_id]) == 0
    (again,) = capsys.readouterr().out.split()
    roles = [m.role for m in read_eval_log(again).samples[0].messages]
    assert roles[:3] == ["system", "user", "assistant"], roles
    # bad inputs in one line each
    (tmp_path / "a-file").write_text("")
    for argv, words in ((["export-inspect", str(tmp_path / "a-file"), "--db", db],
                         "give a folder"),
                        (["export-inspect", str(out), "--db", db, "--run", "nope"],
                         "no run 'nope'")):
        assert main(argv) == 2
        assert words in capsys.readouterr().err
