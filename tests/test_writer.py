"""The results writer's group commit: while trials taking part in a run may still add to
a batch and the machine's CPUs are all busy, its commit waits a little for them
(``PACE``); it never waits once every one of them is waiting on it, nor while CPUs are
idle. Events only: no test here depends on how long anything takes (the CPU gauge is
replaced, or fed a file)."""

from __future__ import annotations

import asyncio

import pytest

from vendbench.results import Store, ToolCallRow
from vendbench.results import _writer
from vendbench.results._pacing import CpuGauge
from vendbench.results._writer import ResultsWriter


@pytest.fixture(autouse=True)
def _cpus_busy(monkeypatch):
    """The machine's CPUs all busy (the wait's condition), whatever this host's load."""
    monkeypatch.setattr(_writer, "cpus_busy", lambda: True)


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


@pytest.mark.parametrize("pace, busy", [(0.0, True), (3.0, True), (1e9, False)])
def test_the_wait_for_a_trial_that_never_flushes_ends(tmp_path, monkeypatch, pace, busy):
    """A trial busy elsewhere (or one that forgot to leave) delays a commit by at most
    ``PACE`` times the last commit's length, and not at all while CPUs are idle (with
    ``PACE`` at 1e9, only that ends the wait)."""
    monkeypatch.setattr(_writer, "PACE", pace)
    monkeypatch.setattr(_writer, "cpus_busy", lambda: busy)

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


def _stat(path, idle: int, busy: int) -> None:
    """A /proc/stat whose first line counts ``idle`` and ``busy`` jiffies in all."""
    path.write_text(f"cpu  {busy} 0 0 {idle} 0 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")


def test_the_cpu_gauge_reads_the_idle_share_between_two_readings(tmp_path):
    stat = tmp_path / "stat"
    gauge = CpuGauge(str(stat), every=0.0)
    _stat(stat, idle=1_000, busy=1_000)
    assert gauge() is True                       # one reading tells nothing yet
    _stat(stat, idle=1_050, busy=1_050)          # 50 % idle since
    assert gauge() is False
    _stat(stat, idle=1_055, busy=1_150)          # 5 % idle since
    assert gauge() is True
    _stat(stat, idle=1_055, busy=1_150)          # no time passed: the last verdict stands
    assert gauge() is True


def test_the_cpu_gauge_without_proc_stat_keeps_the_wait(tmp_path):
    assert CpuGauge(str(tmp_path / "missing"), every=0.0)() is True
    odd = tmp_path / "odd"
    odd.write_text("intr 1 2 3\n")
    gauge = CpuGauge(str(odd), every=0.0)
    assert gauge() is True and gauge() is True


def test_the_cpu_gauge_reads_at_most_every_interval(tmp_path):
    stat = tmp_path / "stat"
    gauge = CpuGauge(str(stat), every=1e9)
    _stat(stat, idle=1_000, busy=1_000)
    gauge()
    _stat(stat, idle=2_000, busy=1_000)          # all idle since, but not read again
    assert gauge() is True
