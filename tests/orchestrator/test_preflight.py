"""Mistakes in a model string or endpoint are one line before a run creates its file
(design §16): no request is sent, so no retries (about 4 s, litellm's import; not timed
here, as the suite runs on loaded machines)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from .conftest import CANARY


def closed_port() -> int:
    """A port on this machine that nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("models,extra,says", [
    (["foo/bar"], ["--allow-unpriced"], "litellm knows no provider 'foo'"),
    (["opnai/gpt-4.1-mini"], ["--allow-unpriced"], "did you mean openai"),
    (["openai/"], ["--allow-unpriced"], "names no model after its provider"),
    (["openai/x"], ["--allow-unpriced", "--api-base", "not-a-url"], "is not a URL"),
    (["openai/x"], ["--allow-unpriced", "--api-base", "http://127.0.0.1:{port}/v1"],
     "nothing answers at http://127.0.0.1:{port}/v1"),
])
def test_a_bad_model_or_endpoint_is_one_line_before_the_file_exists(tmp_path, models,
                                                                    extra, says):
    port = closed_port()
    db = tmp_path / "never.duckdb"
    out = subprocess.run([sys.executable, "-m", "vendbench", "run", "--models", *models,
                          *[e.format(port=port) for e in extra], "--days", "2", "--db",
                          str(db)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "OPENAI_API_KEY": CANARY})
    assert out.returncode == 2 and says.format(port=port) in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    assert not db.exists()


def test_every_missing_api_key_is_named_at_once(tmp_path):
    """A panel missing several keys named only the first: the user fixed them one run at a
    time (design §31). All are named, before the file exists."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY")}
    db = tmp_path / "never.duckdb"
    out = subprocess.run([sys.executable, "-m", "vendbench", "run", "--models",
                          "openai/gpt-4.1-mini", "anthropic/claude-sonnet-4-5",
                          "baseline/oracle", "--days", "2", "--budget", "1", "--db", str(db)],
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert lines[0] == "vendbench: error: 2 models cannot be reached:"
    assert "openai/gpt-4.1-mini needs OPENAI_API_KEY" in lines[1]
    assert "anthropic/claude-sonnet-4-5 needs ANTHROPIC_API_KEY" in lines[2]
    assert len(lines) == 3 and not db.exists()
