"""The results writer's group commit: while trials taking part in a run may still add to
a batch, its commit waits a little for them (``PACE``), and it never waits once every
one of them is waiting on it. Events only: no test here depends on how long anything
takes."""

from __future__ import annotations

import asyncio

import pytest

from vendbench.results import Store, ToolCallRow
from vendbench.results import _writer
from vendbench.results._writer import ResultsWriter


def _row(trial: str, seq: int) -> ToolCallRow:
    return ToolCallRow(trial, seq, seq, 1, f"c{seq}", "check_cash", "{}", '{"ok":true}', True)


def _count(store: Store) -> int:
    return store.con.execute("SELECT count(*) FROM tool_calls").fetchone()[0]


async def _settle() -> None:
    """Let every task that is ready run (the writer's commit thread included)."""
    for _ in range(20):
        await asyncio.sleep(0)


def test_a_commit_waits_for_the_trials_taking_part_then_one_commit_takes_them_all(
        tmp_path, monkeypatch):
    monkeypatch.setattr(_writer, "PACE", 1e9)     # only the trials' flushes end the wait

    async def run() -> None:
        with Store(str(tmp_path / "r.duckdb")) as store:
            async with ResultsWriter(store) as writer:
                writer.add([_row("a", 0)])
                await writer.flush()              # nobody takes part: at once
                before = writer.commits
                with writer.taking_part(), writer.taking_part():
                    writer.add([_row("a", 1)])
                    first = asyncio.ensure_future(writer.flush())
                    await _settle()
                    assert not first.done()       # the other trial may still add rows
                    assert _count(store) == 1
                    writer.add([_row("b", 1)])
                    second = asyncio.ensure_future(writer.flush())
                    await asyncio.wait_for(asyncio.gather(first, second), 60)
                assert writer.commits == before + 1
                assert _count(store) == 3

    asyncio.run(run())


def test_a_trial_alone_is_never_kept_waiting(tmp_path, monkeypatch):
    monkeypatch.setattr(_writer, "PACE", 1e9)

    async def run() -> None:
        with Store(str(tmp_path / "r.duckdb")) as store:
            async with ResultsWriter(store) as writer:
                with writer.taking_part():
                    for seq in range(5):
                        writer.add([_row("a", seq)])
                        await asyncio.wait_for(writer.flush(), 60)
                assert writer.commits == 5
                assert _count(store) == 5

    asyncio.run(run())


@pytest.mark.parametrize("pace", [0.0, 3.0])
def test_the_wait_for_a_trial_that_never_flushes_ends(tmp_path, monkeypatch, pace):
    """A trial busy elsewhere (or one that forgot to leave) delays a commit by at most
    ``PACE`` times the last commit's length."""
    monkeypatch.setattr(_writer, "PACE", pace)

    async def run() -> None:
        with Store(str(tmp_path / "r.duckdb")) as store:
            async with ResultsWriter(store) as writer:
                writer.add([_row("a", 0)])
                await writer.flush()
                with writer.taking_part(), writer.taking_part():
                    writer.add([_row("a", 1)])
                    await asyncio.wait_for(writer.flush(), 60)
                assert _count(store) == 2

    asyncio.run(run())
