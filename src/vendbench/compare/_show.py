"""A comparison as people and programs read it: a table of its steps, the verdict, JSON,
and a chart of each pairwise confidence sequence as the pairs came in."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .._text import count
from ._race import EQUIVALENT, WINNER
from ._run import CompareSpec, Outcome


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _relative(p: dict[str, Any]) -> dict[str, float | None]:
    scale = p["scale"]
    return {k: (_finite(p[k] / scale) if scale > 0 else None) for k in ("mean", "low", "high")}


def _pct(value: float | None) -> str:
    return "−∞" if value is None else f"{value:+.1%}".replace("-", "−")


def as_json(outcome: Outcome) -> dict[str, Any]:
    row = outcome.row
    return {"comparison_id": row.comparison_id, "models": row.models, "status": row.status,
            "verdict": row.verdict, "best": row.best, "reason": row.reason,
            "pairs": row.pairs, "spent_usd": format(row.spent_usd, "f"),
            "dropped_pairs": outcome.dropped, "would_take": outcome.would_take,
            "steps": [{"step": s.step, "run_id": s.run_id, "pairs": s.pairs,
                       "survivors": s.survivors, "spent_usd": format(s.spent_usd, "f"),
                       "intervals": [{**{k: (_finite(v) if isinstance(v, float) else v)
                                         for k, v in p.items()}, "relative": _relative(p)}
                                     for p in s.intervals]} for s in outcome.steps]}


def lines(outcome: Outcome, spec: CompareSpec) -> list[str]:
    """The steps (one line per pairwise interval), then the verdict."""
    out = []
    for s in outcome.steps:
        for p in s.intervals:
            r = _relative(p)
            band = "unbounded yet" if r["low"] is None and r["high"] is None else \
                f"[{_pct(r['low'])}, {_pct(r['high']).replace('−∞', '+∞')}]"
            out.append(f"  batch {s.step:>2}  {s.pairs:>3} pairs  {p['b']} vs {p['a']}: "
                       f"{_pct(r['mean'])} {band}")
        out.append(f"           spent ${s.spent_usd:.4f}; racing: {', '.join(s.survivors)}")
    row = outcome.row
    if row.verdict == WINNER:
        out.append(f"verdict: {row.best} is better, after {row.pairs} pairs "
                   f"(alpha {spec.alpha}); spent ${row.spent_usd:.4f}")
    elif row.verdict == EQUIVALENT:
        out.append(f"verdict: equivalent within ±{spec.margin:.1%} after {row.pairs} pairs "
                   f"(alpha {spec.alpha}); spent ${row.spent_usd:.4f}")
    elif row.verdict is not None:
        out.append(f"verdict: inconclusive after {row.pairs} pairs: {row.reason}; spent "
                   f"${row.spent_usd:.4f}")
        if outcome.would_take:
            out.append(f"  {outcome.would_take}")
    else:
        out.append(f"comparison {row.comparison_id} stopped after {row.pairs} pairs; "
                   f"continue it with: vendbench compare --resume {row.comparison_id}")
    if outcome.dropped:
        out.append(f"  {count(outcome.dropped, 'pair')} dropped: a trial ended in a harness error "
                   "or was interrupted (never scored)")
    return out


def write_chart(outcome: Outcome, spec: CompareSpec, path: str | Path) -> None:
    """Each pairwise sequence over the pairs, relative to its first model's mean: the
    mean, the interval (clipped where it is still unbounded), 0 and the margin."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series: dict[tuple[str, str], list[tuple[int, dict[str, float | None]]]] = {}
    for s in outcome.steps:
        for p in s.intervals:
            series.setdefault((p["a"], p["b"]), []).append((s.pairs, _relative(p)))
    finite = [abs(v) for pts in series.values() for _, r in pts for v in r.values()
              if v is not None]
    edge = 1.5 * max(finite + [2 * spec.margin])
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.axhspan(-spec.margin, spec.margin, color="#dddddd", label=f"±{spec.margin:.0%} margin")
    ax.axhline(0, color="black", linewidth=0.8)
    colours = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"]
    shift = 0.08 * (len(series) - 1)
    for i, ((a, b), pts) in enumerate(series.items()):
        colour = colours[i % len(colours)]
        x = [n + (i * 0.16 - shift) for n, _ in pts]
        ax.plot(x, [r["mean"] for _, r in pts], marker="o", color=colour,
                label=f"{b} vs {a}")
        for xi, (_, r) in zip(x, pts):
            low = r["low"] if r["low"] is not None else -edge
            high = r["high"] if r["high"] is not None else edge
            bounded = r["low"] is not None and r["high"] is not None
            ax.vlines(xi, low, high, color=colour, linewidth=3 if bounded else 1,
                      linestyles="solid" if bounded else "dotted", alpha=0.6)
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_ylim(-edge, edge)
    ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    ax.set_xlabel("pairs (same world and seed)")
    ax.set_ylabel("difference, relative to the first model")
    ax.text(0.01, 0.02, "bars: the 95% confidence sequence (dotted: not bounded yet)",
            transform=ax.transAxes, fontsize=8, color="#555555")
    ax.set_title(f"{outcome.row.comparison_id}: {outcome.row.verdict or 'running'}")
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
