"""What every chart of the leaderboard shares: pyplot on demand, the colours and markers
each model keeps across charts, the title, legend and note, and PNG and SVG files."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ._board import Roles

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _plt() -> ModuleType:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"font.size": 9, "axes.titlesize": 11, "axes.spines.top": False,
                         "axes.spines.right": False, "svg.fonttype": "none",
                         # the same ids in every SVG of the same chart, whichever process
                         # draws it (a site rebuild compares bytes)
                         "svg.hashsalt": "vendbench",
                         # the layout makes room for the title, the legend and the notes
                         # under the plot: nothing is drawn over the data or off the figure
                         "figure.constrained_layout.use": True})
    return plt


def note_under(fig: Figure, text: str, width: int = 110) -> None:
    """A chart's notes, in small grey type under the plot (never over the data)."""
    import textwrap

    fig.supxlabel(textwrap.fill(text, width), x=0.01, ha="left", fontsize=7,
                  color="#555555")


def legend_outside(fig: Figure, ax: Axes) -> None:
    """The legend at the top of the figure, outside the axes (in the middle it hid the
    data; the notes are under the plot; a figure title and this legend overlap, so the
    title is the axes')."""
    handles, labels = ax.get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside upper center", frameon=False, fontsize=8,
                   ncols=min(len(labels), 3))


def _save(fig: Figure, out: Path, name: str) -> list[Path]:
    paths = [out / f"{name}.png", out / f"{name}.svg"]
    fig.savefig(paths[0], dpi=150, metadata={"Software": None})
    fig.savefig(paths[1], metadata={"Date": None})             # reproducible files
    return paths


# ten colours told apart by most readers, colour-blind ones included (Okabe & Ito's
# eight, without its black and yellow, plus Paul Tol's wine, teal, olive and indigo),
# each with its own marker, so that a line is named by two cues; the reference policies
# are black and grey, dashed and dotted
PALETTE = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255",
           "#44AA99", "#999933", "#332288"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]


def styles(models: list[str], roles: Roles = Roles()) -> dict[str, dict[str, Any]]:
    """A line style per model, stable for the order given (the ranking's); the
    scenario's reference policy dashed black, its ceiling dotted grey, its floor (doing
    nothing) dash-dotted grey."""
    out, i = {}, 0
    for model in models:
        if model == roles.reference:
            out[model] = {"color": "black", "linestyle": "--", "marker": None}
        elif model == roles.ceiling:
            out[model] = {"color": "#777777", "linestyle": ":", "marker": None}
        elif model == roles.floor:
            out[model] = {"color": "#999999", "linestyle": "-.", "marker": None}
        else:
            out[model] = {"color": PALETTE[i % len(PALETTE)], "linestyle": "-",
                          "marker": MARKERS[i % len(MARKERS)]}
            i += 1
    return out


def dress(fig: Figure, ax: Axes, note: str | None = None) -> None:
    """The title wrapped to the figure's width (a layout does not wrap it: long titles
    ran off the figure), the legend outside the axes, the notes under the plot."""
    import textwrap

    legend_outside(fig, ax)
    if note:
        note_under(fig, note, width=int(fig.get_figwidth() * 72 / (7 * 0.6)))
    title = " ".join(ax.get_title().split())
    chars = int(fig.get_figwidth() * 72 / (float(ax.title.get_fontsize()) * 0.55))
    while title and chars > 20:        # centred over the axes, it may run off either side
        ax.set_title(textwrap.fill(title, chars))
        fig.canvas.draw()               # the layout, then where the title landed
        box, page = ax.title.get_window_extent(), fig.bbox
        if box.x0 >= page.x0 - 0.5 and box.x1 <= page.x1 + 0.5:
            break
        chars = int(chars * 0.85)


def _finish(plt: ModuleType, fig: Figure, ax: Axes, out: Path, name: str,
            note: str | None = None) -> list[Path]:
    """Title, legend and notes (``dress``), save as PNG and SVG, close."""
    dress(fig, ax, note)
    paths = _save(fig, out, name)
    plt.close(fig)
    return paths
