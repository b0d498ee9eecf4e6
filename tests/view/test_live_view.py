"""The viewer on a file a run is writing: its pages read through the run's live reads,
say they are live, and their state moves as days arrive."""

from __future__ import annotations

import json

from vendbench.view import Pages

from ..fakellm import FakeLLM
from ..orchestrator.conftest import model
from ..orchestrator.test_live import wait_for
from ..orchestrator.test_resume import start


def test_a_running_trial_is_viewed_live_and_moves_on(tmp_path):
    db = str(tmp_path / "live.duckdb")
    panel = tmp_path / "panel.toml"
    with FakeLLM(latency=0.02) as llm:
        entry = model(llm)
        panel.write_text("days = 20\nseeds = [1]\n[[models]]\n" + "\n".join(
            f"{k} = {json.dumps(v)}" for k, v in entry.items()) + "\n")
        proc = start(llm, db, "--panel", str(panel))
        try:
            wait_for(lambda: llm.served >= 6 or proc.poll() is not None, "requests")
            assert proc.poll() is None, proc.communicate()
            llm.gate.clear()                    # hold the run where it is: live
            pages = Pages(db)
            home = pages.get("index.html")
            assert home.status == 200 and "running" in home.body
            run_id = home.body.split('href="run/')[1].split(".html")[0]
            run = pages.get(f"run/{run_id}.html")
            trial_id = run.body.split('href="../trial/')[1].split("/index.html")[0]
            trial = pages.get(f"trial/{trial_id}/index.html")
            assert trial.status == 200 and "live: refreshes as days arrive" in trial.body
            state = pages.get(f"trial/{trial_id}/state.txt").body
            assert state.startswith("running/") and f'data-seen="{state}"' in trial.body
            llm.gate.set()                      # let it go on: the state moves
            wait_for(lambda: pages.get(f"trial/{trial_id}/state.txt").body != state,
                     "the live trial's state to move")
        finally:
            llm.gate.set()
            proc.wait(timeout=120)
    finished = Pages(db).get(f"trial/{trial_id}/index.html")
    assert "live:" not in finished.body and "completed" in finished.body
