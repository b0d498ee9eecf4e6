"""A share's anchors beside a run, the oracle's and doing nothing's scores (design §18.1,
§25.1, §34): computed niced while the trials run, never left starving once they have
ended."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from vendbench.orchestrator import _ceilings


def test_a_niced_computation_gives_way_once_the_trials_end(monkeypatch):
    """At nice 19 beside busy processes the oracles' process gets ~1.5 % of a core: a
    run on a fully loaded machine waited on it for minutes after its trials ended (two
    tests hung under CI's load). Once the trials end, a niced computation still at work
    is replaced by one at the run's own priority."""
    calls: list[bool] = []
    cancelled = asyncio.Event()

    async def apart(scenario, days, keys, salt, *, niced=True):
        calls.append(niced)
        if niced:                         # starving: never finishes on its own
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise
        return [SimpleNamespace(row=key) for key in keys]

    monkeypatch.setattr(_ceilings, "anchor_rows_apart", apart)
    monkeypatch.setattr(_ceilings, "missing_anchors",
                        lambda *a: [("ceiling", 2026, 1), ("floor", 2026, 2)])
    monkeypatch.setattr(_ceilings, "no_core_spare", lambda: False)
    monkeypatch.setattr(_ceilings, "installed", lambda scenario: True)
    written: list = []
    writer = SimpleNamespace(put_row=written.append)
    config = SimpleNamespace(seats=None, world_seeds=[2026], seeds=[1, 2],
                             scenario="autovend", days=30)
    clients = SimpleNamespace(world_salt=None)

    async def go() -> None:
        ended = asyncio.Event()
        task = _ceilings.keep_ceilings(None, writer, config, clients, ended)
        while not calls:                  # the niced computation has started
            await asyncio.sleep(0)
        ended.set()                       # the trials end while it starves
        await asyncio.wait_for(task, 10)

    asyncio.run(go())
    assert calls == [True, False] and cancelled.is_set()
    assert [r.row for r in written] == [("ceiling", 2026, 1), ("floor", 2026, 2)]


def test_after_the_trials_the_scores_are_computed_at_the_runs_priority(monkeypatch):
    calls: list[bool] = []

    async def apart(scenario, days, keys, salt, *, niced=True):
        calls.append(niced)
        return []

    monkeypatch.setattr(_ceilings, "anchor_rows_apart", apart)
    monkeypatch.setattr(_ceilings, "missing_anchors", lambda *a: [("ceiling", 2026, 1)])
    monkeypatch.setattr(_ceilings, "installed", lambda scenario: True)
    config = SimpleNamespace(seats=None, world_seeds=[2026], seeds=[1], scenario="autovend",
                             days=30)

    async def go() -> None:
        ended = asyncio.Event()
        ended.set()
        await _ceilings.keep_ceilings(None, SimpleNamespace(put_row=None), config,
                                      SimpleNamespace(world_salt=None), ended)

    asyncio.run(go())
    assert calls == [False]
