"""vendbench site from files (design §33): every page kind and its JSON, the numbers
against the results files themselves, a strict CSP with nothing inline or from
elsewhere, Parquet, robots.txt, transcripts only when asked, incremental rebuilds, and
a clear refusal of each bad input."""

from __future__ import annotations

import json
import re
import statistics
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path

import duckdb
import pytest

from vendbench.cli import main
from vendbench.results import Store
from vendbench.site import build_site

from .conftest import page_json


class Tags(HTMLParser):
    """Every tag with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags(path: Path) -> list[tuple[str, dict]]:
    parser = Tags()
    parser.feed(path.read_text())
    return parser.tags


def site_pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "transcripts" not in p.parts)


def test_every_page_kind_is_written_with_its_data_beside_it(site, panel):
    kinds = {}
    for page in site_pages(site):
        data = json.loads(page.with_suffix(".json").read_text())
        kinds.setdefault(data["page"]["kind"], []).append(page.relative_to(site))
        assert f'href="{page.stem}.json"' in page.read_text()      # linked from the page
    assert set(kinds) == {"index", "trend", "runs", "models", "model", "run", "comparison",
                          "arena"}
    assert len(kinds["model"]) == 4                  # three LLM models and the reference
    assert len(kinds["comparison"]) == 1 and len(kinds["arena"]) == 1
    with Store(panel["files"][1], read_only=True) as store:
        runs = len(store.runs())
    assert len(kinds["run"]) == 1 + runs + 1          # night 1, night 2's runs, the arena
    assert (site / "robots.txt").read_text().count("Disallow: /transcripts/") == 1


def test_the_ranking_and_the_frontier_are_the_files_numbers(site, panel):
    index = page_json(site, "index.json")["page"]
    (cohort,) = index["cohorts"]
    assert cohort["latest"]["run_id"] == panel["nights"][1]        # the newest night
    with Store(panel["files"][1], read_only=True) as store:
        trials = store.trials(panel["nights"][1])
    for point in cohort["frontier"]["points"]:
        costs = [float(t["cost_usd"]) for t in trials if t["model"] == point["model"]]
        assert point["cost"] == pytest.approx(statistics.fmean(costs))
        assert point["trials"] == len(costs) == 3
        low, high = point["cost_ci"]
        assert low <= point["cost"] <= high
    points = {p["model"]: p for p in cohort["frontier"]["points"]}
    assert set(points) == {"openai/cheap", "openai/mid", "openai/pricey"}
    # mid and pricey run the same business; pricey pays more for it: never on the frontier
    assert points["openai/mid"]["share"] == pytest.approx(points["openai/pricey"]["share"])
    assert not points["openai/pricey"]["on_frontier"]
    assert points["openai/cheap"]["on_frontier"]          # the cheapest is never beaten
    assert [r["model"] for r in cohort["frontier"]["references"]] == ["baseline/order-up-to"]
    rows = {r["model"]: r for r in cohort["rows"]}
    assert rows["baseline/order-up-to"]["frontier"] == "line"
    for model, row in rows.items():                       # both intervals, each labelled
        assert row["ci_t"] is not None and row["ci_any"] is not None, model
    assert "Student's t" in cohort["interval_t"] and "any number" in cohort["interval_any"]
    # the index's chart is drawn from the same numbers
    chart = page_json(site, "index.json")["charts"][f"frontier-{cohort['id']}"]
    drawn = {t["name"]: (t["x"][0], t["y"][0]) for t in chart["data"]
             if t["mode"] == "markers"}
    assert drawn == {m: (p["cost"], p["share"]) for m, p in points.items()}


def test_flags_and_the_trial_map_show_what_the_files_hold(site):
    (cohort,) = page_json(site, "index.json")["page"]["cohorts"]
    assert all(r["flags"] is not None for r in cohort["rows"])      # night 2 was screened
    assert cohort["map"]["columns"] == [[2026, 1, 1], [2026, 2, 1], [2026, 3, 1]]
    assert all(cells == ["completed"] * 3 for cells in
               (r["cells"] for r in cohort["map"]["rows"]))
    assert cohort["provenance"]["scanners"]                        # who screened, which version
    assert cohort["provenance"]["trials"] == 12


def test_a_model_page_has_its_trials_trend_and_transcripts(site, panel):
    model = page_json(site, "model/openai--mid.json")["page"]
    (c,) = model["cohorts"]
    assert [(t["world_seed"], t["seed"]) for t in c["trials"]] == [(2026, 1), (2026, 2),
                                                                  (2026, 3)]
    for t in c["trials"]:
        assert (site / t["transcript"]).is_file()
        assert t["input_tokens"] > 0 and 0 <= t["cached_share"] <= 1
    assert len(c["nights"]) == 2                       # both nights, oldest first
    assert c["operations"] and c["diagnostics"] is not None
    charts = page_json(site, "model/openai--mid.json")["charts"]
    money = charts[c["money_chart"]]
    per_trial = [t for t in money["data"] if not t.get("showlegend", True)
                 and t.get("hoverinfo") != "skip"]
    assert len(per_trial) == 3 and all(len(t["y"]) == 8 for t in per_trial)
    mean = next(t for t in money["data"] if t["name"] == "mean")
    assert mean["y"] == pytest.approx([statistics.fmean(v) for v in
                                       zip(*(t["y"] for t in per_trial))])
    for kind in ("svg", "png"):
        assert (site / "charts" / f"{c['money_chart']}.{kind}").stat().st_size > 1000


def test_nothing_inline_runs_and_nothing_comes_from_elsewhere(site):
    for page in site_pages(site):
        text = page.read_text()
        (csp,) = [a["content"] for t, a in tags(page)
                  if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
        assert "script-src 'self'" in csp and "default-src 'none'" in csp
        assert "unsafe" not in csp
        assert not re.search(r"\son[a-z]+\s*=", text), page          # no handlers
        assert ' style="' not in text, page
        for tag, attrs in tags(page):
            if tag == "script":
                assert attrs.get("src") or attrs.get("type") == "application/json", page
            for key in ("src", "href"):
                value = attrs.get(key) or ""
                assert not re.match(r"(https?:)?//", value), (page, value)


def test_every_link_resolves(site):
    for page in [*site_pages(site), *sorted((site / "transcripts").rglob("*.html"))[:50]]:
        for tag, attrs in tags(page):
            href = attrs.get("href") or attrs.get("src")
            if not href or href.startswith("#") or tag not in ("a", "link", "script",
                                                                 "img"):
                continue
            target = (page.parent / href.split("#")[0]).resolve()
            assert target.is_file(), f"{page.relative_to(site)} -> {href}"


def test_parquet_holds_the_panels_trials_and_exchanges_without_their_content(site, panel):
    trials = exchanges = 0
    for path in panel["files"]:
        with Store(path, read_only=True) as store:
            trials += store.con.execute("SELECT count(*) FROM trials").fetchone()[0]
            exchanges += store.con.execute("SELECT count(*) FROM exchanges").fetchone()[0]
    con = duckdb.connect()
    t = con.execute(f"SELECT count(*), count(DISTINCT source) FROM "
                    f"'{site / 'data' / 'trials.parquet'}'").fetchone()
    assert t == (trials, 3)
    x = con.execute(f"SELECT * FROM '{site / 'data' / 'exchanges.parquet'}'")
    columns = [d[0] for d in x.description]
    assert len(x.fetchall()) == exchanges > 0
    assert "request_json" not in columns and "response_json" not in columns
    assert {"input_tokens", "cost_usd", "source", "trial_id"} <= set(columns)


def test_transcripts_only_when_asked(panel, tmp_path):
    built = build_site(tmp_path / "out", panel["files"][:1])
    assert not (tmp_path / "out" / "transcripts").exists()
    assert "not published" in built.summary()
    model = page_json(tmp_path / "out", "model/openai--cheap.json")["page"]
    assert all(t["transcript"] is None for t in model["cohorts"][0]["trials"])
    assert "(not published)" in (tmp_path / "out" / "model" / "openai--cheap.html").read_text()


def test_a_rebuild_rewrites_only_what_changed(panel, tmp_path):
    out = tmp_path / "out"
    first = build_site(out, panel["files"][:1])
    assert first.written == first.files
    old_run = next((out / "run" / "night-1").glob("*.html"))
    stamp = old_run.stat().st_mtime_ns
    again = build_site(out, panel["files"][:1])
    assert (again.written, again.charts_drawn, again.removed) == (0, 0, 0)
    more = build_site(out, panel["files"][:2])         # one more night
    assert 0 < more.written < more.files
    assert old_run.stat().st_mtime_ns == stamp          # a page the night did not touch
    assert (out / "trend.html").read_text().count("night-2") >= 1
    fewer = build_site(out, panel["files"][1:2])        # night 1 dropped: its pages go
    assert fewer.removed > 0 and not old_run.exists()


def test_the_frontier_is_one_of_the_leaderboards_charts(panel, tmp_path):
    assert main(["leaderboard", "--db", panel["files"][1], "--run", panel["nights"][1],
                 "--charts", str(tmp_path / "charts")]) == 0
    for kind in ("png", "svg"):
        assert (tmp_path / "charts" / f"frontier.{kind}").stat().st_size > 1000


@pytest.mark.parametrize("case", ["file", "foreign", "missing", "twice", "folder"])
def test_each_bad_input_is_refused_clearly_and_nothing_is_written(panel, tmp_path, capsys,
                                                                  case):
    out, dbs = tmp_path / "out", [panel["files"][0]]
    expected = {"file": "is a file", "foreign": "did not write", "missing": "no results file",
                "twice": "named twice", "folder": "a folder"}[case]
    if case == "file":
        out.write_text("x")
    elif case == "foreign":
        out.mkdir()
        (out / "mine.txt").write_text("keep me")
    elif case == "missing":
        dbs = [str(tmp_path / "nope.duckdb")]
    elif case == "twice":
        dbs = dbs * 2
    else:
        dbs = [str(tmp_path)]
    assert main(["site", str(out), "--db", *dbs]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err
    if case == "foreign":
        assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    elif case != "file":
        assert not out.exists()


def test_a_file_without_ranked_runs_still_builds(panel, tmp_path):
    built = build_site(tmp_path / "out", [panel["files"][2]])       # only an arena
    index = page_json(tmp_path / "out", "index.json")["page"]
    assert index["cohorts"] == [] and len(index["arenas"]) == 1
    assert built.pages == 6                # index, trend, runs, models, the run, the arena


def test_amounts_in_the_json_are_numbers_never_text(site):
    run = next((site / "run" / "night-1").glob("*.json"))
    data = json.loads(run.read_text())["page"]
    assert all(isinstance(t["cost"], float) for t in data["trials"])
    assert not any(isinstance(v, str) and re.fullmatch(r"-?\d+\.\d+", v)
                   for t in data["trials"] for v in t.values())
    assert Decimal(str(sum(t["cost"] for t in data["trials"]))) > 0


def test_site_help_teaches():
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "vendbench", "site", "--help"],
                         capture_output=True, text=True, check=True).stdout
    flat = " ".join(out.split())
    for words in ("--transcripts", "frontier", "possibly on the frontier", "Parquet",
                  "robots.txt", "nothing inline runs", "rewrites only the files",
                  "examples:", "docs/site.md"):
        assert words in flat, words


def test_worker_processes_build_the_same_site(panel, tmp_path, monkeypatch):
    """Files read and charts drawn by spawned workers give byte-identical pages, data
    and chart images to a build done in one process."""
    import vendbench.site._read as read
    import vendbench.site._write as write

    alone = build_site(tmp_path / "alone", panel["files"][:2])
    monkeypatch.setattr(read, "PARALLEL_FROM", 1)
    monkeypatch.setattr(write, "CHARTS_A_WORKER", 1)
    monkeypatch.setattr(read.os, "cpu_count", lambda: 2)
    workers = build_site(tmp_path / "workers", panel["files"][:2])
    assert workers.files == alone.files and workers.charts_drawn == alone.charts_drawn > 2
    for path in (tmp_path / "alone").rglob("*"):
        if path.is_file() and write.CACHE not in path.parts:
            twin = tmp_path / "workers" / path.relative_to(tmp_path / "alone")
            assert twin.read_bytes() == path.read_bytes(), path.name


def test_the_map_shows_missing_trials_and_harness_errors(tmp_path):
    """HAL's missing-run view: a trial never run is "missing", a harness error (set apart
    from the ranking) keeps its status."""
    from ..leaderboard.test_leaderboard import add_ceiling, add_floor, add_run, add_trial

    db = str(tmp_path / "night.duckdb")
    with Store(db) as s:
        add_run(s, "n1")
        for seed in (1, 2, 3):
            add_ceiling(s, seed, 150_000.0)
            add_floor(s, seed)
            add_trial(s, "n1", "openai/a", seed, net=60_000.0, cost="0.5")
        for seed in (1, 2):
            add_trial(s, "n1", "openai/b", seed, net=55_000.0, cost="0.2")
        add_trial(s, "n1", "openai/b", 3, status="error", net=0.0, cost="0.01")
        add_trial(s, "n1", "openai/c", 1, net=50_000.0, cost="0.1")
    build_site(tmp_path / "out", [db], diagnostics=False)
    (cohort,) = page_json(tmp_path / "out", "index.json")["page"]["cohorts"]
    cells = {r["model"]: r["cells"] for r in cohort["map"]["rows"]}
    assert cohort["map"]["columns"] == [[2026, 1, 1], [2026, 2, 1], [2026, 3, 1]]
    assert cells == {"openai/a": ["completed"] * 3,
                     "openai/b": ["completed", "completed", "error"],
                     "openai/c": ["completed", None, None]}
    page = (tmp_path / "out" / "index.html").read_text()
    assert page.count(">missing</td>") == 2 and page.count(">error</td>") == 1


def test_a_name_with_markup_shows_as_typed_in_the_charts():
    """plotly.js reads a few HTML tags in names, titles and hover labels (links among
    them): a model's name reaches it escaped."""
    from vendbench.leaderboard import Figure, Series
    from vendbench.site._plotly import plotly_json

    name = '<a href="javascript:alert(1)">m</a> & <b>'
    fig = Figure("f", f"title {name}", "x", "y", series=[
        Series(name, [1.0], [0.5], labels=[f"{name}: 50%"]),
        Series(name, [1.0, 2.0], [0.5, 0.6], "lines"),
        Series(name, [], [0.4], "hline", marks=[])])
    drawn = json.dumps(plotly_json(fig))
    assert "<a" not in drawn and "<b>" not in drawn
    assert "&lt;a href=" in drawn and "&amp; &lt;b&gt;" in drawn
