"""How often `vendbench trend` flags a score regression: by chance, and when there is one.

    python benchmarks/bench_regressions.py [--nights 2000]

The rule (leaderboard/_trend.py): a model regresses when the 95 % percentile-bootstrap
CI of its seed-paired differences (latest night − previous night) lies below 0, tested
from MIN_PAIRS pairs. Here each night's differences are drawn from a normal
distribution with SD 1, with mean 0 (no change: every flag is a false alarm) or −0.5
and −1 SD (a real drop: the share flagged is the power), for several numbers of pairs,
and run through the same ``bootstrap_ci`` the trend uses. Seeded: the figures repeat.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from vendbench.leaderboard._board import bootstrap_ci  # noqa: E402
from vendbench.leaderboard._trend import MIN_PAIRS  # noqa: E402


def flagged_share(pairs: int, shift: float, nights: int, rng: random.Random) -> float:
    flags = 0
    for night in range(nights):
        diffs = [rng.gauss(shift, 1.0) for _ in range(pairs)]
        flags += bootstrap_ci(diffs, seed=night)[1] < 0
    return flags / nights


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nights", type=int, default=2000, help="simulated nights per cell")
    args = ap.parse_args()
    rng = random.Random(2026)
    print(f"score regressions are tested from {MIN_PAIRS} pairs; {args.nights} nights per cell")
    print("| pairs | false alarms (no change) | flagged, drop of 0.5 SD | flagged, drop of 1 SD |")
    print("|---:|---:|---:|---:|")
    for pairs in (3, 5, 8, 10, 15):
        cells = [flagged_share(pairs, shift, args.nights, rng) for shift in (0.0, -0.5, -1.0)]
        note = "" if pairs >= MIN_PAIRS else " (not tested)"
        print(f"| {pairs}{note} | " + " | ".join(f"{c:.1%}" for c in cells) + " |")


if __name__ == "__main__":
    main()
