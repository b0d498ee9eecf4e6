"""The viewer's pages, by path: the server answers a GET with one, ``--static`` writes
them all. Each page opens the results file read-only for as long as it renders (a run
writing the file answers through its live reads) and reads a bounded part of it.
"""

from __future__ import annotations

import html
import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import jinja2
from markupsafe import Markup

from ..environment import SALT_ENV, find_scenario
from ..errors import ResultsError
from ..results import PairKey, Store, TrialStatus, anchors_for, cached_share, shares
from ..results import SEARCH_LIMIT, Transcripts, path_id
from ._diagnosis import trial_diagnosis, trial_flags
from ._templates import CSP, SCRIPT, STATIC_CSP, STYLE, TEMPLATES

ID = r"[A-Za-z0-9._@+~-]+"
ROUTES = [(re.compile(p), name) for p, name in (
    (r"(?:index\.html)?", "runs"),
    (rf"run/({ID})\.html", "run"),
    (rf"trial/({ID})/(?:index\.html)?", "trial"),
    (rf"trial/({ID})/day-(\d{{1,4}})\.html", "day"),
    (rf"trial/({ID})/window-(\d{{1,7}})-(\d{{1,3}})\.html", "window"),
    (rf"trial/({ID})/message-(\d{{1,8}})\.html", "message"),
    (rf"trial/({ID})/search\.html", "search"),
    (rf"trial/({ID})/state\.txt", "trial_state"),
    (rf"run/({ID})\.state\.txt", "run_state"),
    (rf"compare/({ID})/({ID})\.html", "compare"),
    (rf"match/({ID})\.html", "match"),
)]


@dataclass(frozen=True)
class Page:
    status: int
    body: str
    content_type: str = "text/html; charset=utf-8"


class Pages:
    """Renders the pages of results file ``db``. ``served``: pages may link what only
    a server answers (search, full messages, live refresh)."""

    def __init__(self, db: str, served: bool = True, store: Store | None = None) -> None:
        # ``store``: one open file for every page (the static export: opening the file
        # for each page was two thirds of its time); served pages open it per request
        self.db, self.served, self._store = db, served, store
        self.env = jinja2.Environment(loader=jinja2.DictLoader(TEMPLATES), autoescape=True,
                                      undefined=jinja2.ChainableUndefined, finalize=visible)
        self.env.globals.update(money=_money, percent=_percent, spark=_spark,
                                pretty=_pretty, pretty_obj=_pretty_obj, share=_share_of,
                                share_of=_share_of, csp=CSP if served else STATIC_CSP,
                                when=_when, script=Markup(SCRIPT), style=Markup(STYLE),
                                assets=not served)
        self.env.filters["path"] = path_id

    def get(self, path: str, query: dict[str, str] | None = None) -> Page:
        path = path.lstrip("/")
        for pattern, name in ROUTES:
            match = pattern.fullmatch(path)
            if match:
                try:
                    if self._store is not None:
                        return self._render(self._store, name, match, query, path)
                    with Store(self.db, read_only=True) as store:
                        return self._render(store, name, match, query, path)
                except ResultsError as exc:
                    return self._error(503, "The results file cannot be read", str(exc),
                                       "../" * path.count("/"))
        return self._error(404, "No such page", f"/{path} is not a page of the viewer", "")

    def _render(self, store: Store, name: str, match: re.Match[str],
                query: dict[str, str] | None, path: str) -> Page:
        tx = Transcripts(store)
        page: Page = getattr(self, f"_{name}")(tx, *(_resolve(tx, g) for g in match.groups()),
                                               query=query or {},
                                               root="../" * path.count("/"))
        return page

    # -- pages -------------------------------------------------------------------------------
    def _page(self, template: str, root: str, crumbs: list[tuple[str, str | None]],
              **values: Any) -> Page:
        return Page(200, self.env.get_template(template).render(
            root=root, crumbs=crumbs, served=self.served, db=self.db, **values))

    def _error(self, status: int, title: str, message: str, root: str) -> Page:
        return Page(status, self.env.get_template("error").render(
            root=root, crumbs=[], title=title, message=message))

    def _runs(self, tx: Transcripts, *, query: dict[str, Any], root: str) -> Page:
        return self._page("runs", root, [("runs", None)], runs=tx.store.runs())

    def _run(self, tx: Transcripts, run_id: str, *, query: dict[str, Any],
             root: str) -> Page:
        try:
            run = tx.store.run(run_id)
        except ResultsError as exc:
            return self._error(404, "No such run", str(exc), root)
        about = _scenario(run["scenario"])
        trials = tx.store.trials(run_id)
        series = tx.series([t["trial_id"] for t in trials], about["score_column"])
        share = _shares(tx, trials, run)
        for t in trials:
            t["series"] = series.get(t["trial_id"], [])
            t["cached"] = cached_share(t["input_tokens"], t["cache_read_tokens"])
            t["share"] = share.get(t["trial_id"]) if t["status"] != "running" else None
        matches = tx.matches(run_id)
        return self._page("run", root, [(f"run {run_id}", None)], run=run, trials=trials,
                          pairs=[] if matches else _pairs(trials), matches=matches,
                          live=self._live_run(run, trials), **about)

    def _match(self, tx: Transcripts, match_id: str, *, query: dict[str, Any],
               root: str) -> Page:
        """An arena match: its operators side by side, day by day, and the messages
        (e-mails, payments) they sent each other."""
        seats = tx.match(match_id)
        if not seats:
            return self._error(404, "No such match", f"no arena match {match_id!r} in "
                               f"{self.db}", root)
        first = seats[0]
        about = _scenario(first["scenario"])
        entry = find_scenario(first["scenario"])
        by_trial = {s["trial_id"]: s for s in seats}
        days = {s["trial_id"]: {d["day"]: d for d in tx.days(s["trial_id"])} for s in seats}
        last = max((max(d, default=0) for d in days.values()), default=0)
        rows = [{"day": n, "cells": [days[s["trial_id"]].get(n) for s in seats]}
                for n in range(1, last + 1)]
        messages = []
        for c in tx.calls_named(list(by_trial), entry.messages if entry else ()):
            args, result = _json(c["args_json"]), _json(c["result_json"])
            messages.append({**c, "sender": by_trial[c["trial_id"]]["operator"],
                             "to": result.get("to") or args.get("to", ""),   # its name
                             "args": args, "result": result})
        run_id = first["run_id"]
        return self._page("match", root, [(f"run {run_id}",
                                           f"{root}run/{path_id(run_id)}.html"),
                                          (f"match seed {first['seed']}", None)],
                          seats=seats, rows=rows, messages=messages, first=first, **about)

    def _trial(self, tx: Transcripts, trial_id: str, *, query: dict[str, Any],
               root: str) -> Page:
        t = tx.trial(trial_id)
        if t is None:
            return self._missing(trial_id, root)
        about = _scenario(t["scenario"])
        days = tx.days(trial_id)
        found = None
        if t["status"] != "running":
            t["share"] = _shares(tx, [t], tx.store.run(t["run_id"])).get(trial_id)
            found = trial_diagnosis(tx, t)
        return self._page("trial", root, self._crumbs(t, root), t=t, days=days,
                          chart=_chart(days, about["score_column"], about["score_name"]),
                          searchable=self.served, live=self._live_trial(tx, t),
                          diagnosis=found, findings=trial_flags(tx, trial_id), **about)

    def _day(self, tx: Transcripts, trial_id: str, day: str, *, query: dict[str, Any],
             root: str) -> Page:
        t = tx.trial(trial_id)
        if t is None:
            return self._missing(trial_id, root)
        n = int(day)
        about = _scenario(t["scenario"])
        found = tx.day(trial_id, n)
        rows = tx.days(trial_id, only=n)
        last = max(t["days_completed"] or 0, n if t["status"] == "running" else 0)
        if n < 1 or (n > last and not found["calls"] and not found["exchanges"]):
            return self._error(404, "No such day", f"trial {trial_id} has days 1–{last}",
                               root)
        by_exchange: dict[int | None, list[Any]] = {}
        for c in found["calls"]:
            by_exchange.setdefault(c["exchange_seq"], []).append(c)
        seqs = {e["seq"] for e in found["exchanges"]}
        loose = [c for c in found["calls"] if c["exchange_seq"] not in seqs]
        # a request asked again (a retry, or a resume asking the one in flight) made its
        # calls once, from the attempt that was answered: listed under its last attempt
        # (under every attempt, a resumed day showed each call twice)
        answered = {e["seq"]: e["attempt"] for e in found["exchanges"]}
        return self._page("day", root, [*self._crumbs(t, root, link=True), (f"day {n}", None)],
                          t=t, day=n, last=last, row=rows[0] if rows else None,
                          report=found["report"], exchanges=found["exchanges"], loose=loose,
                          calls_of=lambda seq, attempt: by_exchange.get(seq, [])
                          if answered.get(seq) == attempt else [],
                          notes=tx.notes(trial_id, n, about["notes_tool"]),
                          flags=trial_flags(tx, trial_id, n),     # design §32.2
                          live=self._live_trial(tx, t) if n >= last else None, **about)

    def _window(self, tx: Transcripts, trial_id: str, seq: str, attempt: str, *,
                query: dict[str, Any], root: str) -> Page:
        t = tx.trial(trial_id)
        w = tx.window(trial_id, int(seq), int(attempt)) if t is not None else None
        if t is None or w is None:
            return self._error(404, "No such request",
                               f"trial {trial_id} has no request {seq} (attempt {attempt})",
                               root)
        return self._page("window", root, [*self._crumbs(t, root, link=True),
                                           (f"day {w['day']}", f"day-{w['day']}.html"),
                                           (f"window {seq}", None)],
                          t=t, w=w, seq=int(seq), attempt=int(attempt), ranges=_ranges,
                          evicted_tokens=sum(m["tokens"] or 0 for m in w["evicted"]))

    def _message(self, tx: Transcripts, trial_id: str, msg_id: str, *,
                 query: dict[str, Any], root: str) -> Page:
        t = tx.trial(trial_id)
        m = tx.message(trial_id, int(msg_id)) if t is not None else None
        if t is None or m is None:
            return self._error(404, "No such message", f"trial {trial_id} has no message "
                               f"{msg_id}", root)
        return self._page("message", root, [*self._crumbs(t, root, link=True),
                                            (f"message {msg_id}", None)], m=m)

    def _search(self, tx: Transcripts, trial_id: str, *, query: dict[str, Any],
                root: str) -> Page:
        t = tx.trial(trial_id)
        if t is None:
            return self._missing(trial_id, root)
        q = (query.get("q") or "").strip()[:200]
        hits = tx.search(trial_id, q) if q else []
        return self._page("search", root, [*self._crumbs(t, root, link=True),
                                           ("search", None)],
                          t=t, q=q, hits=hits, limit=SEARCH_LIMIT)

    def _compare(self, tx: Transcripts, a_id: str, b_id: str, *, query: dict[str, Any],
                 root: str) -> Page:
        a, b = tx.trial(a_id), tx.trial(b_id)
        if a is None or b is None:
            return self._missing(a_id if a is None else b_id, root)
        about = _scenario(a["scenario"])
        column = about["score_column"]
        da = {d["day"]: d for d in tx.days(a_id)}
        db = {d["day"]: d for d in tx.days(b_id)}
        rows, diverge = [], None
        for day in sorted(da.keys() | db.keys()):
            x, y = da.get(day), db.get(day)
            diff = (y[column] - x[column]) if x and y and x[column] is not None and \
                y[column] is not None else None
            if diverge is None and diff:
                diverge = day
            rows.append({"day": day, "a": x, "b": y, "diff": diff})
        return self._page("compare", root, [(f"run {a['run_id']}",
                                             f"{root}run/{path_id(a['run_id'])}.html"),
                                            ("side by side", None)],
                          a=a, b=b, rows=rows, diverge=diverge, **about)

    def _trial_state(self, tx: Transcripts, trial_id: str, *, query: dict[str, Any],
                     root: str) -> Page:
        t = tx.trial(trial_id)
        return Page(200 if t else 404, _state(t), "text/plain; charset=utf-8")

    def _run_state(self, tx: Transcripts, run_id: str, *, query: dict[str, Any],
                   root: str) -> Page:
        trials = tx.store.trials(run_id)
        return Page(200, ";".join(_state(t) for t in trials), "text/plain; charset=utf-8")

    # -- helpers -----------------------------------------------------------------------------
    def _crumbs(self, t: dict[str, Any], root: str, link: bool = False
                ) -> list[tuple[str, str | None]]:
        return [(f"run {t['run_id']}", f"{root}run/{path_id(t['run_id'])}.html"),
                (f"{t['model']} s{t['seed']}", "index.html" if link else None)]

    def _missing(self, trial_id: str, root: str) -> Page:
        return self._error(404, "No such trial", f"no trial {trial_id} in {self.db}", root)

    def _live_trial(self, tx: Transcripts, t: dict[str, Any]) -> dict[str, Any] | None:
        if not self.served or t["status"] != TrialStatus.RUNNING:
            return None
        return {"url": "state.txt", "seen": _state(t)}

    def _live_run(self, run: dict[str, Any], trials: list[dict[str, Any]]
                  ) -> dict[str, Any] | None:
        if not self.served or run["status"] != "running":
            return None
        return {"url": f"{path_id(run['run_id'])}.state.txt",
                "seen": ";".join(_state(t) for t in trials)}


def _resolve(tx: Transcripts, part: str) -> str:
    """The id a path part stands for (a shortened one looked up by its prefix)."""
    if "~" not in part:
        return part
    prefix = part.split("~", 1)[0]
    return next((i for i in tx.ids_starting(prefix) if path_id(i) == part), part)


# characters that change how text reads without showing themselves: C0/C1 controls
# (tab and newline aside) and the bidirectional embeddings, overrides and isolates
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e"
                     "\u2066-\u2069]")


def visible(value: Any) -> Any:
    """Every value a page shows, with hidden characters written out (``⟨U+202E⟩``):
    a reply cannot reorder or hide what the page shows. Markup the viewer made itself
    (charts) is left as it is."""
    if isinstance(value, str) and not isinstance(value, Markup) and _HIDDEN.search(value):
        return _HIDDEN.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", value)
    return value


def _when(value: Any) -> str:
    """A time to the second."""
    if value is None or isinstance(value, jinja2.Undefined):
        return "—"
    return value.strftime("%Y-%m-%d %H:%M:%S") if hasattr(value, "strftime") else str(value)


def _shares(tx: Transcripts, trials: list[dict[str, Any]], run: dict[str, Any]
            ) -> dict[str, float | None]:
    """Each trial's score as a share of what the oracle gains over doing nothing on its
    world and seed (design §34): the anchors kept in the file, or computed (a private
    world's only with its salt set)."""
    if find_scenario(run.get("scenario")) is None or not trials:
        return {}
    keys = {PairKey.of(t).world for t in trials}
    anchors = anchors_for(tx.store, run["scenario"], run["days"], keys,
                          run.get("world_salt_sha256"), os.environ.get(SALT_ENV))
    return shares(trials, run["scenario"], anchors)


def _ranges(messages: list[dict[str, Any]]) -> str:
    """Message numbers as ranges: 0, 2–18, 40–52."""
    ids = sorted(m["msg_id"] for m in messages)
    spans: list[list[int]] = []
    for i in ids:
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ", ".join(str(a) if a == b else f"{a}–{b}" for a, b in spans)


def _state(t: dict[str, Any] | None) -> str:
    return "" if t is None else f"{t['status']}/{t['days_completed']}/{t['tool_calls']}"


def _scenario(name: str) -> dict[str, Any]:
    entry = find_scenario(name)
    return {"score_name": entry.score_name if entry else "net assets",
            "currency": entry.currency if entry else "",
            "score_column": entry.score_column if entry else "net_assets",
            "notes_tool": entry.notes_tool if entry else None}


def _json(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _pairs(trials: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Trials of different models on the same world, seed and repeat (latest attempts)."""
    groups: dict[PairKey, list[dict[str, Any]]] = {}
    for t in trials:
        groups.setdefault(PairKey.of(t), []).append(t)
    return [(a, b) for group in groups.values() for i, a in enumerate(group)
            for b in group[i + 1:] if a["model"] != b["model"]]


def _money(value: Any, places: int = 2) -> str:
    """A number as money; anything else as the text it is (a model may send an amount
    that is words: the world refuses it, the page shows it, design §30)."""
    if value is None or isinstance(value, jinja2.Undefined):
        return "—"
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal)):
        return str(value)
    return f"{float(value):,.{places}f}"


def _percent(value: float | None) -> str:
    return "—" if value is None or isinstance(value, jinja2.Undefined) else f"{value:.0%}"


def _share_of(row: dict[str, Any]) -> float | None:
    """An exchange's (or a day's summed) cached share of input tokens."""
    return cached_share(row.get("input_tokens"), row.get("cache_read_tokens",
                                                         row.get("cached")))


def _pretty(text: str | None) -> Markup:
    """A tool's JSON, as a page shows it (``readable``), escaped for the text of a
    ``<pre>``; text that is not JSON as it is."""
    if not text:
        return Markup("")
    try:
        return _pre(readable(json.loads(text)))
    except ValueError:
        return _pre(text)


def _pretty_obj(value: Any) -> Markup:
    return _pre(readable(value))


def readable(value: Any) -> str:
    """JSON a line per top-level key and a line per item of a list, each compact (design
    §35.5: indented to every level, with every quote escaped, a day of catalogue
    results made a 517 KB page)."""
    def one(v: Any) -> str:
        return json.dumps(v, ensure_ascii=False, default=str)

    def field(v: Any, pad: str) -> str:
        if isinstance(v, list) and len(v) > 1:
            return "[\n" + ",\n".join(f"{pad}  {one(x)}" for x in v) + f"\n{pad}]"
        return one(v)

    if isinstance(value, dict) and value:
        return "{\n" + ",\n".join(f"  {one(k)}: {field(v, '  ')}" for k, v in value.items()) \
            + "\n}"
    return field(value, "")


def _pre(text: str) -> Markup:
    """Text for a ``<pre>``: hidden characters written out (``visible``), then ``&``,
    ``<`` and ``>`` escaped; quotes need no escape in text (only in attributes), and
    escaping them tripled a JSON page's size."""
    return Markup(html.escape(visible(text), quote=False))


def _spark(values: list[float], width: int = 120, height: int = 24) -> Markup:
    if len(values) < 2:
        return Markup("")
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    points = " ".join(f"{i * width / (len(values) - 1):.1f},"
                      f"{height - 2 - (v - low) / span * (height - 4):.1f}"
                      for i, v in enumerate(values))
    return Markup(
        f'<svg width="{width}" height="{height}" role="img" aria-label="from '
        f'{values[0]:,.0f} to {values[-1]:,.0f}"><polyline fill="none" stroke="#0b5cad" '
        f'stroke-width="1.2" points="{points}"/></svg>')


def _chart(days: list[dict[str, Any]], column: str, label: str, width: int = 900,
           height: int = 220) -> str:
    """The score's quantity and cash by day on one scale (both are money in the same
    currency: on two scales their lines coincided, design §35.4), and the API spend by
    day beneath on its own; each day a link to its page."""
    if not days:
        return "<p class='muted'>No day has ended yet.</p>"
    pad, n = 40, len(days)
    x = [pad + (i * (width - 2 * pad) / max(n - 1, 1)) for i in range(n)]

    def line(values: Sequence[float | None], color: str, top: int, h: int, dash: str = "",
             label: str | None = "{:,.0f}", scale: tuple[float, float] | None = None
             ) -> str:
        known = [v for v in values if v is not None]
        if not known:
            return ""
        low, high = scale or (min(known), max(known))
        span = (high - low) or 1.0
        pts = " ".join(f"{x[i]:.1f},{top + h - (v - low) / span * h:.1f}"
                       for i, v in enumerate(values) if v is not None)
        ends = "" if label is None else (f'<text x="4" y="{top + 8}">{label.format(high)}</text>'
                                         f'<text x="4" y="{top + h}">{label.format(low)}</text>')
        return (f'<polyline fill="none" stroke="{color}" stroke-width="1.5" '
                f'stroke-dasharray="{dash}" points="{pts}"/>' + ends)

    score = [_num(d.get(column)) for d in days]
    cash = [_num(d.get("cash")) for d in days] if column != "cash" else []
    money = [v for v in (*score, *cash) if v is not None]
    scale = (min(money), max(money)) if money else None
    spend = [_num(d.get("cost_usd")) or 0.0 for d in days]
    links = "".join(
        f'<a href="day-{d["day"]}.html" aria-label="day {d["day"]}"><rect x="{x[i] - 3:.1f}" '
        f'y="0" width="6" height="{height}" fill="transparent"/></a>' for i, d in enumerate(days))
    body = (line(score, "#0b5cad", 10, 120, scale=scale)
            + line(cash, "#9a6700", 10, 120, "4 3", label=None, scale=scale)
            + line(spend, "#b00020", 150, 50, label=_dollars(spend)) + links)
    legend = (f"<span class='c-score'>— {label}</span> "      # classes: no inline style
              + ("<span class='c-cash'>‐ ‐ cash</span> " if column != "cash" else "")
              + "<span class='c-spend'>— API spend per day ($)</span>")
    return (f'<figure><svg viewBox="0 0 {width} {height}" width="100%" role="group" '
            f'aria-label="{label} by day">{body}</svg><figcaption class="meta">{legend}; '
            "click a day to open it</figcaption></figure>")


def _dollars(spend: list[float]) -> str:
    """The spend axis's label format: enough places that its ends differ from 0."""
    top = max(spend, default=0.0)
    places = 2 if top >= 1 or top == 0 else min(8, 1 - math.floor(math.log10(top)))
    return "${:,.%df}" % places


def _num(value: Any) -> float | None:
    if value is None:
        return None
    return float(value) if isinstance(value, (int, float, Decimal)) else None
