"""The collector settled once a process holds what it keeps (``vendbench._heap``).

Each check runs in a fresh interpreter: freezing and thresholds are process-wide, and the
test process has its own history."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def _run(code: str) -> dict:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_settle_collects_garbage_freezes_the_rest_and_spaces_full_passes():
    got = _run("""
        import gc, json, weakref
        from vendbench._heap import FULL_PASS_EVERY, settle
        gc.disable()                  # only settle may collect the garbage below
        class Node: pass
        garbage = Node(); garbage.me = garbage; garbage_ref = weakref.ref(garbage); del garbage
        kept = Node(); kept.me = kept
        dropped = Node(); dropped_ref = weakref.ref(dropped)
        default = gc.get_threshold()
        before = gc.get_freeze_count()
        settle()
        frozen = gc.get_freeze_count()
        del dropped          # frozen, and still freed when its last reference goes
        gc.enable()
        print(json.dumps({"before": before, "frozen": frozen, "default": default,
                          "threshold": gc.get_threshold(), "every": FULL_PASS_EVERY,
                          "garbage_collected": garbage_ref() is None,
                          "dropped_freed": dropped_ref() is None, "kept": kept.me is kept}))
    """)
    assert got["before"] == 0 and got["frozen"] > 1_000    # the modules' objects, at least
    assert got["threshold"] == [*got["default"][:2], got["every"]]
    assert got["every"] > got["default"][2]                 # full passes rarer than CPython's
    assert got["garbage_collected"], "garbage at the settle must be collected, not frozen"
    assert got["dropped_freed"] and got["kept"]


def test_loading_runs_no_collection_and_freezes_what_it_loaded():
    got = _run("""
        import gc, json
        from vendbench._heap import loading
        passes = []
        gc.callbacks.append(lambda phase, info: phase == "start" and passes.append(info))
        with loading():
            loaded = [[i] for i in range(200_000)]       # far past any threshold
        during = len(passes)
        frozen_after = gc.get_freeze_count()
        gc.disable()
        with loading():
            more = [[i] for i in range(10)]
        print(json.dumps({"during": during, "frozen": frozen_after,
                          "enabled_after": gc.isenabled()}))
    """)
    assert got["during"] == 0
    assert got["frozen"] >= 200_000
    assert got["enabled_after"] is False      # a collector the caller had off stays off


def test_litellm_is_imported_without_full_passes_and_left_frozen():
    got = _run("""
        import gc, json
        full = []
        gc.callbacks.append(lambda phase, info: phase == "start" and info["generation"] == 2
                            and full.append(1))
        from vendbench.providers._litellm import import_litellm
        full.clear()                  # passes while vendbench itself was imported
        import_litellm()
        print(json.dumps({"full_passes": len(full), "frozen": gc.get_freeze_count(),
                          "enabled": gc.isenabled()}))
    """)
    assert got["full_passes"] == 0            # six without ``loading``, ~1.5 s of CPU
    assert got["frozen"] > 100_000 and got["enabled"]
