"""Mutation testing of the modules where a silent bug costs money or ranks wrongly.

    python tools/mutation.py [--max-children 2] [--no-run]

Runs mutmut (configured in pyproject.toml, ``[tool.mutmut]``: which modules, which
tests) over the money (budgets), the context window and its calibration, the secrets,
the SQL sandbox and the leaderboard's numbers; then prints, per module, how many
mutants the tests killed, and every survivor with its diff. A survivor listed in
``tools/equivalent_mutants.toml`` with a reason is equivalent (no test can tell it
apart: a changed error message nobody parses, a bound that cannot be reached) and is
left out of the score; any other survivor is a gap in the tests. The score is

    killed / (mutants − equivalent survivors)

and docs/development.md gives the latest one. Not run by CI: it takes about 30 minutes on 2
cores. mutmut works in ``mutants/`` (git-ignored); a rerun continues where the last one
stopped and retests only functions that changed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EQUIVALENT = ROOT / "tools" / "equivalent_mutants.toml"


def mutmut(*args: str, capture: bool = True) -> str:
    done = subprocess.run([sys.executable, "-m", "mutmut", *args], cwd=ROOT, text=True,
                          capture_output=capture)
    if done.returncode not in (0, 1) and capture:
        raise SystemExit(f"mutmut {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout if capture else ""


def module_of(mutant: str) -> str:
    """``vendbench.budgets._pool.xǁBudgetǁreserve__mutmut_7`` -> ``vendbench.budgets._pool``"""
    head = mutant.split("__mutmut_")[0]
    parts = head.split(".")
    while parts and (parts[-1].startswith("x") or parts[-1].startswith("x_")):
        parts.pop()
    return ".".join(parts)


def results() -> dict[str, str]:
    """Every mutant and its status (killed, survived, timeout, no tests, …)."""
    out = {}
    for line in mutmut("results", "--all", "true").splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name:
            out[name] = status
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-children", type=int, default=2)
    ap.add_argument("--no-run", action="store_true", help="only report the last run")
    args = ap.parse_args()
    if not args.no_run:
        mutmut("run", "--max-children", str(args.max_children), capture=False)
    status = results()
    equivalent = tomllib.loads(EQUIVALENT.read_text()) if EQUIVALENT.exists() else {}
    by_module: dict[str, Counter] = defaultdict(Counter)
    gaps: list[str] = []
    for name, state in sorted(status.items()):
        module = module_of(name)
        if state == "survived" and name in equivalent:
            state = "equivalent"
        elif state in ("survived", "no tests"):
            gaps.append(name)
        by_module[module][state] += 1
    print(f"\n{'module':44} {'mutants':>8} {'killed':>7} {'equiv.':>7} {'gaps':>5} {'score':>7}")
    totals: Counter = Counter()
    for module, c in sorted(by_module.items()):
        totals.update(c)
        print(_line(module, c))
    print(_line("all", totals))
    stale = sorted(set(equivalent) - {n for n, s in status.items() if s == "survived"})
    for name in gaps:
        print(f"\nnot killed: {name} ({status[name]})")
        print(mutmut("show", name).strip())
    if stale:
        print("\nexplained in equivalent_mutants.toml but no longer surviving (renumbered or "
              "killed; drop or re-check them): " + ", ".join(stale))
    print(json.dumps({"score": _score(totals), "mutants": sum(totals.values()),
                      "gaps": len(gaps)}))


def _score(c: Counter) -> float:
    killed = c["killed"] + c["timeout"]            # a mutant that hangs the tests is caught
    counted = sum(c.values()) - c["equivalent"]
    return killed / counted if counted else 1.0


def _line(module: str, c: Counter) -> str:
    gaps = c["survived"] + c["no tests"]
    return (f"{module:44} {sum(c.values()):>8} {c['killed'] + c['timeout']:>7} "
            f"{c['equivalent']:>7} {gaps:>5} {_score(c):>7.1%}")


if __name__ == "__main__":
    main()
