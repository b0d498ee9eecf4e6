"""The arena's charts (PNG and SVG): each model's earned score as a share of the oracle's
gain alone over doing nothing, with its interval and each seat's share; and the head-to-head matrix, coloured
only where its interval decides (docs/arena.md)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from ..environment import currency, score_name
from ._arena import ArenaBoard
from ._table import share_ci
from ._chart_kit import _finish, _plt
from ._charts import share_bars

# better and worse only where the head-to-head interval says so (docs/arena.md)
VERDICT_COLOURS = {"better": "#1e8449", "worse": "#c0392b", "undecided": "#eeeeee"}


def write_arena_charts(board: ArenaBoard, directory: str | Path) -> list[Path]:
    """``arena_share`` and, with two models or more, ``head_to_head``, into
    ``directory``; returns the files written."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    plt = _plt()
    files = _shares(plt, board, out)
    if len(board.rows) >= 2 and board.pairs:
        files += _head_to_head(plt, board, out)
    return files


def arena_html(board: ArenaBoard) -> str:
    """One HTML file with no external reference: the arena's tables, notes and both
    charts inline (SVG), as ``leaderboard``'s report is."""
    import html
    import tempfile

    from ._arena import arena_notes, arena_tables, arena_title
    from ._report import _SCRIPT, _STYLE, _inline_svg, _table

    (ranking, rows), (h2h, pairs) = arena_tables(board)
    # numbered, as the leaderboard's report: its style keeps the first column narrow and
    # the second (the model) in view while the table scrolls
    ranking, h2h = ["#", *ranking], ["#", *h2h]
    rows = [[str(i), *r] for i, r in enumerate(rows, 1)]
    pairs = [[str(i), *r] for i, r in enumerate(pairs, 1)]
    body = _table(ranking, rows, "sortable board", "Models ranked by mean earned "
                  f"{score_name(board.scenario)}; click a column to sort") \
        if rows else "<p class='note'>No match has ended yet.</p>"
    if pairs:
        body += _table(h2h, pairs, "sortable", "Head to head, paired by match")
    body += "<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in arena_notes(board)) \
        + "</ul>"
    with tempfile.TemporaryDirectory() as tmp:
        body += "".join(f"<figure>{_inline_svg(p)}</figure>"
                        for p in write_arena_charts(board, tmp) if p.suffix == ".svg")
    title = html.escape(arena_title(board))
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title>"
            f"<style>{_STYLE}</style></head><body><h1>{title}</h1>{body}"
            f"<script>{_SCRIPT}</script></body></html>")


def _shares(plt: ModuleType, board: ArenaBoard, out: Path) -> list[Path]:
    rows = [r for r in board.rows if r.oracle_share is not None]
    if not rows:
        return []
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(rows) + 1.8))
    share_bars(ax, [f"{r.model}{'  (!)' if r.above_oracle else ''}\n"
                    f"{share_ci(r.oracle_share, r.ci_oracle_share)}" for r in rows],
               [(r.oracle_share or 0.0, r.ci_oracle_share) for r in rows],
               [r.shares for r in rows])
    ax.set_xlim(ax.get_xlim()[0], max(130.0, ax.get_xlim()[1]))
    ax.set(title=f"Earned {score_name(board.scenario)} in the arena as a share of the "
                 f"oracle's gain alone ({board.scenario}, {board.days} days, {board.seats} "
                 "a match)", xlabel="% of what the oracle alone gains over doing nothing "
                                    "on the same seed")
    ax.title.set_fontsize(10)
    return _finish(plt, fig, ax, out, "arena_share",
                   "earned: the score less the net transfers received from other seats; "
                   "bar: the mean over seats; whisker: its 95% interval (betting, valid at "
                   "any number of matches); points: each seat; solid: doing nothing; dotted: the "
                   "oracle alone; (!) a "
                   f"seat above the oracle alone. Money in {currency(board.scenario)}.")


def _head_to_head(plt: ModuleType, board: ArenaBoard, out: Path) -> list[Path]:
    from matplotlib.colors import to_rgb

    models = [r.model for r in board.rows]
    n = len(models)
    fig, ax = plt.subplots(figsize=(1.6 * n + 3, 0.9 * n + 2))
    grid = [[to_rgb("white")] * n for _ in range(n)]
    texts: dict[tuple[int, int], str] = {}
    for p in board.pairs:
        i, j = models.index(p.model), models.index(p.opponent)
        grid[i][j] = to_rgb(VERDICT_COLOURS[p.verdict])
        texts[(i, j)] = f"{p.wins}-{p.ties}-{p.losses}\n{p.win_rate:.0%}"
    ax.imshow(grid, aspect="auto")
    for (i, j), text in texts.items():
        ax.text(j, i, text, ha="center", va="center", fontsize=8)
    ax.set_xticks(range(n), models, rotation=20, ha="right")
    ax.set_yticks(range(n), models)
    ax.set(xlabel="opponent", title="Head to head in the arena: the row model's wins, "
                                     "ties and losses against the column's")
    ax.title.set_fontsize(10)
    ax.spines[:].set_visible(False)
    return _finish(plt, fig, ax, out, "head_to_head",
                   "paired by match, on earned scores; the share: matches won (a tie "
                   "counts one half); green: better, red: worse, by the win rate's 95% "
                   "interval (betting, valid at any number of matches); grey: undecided")
