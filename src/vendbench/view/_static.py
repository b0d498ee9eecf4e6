"""``vendbench view --static DIR``: the viewer's pages as files, for publishing beside
the leaderboard's report. Links are relative, so the folder opens from disk or any web
server. Search, full messages and request windows need the server (``vendbench view``):
a window page per request of every trial would be most of the file again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ..errors import ConfigError
from ..results import Store
from ..results._transcripts import Transcripts
from ._pages import Pages, _pairs


def write_static(db: str, out: str | Path, run: str | None = None,
                 on_page: Callable[[str], None] | None = None) -> int:
    """Write the pages of ``db`` (only run ``run``'s, if given) under ``out``; returns
    how many were written."""
    pages = Pages(db, served=False)
    out = Path(out)
    with Store(db, read_only=True) as store:
        runs = [store.run(run)] if run else store.runs()
        plan = ["index.html"]
        for r in runs:
            plan.append(f"run/{r['run_id']}.html")
            trials = store.trials(r["run_id"])
            for t in trials:
                plan.append(f"trial/{t['trial_id']}/index.html")
                last = t["days_completed"] or 0
                plan += [f"trial/{t['trial_id']}/day-{d}.html" for d in range(1, last + 1)]
                plan += [f"trial/{t['trial_id']}/window-{seq}-{attempt}.html"
                         for seq, attempt in Transcripts(store).requests(t["trial_id"])]
            plan += [f"compare/{a['trial_id']}/{b['trial_id']}.html"
                     for a, b in _pairs(trials)]
    written = 0
    for path in plan:
        page = pages.get(path)
        if page.status != 200:
            raise ConfigError(f"could not render {path}: {page.status}")
        target = out / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page.body, encoding="utf-8")
        written += 1
        if on_page is not None:
            on_page(path)
    return written

