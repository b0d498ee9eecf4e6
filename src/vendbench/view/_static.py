"""``vendbench view --static DIR``: the viewer's pages as files, for publishing beside
the leaderboard's report. Links are relative, so the folder opens from disk or any web
server. Search, full messages and request windows need the server (``vendbench view``):
a window page per request of every trial would be most of the file again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError, ResultsError
from ..results import Store
from ..results import Transcripts, path_id
from ._pages import Pages, _pairs
from ._templates import SCRIPT, STYLE


def static_plan(db: str, run: str | None = None) -> list[str]:
    """The paths of the pages of ``db`` (only run ``run``'s, if given), nothing written:
    ConfigError for a run the file does not have."""
    with Store(db, read_only=True) as store:
        try:
            runs = [store.run(run)] if run else store.runs()
        except ResultsError:
            raise ConfigError(f"no run {run!r} in {db} (vendbench runs --db {db} lists "
                              "them); nothing was written") from None
        plan = ["index.html"]
        for r in runs:
            plan.append(f"run/{path_id(r['run_id'])}.html")
            trials = store.trials(r["run_id"])
            for t in trials:
                folder = f"trial/{path_id(t['trial_id'])}"
                plan.append(f"{folder}/index.html")
                last = t["days_completed"] or 0
                plan += [f"{folder}/day-{d}.html" for d in range(1, last + 1)]
                plan += [f"{folder}/window-{seq}-{attempt}.html"
                         for seq, attempt in Transcripts(store).requests(t["trial_id"])]
            matches = Transcripts(store).matches(r["run_id"])
            plan += [f"match/{path_id(m['match_id'])}.html" for m in matches]
            plan += [f"compare/{path_id(a['trial_id'])}/{path_id(b['trial_id'])}.html"
                     for a, b in ([] if matches else _pairs(trials))]
    return plan


def _writable(out: Path, plan: list[str]) -> None:
    """Refuse, before anything is written, a folder where a page or one of its folders
    would overwrite what is not one (a folder named index.html once ended the export in
    a traceback)."""
    folders = {str(f) for p in plan for f in Path(p).parents} - {"."}
    for path in plan:
        if (out / path).is_dir():
            raise ConfigError(f"--static {out}: {path} is a folder there, where a page "
                              "goes; pass another folder (nothing was written)")
    for folder in sorted(folders):
        where = out / folder
        if where.exists() and not where.is_dir():
            raise ConfigError(f"--static {out}: {folder} is a file there, where a folder of "
                              "pages goes; pass another folder (nothing was written)")


def write_static(db: str, out: str | Path, run: str | None = None,
                 on_page: Callable[[str], None] | None = None,
                 plan: list[str] | None = None) -> int:
    """Write the pages of ``db`` (only run ``run``'s, if given; ``plan``: these, from
    ``static_plan``) under ``out``, and the style and script they share (``assets/``);
    returns how many pages were written. ``on_page`` hears each page's path."""
    out = Path(out)
    plan = static_plan(db, run) if plan is None else plan
    _writable(out, [*plan, "assets/view.css", "assets/view.js"])
    (out / "assets").mkdir(parents=True, exist_ok=True)
    (out / "assets" / "view.css").write_text(STYLE, encoding="utf-8")
    (out / "assets" / "view.js").write_text(SCRIPT, encoding="utf-8")
    written = 0
    with Store(db, read_only=True) as store:       # one open file for every page
        pages = Pages(db, served=False, store=store)
        for path in plan:
            page = pages.get(path)
            if page.status != 200:
                raise ConfigError(f"could not render {path}: {page.status}")
            target = out / path
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(page.body, encoding="utf-8")
            except OSError as exc:           # what the check before could not foresee
                raise ConfigError(f"--static {out}: cannot write {path} "
                                  f"({exc.strerror or exc}); {written:,} of "
                                  f"{len(plan):,} pages were written") from None
            written += 1
            if on_page is not None:
                on_page(path)
    return written
