"""A chart (``leaderboard.Figure``) as Plotly's figure JSON, for the charting library the
site carries (plotly.js, shipped in the ``plotly`` package from PyPI and copied into the
site: never fetched from a CDN). The same Figure is saved as PNG and SVG by matplotlib,
so the picture hovered and the one in a report are drawn from one description."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..leaderboard import Figure, Series

FONT = "system-ui, -apple-system, Segoe UI, sans-serif"


def library() -> Path:
    """plotly.min.js, as the installed ``plotly`` package ships it."""
    from importlib.util import find_spec

    spec = find_spec("plotly")             # found, not imported (it pulls in narwhals)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError("vendbench site draws its charts with plotly.js from the plotly "
                          "package, which is not installed here (it is a dependency of "
                          "vendbench: pip install -r requirements.lock -e .)")
    path = Path(list(spec.submodule_search_locations)[0]) / "package_data" / "plotly.min.js"
    if not path.is_file():
        raise ConfigError(f"the plotly package has no {path.name} at {path.parent}")
    return path


def style_guards(source: str) -> list[str]:
    """The ids under which plotly.js's bundled libraries add a <style> element unless
    one is there already: a page under a strict CSP carries an element of each id, so
    nothing inline is attempted (the rules they would add are in site.css)."""
    return sorted(set(re.findall(
        r'getElementById\("([0-9a-f]{32,64})"\)\)\{var \w+=document\.createElement\("style"\)',
        source)))


def text(value: str) -> str:
    """A name or label as plotly.js shows it: its titles, legends and hover labels read
    a few HTML tags (links among them), so a model named ``<a href=…>`` is escaped to
    show as typed."""
    return value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plotly_json(figure: Figure) -> dict[str, Any]:
    """``figure`` as {"data": [...], "layout": {...}}; every name, title and label
    escaped (``text``)."""
    xs = [float(x) for s in figure.series if s.kind != "hline" for x in s.x
          if isinstance(x, (int, float))]
    data: list[dict[str, Any]] = []
    for s in figure.series:
        data.extend(_traces(s, xs))
    layout: dict[str, Any] = {
        "title": {"text": text(figure.title), "font": {"size": 14}},
        "font": {"family": FONT, "size": 12},
        "hovermode": "closest", "margin": {"l": 64, "r": 16, "t": 48, "b": 56},
        "legend": {"orientation": "h", "y": -0.2},
        "xaxis": {"title": {"text": text(figure.x_title)}, "type":
                  "log" if figure.log_x else "date" if figure.x_dates else "linear",
                  "automargin": True},
        "yaxis": {"title": {"text": text(figure.y_title)}, "automargin": True,
                  **({"tickformat": ".1%"} if figure.y_percent else {})},
        "paper_bgcolor": "#ffffff", "plot_bgcolor": "#ffffff"}
    return {"name": figure.name, "data": data, "layout": layout, "note": figure.note}


def _hover(s: Series) -> dict[str, Any]:
    if s.labels:
        return {"text": [text(label) for label in s.labels],
                "hovertemplate": "%{text}<extra></extra>"}
    return {"hovertemplate": f"{text(s.name)}: %{{y}} at %{{x}}<extra></extra>"}


def _traces(s: Series, xs: list[float]) -> list[dict[str, Any]]:
    line = {"color": s.color, "width": s.width, "dash": "dash" if s.dash else "solid"}
    base = {"type": "scatter", "name": text(s.name), "showlegend": s.legend}
    if s.kind == "hline":
        ends = [min(xs), max(xs)] if xs else [0, 1]
        return [{**base, "mode": "lines", "x": ends, "y": [s.y[0]] * 2, "line": line,
                 "text": [text(t) for t in (s.labels or [s.name])] * 2,
                 "hovertemplate": "%{text}<extra></extra>"}]
    if s.kind == "band":
        fill = _rgba(s.color or "#888888", 0.18)
        return [{**base, "mode": "lines", "x": s.x, "y": s.y, "showlegend": False,
                 "line": {"width": 0}, "hoverinfo": "skip"},
                {**base, "mode": "lines", "x": s.x, "y": s.y2, "fill": "tonexty",
                 "fillcolor": fill, "line": {"width": 0}, "hoverinfo": "skip"}]
    if s.kind in ("lines", "steps"):
        out = [{**base, "mode": "lines", "x": s.x, "y": s.y, **_hover(s),
                "line": {**line, "shape": "hv" if s.kind == "steps" else "linear"}}]
    else:
        trace: dict[str, Any] = {**base, "mode": "markers", "x": s.x, "y": s.y, **_hover(s),
                                 "marker": {"color": s.color, "size": 9}}
        for axis, err in (("error_x", s.x_err), ("error_y", s.y_err)):
            if err:
                values = s.x if axis == "error_x" else s.y
                trace[axis] = {
                    "type": "data", "symmetric": False, "color": s.color, "thickness": 1.2,
                    "array": [None if b is None or v is None else max(0.0, b[1] - float(v))
                              for b, v in zip(err, values)],
                    "arrayminus": [None if b is None or v is None
                                   else max(0.0, float(v) - b[0])
                                   for b, v in zip(err, values)]}
        out = [trace]
    if s.marks:
        out.append({"type": "scatter", "mode": "markers", "name": f"{text(s.name)}: regression",
                    "x": [s.x[i] for i in s.marks], "y": [s.y[i] for i in s.marks],
                    "marker": {"symbol": "circle-open", "size": 18, "color": "#b00020",
                               "line": {"width": 2}},
                    "hovertemplate": f"{text(s.name)}: regression<extra></extra>"})
    return out


def _rgba(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    if len(h) != 6:
        return f"rgba(136,136,136,{alpha})"
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"
