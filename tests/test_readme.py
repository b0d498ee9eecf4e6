"""The README's front door: its commands are the ones CI and users run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _commands(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines()
            if line.strip().startswith("python3 -m venv .venv && ")]


def test_ci_runs_the_readme_test_command_verbatim():
    readme = _commands((ROOT / "README.md").read_text())
    ci = _commands((ROOT / ".ci" / "run").read_text())
    assert len(readme) == 2 and len(ci) == 1
    assert ci[0] in readme and "pytest" in ci[0]
    assert any("vendbench run" in c and "vendbench leaderboard" in c for c in readme)


def test_the_documented_api_example_runs():
    block = re.search(r"## The Python API\n\n```python\n(.*?)```",
                      (ROOT / "docs" / "scenarios.md").read_text(), re.S).group(1)
    namespace: dict = {}
    exec(compile(block, "docs/scenarios.md", "exec"), namespace)
    assert namespace["env"].day == 2


def _pins(name: str) -> dict[str, str]:
    lines = [ln for ln in (ROOT / name).read_text().splitlines()
             if ln and not ln.startswith("#")]
    assert all(re.fullmatch(r"[A-Za-z0-9_.\-]+==[\w.]+", ln) for ln in lines), lines
    return dict(ln.split("==") for ln in lines)


@pytest.mark.parametrize("name", ["requirements.lock", "requirements-test.lock"])
def test_lock_files_pin_everything_and_exclude_compromised_litellm(name):
    pins = _pins(name)
    assert "litellm" in pins and pins["litellm"] not in ("1.82.7", "1.82.8", "1.107.0")


def test_the_run_command_installs_what_running_needs_and_the_tests_the_rest():
    """The run command once installed mkdocs, playwright, mutmut, mypy and Inspect for
    users who only evaluate (design §31.5): it installs the runtime lock, the test
    command the test lock; both are what tools/locks.py writes from the installed
    dependencies (so neither drifts from pyproject.toml)."""
    import subprocess
    import sys

    run, test = _pins("requirements.lock"), _pins("requirements-test.lock")
    assert run.items() <= test.items()
    for tool in ("pytest", "mkdocs", "playwright", "mutmut", "mypy", "inspect_ai"):
        assert tool not in {n.replace("-", "_") for n in run} and \
            any(n.replace("-", "_") == tool for n in test), tool
    readme = _commands((ROOT / "README.md").read_text())
    assert "-r requirements.lock -e ." in next(c for c in readme if "vendbench run" in c)
    assert "-r requirements-test.lock -e ." in next(c for c in readme if "pytest" in c)
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "locks.py"), "--check"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_every_locked_package_installs_on_the_oldest_python_pyproject_accepts():
    """``requires-python >= 3.11`` admits Debian 12's python3 (3.11.2): a locked package
    that needs 3.11.5 (pymdown-extensions 13.x did) stops the quick start there. Each
    installed distribution's own Requires-Python is held to the floor."""
    import tomllib
    from importlib import metadata

    from packaging.specifiers import SpecifierSet

    floor = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    oldest = re.fullmatch(r">=\s*([\d.]+)", floor).group(1)
    oldest += ".0" * (2 - oldest.count("."))                 # 3.11 -> 3.11.0
    pinned = _pins("requirements-test.lock")
    refused = []
    for name, version in pinned.items():
        dist = metadata.distribution(name)
        assert dist.version == version, f"{name} {dist.version} installed, {version} locked"
        needs = dist.metadata.get("Requires-Python")
        if needs and not SpecifierSet(needs).contains(oldest, prereleases=True):
            refused.append(f"{name}=={version} needs Python {needs}")
    assert refused == [], f"pyproject accepts Python {oldest}: {refused}"


def test_example_panel_is_valid_and_priced():
    from vendbench.budgets import resolve_prices
    from vendbench.orchestrator import load_panel
    from vendbench.providers import litellm_price

    text = (ROOT / "examples" / "nightly.toml").read_text()
    linked = re.findall(r"docs/[\w/]+\.md", text)           # the pages it points to exist
    assert linked and all((ROOT / page).exists() for page in linked), linked
    assert "README" not in text                 # the README is a front page: no sections
    config = load_panel(ROOT / "examples" / "nightly.toml")
    assert config.total_budget_usd == 550 and len(config.models) == 4
    # trend tests score regressions only with five paired trials: a nightly example that
    # ran three seeds could never flag one (design §31)
    assert len(config.seeds) >= 5
    assert config.total_budget_usd >= len(config.seeds) * sum(
        m.budget_usd or 0 for m in config.models)
    prices = resolve_prices([m.id for m in config.models], {}, lookup=litellm_price)
    assert all(p is not None for p in prices.values())


def test_the_main_job_runs_offline_and_writes_the_report(tmp_path):
    """The README's first command, after its install step, in a fresh directory."""
    import subprocess
    import sys

    main = next(c for c in _commands((ROOT / "README.md").read_text()) if "leaderboard" in c)
    steps = main.split(" && ")[3:]           # the venv and the install are done already
    for step in steps:
        args = step.split()
        assert args[0] == "vendbench"
        out = subprocess.run([sys.executable, "-m", "vendbench", *args[1:]], cwd=tmp_path,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
    assert "baseline/oracle" in out.stdout and "refused" not in out.stdout
    # the leaderboard the README shows is the one this command prints (the run id aside)
    shown = re.search(r"then\nthe leaderboard:\n\n```\n(.*?)```", (ROOT / "README.md")
                      .read_text(), re.S).group(1).splitlines()
    for line in shown:
        if not re.search(r"\d{8}-\d{6}-[0-9a-f]{4}", line):
            assert line in out.stdout.splitlines(), line
    report = tmp_path / "vendbench-report"
    assert (tmp_path / "vendbench.duckdb").exists()
    assert (report / "report.html").stat().st_size > 20_000
    # the offline panel has no API cost: no empty return-vs-cost chart, a note instead
    assert {p.stem for p in report.glob("*.png")} == {p.stem for p in report.glob("*.svg")} \
        == {"trajectories", "oracle_share", "operations"}
    assert "Return against API cost: not drawn" in (report / "report.html").read_text()


def test_the_readmes_fake_server_block_runs_on_a_free_port(tmp_path):
    """The block once bound port 8000 in the background: a busy port printed a traceback
    and the next command talked to whatever listened there (design §31). It runs as
    written, the server on a port the OS picks, stopped by its last line."""
    import os
    import subprocess

    block = re.search(r"No key yet\?.*?```bash\n(.*?)```", (ROOT / "README.md").read_text(),
                      re.S).group(1)
    assert "8000" not in block and "--background" in block
    script = block.replace("--seeds 1 2 3 --days 30", "--seeds 1 --days 2").replace(
        "--db try.duckdb", f"--db {tmp_path / 'try.duckdb'}")
    out = subprocess.run(["bash", "-e", "-c", script + '\necho "URL $FAKELLM_URL"'],
                         cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PATH": f"{Path(os.sys.executable).parent}:"
                                                    f"{os.environ['PATH']}"})
    assert out.returncode == 0, out.stderr
    assert re.search(r"URL http://127\.0\.0\.1:\d+/v1", out.stdout)
    assert "completed" in out.stdout and (tmp_path / "try.duckdb").exists()
