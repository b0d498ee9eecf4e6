"""A run's row: what was run, written once when it starts."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
from pathlib import Path
import secrets
from typing import Any

from .. import __version__
from ..environment import Environment, nudge, record_tables
from ._rows import RunRecord
from ._store import Store
from ._trials import TrialStatus
from ._writer import dumps


def new_run_id() -> str:
    """A new run's id: when it started (UTC) and four random hex digits."""
    return dt.datetime.now(dt.timezone.utc).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def code_version() -> str:
    """vendbench's version plus the git commit when run from a checkout."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))
    git = Path(root) / ".git"
    try:                                    # read and closed (an open() left unclosed warned)
        ref = (git / "HEAD").read_text().strip()
        if ref.startswith("ref: "):
            ref = (git / ref[5:]).read_text().strip()
        return f"{__version__}+g{ref[:12]}"
    except OSError:
        return __version__


def begin_run(store: Store, *, run_id: str, name: str | None, scenario: str, days: int,
              config_json: str, env: Environment, prices_json: str,
              total_budget: Any, world_seeds: list[int],
              compaction: str | None = None) -> None:
    """The run row: what was run, with the prompts and tool schemas (and their SHA-256s,
    which decide with whom the run's trials may be ranked). ``compaction``: the prompt
    that asks a model to summarise its context (design §27), kept with its own hash and
    left out of the prompts' hash: a strategy is a model's setting, not another world."""
    store.ensure_records(record_tables(scenario))
    prompts = {"system": env.instructions, "nudge": nudge(env)}
    # the tool schemas keep their order: rebuilt requests send them as they were sent
    agent_json, tools_json = dumps(prompts), dumps(env.tools, sort_keys=False)
    if compaction is not None:
        prompts |= {"compaction": compaction,
                    "compaction_sha256": hashlib.sha256(compaction.encode()).hexdigest()}
    prompts_json = dumps(prompts)
    store.insert_run(RunRecord(
        run_id, name, dt.datetime.now(dt.timezone.utc).replace(tzinfo=None), scenario, days,
        config_json, code_version(), hashlib.sha256(agent_json.encode()).hexdigest(),
        hashlib.sha256(tools_json.encode()).hexdigest(), prompts_json, tools_json,
        prices_json, total_budget, TrialStatus.RUNNING, None, dumps(world_seeds),
        env.summary().get("world_salt_sha256")))
