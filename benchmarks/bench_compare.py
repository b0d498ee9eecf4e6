"""`vendbench compare`'s verdicts, the leaderboard's interval and the trend's test, by
simulation over the shapes real scores have (design §18.6).

    python benchmarks/bench_compare.py [--reps 2000] [--seed 1] [--quick] [--cost-only]

Scores are shares of the oracle's gain over doing nothing (design §34: (score - idle) /
(oracle - idle) on the same world and seed), in [LOW, 1.25]: 0 is doing nothing, 1 the
oracle, and a failed trial (its score 0) sits at the bottom, LOW = -0.5 by default
(--low): at 30 days of AutoVend a failure's share is -0.34 to -0.42 on seeds 1-3, and
compare's bounds leave room to 1.25 times the least. The shape library: normal (CV
2.7 % and 60 %), bimodal with bankruptcies (at LOW), a world effect both models share,
lognormal (sigma_log 1.5), t(2) noise, discrete scores, coins, near-ties, and a model
that usually scores 2-40 % more but fails (scores LOW) with probability 2-30 %, its mean
equal to the other's, with small and large noise of its own.

For each shape, with no difference (equal means), a difference of twice the margin, and
of ten times the margin, as `vendbench compare` decides (batches of 2 pairs, alpha 5 %,
margin 5 % of the oracle), stopping at 10, 50 or 200 pairs:

* false winners (no difference, a winner declared) and false equivalences (twice the
  margin, "equivalent" declared), each with its binomial 95 % CI: target, the CI's
  upper end at or below 5 % in every shape;
* the share decided for the better model (power) and the mean pairs;
* beside it, on the same draws, the Gaussian sequence (`--assume gaussian`) and a
  fixed-n paired t-test at the cap.

Then races of 3 and 4 equal models (rare failures), the leaderboard interval's coverage
at n = 3, 5, 10, 20 (target >= 95 % in every shape; the percentile bootstrap it replaced
beside it), the trend's false alarms per 100 nights of a steady model (target <= 5),
and the two power targets: baseline/oracle against baseline/order-up-to at 30 days
(decided within 20 pairs), and a difference of 25 % of the oracle at CV 50 % (decided
within 100 pairs in >= 80 %). The decisions are read off one sequence per comparison
(a prefix of the values has the prefix of the sequence), and the script checks, on a
sample, that they equal `vendbench.compare.assess`'s. About 15 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

if importlib.util.find_spec("vendbench") is None:     # run from a checkout, not installed
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from vendbench.compare import EQUIVALENT, WINNER, assess  # noqa: E402
from vendbench._betting import sequences  # noqa: E402
from vendbench.compare._confseq import half_width  # noqa: E402
from vendbench.compare._race import SD_FLOOR  # noqa: E402


ALPHA, MARGIN, CAP, BATCH = 0.05, 0.05, 1.25, 2
CAPS = (10, 50, 200)
LOW = -0.5              # where a failure's share sits (see the module's doc; --low)
BOUNDS = (LOW, CAP)
SPAN = CAP - LOW        # paired differences lie in [-SPAN, SPAN]
Draw = Callable[[np.random.Generator, int, int, float], tuple[np.ndarray, np.ndarray]]


def set_low(low: float) -> None:
    """Another bottom for the shares (--low): every bound and shape's name follows it."""
    global LOW, BOUNDS, SPAN, SHAPES
    LOW, BOUNDS, SPAN = low, (low, CAP), CAP - low
    SHAPES = shapes()


def _clip(x: np.ndarray) -> np.ndarray:
    return np.clip(x, LOW, CAP)


def _failed(value: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """``value`` where ``ok``, a failure's share (LOW) elsewhere."""
    return np.where(ok, value, LOW)


def _normal(cv: float, mean: float = 0.4) -> Draw:
    def draw(rng, reps, n, delta):
        a = mean * (1 + cv * rng.standard_normal((reps, n)))
        b = (mean + delta) * (1 + cv * rng.standard_normal((reps, n)))
        return _clip(a), _clip(b)
    return draw


def _bankrupt(rng, reps, n, delta):
    def one(mean):
        alive = rng.random((reps, n)) >= 0.2      # equal means: the rest make up for LOW
        return _clip(_failed((mean - 0.2 * LOW) / 0.8
                             * (1 + 0.05 * rng.standard_normal((reps, n))), alive))
    return one(0.4), one(0.4 + delta)


def _world(rng, reps, n, delta):
    w = np.exp(0.3 * rng.standard_normal((reps, n)) - 0.045)      # shared by the pair
    return (_clip(0.4 * w * (1 + 0.027 * rng.standard_normal((reps, n)))),
            _clip((0.4 + delta) * w * (1 + 0.027 * rng.standard_normal((reps, n)))))


def _lognormal(rng, reps, n, delta):
    def one(shift):
        return _clip(0.05 * np.exp(1.5 * rng.standard_normal((reps, n))) + shift)
    return one(0.0), one(delta)


def _t2(rng, reps, n, delta):
    return (_clip(0.4 + 0.05 * rng.standard_t(2, (reps, n))),
            _clip(0.4 + delta + 0.05 * rng.standard_t(2, (reps, n))))


def _discrete(rng, reps, n, delta):
    levels = np.array([0.2, 0.4, 0.6])
    return (levels[rng.integers(0, 3, (reps, n))],
            _clip(levels[rng.integers(0, 3, (reps, n))] + delta))


def _coins(rng, reps, n, delta):
    return (0.8 * (rng.random((reps, n)) < 0.5),
            0.8 * (rng.random((reps, n)) < (0.4 + delta) / 0.8))


def _ties(rng, reps, n, delta):
    return (np.full((reps, n), 0.5),
            _clip(0.5 + delta + 0.001 * rng.standard_normal((reps, n))))


def _rare(fail: float, cv: float) -> Draw:
    """b usually scores more than a, but fails (LOW) with chance ``fail``; its mean is
    a's plus ``delta``."""
    def draw(rng, reps, n, delta):
        a = 0.5 * (1 + cv * rng.standard_normal((reps, n)))
        ok = rng.random((reps, n)) >= fail
        b = _failed((0.5 + delta - fail * LOW) / (1 - fail)
                    * (1 + cv * rng.standard_normal((reps, n))), ok)
        return _clip(a), _clip(b)
    return draw


def rare(fail: float, cv: float) -> str:
    """The name of ``_rare(fail, cv)``'s shape: how much more b scores when it does not
    fail (at the mean 0.5 it must make up for its failures at LOW)."""
    more = (0.5 - fail * LOW) / (1 - fail) / 0.5 - 1
    return f"fails {fail * 100:g} %, +{more * 100:.0f} % otherwise, CV {cv * 100:g} %"


def shapes() -> dict[str, Draw]:
    """The shape library, named for the current LOW."""
    return {
        "normal, CV 2.7 %": _normal(0.027), "normal, CV 60 %": _normal(0.6),
        "bimodal, 20 % bankrupt": _bankrupt, "shared world effect": _world,
        "lognormal, sigma_log 1.5": _lognormal, "t(2) noise": _t2,
        "discrete (0.2/0.4/0.6)": _discrete, "coins (0 or 0.8)": _coins,
        "near-ties": _ties,
        **{rare(f, cv): _rare(f, cv) for f, cv in ((0.02, 0.027), (0.10, 0.027),
                                                   (0.30, 0.027), (0.10, 0.30))},
    }


SHAPES = shapes()


# -- decisions, read off one sequence per comparison ------------------------------------
def betting_bands(d: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    return sequences(d, bounds=(-SPAN, SPAN), alpha=alpha)


def gaussian_bands(d: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """``--assume gaussian``'s interval after each pair, as compare computes it."""
    n = np.arange(1, d.shape[1] + 1)
    mean = np.cumsum(d, 1) / n
    spread = np.cumsum(d * d, 1) - n * mean**2
    spread = np.maximum(spread, np.maximum(n - 1, 0) * SD_FLOOR**2)
    width = np.array([[half_width(int(k), float(s), alpha) for k, s in zip(n, row)]
                      for row in spread])
    return mean - width, mean + width


def decide(lo: np.ndarray, hi: np.ndarray, cap: int, margin: float = MARGIN
           ) -> tuple[np.ndarray, np.ndarray]:
    """Per comparison: the verdict (+1 b wins, -1 a wins, 2 equivalent, 0 none by the
    cap) and the pairs it took, checking after every batch."""
    steps = np.arange(BATCH, cap + 1, BATCH) - 1
    l, h = lo[:, steps], hi[:, steps]
    code = np.where(l > 0, 1, np.where(h < 0, -1, np.where((l > -margin) & (h < margin),
                                                            2, 0)))
    stopped = code != 0
    first = np.where(stopped.any(1), stopped.argmax(1), len(steps) - 1)
    verdict = code[np.arange(len(code)), first]
    return verdict, steps[first] + 1


def t_test(d: np.ndarray) -> np.ndarray:
    """A fixed-n two-sided paired t-test at 5 %: +1, -1 or 0."""
    n = d.shape[1]
    sd = d.std(1, ddof=1)
    t = np.where(sd > 0, d.mean(1) / np.where(sd > 0, sd, 1) * math.sqrt(n), 0.0)
    crit = _t_critical(n - 1)
    return np.where(t > crit, 1, np.where(t < -crit, -1, 0))


def _t_critical(df: int) -> float:
    """Two-sided 5 % Student t critical value (Cornish-Fisher, to 1e-3 for df >= 3)."""
    if df < 3:
        return {1: 12.706, 2: 4.303}[df]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2) + \
        (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)


def ci(k: float, n: int) -> tuple[float, float]:
    """Wilson's 95 % interval for a share of ``k`` in ``n``."""
    if n == 0:
        return 0.0, 1.0
    p, z = k / n, 1.959964
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate(hits: np.ndarray) -> str:
    k, n = int(hits.sum()), hits.size
    low, high = ci(k, n)
    return f"{k / n:.1%} [{low:.1%}, {high:.1%}]"


# -- the tables ---------------------------------------------------------------------------
def pairs_table(rng: np.random.Generator, reps: int) -> list[str]:
    out = ["| shape | pairs at most | false winners (none) | Gaussian | t-test | equivalent "
           "(none) | false equivalences (2x margin) | power at 2x margin (pairs) | Gaussian "
           "| t-test | power at 10x margin (pairs) |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    print("\n".join(out), flush=True)
    worst_winner = worst_equiv = 0.0
    for name, draw in SHAPES.items():
        runs = {}
        for delta in (0.0, 2 * MARGIN, 10 * MARGIN):
            a, b = draw(rng, reps, CAPS[-1], delta)
            d = b - a
            runs[delta] = (d, betting_bands(d, ALPHA), gaussian_bands(d, ALPHA))
        for cap in CAPS:
            row = [name, str(cap)]
            d, (lo, hi), (glo, ghi) = runs[0.0]
            v, _ = decide(lo, hi, cap)
            gv, _ = decide(glo, ghi, cap)
            fw = np.isin(v, (1, -1))
            worst_winner = max(worst_winner, ci(fw.sum(), fw.size)[1])
            row += [rate(fw), rate(np.isin(gv, (1, -1))), rate(t_test(d[:, :cap]) != 0),
                    f"{np.mean(v == 2):.1%}"]
            d, (lo, hi), (glo, ghi) = runs[2 * MARGIN]
            v, n = decide(lo, hi, cap)
            gv, _ = decide(glo, ghi, cap)
            fe = v == 2
            worst_equiv = max(worst_equiv, ci(fe.sum(), fe.size)[1])
            row += [rate(fe), f"{np.mean(v == 1):.1%} ({n.mean():.0f})",
                    f"{np.mean(gv == 1):.1%}", f"{np.mean(t_test(d[:, :cap]) == 1):.1%}"]
            d, (lo, hi), _ = runs[10 * MARGIN]
            v, n = decide(lo, hi, cap)
            row.append(f"{np.mean(v == 1):.1%} ({n.mean():.0f})")
            out.append("| " + " | ".join(row) + " |")
            print(out[-1], flush=True)
    out.append(f"\nworst upper 95 % bound: false winners {worst_winner:.2%}, false "
               f"equivalences {worst_equiv:.2%} (target: at most 5 % each)")
    print(out[-1], flush=True)
    return out


def race_table(rng: np.random.Generator, reps: int) -> list[str]:
    """Races of K equal models (steady, or one failing 10 % of the time and otherwise
    scoring more): how often a winner is declared among equals, 200 pairs at most."""
    out = []
    for k in (3, 4):
        for name, fail in (("steady, CV 2.7 %", 0.0),
                           (f"one {rare(0.10, 0.027).removesuffix(', CV 2.7 %')}", 0.10)):
            scores = [0.5 * (1 + 0.027 * rng.standard_normal((reps, CAPS[-1])))
                      for _ in range(k)]
            if fail:
                ok = rng.random((reps, CAPS[-1])) >= fail
                scores[0] = _failed((scores[0] - fail * LOW) / (1 - fail), ok)
            scores = [_clip(s) for s in scores]
            level = ALPHA / (k * (k - 1) // 2)
            bands = {(i, j): betting_bands(scores[j] - scores[i], level)
                     for i in range(k) for j in range(i + 1, k)}
            wrong = 0
            for r in range(reps):
                alive = list(range(k))
                for t in range(BATCH, CAPS[-1] + 1, BATCH):
                    beaten = set()
                    for (i, j), (lo, hi) in bands.items():
                        if i in alive and j in alive:
                            if lo[r, t - 1] > 0:
                                beaten.add(i)
                            elif hi[r, t - 1] < 0:
                                beaten.add(j)
                    alive = [m for m in alive if m not in beaten]
                    if len(alive) == 1:
                        wrong += 1
                        break
            hits = np.zeros(reps, bool)
            hits[:wrong] = True
            out.append(f"race of {k} equal models ({name}): a winner declared "
                       f"{rate(hits)}")
            print(out[-1], flush=True)
    return out


def coverage_table(rng: np.random.Generator, reps: int) -> list[str]:
    out = ["| shape | n = 3 | n = 5 | n = 10 | n = 20 | mean width, n = 3 / 10 / 20 | "
           "percentile bootstrap, n = 3 / 10 |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    print("\n".join(out), flush=True)
    worst = 1.0
    for name, draw in SHAPES.items():
        _, big = draw(rng, 2, 200_000, 0.0)
        truth = float(big.mean())
        row, widths = [name], []
        for n in (3, 5, 10, 20):
            _, x = draw(rng, reps, n, 0.0)
            lows, highs = sequences(x, bounds=BOUNDS, alpha=0.05, fixed_n=n)
            covered = (lows[:, -1] <= truth) & (truth <= highs[:, -1])
            worst = min(worst, float(covered.mean()))
            row.append(f"{covered.mean():.1%}")
            if n in (3, 10, 20):
                widths.append(f"{(highs[:, -1] - lows[:, -1]).mean():.2f}")
        row.append(" / ".join(widths))
        boot = []
        for n in (3, 10):
            _, x = draw(rng, min(reps, 1000), n, 0.0)
            idx = rng.integers(0, n, (x.shape[0], 1000, n))
            means = np.take_along_axis(x[:, None, :].repeat(1000, 1), idx, 2).mean(2)
            lo, hi = np.percentile(means, [2.5, 97.5], axis=1)
            boot.append(f"{np.mean((lo <= truth) & (truth <= hi)):.0%}")
        row.append(" / ".join(boot))
        out.append("| " + " | ".join(row) + " |")
        print(out[-1], flush=True)
    out.append(f"\nworst coverage: {worst:.1%} (target: at least 95 % in every shape)")
    print(out[-1], flush=True)
    return out


def t_coverage_table(rng: np.random.Generator, reps: int = 20_000) -> list[str]:
    """The leaderboard's default interval (Student's t over the seeds' shares, design
    §30), which assumes roughly normal shares: its coverage where they are and where
    they are not, and how often its note (``t_doubt``) warns; failures sit at LOW."""
    from vendbench.leaderboard._board import t_doubt, t_interval

    draws: dict[str, Callable[[int], tuple[np.ndarray, np.ndarray]]] = {
        "normal, mean 0.5, CV 30 %": lambda n: (
            np.clip(0.5 * (1 + 0.3 * rng.standard_normal(n)), LOW, CAP), np.zeros(n, bool)),
        "skewed (0.4 x lognormal, sigma 0.6)": lambda n: (
            np.clip(0.4 * np.exp(0.6 * rng.standard_normal(n) - 0.18), LOW, CAP),
            np.zeros(n, bool)),
        f"rare failures (10 % at {LOW:g}, else 0.6 +- 0.1)": lambda n: _failing(rng, n),
    }
    truths = {"normal, mean 0.5, CV 30 %": 0.5,
              "skewed (0.4 x lognormal, sigma 0.6)": 0.4,
              f"rare failures (10 % at {LOW:g}, else 0.6 +- 0.1)": 0.9 * 0.6 + 0.1 * LOW}
    out = ["| shape of the shares | 3 seeds | 5 seeds | 10 seeds |", "|---|---|---|---|"]
    for name, draw in draws.items():
        row = [name]
        for n in (3, 5, 10):
            covered = noted = 0
            for _ in range(reps):
                x, failed = draw(n)
                values = [float(v) for v in x]
                ci = t_interval(values, bounds=BOUNDS)
                covered += ci is not None and ci[0] <= truths[name] <= ci[1]
                noted += t_doubt(values, int(failed.sum())) is not None
            row.append(f"{covered / reps:.1%} ({noted / reps:.0%})")
        out.append("| " + " | ".join(row) + " |")
        print(out[-1], flush=True)
    return out


def _failing(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    failed = rng.random(n) < 0.1
    return np.where(failed, LOW, np.clip(0.6 + 0.1 * rng.standard_normal(n), LOW, CAP)), \
        failed


def trend_table(rng: np.random.Generator, reps: int) -> list[str]:
    """A steady model, night after night: each night's seeds paired with the previous
    night's; a false alarm when the test says the latest night is worse."""
    out = []
    worst = 0.0
    for name in ("normal, CV 60 %", "bimodal, 20 % bankrupt", "lognormal, sigma_log 1.5",
                 rare(0.10, 0.30), "coins (0 or 0.8)"):
        for seeds in (5, 10, 20):
            nights = 101
            _, x = SHAPES[name](rng, reps * nights, seeds, 0.0)
            x = x.reshape(reps, nights, seeds)
            d = (x[:, 1:] - x[:, :-1]).reshape(-1, seeds)
            alarms = np.array([regressed(list(row)) for row in d]).reshape(
                reps, nights - 1).sum(1)
            worst = max(worst, float(alarms.mean()))
            out.append(f"{name}, {seeds} seeds a night: {alarms.mean():.2f} false alarms "
                       "per 100 steady nights")
            print(out[-1], flush=True)
    out.append(f"worst: {worst:.2f} per 100 nights (target: at most 5)")
    print(out[-1], flush=True)
    # and when a model did regress: how often the test says so, by drop and seeds
    for drop in (0.1, 0.25, 0.5):
        for seeds in (5, 10, 20):
            before = _clip(0.6 * (1 + 0.3 * rng.standard_normal((reps * 10, seeds))))
            after = _clip((0.6 - drop) * (1 + 0.3 * rng.standard_normal((reps * 10, seeds))))
            flagged = np.array([regressed(list(a - b)) for a, b in zip(after, before)])
            out.append(f"a drop of {drop:.0%} of the oracle (0.60 -> {0.6 - drop:.2f}, CV 30 %), "
                       f"{seeds} seeds: flagged {flagged.mean():.0%}")
            print(out[-1], flush=True)
    return out


def regressed(diffs: list[float]) -> bool:
    """The trend's test, as `vendbench trend` makes it."""
    from vendbench.leaderboard._trend import MEAN_ALPHA, MIN_PAIRS, SIGN_ALPHA, sign_test

    if len(diffs) < MIN_PAIRS:
        return False
    worse, better = sum(d < 0 for d in diffs), sum(d > 0 for d in diffs)
    high = sequences(np.asarray([diffs]), bounds=(-SPAN, SPAN), alpha=MEAN_ALPHA,
                     fixed_n=len(diffs))[1][0, -1]
    return sign_test(worse, worse + better) <= SIGN_ALPHA or high < 0


def power_targets(rng: np.random.Generator, reps: int) -> list[str]:
    out = []
    # baseline/oracle against baseline/order-up-to at 30 days: the oracle's share is 1
    # by definition; order-up-to's is 0.161, 0.152 and 0.194 on seeds 1-3 (its gain over
    # doing nothing of the oracle's: mean 0.169, CV 13 %)
    a = _clip(0.169 * (1 + 0.13 * rng.standard_normal((reps, 40))))
    lo, hi = betting_bands(1.0 - a, ALPHA)
    v, n = decide(lo, hi, 40)
    out.append(f"oracle vs order-up-to, 30 days: decided for the oracle {np.mean(v == 1):.1%},"
               f" after {n.min()}-{n.max()} pairs (target: within 20)")
    a = _clip(0.5 * (1 + 0.5 * rng.standard_normal((reps, 100))))
    b = _clip(0.75 * (1 + 0.5 * rng.standard_normal((reps, 100))))
    lo, hi = betting_bands(b - a, ALPHA)
    v, n = decide(lo, hi, 100)
    out.append(f"a 25 %-of-oracle difference at CV 50 % (0.50 vs 0.75): decided within 100 "
               f"pairs {np.mean(v == 1):.1%}, mean pairs {n.mean():.0f} (target: >= 80 %)")
    for line in out:
        print(line, flush=True)
    return out


def verdict_cost(rng: np.random.Generator, reps: int) -> list[str]:
    """design §28.1: the pairs a verdict on a 10-point difference (A 0.5, B 0.6 of the
    oracle) takes at CV 30 % and 60 %, median and 90th percentile, 400 pairs at most:
    the sequence as it decides, beside variants measured for it (bets truncated at 0.9
    of the most a factor can lose instead of 0.75; a scenario cap of 1.05 instead of
    1.25, as the adversarial suite's highest share would allow), and two floors.

    The floors. Design §28's holds for any procedure: with differences within +-B and a
    false-winner share a (alpha / 2), none reaches 50 % power before
    ln(0.5 / a) / ln(1 + delta / B) pairs. The second holds for anytime-valid ones,
    which for the null "mean difference <= 0 within +-B" are test martingales of
    linear bets, prod (1 + l_i d_i) with 0 <= l_i <= 1 / B (Clerico 2024,
    arXiv:2412.02640; Ramdas, Ruf, Larsson & Koolen 2020, arXiv:2009.03167): whatever bets a
    procedure places, its expected log-capital grows at most g* = max_l E log(1 + l d)
    a pair, and a verdict needs log(2 / alpha). The "best bet" columns are that bettor,
    told the distribution in advance, betting the growth-optimal l* on every pair
    (within each cap) and checked after every batch: what no anytime-valid procedure
    beats to first order, however clever its bets."""
    import vendbench._betting as betting

    out = ["| CV | today (c 0.75, cap 1.25) | c 0.9 | cap 1.05 | both | best bet known "
           "in advance, cap 1.25 | the same, cap 1.05 | log(2/alpha) / g*, cap 1.25 / "
           "1.05 | any procedure, 50 % power |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for cv in (0.3, 0.6):
        row = [f"{cv:.0%}"]
        for c, cap in ((0.75, 1.25), (0.9, 1.25), (0.75, 1.05), (0.9, 1.05)):
            d = _ten_points(rng, cv, cap, reps, 400)
            old, betting.TRUNCATION = betting.TRUNCATION, c
            try:
                lo, hi = sequences(d, bounds=(-(cap - LOW), cap - LOW), alpha=ALPHA)
            finally:
                betting.TRUNCATION = old
            v, n = decide(lo, hi, 400)
            row.append(_median_pairs(np.where(v != 0, n, 401)))
        firsts = []
        for cap in (1.25, 1.05):
            bet, growth = _best_bet(rng, cv, cap)
            d = _ten_points(rng, cv, cap, reps, 400)
            capital = np.cumsum(np.log1p(bet * d), 1)[:, BATCH - 1::BATCH]
            won = capital >= math.log(2 / ALPHA)
            took = np.where(won.any(1), (won.argmax(1) + 1) * BATCH, 401)
            row.append(_median_pairs(took) + f", l* {bet:.2f}")
            firsts.append(f"{math.log(2 / ALPHA) / growth:.0f}")
        row.append(" / ".join(firsts))
        floor = math.log(0.5 / (ALPHA / 2)) / math.log(1 + 0.1 / SPAN)
        row.append(f"{floor:.0f}")
        out.append("| " + " | ".join(row) + " |")
        print(out[-1], flush=True)
    return out


def _median_pairs(took: np.ndarray) -> str:
    return f"{np.median(took):.0f} (90 %: {np.percentile(took, 90):.0f})"


def _ten_points(rng: np.random.Generator, cv: float, cap: float, reps: int, n: int
                ) -> np.ndarray:
    """``verdict_cost``'s paired differences b - a: shares 0.5 and 0.6 at ``cv``, each
    clipped to [LOW, ``cap``]; ``reps`` comparisons of ``n`` pairs."""
    a, b = _normal(cv, mean=0.5)(rng, reps, n, 0.1)
    return np.clip(b, LOW, cap) - np.clip(a, LOW, cap)


def _best_bet(rng: np.random.Generator, cv: float, cap: float) -> tuple[float, float]:
    """The growth-optimal constant bet on ``_ten_points``' differences within
    ``cap - LOW`` (bets up to 1 / (cap - LOW), so that no factor is negative), and its
    growth E log(1 + l d) a pair, from a million draws."""
    d = _ten_points(rng, cv, cap, 1, 1_000_000)[0]
    bets = np.linspace(0.01, 0.999 / (cap - LOW), 200)
    growth = np.array([np.log1p(bet * d).mean() for bet in bets])
    return float(bets[growth.argmax()]), float(growth.max())


def check_against_assess(rng: np.random.Generator) -> None:
    """The vectorised reading decides as ``assess`` does, batch by batch."""
    for name, draw in list(SHAPES.items())[::3]:
        a, b = draw(rng, 3, 30, 2 * MARGIN)
        lo, hi = betting_bands(b - a, ALPHA)
        v, n = decide(lo, hi, 30)
        for r in range(3):
            got = None
            for t in range(BATCH, 31, BATCH):
                s = assess({"a": list(a[r, :t]), "b": list(b[r, :t])}, ["a", "b"],
                           started_with=2, alpha=ALPHA, margin=MARGIN, bounds=BOUNDS)
                if s.verdict is not None:
                    got = (2 if s.verdict == EQUIVALENT else 1 if s.best == "b" else -1, t)
                    break
            assert s.verdict in (None, WINNER, EQUIVALENT)
            want = (int(v[r]), int(n[r])) if v[r] != 0 else None
            assert got == want, (name, r, got, want)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=2000, help="comparisons a setting")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="200 comparisons a setting")
    ap.add_argument("--cost-only", action="store_true",
                    help="only the verdict-cost table (design §28.1), --reps // 4 "
                         "comparisons a cell")
    ap.add_argument("--low", type=float, default=LOW,
                    help=f"where a failure's share sits, the shares' lower bound (default "
                         f"{LOW}; 0 measures the former shares of the score itself)")
    args = ap.parse_args()
    set_low(args.low)
    reps = 200 if args.quick else args.reps
    rng = np.random.default_rng(args.seed)
    if args.cost_only:
        verdict_cost(rng, max(200, reps // 4))
        return
    check_against_assess(rng)
    print(f"alpha {ALPHA}, margin {MARGIN} of the oracle's gain, shares in [{LOW}, {CAP}], "
          f"batches of {BATCH}, {reps} comparisons a setting; rates with their 95 % CIs\n")
    pairs_table(rng, reps)
    print()
    race_table(rng, max(200, reps // 4))
    print()
    coverage_table(rng, reps)
    print()
    t_coverage_table(rng, 10 * reps)
    print()
    trend_table(rng, max(100, reps // 20))
    print()
    power_targets(rng, reps)
    print()
    verdict_cost(rng, max(200, reps // 4))


if __name__ == "__main__":
    main()
