"""Same seeds and calls give the same outcome to the cent, in any process (design §2)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

SCRIPT = """
import hashlib, json
from vendbench.environment import make
from vendbench.environment import make_policy, run_policy
env = make("autovend", seed=5, days=60)
run_policy(env, make_policy("order-up-to", env))
rows = json.dumps(env.business.history, sort_keys=True)
print(json.dumps({"summary": env.summary(), "fingerprint": env.business.fingerprint(),
                  "history": hashlib.sha256(rows.encode()).hexdigest()}))
"""


def _run() -> dict:
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                         check=True, env={"PYTHONHASHSEED": "random", "PATH": ""})
    return json.loads(out.stdout)


def test_identical_to_the_cent_across_processes():
    first, second = _run(), _run()
    assert first == second
    assert first["summary"]["status"] == "completed"


def test_different_seeds_differ():
    from vendbench.environment import make

    a, b = make("autovend", seed=1), make("autovend", seed=2)
    for env in (a, b):
        for _ in range(5):
            env.call("end_day", {})
    assert a.business.weather != b.business.weather or \
        hashlib.sha256(a.observe().encode()).digest() != hashlib.sha256(b.observe().encode()).digest()
