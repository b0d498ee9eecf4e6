"""A plain text table that fits a terminal, and the share cell, for the leaderboard's
and the arena's tables."""

from __future__ import annotations


def fit_table(headers: list[str], rows: list[list[str]], width: int,
              drop: tuple[str, ...] = (), left: int = 2) -> tuple[str, list[str]]:
    """A plain table (two spaces between columns, the first ``left`` left-aligned) within
    ``width`` characters: the columns in ``drop`` go, in that order, until it fits.
    Returns the table and the headers dropped."""
    keep = list(range(len(headers)))
    dropped: list[str] = []

    def widths() -> list[int]:
        return [max([len(headers[i]), *(len(r[i]) for r in rows)]) for i in keep]

    for name in (d for d in drop if d in headers):      # a column a table has
        if sum(widths()) + 2 * (len(keep) - 1) <= width:
            break
        keep.remove(headers.index(name))
        dropped.append(name)
    w = widths()

    def line(cells: list[str]) -> str:
        return "  ".join(c.ljust(n) if j < left else c.rjust(n)
                         for j, (c, n) in enumerate(zip(cells, w))).rstrip()

    out = [line([headers[i] for i in keep]), "  ".join("-" * n for n in w)]
    out += [line([r[i] for i in keep]) for r in rows]
    return "\n".join(out), dropped


def share_ci(share: float | None, ci: tuple[float, float] | None) -> str:
    """A share and its interval in percents (``39% (29%–48%)``), as every table prints
    them; ``—`` without a share."""
    if share is None:
        return "—"
    return f"{share:.0%}" + ("" if ci is None else f" ({ci[0]:.0%}–{ci[1]:.0%})")
