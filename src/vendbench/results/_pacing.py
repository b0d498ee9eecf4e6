"""A performance device, fenced here (design §21): the writer's commits wait a little for
more rows while the machine's CPUs are all busy, read from ``/proc/stat``.

Why it exists, measured (``benchmarks/bench_orchestrator.py``, benchmarks/README.md): 100
trials at 1 s latency over worker processes on a saturated machine made 206 commits
instead of 645 for the same 2,000 exchanges, and the commits' CPU fell from 8.8 to
5.0 s, CPU the trials then had; at zero latency with the cores saturated, 201 exchanges/s
against 174 without the wait. Why it waits only when the CPUs are busy: with CPU to
spare the wait only holds back trials that are ready to send (25 ms from a reply to the
next request without it, 41 ms with it). Where ``/proc/stat`` cannot be read (not
Linux), the CPUs count as busy: the wait works as it did before the gauge.
"""

from __future__ import annotations

import os
import time

# While trials that take part in a run may still add to a batch, its commit waits for them
# for up to PACE times as long as the last commit took, counted from that commit's start:
# commits then take at most about 1/PACE of the writer's thread, however many trials
# flush. DuckDB's cost is per table a commit touches (~1.5 ms each here), not per row, so
# one commit of five exchanges costs little more than one of a single exchange.
# 3 until session 23; then 6 (50 trials at zero latency over 2 workers, four alternating
# pairs: 186–208 commits against 242–284 for 3,000 exchanges, the scheduler's CPU 0.92–
# 0.96 against 1.05–1.36 ms an exchange, a median 224 against 218 exchanges/s). It
# waits only while the CPUs are all busy, so a run with CPU to spare (1 s latency) is
# not held at all.
PACE = 6.0
# ... but only while the machine's CPUs are all busy: the wait saves commits' CPU, which
# the trials can use only when they wait for CPU. With an idle share above IDLE_SHARE it
# would only hold back trials that are ready to send (100 trials at 1 s latency on two
# cores with CPU to spare: 25 ms from a reply to the next request without the wait, 41 ms
# with it; at zero latency, the cores saturated, 174 exchanges/s without it, 201 with it).
IDLE_SHARE = 0.10


class CpuGauge:
    """Whether the machine's CPUs were all busy lately: the idle share of all of them
    between two readings of ``/proc/stat`` at least ``every`` seconds apart (Linux).
    Busy until two readings tell (and where the file cannot be read: the wait then
    works as it did before this gauge)."""

    def __init__(self, path: str = "/proc/stat", every: float = 0.5,
                 idle_share: float = IDLE_SHARE) -> None:
        self._path, self._every, self._idle_share = path, every, idle_share
        self._last: tuple[int, int] | None = None     # (idle, total) jiffies
        self._read_at = -float("inf")
        self.busy = True

    def __call__(self) -> bool:
        now = time.monotonic()
        if now - self._read_at >= self._every:
            self._read_at = now
            sample = self._sample()
            if sample is not None and self._last is not None and sample[1] > self._last[1]:
                idle = (sample[0] - self._last[0]) / (sample[1] - self._last[1])
                self.busy = idle < self._idle_share
            self._last = sample
        return self.busy

    def _sample(self) -> tuple[int, int] | None:
        try:
            with open(self._path, "rb") as f:
                fields = f.readline().split()
        except OSError:
            return None
        if not fields or fields[0] != b"cpu" or len(fields) < 5:
            return None
        ticks = [int(x) for x in fields[1:9]]         # user … steal (guest is in user)
        return ticks[3] + (ticks[4] if len(ticks) > 4 else 0), sum(ticks)


cpus_busy = CpuGauge()
# ... and for work that may wait for a whole core to spare (the oracle's scores of a run's
# seeds, ``orchestrator._ceilings``): busy unless a core's worth of the CPUs is idle
no_core_spare = CpuGauge(idle_share=1 / (os.cpu_count() or 1))
