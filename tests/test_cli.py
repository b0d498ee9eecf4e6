"""The ``vendbench`` command line (design §3.1, the ``baseline`` line)."""

from __future__ import annotations

import json
from decimal import Decimal
import os
import re
import subprocess
import sys

import pytest

from vendbench.cli import main


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "vendbench.cli", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


def test_baseline_json_contract():
    out = run_cli("baseline", "--days", "5", "--seed", "2", "--json")
    assert out.returncode == 0, out.stderr
    rec = json.loads(out.stdout)
    assert rec["scenario"] == "autovend" and rec["seed"] == 2 and rec["days"] == 5
    assert rec["status"] == "completed" and rec["initial_cash"] == 40000.0
    for key in ("final_cash", "final_net_assets", "wall_seconds"):
        assert isinstance(rec[key], float)


def test_baseline_several_seeds_and_policies_summarise(capsys):
    assert main(["baseline", "--policy", "all", "--seeds", "1", "2", "--days", "3",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["trials"]) == 6              # every policy, doing nothing's included
    assert [s["policy"] for s in out["summary"]] == ["baseline/order-up-to", "baseline/oracle",
                                                     "baseline/idle"]
    assert all(s["trials"] == 2 and s["cv"] is not None for s in out["summary"])


def test_baseline_table_output(capsys):
    assert main(["baseline", "--days", "2"]) == 0
    text = capsys.readouterr().out
    assert "baseline/order-up-to" in text and "net assets" in text


@pytest.mark.parametrize("args,message", [
    (["baseline", "--days", "0"], "days is 1-365, got 0"),
    (["baseline", "--days", "-5"], "days is 1-365, got -5"),      # one wording, any side
    (["trend", "--last", "0"], "a count is 1-"),
    (["trend", "--last", "-2"], "a count is 1-"),
    (["baseline", "--seed", "99999999999999999999999"], "a seed is 0-2,147,483,647"),
    (["baseline", "--days", "many"], "whole number"),
    (["baseline", "--policy", "greedy"], "unknown autovend policy 'greedy'"),
    (["baseline", "--scenario", "network", "--policy", "orcle"], "Did you mean: oracle"),
    (["baseline", "--seed", "-3"], "a seed is 0-2,147,483,647, got -3"),
    (["baseline", "--scenario", "prosus"], "unknown scenario"),
    (["baseline", "--seed", "1", "--seeds", "2"], "not allowed"),
])
def test_bad_input_is_a_clear_error_with_exit_code_2(args, message):
    out = run_cli(*args)
    assert out.returncode == 2 and message in out.stderr
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1          # one line, no usage block


def test_help_teaches():
    out = run_cli("baseline", "--help")
    assert out.returncode == 0
    for word in ("order-up-to", "oracle", "--seeds", "--json", "examples"):
        assert word in out.stdout


def test_neither_help_nor_baseline_imports_litellm():
    code = ("import sys\nfrom vendbench.cli import main\n"
            "main(['baseline', '--days', '2', '--json'])\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "assert 'litellm' not in sys.modules, 'litellm imported'\nprint('clean')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and "clean" in out.stdout, out.stderr


def test_one_day_is_one_day(capsys):
    assert main(["baseline", "--days", "1"]) == 0
    out = capsys.readouterr().out
    assert "reference policies, 1 day (CNY)" in out and "1 days" not in out


def test_progress_shows_the_time_left_from_the_days_played():
    from types import SimpleNamespace

    from vendbench.ui import RunProgress, eta_text

    assert [eta_text(s) for s in (0, 45, 250, 7500)] == ["0s", "45s", "4m10s", "2h05m"]
    progress = RunProgress(SimpleNamespace(days=10, scenario="autovend", names_worlds=False),
                           enabled=False)
    progress._total, progress._started = 2, 100.0
    assert progress._eta(now=130.0) == ""                          # nothing played yet
    progress._rows = {"a": {"status": "completed", "day": 4},      # ended: all 10 count
                      "b": {"status": "running", "day": 6}}        # on day 6: 5 played
    assert progress._eta(now=130.0) == " · ETA 10s"                # 15 of 20 days in 30 s
    # design §35.6: a trial on its last day is not done ("ETA 0s" mid-trial)
    progress._rows["b"]["day"] = 10
    assert progress._eta(now=130.0) == " · ETA 2s"                 # 19 of 20 in 30 s
    progress._started = 129.99
    assert progress._eta(now=130.0) == " · ETA under 1s"


def test_a_long_model_name_breaks_between_its_parts_at_80_columns(monkeypatch, capsys):
    """design §35.6: the run's final table broke names mid-word at 80 columns."""
    import sys

    from vendbench.ui import print_table, wrap_name

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "80")
    name = "anthropic/claude-sonnet-4-5-20250929 [effort=high, context=compact]"
    print_table("run r (completed)", ["model", "seed", "status", "net assets", "cost USD",
                                      "cached", "calls"],
                [[name, "1", "budget_exhausted", "1,234,567.89", "12.3456", "91%", "2,639"]])
    out = re.sub(r"\x1b\[[0-9;]*m", "", capsys.readouterr().out)   # the terminal's bold
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 80, out
    pieces = [line.split("  ")[0].strip() for line in lines[2:] if line.strip()]
    assert "".join(p if p.endswith(("/", "-")) else p + " " for p in pieces).strip() == name
    at = 0
    for piece in pieces[:-1]:                # each break after a "/", a "-" or a space
        at = name.index(piece, at) + len(piece)
        assert name[at - 1] in "/-" or name[at] == " ", (piece, pieces)
    assert wrap_name("openai/gpt-5", 80) == "openai/gpt-5"           # it fits: as it is


def test_the_live_table_fits_80_columns_and_a_resume_says_what_it_resumes():
    """The live run table wrapped model names at 80 columns, a resume first showed
    "trials 0/0", and a model's setting in brackets was read as markup and vanished
    (design §31)."""
    from types import SimpleNamespace

    from rich.console import Console

    from vendbench.ui import RunProgress

    config = SimpleNamespace(days=180, scenario="autovend", names_worlds=False, repeats=1)
    progress = RunProgress(config, enabled=False, resuming="20261204-010203-abcd")
    console = Console(width=80, record=True)
    console.print(progress._render())
    assert "resuming run 20261204-010203-abcd" in console.export_text()
    progress._pool, progress._total = SimpleNamespace(spent=1.5, limit=None), 12
    names = ["anthropic/claude-sonnet-4-5", "openai/gpt-4.1-mini-2025-04-14",
             "gemini/gemini-2.5-pro [effort=low]"]
    for i, (model, status) in enumerate(zip(names, ["running", "budget_exhausted",
                                                    "completed"])):
        progress._rows[str(i)] = {"model": model, "seed": 12, "repeat": 1, "status": status,
                                  "day": 180, "net": 1_234_567.0, "cost": 12.3456}
    console.print(progress._render())
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= 80, text
    for model in names[:2]:                        # 30 characters: on one line, whole
        assert any(line.startswith(model + " ") for line in text.splitlines()), text
    assert "[effort=low]" in text                    # a setting, not markup


def test_serve_says_it_writes_its_database():
    out = run_cli("serve", "--help")
    assert "the trials are written to it" in " ".join(out.stdout.split())
    assert "read as committed" not in " ".join(out.stdout.split())


@pytest.mark.parametrize("command", ["", "baseline", "run", "runs", "leaderboard", "trend",
                                     "serve", "view", "check", "screen",
                                     "import-inspect"])
def test_every_help_fits_80_columns_with_its_own_examples(command):
    """Descriptions and prose re-filled, every example line within 80 columns, and a
    line continuation in an example kept (a backslash ends the line, the next goes on)."""
    out = run_cli(*([command] if command else []), "--help", env={"COLUMNS": "80"})
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    examples = [line for line in lines if line.lstrip().startswith("vendbench ")]
    assert examples, "no examples"
    if command:                                   # a subcommand shows its own
        assert all(line.split()[1] == command for line in examples), examples
    for i, line in enumerate(lines):
        if line.rstrip().endswith("\\"):
            assert lines[i + 1].startswith(" ") and lines[i + 1].strip().startswith("--")


def test_names_are_printed_as_plain_text_on_a_terminal(tmp_path, monkeypatch, capsys):
    """design §30: a run named "nightly[/x]" ended `runs` in rich's MarkupError on a
    terminal; a model named "[link=…]" printed as a hidden hyperlink; one holding escape
    sequences retitled and cleared the terminal. Every name prints as plain text."""
    import sys

    from vendbench.results import Store

    db = str(tmp_path / "r.duckdb")
    assert main(["run", "--models", "baseline/order-up-to", "--days", "2", "--seeds", "1",
                 "--name", "nightly[/x]", "--db", db, "--json"]) == 0
    evil = "[link=https://evil.example/]openai/gpt-5[/link]\x1b]0;owned\x07\x1b[2J"
    with Store(db) as store:
        store.con.execute("UPDATE trials SET model = ?", [evil])
    capsys.readouterr()
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    for args in (["runs"], ["runs", "--wide"], ["leaderboard"], ["trend"]):
        assert main([*args, "--db", db]) in (0, 1), args
        out = capsys.readouterr().out
        assert "\x1b]" not in out and "\x1b[2J" not in out, args
        if args == ["runs", "--wide"]:
            assert "[/x]" in out, out          # folded in a narrow terminal, but shown
        if args[0] == "leaderboard":
            assert "[link=https://evil.example/]openai/gpt-5[/link]\\x1b]0;owned\\x07" in out


def _examples(text: str) -> list[str]:
    """The ``vendbench`` command lines of a help's examples or a docs page's code,
    continuation lines joined, comments dropped."""
    lines, current = [], ""
    for raw in text.splitlines():
        line = raw.strip()
        if current:
            current += " " + line
        elif line.startswith(("vendbench ", "$ vendbench ")):
            current = line.removeprefix("$ ")
        else:
            continue
        if current.endswith("\\"):
            current = current[:-1].strip()
            continue
        lines.append(current.split("  #")[0].strip())
        current = ""
    return lines


def _forecast_problems(line: str) -> list[str]:
    """What vendbench's own forecast says is wrong with an example: a trial forecast
    above its --budget (or --trial-budget), a run's trials above its total budget, a
    comparison's first batch above its budget. Nothing is run or sent."""
    import shlex

    from vendbench.cli import _parser, arena, compare, run
    from vendbench.errors import ConfigError, UnknownPriceError
    from vendbench.orchestrator import forecast_run

    argv = shlex.split(line)[1:]
    if argv[0] not in ("run", "compare", "arena") or {"--resume", "--show", "--panel",
                                                      "--plan"} & set(argv):
        return []
    args = _parser().parse_args(argv)
    config = {"run": run.config_from_args, "arena": arena.config_from_args,
              "compare": lambda a: compare._spec(a).base}[argv[0]](args)
    try:
        panel = forecast_run(config, keys=False)
    except UnknownPriceError:              # models the example leaves for the user to price
        return []
    problems = [f"{m.model}: ${m.trial.usd:.2f} a trial, above its ${m.budget}"
                for m in panel.models if m.budget is not None and m.trial.usd is not None
                and m.trial.usd > m.budget]
    whole = sum((m.trial.usd * m.trials for m in panel.models if m.trial.usd), Decimal(0))
    if config.total_budget_usd is not None and whole > config.total_budget_usd:
        problems.append(f"its trials ${whole:.2f}, above the total ${config.total_budget_usd}")
    if argv[0] == "compare":
        from vendbench.compare._run import _first_batch_fits

        try:
            _first_batch_fits(compare._spec(args))
        except ConfigError as exc:
            problems.append(str(exc))
    return problems


def test_every_example_fits_its_budget_by_vendbenchs_own_forecast(capsys, monkeypatch):
    """design §35.6: `vendbench --help`'s first run example (180 days at $2 a trial) was
    forecast by vendbench itself to run out of budget. Every example of the helps and
    of the docs that sets a budget fits it."""
    import contextlib
    import io
    from pathlib import Path

    from vendbench.orchestrator import _preflight

    monkeypatch.setattr(_preflight, "unreachable", lambda url: None)   # examples' servers
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-example")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-example")
    texts = {}
    for command in ([], ["run"], ["compare"], ["arena"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
            main([*command, "--help"])
        texts[" ".join(["vendbench", *command, "--help"])] = out.getvalue()
    root = Path(__file__).resolve().parents[1]
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        texts[page.name] = "\n".join(re.findall(r"^```[a-z]*\n(.*?)^```", page.read_text(),
                                                re.S | re.M))
    checked, problems = 0, []
    for where, text in texts.items():
        for line in _examples(text):
            found = _forecast_problems(line)
            checked += any(flag in line for flag in ("--budget", "--trial-budget",
                                                     "--total-budget"))
            problems += [f"{where}: {line}: {p}" for p in found]
    assert problems == []
    assert checked >= 8


def test_a_model_without_a_provider_is_one_line_in_the_users_words(tmp_path, capsys):
    """design §35.6: a model string without its provider printed pydantic's dump
    ("models.0.id: Value error, ...")."""
    for argv in (["run", "--models", "gpt-4.1-mini", "--days", "2", "--db",
                  str(tmp_path / "x.duckdb")],
                 ["check", "--models", "mymodel"],
                 ["compare", "mymodel", "baseline/oracle", "--days", "6"]):
        assert main(argv) == 2, argv
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert "is not a litellm model string: use provider/model" in line
        assert "Value error" not in line and "models.0" not in line


@pytest.mark.parametrize("command", ["compare", "arena"])
def test_a_help_names_no_flag_its_command_lacks(command, capsys):
    """design §35.6: `compare --help` and `arena --help` said "with --panel they override
    the panel's values", and neither takes --panel."""
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([command, "--help"])
    assert "--panel" not in out.getvalue()
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(out.getvalue().split())
    assert "with --panel they override" in text and "docs/guide.md" in text
    assert "see README" not in text


def test_vendbench_db_names_the_default_results_file(tmp_path, monkeypatch, capsys):
    """design §35.7: $VENDBENCH_DB for the file every command uses without --db (as
    Inspect's INSPECT_LOG_DIR); --db still wins."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("VENDBENCH_DB", str(tmp_path / "nightly.duckdb"))
    assert main(["run", "--models", "baseline/order-up-to", "--days", "2", "--json"]) == 0
    assert (tmp_path / "nightly.duckdb").exists() and not (tmp_path / "vendbench.duckdb").exists()
    capsys.readouterr()
    assert main(["runs"]) == 0 and "baseline/order-up-to" not in capsys.readouterr().err
    assert main(["leaderboard", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"][0]["model"] == "baseline/order-up-to"
    assert main(["run", "--models", "baseline/oracle", "--days", "2", "--db",
                 str(tmp_path / "other.duckdb"), "--json"]) == 0
    assert (tmp_path / "other.duckdb").exists()
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main(["leaderboard", "--help"])
    assert "$VENDBENCH_DB" in out.getvalue()


def test_list_names_every_scenario_its_policies_by_role_and_its_metrics(capsys):
    """design §35.7: `vendbench list`, as Inspect's and HAL's users look for one."""
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 80
    text = " ".join(out.split())
    for needed in ("autovend:", "network:", "baseline/oracle (ceiling)",
                   "baseline/idle (floor)", "baseline/order-up-to (reference)",
                   "40 tool calls a day", "100 tool calls a day", "Inspect task vendbench/network",
                   "arena only: baseline/undercutter, baseline/colluder", "waste %",
                   "reassignment gap", "bought while covered",
                   "not here: reassignment gap, visit cycle contribution"):
        assert needed in text, needed
    assert main(["list", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    network = next(s for s in data["scenarios"] if s["name"] == "network")
    assert network["score"] == "final bank balance" and network["calls_per_day"] == 100
    assert {p["role"] for p in network["policies"]} == {"reference", "ceiling", "floor"}
    assert "email_not_a_supplier" in {m["kind"] for m in network["failure_modes"]}
    assert "reassignment_gap" in network["not_applicable"]


def test_a_name_with_an_8bit_control_sequence_never_reaches_the_terminal_raw(
        tmp_path, capsys, monkeypatch):
    """design §35.8: an error of `run` printed a model name's C1 OSC (an 8-bit hidden
    hyperlink, which the label parser lets through where it refuses 7-bit ESC ]) raw.
    Errors, warnings, check's report, a run's output and its log lines show it as its
    escape."""
    from tests.fakellm import FakeLLM

    name = "openai/x\x9d8;;https://evil.example/\x9cclick\x9d8;;\x9c"
    db = str(tmp_path / "r.duckdb")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-c1")

    def shown(argv: list[str], code: int) -> str:
        assert main(argv) == code, argv
        out, err = capsys.readouterr()
        assert "\x9d" not in out + err and "\x9c" not in out + err, (argv, out + err)
        return out + err

    assert "openai/x\\x9d8;;https://evil.example/\\x9cclick" in shown(
        ["run", "--models", name, "--days", "2", "--db", db], 2)         # no price
    priced = ["--price", f"{name}=0.4,1.6"]
    assert "\\x9d8;;https://evil.example/" in shown(
        ["check", "--models", name, *priced, "--no-request", "--days", "2"], 0)
    with FakeLLM() as llm:
        shown(["-v", "run", "--models", name, *priced, "--api-base", llm.url, "--days", "2",
               "--seeds", "1", "--db", db], 0)
    shown(["runs", "--db", db], 0)


def test_bad_paths_end_in_one_line_and_exit_2(tmp_path, capsys):
    """design §35.8: of 89 bad inputs to the new commands, five did not end in one line
    and exit 2: a chart into /proc and a site over a folder named index.html ended in
    tracebacks, an empty --charts drew nothing and exited 0 (an empty --panel ended in a
    traceback too). Each is refused before anything is run or written."""
    db = str(tmp_path / "r.duckdb")
    assert main(["run", "--models", "baseline/order-up-to", "--days", "2", "--seeds", "1",
                 "--db", db, "--json"]) == 0
    site = tmp_path / "site"
    (site / "index.html").mkdir(parents=True)
    (tmp_path / "taken").write_text("")
    capsys.readouterr()
    for argv, words in (
            (["compare", "--show", "latest", "--chart", "/proc/x.png", "--db", db],
             "--chart /proc/x.png: cannot write there"),
            (["compare", "--show", "latest", "--chart", str(tmp_path / "no" / "x.png"),
              "--db", db], "no folder"),
            (["compare", "--show", "latest", "--chart", str(tmp_path) + "/", "--db", db],
             "give a .png or .svg file"),
            (["view", "--static", str(site), "--db", db],
             "index.html is a folder there, where a page goes"),
            (["view", "--static", str(tmp_path / "taken"), "--db", db],
             "a file by that name exists"),
            (["leaderboard", "--arena", "--charts", "", "--db", db], "an empty path"),
            (["leaderboard", "--charts", "", "--db", db], "an empty path"),
            (["trend", "--charts", " ", "--db", db], "an empty path"),
            (["run", "--panel", ""], "an empty path"),
            (["leaderboard", "--db", ""], "an empty path")):
        assert _exit_code(argv) == 2, argv
        err = capsys.readouterr().err
        assert words in err and "Traceback" not in err, (argv, err)
        assert len(err.strip().splitlines()) == 1, (argv, err)
    assert sorted(p.name for p in site.iterdir()) == ["index.html"]   # nothing written


def _exit_code(argv: list[str]) -> int:
    """What ``vendbench ARGV`` exits with (argparse's refusals exit themselves)."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
