"""The type checker (design §21): mypy, strict, on all of ``src/``, with the configuration
in pyproject.toml. It runs as a test so that the README's test command (and so CI) runs
it too. A first run on a fresh clone takes ~40 s; later ones read ``.mypy_cache``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def mypy(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mypy", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=230)


def test_src_passes_mypy_strict():
    out = mypy()
    assert out.returncode == 0, f"mypy --strict on src/:\n{out.stdout}{out.stderr}"
    assert "no issues found" in out.stdout


def test_the_configuration_is_strict_and_finds_what_strict_finds(tmp_path):
    # the same configuration file on a module with the faults strict mode exists to catch:
    # an untyped function, Any returned as a float, an Optional used unchecked
    bad = tmp_path / "bad.py"
    bad.write_text("import json\n\n\n"
                   "def untyped(x):\n    return x\n\n\n"
                   "def loads(text: str) -> float:\n    return json.loads(text)\n\n\n"
                   "def first(xs: dict[str, int]) -> int:\n    return xs.get('a') + 1\n")
    out = mypy("--config-file", str(ROOT / "pyproject.toml"),
               "--cache-dir", str(tmp_path / "cache"), str(bad))
    assert out.returncode == 1, out.stdout + out.stderr
    for code in ("no-untyped-def", "no-any-return", "operator"):
        assert f"[{code}]" in out.stdout, out.stdout
