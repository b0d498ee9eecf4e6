"""Oracle shares (SPEC 18.1): each trial's score as a share of its scenario's oracle on
the same world, seed, salt and horizon, floored and capped, so that scores lie in known
bounds whatever the scenario's currency or scale.

The oracle is deterministic: its score for a key is computed once (under a second for
30 days, about 1.3 s for 180 days of AutoVend) and kept in the ``ceilings`` table. A run
computes its keys' as it starts; a reader of an older file computes what is missing in
memory (a private world's only with its salt in the environment).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

from ..environment import ceiling_score, find_scenario, oracle_share, scenario as described
from ._log import now
from ._rows import CeilingRow
from ._store import Store
from ._trials import PairKey

Key = tuple[int, int]                       # (world seed, seed)


def salt_hash(salt: str | None) -> str | None:
    """The SHA-256 a run keeps of a private world's salt (None: a public world)."""
    return hashlib.sha256(salt.encode()).hexdigest() if salt else None


def missing_ceilings(store: Store, scenario: str, days: int, keys: Iterable[Key],
                     salt: str | None) -> list[Key]:
    """The keys whose oracle score ``store`` does not keep yet (none for a scenario
    without an oracle)."""
    entry = find_scenario(scenario)
    if entry is None or entry.ceiling is None:
        return []
    return sorted(set(keys) - store.ceilings(scenario, days, salt_hash(salt)).keys())


def ceiling_rows(scenario: str, days: int, keys: Iterable[Key], salt: str | None
                 ) -> list[CeilingRow]:
    """The oracle's scores for ``keys``, as rows to keep (plays the oracle: run it in a
    thread)."""
    entry = described(scenario)
    digest = salt_hash(salt)
    rows = []
    for world, seed in keys:
        score = ceiling_score(scenario, seed=seed, days=days, world_seed=world,
                              world_salt=salt)
        if score is not None:
            rows.append(CeilingRow(scenario, world, seed, digest or "", days,
                                   f"baseline/{entry.ceiling}", score, now()))
    return rows


def ceilings_for(store: Store, scenario: str, days: int, keys: Iterable[Key],
                 salt_sha256: str | None, salt: str | None) -> dict[Key, float]:
    """The oracle's score for each of ``keys``: kept, or computed now (not kept: the
    store may be read-only). A private world's key without its ``salt`` (whose SHA-256
    must be ``salt_sha256``) stays missing."""
    kept = store.ceilings(scenario, days, salt_sha256)
    missing = set(keys) - kept.keys()
    if not missing or (salt_sha256 and salt_hash(salt) != salt_sha256):
        return kept
    entry = find_scenario(scenario)
    if entry is None or entry.ceiling is None:
        return kept
    out = dict(kept)
    for world, seed in missing:
        score = ceiling_score(scenario, seed=seed, days=days, world_seed=world,
                              world_salt=salt if salt_sha256 else None)
        if score is not None:
            out[(world, seed)] = score
    return out


def trial_score(trial: Mapping[str, Any]) -> float:
    """What a trial counts for: its score if it completed, else 0 (unfinished)."""
    if trial["status"] == "completed" and trial.get("score") is not None:
        return float(trial["score"])
    return 0.0


def shares(trials: Iterable[Mapping[str, Any]], scenario: str,
           ceilings: dict[Key, float]) -> dict[str, float | None]:
    """Each trial's oracle share, by trial id (None where its key has no oracle score)."""
    return {t["trial_id"]: oracle_share(trial_score(t), ceilings.get(
        PairKey.of(t).world), scenario) for t in trials}
