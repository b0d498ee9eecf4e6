"""The two lock files, from one environment that has the test extra installed:
``requirements.lock`` pins what running needs (the README's run command installs it),
``requirements-test.lock`` everything the tests and docs need besides (the test
command). Run it after changing a dependency in pyproject.toml:

    python -m venv v && v/bin/pip install -e '.[test]' && v/bin/python tools/locks.py

``python tools/locks.py --check`` exits 1 when either file is not what this environment
would write (tests/test_readme.py runs the same check).
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
NEVER = ("1.82.7", "1.82.8", "1.107.0")     # litellm releases that stole credentials
HEAD = ("# Never litellm 1.82.7, 1.82.8 or 1.107.0 (compromised releases that stole "
        "credentials).\n# Written by tools/locks.py from an environment with '.[test]' "
        "installed, for Python 3.11; do not edit by hand.\n")


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def closure(extras: tuple[str, ...] = ()) -> dict[str, str]:
    """vendbench's dependencies (with ``extras``), and theirs, as installed here: name
    -> version, the markers evaluated for this interpreter."""
    found: dict[str, str] = {}
    todo = [(Requirement(r), extras) for r in metadata.requires("vendbench") or []]
    seen: set[tuple[str, tuple[str, ...]]] = set()
    while todo:
        req, wanted = todo.pop()
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in ("", *wanted)):
            continue
        key = (_norm(req.name), tuple(sorted(req.extras)))
        if key in seen:
            continue
        seen.add(key)
        dist = metadata.distribution(req.name)
        found[dist.metadata["Name"]] = dist.version
        todo.extend((Requirement(r), tuple(req.extras)) for r in dist.requires or [])
    return dict(sorted(found.items(), key=lambda kv: _norm(kv[0])))


def texts() -> dict[str, str]:
    run, test = closure(), closure(("test",))
    assert set(run) <= set(test)
    for pins in (run, test):
        assert pins.get("litellm") not in NEVER
    return {"requirements.lock": "# What running vendbench needs (the README's run command).\n"
                                 + HEAD + "".join(f"{n}=={v}\n" for n, v in run.items()),
            "requirements-test.lock": "# What running, testing and building the docs need "
                                      "(the README's test command).\n"
                                      + HEAD + "".join(f"{n}=={v}\n" for n, v in test.items())}


def main(argv: list[str]) -> int:
    stale = []
    for name, text in texts().items():
        if "--check" in argv:
            if (ROOT / name).read_text() != text:
                stale.append(name)
        else:
            (ROOT / name).write_text(text)
    if stale:
        print(f"not what this environment locks: {', '.join(stale)} (python tools/locks.py "
              "rewrites them)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
