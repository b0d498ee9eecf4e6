"""`vendbench compare`'s guarantees and savings, by simulation from the calibrated noise.

    python benchmarks/bench_compare.py [--reps 4000] [--seed 1]

Each model's score on a pair is its mean times (1 + CV * z), z standard normal and
independent between models and pairs (no seed effect shared by the two models of a pair,
which would only narrow the differences): CV 2.7 % within the paper's one world, 8 %
across held-out worlds (the seed-to-seed spreads measured in docs/scenarios.md's
calibration). The comparison runs exactly as `vendbench compare` decides
(`vendbench.compare.assess`: batches of 2 pairs, alpha 0.05, margin 2 %), up to a cap of
pairs. For each true difference it reports:

* under no difference, how often a winner is declared (at the stop: the error rate) and
  how often any batch's interval excluded 0 (at every stopping time at once);
* at 5 % and 10 % better, the share decided for the better model, the share decided
  wrongly, and the mean pairs (cost is proportional to pairs);
* the fixed design with the same error rate (a two-sided paired t-test at 5 %) that has
  the same power: its pairs, and the sequential design's mean cost as a share of it
  (target: at most 60 %); and, as a user who must fix the pairs in advance would, the
  fixed design sized for the smallest difference of interest (5 %) at that power.

Also the error rate when trials fail outright (score 0, far from Gaussian), and a
three-model race (1.00, 1.05, 1.10). About 3 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from vendbench.compare import PRIOR_PRECISION, WINNER, assess  # noqa: E402

ALPHA, MARGIN = 0.05, 0.02
NOISE = {"within one world": (0.027, 60), "across worlds": (0.08, 240)}   # CV, pair cap


def sequential(rng: np.random.Generator, means: list[float], cv: float, cap: int,
               batch: int = 4, prior: float = PRIOR_PRECISION, fail: float = 0.0
               ) -> tuple[str | None, str | None, int, bool]:
    """One comparison: (verdict, best, pairs used, whether any step excluded 0).
    ``fail``: the chance that a trial fails outright and scores 0."""
    names = [f"m{i}" for i in range(len(means))]
    draws = {n: mu * (1 + cv * rng.standard_normal(cap)) * (rng.random(cap) >= fail)
             for n, mu in zip(names, means)}
    survivors, ever, n = names, False, 0
    while n + batch <= cap:
        n += batch
        a = assess({m: list(draws[m][:n]) for m in survivors}, survivors,
                   started_with=len(names), alpha=ALPHA, margin=MARGIN, prior=prior)
        ever = ever or any(p.low > 0 or p.high < 0 for p in a.pairwise)
        survivors = a.survivors
        if a.verdict is not None:
            return a.verdict, a.best, n, ever
    return None, None, n, ever


def t_critical(df: int) -> float:
    """Two-sided 5 % Student t critical value (Cornish-Fisher to 1e-3 for df >= 3)."""
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2) + \
        (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)


def fixed_power(rng: np.random.Generator, delta: float, cv: float, n: int, reps: int
                ) -> float:
    a = 1 + cv * rng.standard_normal((reps, n))
    b = (1 + delta) * (1 + cv * rng.standard_normal((reps, n)))
    d = b - a
    t = d.mean(1) / (d.std(1, ddof=1) / math.sqrt(n))
    return float(np.mean(t > t_critical(n - 1)))


def fixed_pairs(rng: np.random.Generator, delta: float, cv: float, power: float, reps: int
                ) -> int:
    n = 3
    while fixed_power(rng, delta, cv, n, reps) < power:
        n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=4000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batch", type=int, default=2, help="pairs per batch (compare's default)")
    ap.add_argument("--prior", type=float, default=PRIOR_PRECISION,
                    help="the effect-size prior's precision c (compare's default)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    sized: dict[str, int] = {}
    print("| noise | true difference | decided for the better | decided wrongly | "
          "equivalent | mean pairs | fixed design: pairs for that power | cost share | "
          "sized for 5 %: cost share |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, (cv, cap) in NOISE.items():
        for delta in (0.0, 0.05, 0.10):
            runs = [sequential(rng, [1.0, 1.0 + delta], cv, cap, args.batch, args.prior)
                    for _ in range(args.reps)]
            pairs = float(np.mean([r[2] for r in runs]))
            equivalent = sum(r[0] == "equivalent" for r in runs) / args.reps
            if delta == 0:
                wrong = sum(r[0] == WINNER for r in runs) / args.reps
                ever = sum(r[3] for r in runs) / args.reps
                print(f"| {label} | none | — | {wrong:.2%} (any step: {ever:.2%}) | "
                      f"{equivalent:.1%} | {pairs:.1f} | — | — | — |", flush=True)
                continue
            right = sum(r[0] == WINNER and r[1] == "m1" for r in runs) / args.reps
            wrong = sum(r[0] == WINNER and r[1] == "m0" for r in runs) / args.reps
            n_fixed = fixed_pairs(rng, delta, cv, min(right, 0.999), 20_000)
            sized.setdefault(label, n_fixed)         # the 5 % row comes first
            print(f"| {label} | {delta:.0%} | {right:.1%} | {wrong:.2%} | {equivalent:.1%} | "
                  f"{pairs:.1f} | {n_fixed} | {pairs / n_fixed:.0%} | "
                  f"{pairs / sized[label]:.0%} |", flush=True)
    for fail in (0.05, 0.2):
        runs = [sequential(rng, [1.0, 1.0], 0.027, 60, args.batch, args.prior, fail)
                for _ in range(args.reps)]
        wrong = sum(r[0] == WINNER for r in runs) / args.reps
        print(f"no difference, each trial failing (score 0) with chance {fail:.0%}, one "
              f"world: a winner declared {wrong:.2%}")
    race = [sequential(rng, [1.0, 1.05, 1.10], 0.027, 60, args.batch, args.prior)
            for _ in range(args.reps // 4)]
    best = sum(r[0] == WINNER and r[1] == "m2" for r in race) / len(race)
    wrong = sum(r[0] == WINNER and r[1] != "m2" for r in race) / len(race)
    print(f"\nthree-model race (1.00, 1.05, 1.10; CV 2.7 %, at most 60 pairs): the best found "
          f"{best:.1%}, a wrong winner {wrong:.2%}, mean pairs "
          f"{np.mean([r[2] for r in race]):.1f} (each pair runs every model still racing)")


if __name__ == "__main__":
    main()
