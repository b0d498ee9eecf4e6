"""The leaderboard's numbers: per model, over its latest attempts (design §4, §18).

Scores: terminal net assets of a completed trial; every unfinished trial (budget
exhausted, timeout, max turns, agent stopped, bankrupt) scores 0. Harness errors and
interrupted trials are not scores: they are listed apart and never averaged in.

Each trial's score is also a share of what the oracle gains over doing nothing on the
same world, seed and horizon, (score − idle) / (oracle − idle) (``results.shares``,
design §34): 0 is doing nothing, 1 the oracle. The 95 % interval of a model's mean share
is Student's t over the seeds by default, labelled with its assumption (design §30), or
the betting interval of Waudby-Smith & Ramdas (2024) for a fixed number of values in
known bounds (``mean_interval``): valid at any number of seeds, for any shape of scores
within the bounds, so at three seeds it is honestly wide. (The percentile bootstrap it
replaced covered the mean in 70-75 % of draws at three seeds, 32 % when one trial in ten
failed.) "vs base" is the mean paired difference of shares against the scenario's
reference policy on the same world and seed, in points of the oracle's gain.
"""

from __future__ import annotations

import functools
import math
import random
import statistics
from dataclasses import dataclass, field
from decimal import Decimal
from collections.abc import Sequence
from typing import Any

from .. import _betting
from ..environment import find_scenario
from ..results import (FLAG_SEVERITIES, PairKey, Screening, Store, cached_share,
                       trial_score as score)

BOOTSTRAP_SAMPLES = 2000


@dataclass(frozen=True)
class Roles:
    """The model ids of a scenario's reference policies, by role: ``reference``, the
    rule-based policy "vs base" pairs with; ``ceiling``, the oracle (None: it has none);
    ``floor``, doing nothing (a share's 0, design §34)."""

    reference: str | None = None
    ceiling: str | None = None
    floor: str | None = None

    @classmethod
    def of(cls, scenario: str | None) -> Roles:
        entry = find_scenario(scenario)
        return cls(entry.reference_model, entry.ceiling_model, entry.floor_key) \
            if entry else cls()


INTERVAL_METHOD = ("betting interval for a bounded mean (Waudby-Smith & Ramdas 2024), "
                   "valid at any number of seeds")
# the leaderboard's default (design §30): three seeds of a deterministic oracle gave the
# any-shape interval 18-125 % for shares of exactly 100 %; a t interval states its
# assumption instead, and says where the seeds do not suit it
T_METHOD = ("Student's t over the seeds' shares (assumes they are roughly normal; "
            "--ci any-shape: the betting interval, valid for any shape, wide at few seeds)")
CI_METHODS = ("t", "any-shape")


def t_interval(values: Sequence[float], *, level: float = 0.95,
               bounds: tuple[float, float]) -> tuple[float, float] | None:
    """Student's t interval for the mean of ``values`` (None below two), cut to
    ``bounds``. Valid when the values are roughly normal and independent: not for
    shares with failures at 0 beside successes, or heavy tails (``t_doubt``)."""
    n = len(values)
    if n < 2:
        return None
    mean, sd = statistics.fmean(values), statistics.stdev(values)
    half = t_quantile(1 - (1 - level) / 2, n - 1) * sd / math.sqrt(n)
    return max(bounds[0], mean - half), min(bounds[1], mean + half)


def t_doubt(values: Sequence[float], failures: int = 0) -> str | None:
    """Why ``values`` do not suit a t interval, as a note, or None: one value (no t
    interval: the betting interval is shown), ``failures`` (unfinished trials, scored at
    the floor) beside finished ones, or a skew that a few seeds cannot average out."""
    if len(values) == 1:
        return "one seed, so its interval is the betting interval (a t interval needs two)"
    if len(values) < 3:
        return None
    why = None
    if 0 < failures < len(values):
        why = "a failure scored at the floor beside finished trials"
    sd = statistics.pstdev(values)
    if why is None and sd > 0:
        mean = statistics.fmean(values)
        skew = statistics.fmean(((v - mean) / sd) ** 3 for v in values)
        if abs(skew) > 1.5:
            why = f"skewed shares (skewness {skew:+.1f})"
    return None if why is None else (f"{why}: the t interval's assumption is doubtful "
                                     "there (--ci any-shape holds for any shape)")


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, df: int) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (bisection on
    its distribution function, to 1e-10)."""
    lo, hi = 0.0, 1e6
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _t_cdf(t: float, df: int) -> float:
    x = df / (df + t * t)
    tail = 0.5 * _incomplete_beta(df / 2, 0.5, x)
    return 1 - tail if t >= 0 else tail


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b) (Lentz's continued fraction)."""
    if x <= 0 or x >= 1:
        return 0.0 if x <= 0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log(1 - x))
    if x > (a + 1) / (a + b + 2):
        return 1 - _incomplete_beta(b, a, 1 - x)
    f, c, d = 1.0, 1.0, 0.0
    for i in range(400):
        m = i // 2
        if i == 0:
            num = 1.0
        elif i % 2 == 0:
            num = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        else:
            num = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1 + num * d
        d = 1 / (d if abs(d) > 1e-300 else 1e-300)
        c = 1 + num / (c if abs(c) > 1e-300 else 1e-300)
        f *= c * d
        if abs(1 - c * d) < 1e-14:
            break
    return front * (f - 1) / a


def mean_interval(values: Sequence[float], *, level: float = 0.95,
                  bounds: tuple[float, float]) -> tuple[float, float]:
    """A ``level`` confidence interval for the mean of ``values``, which all lie in
    ``bounds``: the betting interval for this many values (Waudby-Smith & Ramdas 2024,
    JRSSB 86(1): 1-27), valid whatever their distribution within the bounds. Pure.

    Args:
        values: the scores (e.g. a model's oracle shares, one per trial).
        level: the coverage, e.g. 0.95.
        bounds: (low, high), an interval every value lies in.

    Returns:
        (low, high); the whole of ``bounds`` without values.

    Raises:
        ValueError: a value outside ``bounds``, NaN or infinite; a level not in (0, 1).
    """
    if not 0 < level < 1:
        raise ValueError(f"level {level} must lie in (0, 1)")
    return _betting.interval(list(values), bounds=bounds, alpha=1 - level)


def bootstrap_ci(values: list[float], level: float = 0.95, samples: int = BOOTSTRAP_SAMPLES,
                 seed: int = 0) -> tuple[float, float] | None:
    """Percentile bootstrap confidence interval of the mean (None below two values): for
    API efficiency only, which has no bounds; indicative, not a guarantee (it is
    anti-conservative at the few trials a leaderboard sees)."""
    if len(values) < 2:
        return None
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(rng.choices(values, k=n)) / n for _ in range(samples))
    lo = means[int((1 - level) / 2 * samples)]
    hi = means[min(samples - 1, int((1 + level) / 2 * samples))]
    return lo, hi


@dataclass
class ModelRow:
    model: str
    trials: int
    completed: int
    mean_net_assets: float
    sd_net_assets: float
    oracle_share: float | None          # mean share of the oracle's gain (design §34)
    ci_oracle_share: tuple[float, float] | None     # its 95 % interval (mean_interval)
    above_oracle: int                   # trials whose score beat the oracle's: look!
    growth: float
    cv: float | None
    cost_mean_usd: float | None
    cost_total_usd: float | None
    cached_share: float | None         # input tokens read from the provider's prompt cache
    api_efficiency: float | None        # over completed, priced trials only
    ci_api_efficiency: tuple[float, float] | None
    api_efficiency_note: str | None      # why it is blank, when it is
    # the mean paired difference of shares against the reference policy (points of the
    # oracle's gain over doing nothing; None without shares to pair)
    vs_baseline_points: float | None
    beats_baseline: int | None
    baseline_pairs: int
    operations: dict[str, float | None] = field(default_factory=dict)
    harness: str = "litellm"            # how the agent was driven (see ``harness``)
    # the betting interval (valid for any shape), whichever ``ci_oracle_share`` is
    ci_oracle_share_any_shape: tuple[float, float] | None = None
    ci_doubt: str | None = None         # why the t interval's assumption is doubtful
    # findings of vendbench screen at severity warning or high (design §32.2), over its
    # trials screened (None: none was)
    flags: int | None = None
    screened: int = 0

    def as_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out.update(out.pop("operations"))
        for key in ("ci_oracle_share", "ci_api_efficiency", "ci_oracle_share_any_shape"):
            out[key] = list(out[key]) if out[key] is not None else None
        return out


def harness(model: str) -> str:
    """How a model's trials were driven: ``in-process`` (the reference policies), ``mcp``
    (an outside agent harness over `vendbench serve`), ``inspect`` (Inspect AI's runs of
    vendbench's tasks, imported from its logs), or ``litellm`` (an LLM we call)."""
    if model.startswith("baseline/"):
        return "in-process"
    prefix = model.split("/", 1)[0]
    return prefix if prefix in ("mcp", "inspect") else "litellm"


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _cached_share(trials: list[dict[str, Any]]) -> float | None:
    """Input tokens read from the provider's cache / all input tokens, over the trials
    (None without LLM input, e.g. for the in-process policies)."""
    return cached_share(sum(t.get("input_tokens") or 0 for t in trials),
                        sum(t.get("cache_read_tokens") or 0 for t in trials))


def model_rows(trials: list[dict[str, Any]], operations: dict[str, dict[str, float | None]],
               shares: dict[str, float | None] | None = None,
               bounds: tuple[float, float] = (-1.0, 1.25), roles: Roles = Roles(),
               ci: str = "t", efficiency_ci: bool = True) -> list[ModelRow]:
    """One row per model, best mean net assets first. ``shares``: each trial's share of
    the oracle's gain (``results.shares``), in ``bounds``; ``roles``: whose trials "vs
    base" pairs with (the scenario's reference policy); ``ci``: the shares' interval,
    "t" (Student's, over the seeds) or "any-shape" (the betting interval);
    ``efficiency_ci``: bootstrap API efficiency's interval (a trend needs only means)."""
    shares = shares or {}
    by_model: dict[str, list[dict[str, Any]]] = {}
    for t in trials:
        by_model.setdefault(t["model"], []).append(t)
    # the reference policy's trials, by the key comparisons pair on: same world, same
    # demand draws (seed), same repeat
    base_model = roles.reference
    reference = {PairKey.of(t): t for t in by_model.get(base_model or "", [])}
    rows = []
    for model, ts in by_model.items():
        scores = [score(t) for t in ts]
        initial = float(ts[0]["initial_cash"] or 0.0)
        mean = statistics.fmean(scores)
        sd = statistics.stdev(scores) if len(scores) > 1 else 0.0
        costs = [t["cost_usd"] for t in ts]
        priced = all(c is not None for c in costs)
        total = float(sum(costs, Decimal(0))) if priced else None
        # growth per USD over completed trials: an unfinished trial's 0 is a penalty for
        # the ranking, not a return on its spend
        efficiency = [(s - initial) / float(c) for t, s, c in zip(ts, scores, costs)
                      if priced and t["status"] == "completed" and c is not None and c > 0]
        note = None if efficiency else (
            "unpriced" if not priced else
            "no completed trial" if not any(t["status"] == "completed" for t in ts) else
            "no API cost")
        points, beats = [], 0
        for t, s in zip(ts, scores):
            base = reference.get(PairKey.of(t))
            if base is not None and model != base_model:
                mine, theirs = shares.get(t["trial_id"]), shares.get(base["trial_id"])
                if mine is not None and theirs is not None:
                    points.append(mine - theirs)
                beats += s > score(base)
        shared = [(t, v) for t in ts if (v := shares.get(t["trial_id"])) is not None]
        known = [v for _, v in shared]
        unfinished = sum(t["status"] != "completed" for t, _ in shared)
        pairs = sum(1 for t in ts if PairKey.of(t) in reference)
        ops: dict[str, list[float]] = {}
        for t in ts:
            for key, value in operations.get(t["trial_id"], {}).items():
                ops.setdefault(key, [])
                if value is not None:
                    ops[key].append(value)
        any_shape = mean_interval(known, bounds=bounds) if known else None
        rows.append(ModelRow(
            model=model, trials=len(ts), completed=sum(t["status"] == "completed" for t in ts),
            mean_net_assets=mean, sd_net_assets=sd, oracle_share=_mean(known),
            ci_oracle_share=(t_interval(known, bounds=bounds) or any_shape) if ci == "t"
            else any_shape,
            ci_oracle_share_any_shape=any_shape,
            ci_doubt=t_doubt(known, unfinished) if ci == "t" else None,
            above_oracle=sum(v > 1 for v in known), growth=mean - initial, cv=sd / mean if mean else None,
            cost_mean_usd=total / len(ts) if total is not None else None,
            cost_total_usd=total, cached_share=_cached_share(ts),
            api_efficiency=_mean(efficiency),
            ci_api_efficiency=bootstrap_ci(efficiency) if efficiency_ci else None,
            api_efficiency_note=note,
            vs_baseline_points=_mean(points) if model != base_model else None,
            beats_baseline=beats if pairs and model != base_model else None,
            baseline_pairs=pairs if model != base_model else 0,
            operations={k: _mean(v) for k, v in ops.items()}, harness=harness(model)))
    rows.sort(key=lambda r: -r.mean_net_assets)
    return rows


FINDING_KEYS = ("model", "seed", "world_seed", "trial_id", "day", "exchange", "msg_id", "call",
                "scanner", "scanner_version", "judge", "category", "severity", "quote",
                "explanation")


def flags_of(store: Store, trial_ids: list[str]
             ) -> tuple[list[dict[str, Any]], dict[str, list[str]]]:
    """The flags of ``trial_ids`` (findings of severity warning or high, design §32.2) as
    a board shows them, and which trials of the file were screened by what."""
    reads = Screening(store)
    return ([{k: f[k] for k in FINDING_KEYS}
             for f in reads.findings(trial_ids, FLAG_SEVERITIES)], reads.screened())
