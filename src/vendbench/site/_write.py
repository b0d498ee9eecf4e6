"""``vendbench site OUT``: render the pages, their JSON, the charts as SVG and PNG, the
panel as Parquet, the assets and robots.txt into OUT, writing a file only when its bytes
changed (a rebuild after one more night rewrites only what that night changed) and
removing what an earlier build wrote that this one no longer makes."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..leaderboard import save_figure
from ..results import merge_parts
from ._assets import CSP, ROBOTS, SCRIPT, STYLE
from ._pages import Page, pages
from ._panel import Panel, collect, sources
from ._read import Source, fingerprint, kept, parts as parquet_parts, plain
from ._plotly import library, plotly_json, style_guards
from ._templates import TEMPLATES

CACHE = ".vendbench-site"          # what a rebuild reuses; never linked from a page
CHARTS_A_WORKER = 6                # fewer charts are drawn here: a worker costs a second


@dataclass
class Built:
    out: Path
    pages: int
    files: int
    written: int
    removed: int
    charts_drawn: int
    seconds: float
    transcripts: bool

    def summary(self) -> str:
        return (f"{self.out}: {self.pages:,} pages, {self.files:,} files; wrote "
                f"{self.written:,}, {self.files - self.written:,} unchanged, removed "
                f"{self.removed:,}; {self.charts_drawn:,} chart images drawn; "
                f"{self.seconds:.1f} s" + ("" if self.transcripts else
                                           "; transcripts not published (--transcripts)"))


def dumps(value: Any) -> str:
    return json.dumps(plain(value), ensure_ascii=False, allow_nan=False, sort_keys=True)


class Writer:
    """Files under ``out``, each written only when its bytes differ from what is there."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.made: set[str] = set()
        self.written = 0

    def put(self, path: str, data: bytes | str) -> None:
        raw = data.encode() if isinstance(data, str) else data
        target = self.out / path
        self.made.add(path)
        try:
            if target.stat().st_size == len(raw) and target.read_bytes() == raw:
                return
        except OSError:
            pass
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_bytes(raw)
        os.replace(tmp, target)
        self.written += 1

    def keep(self, path: str) -> None:
        """A file made earlier and still current (not read again)."""
        self.made.add(path)


def _environment() -> Any:
    from jinja2 import DictLoader, Environment, StrictUndefined

    return Environment(loader=DictLoader(TEMPLATES), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=False)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("vendbench")
    except PackageNotFoundError:
        return "unknown"


def _check_out(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"{out} is a file; vendbench site writes a folder (nothing was "
                          "written)")
    if out.is_dir() and any(out.iterdir()) and not (out / CACHE).is_dir():
        raise ConfigError(f"{out} holds files vendbench site did not write; pass an empty "
                          "or new folder, or one an earlier vendbench site built (nothing "
                          "was written)")


def build_site(out: str | Path, dbs: Sequence[str], *, transcripts: bool = False,
               diagnostics: bool = True,
               on_step: Callable[[str], None] | None = None) -> Built:
    """Build the site of ``dbs`` (results files) in ``out`` (a new or empty folder, or one
    this built before). ``transcripts``: publish every trial's transcript too."""
    start = time.perf_counter()
    out = Path(out)
    _check_out(out)
    say = on_step or (lambda _: None)
    files = sources(list(dbs))
    cache = out / CACHE
    cache.mkdir(parents=True, exist_ok=True)
    read = cache / "files"
    panel = collect(files, diagnostics=diagnostics, on_step=say, cache=read)
    previous = _manifest(cache)
    writer = Writer(out)
    plotly = library()
    source = plotly.read_text(encoding="utf-8")
    guards = style_guards(source)
    site = pages(panel, transcripts)
    env = _environment()
    common = {"csp": CSP, "guards": guards, "version": _version(), "files": len(files)}
    figures = []
    say(f"rendering {len(site):,} pages")
    for page in site:
        figures += page.charts
        _render(env, writer, page, common)
    drawn = _charts(writer, cache, figures, say)
    writer.put("assets/site.css", STYLE)
    writer.put("assets/site.js", SCRIPT)
    writer.put("assets/plotly.min.js", source)
    writer.put("robots.txt", ROBOTS)
    _parquet(writer, read, files, say)
    if transcripts:
        _transcripts(writer, cache, files, say)
    removed = 0
    for stale in sorted(previous - writer.made):
        path = out / stale
        if path.is_file():
            path.unlink()
            removed += 1
    (cache / "manifest.json").write_text(json.dumps(sorted(writer.made)))
    return Built(out, len(site), len(writer.made), writer.written, removed, drawn,
                 time.perf_counter() - start, transcripts)


def _manifest(cache: Path) -> set[str]:
    return set(kept(cache / "manifest.json") or ())


def _render(env: Any, writer: Writer, page: Page, common: dict[str, Any]) -> None:
    charts = {f.name: plotly_json(f) for f in page.charts}
    figures = {name: {"name": name, "note": fig["note"],
                      "json": dumps(fig).replace("</", "<\\/").replace("<!--", "<\\!--")}
               for name, fig in charts.items()}
    data = plain(page.data)
    html = env.get_template(page.template).render(
        **common, **data, root=page.root, charts=bool(charts), figures=figures,
        json_href=page.json_path.rsplit("/", 1)[-1])
    writer.put(page.path, html)
    writer.put(page.json_path, dumps({"page": data, "charts": charts}))


def _draw(figures: list[Any], folder: str) -> list[str]:
    """Draw ``figures`` as SVG and PNG into ``folder`` (in a worker process)."""
    return [str(p) for fig in figures for p in save_figure(fig, folder)]


def _charts(writer: Writer, cache: Path, figures: list[Any], say: Callable[[str], None]
            ) -> int:
    """Each chart as SVG and PNG, drawn again only when its data changed (by worker
    processes, one a core, when there are many)."""
    done_file = cache / "charts.json"
    done: dict[str, str] = kept(done_file) or {}
    todo, digests = [], {}
    for fig in figures:
        digest = hashlib.sha256(dumps(fig.as_json()).encode()).hexdigest()
        names = [f"charts/{fig.name}.svg", f"charts/{fig.name}.png"]
        if done.get(fig.name) == digest and all((writer.out / n).is_file() for n in names):
            for n in names:
                writer.keep(n)
        else:
            todo.append(fig)
            digests[fig.name] = digest
    if not todo:
        return 0
    say(f"drawing {len(todo):,} of {len(figures):,} charts as SVG and PNG")
    workers = min(os.cpu_count() or 1, 8, len(todo) // CHARTS_A_WORKER)
    with tempfile.TemporaryDirectory() as tmp:
        if workers < 2:
            _draw(todo, tmp)
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            context = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(workers, mp_context=context) as pool:
                list(pool.map(_draw, [todo[i::workers] for i in range(workers)],
                              [tmp] * workers))
        for fig in todo:
            for kind in ("svg", "png"):
                path = Path(tmp) / f"{fig.name}.{kind}"
                writer.put(f"charts/{path.name}", path.read_bytes())
            done[fig.name] = digests[fig.name]
    done_file.write_text(json.dumps(done))
    return len(todo)


def _parquet(writer: Writer, cache: Path, files: list[Source],
             say: Callable[[str], None]) -> None:
    """data/trials.parquet and data/exchanges.parquet: each file's rows (written when it
    was read, kept while it is unchanged), merged."""
    found = [parquet_parts(cache, src) for src in files]
    say("writing data/trials.parquet and data/exchanges.parquet")
    with tempfile.TemporaryDirectory() as tmp:
        for i, name in enumerate(("trials", "exchanges")):
            target = Path(tmp) / f"{name}.parquet"
            merge_parts([f[i] for f in found], target)
            writer.put(f"data/{name}.parquet", target.read_bytes())


def _transcripts(writer: Writer, cache: Path, files: list[Source],
                 say: Callable[[str], None]) -> None:
    """Each file's transcripts as ``view --static`` writes them, under
    transcripts/<file>/ (written again only when the file changed)."""
    from ..view import write_static

    done_file = cache / "transcripts.json"
    done: dict[str, list[str]] = kept(done_file) or {}
    for src in files:
        stamp = fingerprint(src.path)
        key = f"{src.key}:{stamp}"
        if key in done and all((writer.out / p).is_file() for p in done[key]):
            for p in done[key]:
                writer.keep(p)
            continue
        say(f"writing the transcripts of {src.path}")
        with tempfile.TemporaryDirectory() as tmp:
            write_static(src.path, tmp)
            made = []
            for path in sorted(Path(tmp).rglob("*")):
                if path.is_file():
                    rel = f"transcripts/{src.key}/{path.relative_to(tmp).as_posix()}"
                    writer.put(rel, path.read_bytes())
                    made.append(rel)
        done = {k: v for k, v in done.items() if not k.startswith(f"{src.key}:")}
        done[key] = made
    done_file.write_text(json.dumps(done))


__all__ = ["Built", "Panel", "build_site"]
