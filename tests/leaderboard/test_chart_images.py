"""Every chart as an image (design §31.6): drawn within its figure (matplotlib's tight
bounding box inside the page: no title, label, legend or note cut off), a size a page
can hold, the models named in its title or legend, its notes under the plot, and its
colours saying better or worse only where the docs define them."""

from __future__ import annotations

import asyncio
import json
import re
import struct

import pytest

from vendbench.cli import main
from vendbench.leaderboard import build, build_trend, write_charts, write_trend_chart
from vendbench.results import Store

from .test_leaderboard import T0, add_ceiling, add_run, add_trial


@pytest.fixture
def drawn(monkeypatch):
    """Each figure saved, as it was when saved: its tight box, its size, its texts."""
    from matplotlib.figure import Figure

    real, seen = Figure.savefig, []

    def check(self, fname, *args, **kwargs):
        self.canvas.draw()
        tight = self.get_tightbbox(self.canvas.get_renderer())
        ax = self.axes[0]
        seen.append({"file": str(fname), "tight": tight, "size": tuple(self.get_size_inches()),
                     "ylim": ax.get_ylim(),
                     "title": ax.get_title(), "xticks": [t.get_text() for t in
                                                         ax.get_xticklabels()],
                     "texts": [t.get_text() for t in self.texts]
                     + [self._supxlabel.get_text() if self._supxlabel else ""],
                     "legend": [t.get_text() for leg in self.legends for t in leg.get_texts()]})
        return real(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", check)
    return seen


def fits(figure: dict) -> bool:
    w, h = figure["size"]
    box = figure["tight"]
    return box.x0 >= -0.02 and box.y0 >= -0.02 and box.x1 <= w + 0.02 and box.y1 <= h + 0.02


def png_size(path) -> tuple[int, int]:
    head = open(path, "rb").read(24)
    assert head.startswith(b"\x89PNG")
    return struct.unpack(">II", head[16:24])


def _panel(db: str) -> None:
    """Three runs in one minute, a model whose trials cost nearly the same ($0.415-$0.425,
    where a log axis labelled every tick "$0.42"), the two reference policies."""
    with Store(db) as s:
        for n in (1, 2, 3):
            add_run(s, f"20261101-000000-r{n:03d}", created=T0)
            for seed in (1, 2, 3):
                for model, net, cost in (("openai/a-model-with-a-long-name", 60_000 + seed,
                                          f"0.4{15 + 5 * (seed - 1)}"),
                                         ("baseline/order-up-to", 50_000 + seed, "0"),
                                         ("baseline/oracle", 100_000 + seed, "0")):
                    add_trial(s, f"20261101-000000-r{n:03d}", model, seed, net=net, cost=cost,
                              days=[(40_000.0, 40_000.0, 0, 0, 0),
                                    (41_000.0, float(net), 9, 5, 0)])
                add_ceiling(s, seed, 100_000.0 + seed)


def test_the_leaderboard_and_trend_charts_fit_and_say_what_they_show(tmp_path, drawn):
    db = str(tmp_path / "c.duckdb")
    _panel(db)
    files = write_charts(build(db), tmp_path / "charts")
    files += write_trend_chart(build_trend(db), tmp_path / "charts")
    names = {f.stem for f in files}
    assert {"trajectories", "oracle_share", "return_vs_cost", "trend"} <= names
    assert len(drawn) == len(files)
    for figure in drawn:
        assert fits(figure), (figure["file"], figure["tight"], figure["size"])
    for f in files:
        if f.suffix == ".png":
            w, h = png_size(f)
            assert 600 <= w <= 2_400 and 300 <= h <= 2_000, (f.name, w, h)
    by = {figure["file"].rsplit("/", 1)[-1]: figure for figure in drawn}
    cost = by["return_vs_cost.png"]
    labels = [t for t in cost["xticks"] if t]
    assert len(labels) >= 2 and len(set(labels)) == len(labels), labels   # not all "$0.42"
    trend = by["trend.png"]
    assert len(set(trend["xticks"])) == 3, trend["xticks"]       # runs of the same minute
    assert "openai/a-model-with-a-long-name" in trend["legend"]
    for name in ("oracle_share.png", "trend.png"):
        assert any("95%" in t for t in by[name]["texts"]), name   # the notes, under the plot


def test_return_against_cost_draws_a_frontier_across_models_only(tmp_path, drawn):
    """design §35.4: the chart drew an "efficiency frontier" through one model's own
    trials, on a return axis zoomed to 30 CNY. One model: no frontier, and the axis
    spans the starting cash (a return of 0), so the trials' 2 CNY apart look as close as
    they are; two models: the frontier joins their means."""
    from vendbench.leaderboard._charts import efficiency_frontier

    db = str(tmp_path / "c.duckdb")
    _panel(db)
    write_charts(build(db), tmp_path / "one")
    (cost,) = [f for f in drawn if f["file"].endswith("return_vs_cost.png")]
    assert not any("frontier" in t for t in cost["legend"])
    low, high = cost["ylim"]
    assert low <= 0 and high >= 20 and high - low > 15    # thousand CNY: not 0.002 wide
    with Store(db) as s:
        for seed in (1, 2, 3):
            add_trial(s, "20261101-000000-r003", "openai/b", seed, net=70_000, cost="0.9")
    drawn.clear()
    write_charts(build(db, "all"), tmp_path / "two")
    (cost,) = [f for f in drawn if f["file"].endswith("return_vs_cost.png")]
    assert "frontier across models (means)" in cost["legend"]
    assert efficiency_frontier([(1.0, 5.0), (2.0, 4.0), (3.0, 8.0), (0.5, 1.0)]) == \
        [(0.5, 1.0), (1.0, 5.0), (3.0, 8.0)]


def test_the_oracles_pricing_regret_is_not_painted_worse(tmp_path):
    """docs/metrics.md says the oracle, pricing for fewer visits, shows more pricing
    regret than the baseline: the heatmap painted it red."""
    from types import SimpleNamespace

    from vendbench.environment import metric_directions
    from vendbench.leaderboard._charts import heat_grid

    directions = metric_directions("autovend")
    rows = [SimpleNamespace(operations={"pricing_regret_share": 0.21, "waste_rate": 0.0}),
            SimpleNamespace(operations={"pricing_regret_share": 0.105, "waste_rate": 0.1})]
    grid = heat_grid(SimpleNamespace(rows=rows, directions=directions),
                     ["pricing_regret_share", "waste_rate"])
    assert grid[:, 0].mask.all() and not grid[:, 1].mask.any()


def test_the_compare_chart_names_the_models_and_keeps_its_bars_in_the_axes(tmp_path,
                                                                        drawn):
    from vendbench.compare import CompareSpec, compare, write_chart
    from vendbench.orchestrator import build_config

    models = [{"id": "baseline/order-up-to"}, {"id": "baseline/oracle"}]
    # 8 days: the shortest at which the oracle gains enough over doing nothing on every
    # seed to make shares of (design §34)
    spec = CompareSpec(base=build_config({"days": 8, "seeds": [1], "models": models}),
                       max_pairs=4)
    out = asyncio.run(compare(spec, str(tmp_path / "c.duckdb")))
    write_chart(out, spec, tmp_path / "compare.png")
    (figure,) = drawn
    assert fits(figure), (figure["tight"], figure["size"])
    assert "baseline/oracle" in figure["title"] and "baseline/order-up-to" in figure["title"]
    assert out.row.comparison_id not in figure["title"]          # in the notes instead
    assert any(out.row.comparison_id in t for t in figure["texts"])
    lows = [p["low"] for s in out.steps for p in s.intervals]
    highs = [p["high"] for s in out.steps for p in s.intervals]
    bottom, top = figure["ylim"]               # the first batch's bar ran off the axes
    assert bottom < min(lows) and max(highs) < top


def test_the_arena_has_the_leaderboards_formats_and_charts(tmp_path, drawn, capsys):
    """`leaderboard --arena` refused --charts, markdown and csv, and printed shares as
    fractions (design §31.4)."""
    db = str(tmp_path / "a.duckdb")
    assert main(["arena", "baseline/oracle", "baseline/order-up-to", "--seeds", "1", "2",
                 "--days", "8", "--db", db]) == 0
    capsys.readouterr()
    assert main(["leaderboard", "--arena", "--db", db, "--charts",
                 str(tmp_path / "charts")]) == 0
    table = capsys.readouterr().out
    assert all(len(line) <= 80 for line in table.splitlines()), table
    assert "of oracle, 95% CI" in table
    assert re.search(r"^baseline/oracle\b.* \d+% \(\d+%–\d+%\)", table, re.M), table
    assert {p.name for p in (tmp_path / "charts").iterdir()} == {
        f"{n}.{e}" for n in ("arena_share", "head_to_head") for e in ("png", "svg")} | {
        "report.html"}
    report = (tmp_path / "charts" / "report.html").read_text()
    assert report.count("<svg") == 2 and "baseline/order-up-to" in report
    for external in ("src=", "<link", 'href="http', "@import"):
        assert external not in report                   # one file, nothing from outside
    assert len(drawn) >= 4 and all(fits(f) for f in drawn)
    assert all("arena" in f["title"].lower() for f in drawn)
    assert main(["leaderboard", "--arena", "--db", db, "--format", "markdown"]) == 0
    markdown = capsys.readouterr().out
    assert "| `baseline/oracle`" in markdown and "earned EUR" in markdown
    assert main(["leaderboard", "--arena", "--db", db, "--format", "csv"]) == 0
    rows = capsys.readouterr().out.strip().splitlines()
    assert rows[0].startswith("rank,model,seats") and len(rows) == 3
    assert 0 < float(rows[1].split(",")[7]) <= 1.25                  # a share, not text
    cost = rows[1].split(",")[rows[0].split(",").index("cost_usd")]
    assert cost == "0.000000000" and "E-" not in "\n".join(rows)    # not "0E-9" (§35.6)
    assert main(["leaderboard", "--arena", "--db", db, "--format", "html"]) == 0
    assert capsys.readouterr().out.startswith("<!doctype html>")
    assert main(["leaderboard", "--arena", "--db", db, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["rows"][0]["shares"]
