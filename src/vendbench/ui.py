"""Terminal output: tables and progress. Rich when a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import textwrap
import threading
import time
from decimal import Decimal
from types import TracebackType
from typing import Any

from ._text import count, printable


def eta_text(seconds: float) -> str:
    """``45s``, ``4m10s``, ``2h05m``."""
    seconds = max(0, round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _is_tty() -> bool:
    return sys.stderr.isatty()


def print_table(title: str, headers: list[str], rows: list[list[Any]]) -> None:
    """Print a table: a rich table on a terminal, tab-separated text otherwise."""
    # every cell plain text: a name with markup or escape sequences (a run named
    # "nightly[/x]", a model with "\x1b]0;…") prints as it is, never as what it encodes
    rows = [[printable(str(v)) for v in r] for r in rows]
    if sys.stdout.isatty():
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        console = Console()
        # no box, one space between columns (as the live table); a name wider than what
        # the other columns leave breaks after a "/", "-" or space, never mid-word
        # (design §35.6), and never is cut to a lookalike
        others = sum(max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
                     for i, h in enumerate(headers) if i) + len(headers) - 1
        room = max(12, min(console.width, 80) - others)
        table = Table(title=Text(printable(title)), box=None, padding=(0, 1),
                      pad_edge=False, collapse_padding=True, show_edge=False)
        for i, h in enumerate(headers):
            table.add_column(Text(h), justify="left" if i < 2 else "right", overflow="fold",
                             header_style="bold")
        for r in rows:
            table.add_row(Text(wrap_name(r[0], room)), *[Text(v) for v in r[1:]])
        console.print(table)
        return
    print(f"# {printable(title)}")
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    for line in [headers, *rows]:           # no trailing spaces: the last column is ragged
        print("  ".join(str(v).ljust(w) for v, w in zip(line, widths)).rstrip())


def wrap_name(name: str, width: int) -> str:
    """``name`` in lines of at most ``width``, broken after a "/", "-" or space where it
    can be (a model's name reads by its parts), and within a part only when the part
    alone is wider."""
    import re

    if len(name) <= width:
        return name
    lines, line = [], ""
    for part in re.findall(r"[^/\- ]*[/\- ]?", name):
        if not part:
            continue
        if line and len(line) + len(part) > width:
            lines.append(line.rstrip())
            line = ""
        while len(part) > width:                 # a part wider than the column alone
            lines.append(part[:width])
            part = part[width:]
        line += part
    if line:
        lines.append(line.rstrip())
    return "\n".join(lines)


class DayProgress:
    """Progress over simulated days: a rich bar on a terminal, quiet otherwise."""

    def __init__(self, total_days: int, enabled: bool = True) -> None:
        self._enabled = enabled and _is_tty()
        self._total = total_days
        self._progress: Any = None
        self._task: Any = None

    def __enter__(self) -> DayProgress:
        if self._enabled:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                       TimeElapsedColumn)

            self._progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                      MofNCompleteColumn(), TextColumn("days"),
                                      TimeElapsedColumn(), transient=True)
            self._progress.__enter__()
            self._task = self._progress.add_task("starting", total=self._total)
        return self

    def start(self, label: str) -> None:
        if self._progress is not None:
            self._progress.update(self._task, description=label)

    def advance(self, env: Any = None) -> None:
        if self._progress is not None:
            self._progress.advance(self._task)

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)


WAIT_SHOWN_S = 5.0        # a request waiting this long shows in the live display
WAIT_REPORT_S = 30.0      # ... and, not on a terminal, a line this often while it waits


def waiting_text(n: int, longest: float) -> str:
    """``2 requests waiting for a reply, the longest for 47s``."""
    return (f"{count(n, 'request')} waiting for a reply, "
            f"{'the longest ' if n > 1 else ''}for {eta_text(longest)}")


class RunProgress:
    """Live progress of a run: per trial day/horizon, net assets and spend, overall
    trials done and spend against the budget, and requests waiting long for a reply.
    Plain lines on stderr when not a terminal."""

    def __init__(self, config: Any, enabled: bool = True, resuming: str | None = None
                 ) -> None:
        from .environment import currency, score_name

        self._config = config
        self._resuming = resuming          # the run a resume continues (named at once)
        self._currency = currency(config.scenario)
        self._score = score_name(config.scenario)
        self._named_worlds = config.names_worlds
        self._enabled = enabled
        self._tty = enabled and _is_tty()
        self._rows: dict[str, dict[str, Any]] = {}
        self._done = 0
        self._total = 0
        self._pool: Any = None
        self._waiting: Any = None          # the scheduler's requests in flight
        self._live: Any = None
        self._stop = threading.Event()
        self._reporter: threading.Thread | None = None

    def __enter__(self) -> RunProgress:
        if self._tty:
            from rich.live import Live

            # redrawn 4 times a second, so a wait grows on screen while nothing else moves
            self._live = Live(get_renderable=self._render, refresh_per_second=4,
                              transient=False, redirect_stdout=False)
            self._live.__enter__()
        elif self._enabled:
            self._reporter = threading.Thread(target=self._report_waits, daemon=True,
                                              name="progress-waits")
            self._reporter.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._reporter is not None:
            self._reporter.join(5)
        if self._live is not None:
            self._live.update(self._render())
            self._live.__exit__(*exc)

    def _report_waits(self) -> None:
        """Not on a terminal: a line every ``WAIT_REPORT_S`` while a request has waited
        that long (a server that accepts connections and never answers is not silent)."""
        step = WAIT_REPORT_S
        due = step                           # the next wait to report: 30 s, 60 s, ...
        while not self._stop.wait(min(1.0, step / 10)):
            n, longest = self._waiting.now() if self._waiting is not None else (0, 0.0)
            if longest < step:                 # nothing waits long (any more)
                due = step
            if longest < due:
                continue
            print(waiting_text(n, longest), file=sys.stderr, flush=True)
            due = (longest // step + 1) * step

    def event(self, kind: str, data: dict[str, Any]) -> None:
        if not self._enabled:
            return
        if kind == "forecast":
            for line in forecast_lines(data["forecast"].as_json(), self._config.days):
                if self._live is not None:
                    self._live.console.print(line, markup=False, highlight=False)
                else:
                    print(line, file=sys.stderr, flush=True)
        elif kind == "run_started":
            self._total, self._pool = data["trials"], data["pool"]
            self._waiting = data.get("waiting")
            self._started = time.monotonic()
            self._line(f"run {data['run_id']}: {count(data['trials'], 'trial')} to run"
                       + (f", {data['kept']} kept from before" if data["kept"] else ""))
        elif kind == "workers_started":
            self._line(f"LLM trials run in {data['processes']} worker processes")
        elif kind == "trial_started":
            spec = data["spec"]
            self._rows[spec.trial_id] = {"model": spec.model.id, "seed": spec.seed,
                                         "repeat": spec.repeat, "status": "running",
                                         "day": 0, "net": None, "cost": 0.0}
        elif kind == "trial_progress":
            out = data["outcome"]
            row = self._rows.get(out.spec.trial_id)
            if row is not None:
                row.update(day=data["day"], net=data["net_assets"], cost=float(out.cost))
        elif kind == "trial_finished":
            out = data["outcome"]
            self._done += 1
            row = self._rows.setdefault(out.spec.trial_id, {
                "model": out.spec.model.id, "seed": out.spec.seed, "repeat": out.spec.repeat,
                "day": 0})
            row.update(status=out.status, net=out.final.get("score"),
                       cost=float(out.cost), day=out.days)
            net = "—" if row["net"] is None else f"{row['net']:,.2f} {self._currency}"
            world = f" world {out.spec.world_seed}" if self._named_worlds else ""
            self._line(f"[{self._done}/{self._total}] {out.spec.model.id}{world} seed "
                       f"{out.spec.seed}"
                       f" rep {out.spec.repeat}: {out.status}, {net}, ${float(out.cost):.4f}"
                       + (f" ({out.reason})" if out.reason and out.status != "completed"
                          else ""))
        if self._live is not None:
            self._live.update(self._render())

    def _eta(self, now: float | None = None) -> str:
        """`` · ETA 4m10s``: the time left if the days still to play go as fast as the
        days played so far (blank before the first day)."""
        started, days = getattr(self, "_started", None), self._config.days
        total_days = self._total * days
        # a running trial has played the days before the one it is on (counting that day
        # too made a trial on its last day look done: "ETA 0s" mid-trial, design §35.6);
        # an ended trial needs no more time: all its days count as played
        played = sum(r["day"] - 1 if r["status"] == "running" else days
                     for r in self._rows.values())
        if started is None or not total_days or played <= 0:
            return ""
        now = time.monotonic() if now is None else now
        left = (now - started) * (total_days - played) / played
        running = any(r["status"] == "running" for r in self._rows.values())
        if running and left < 1:
            return " · ETA under 1s"
        return f" · ETA {eta_text(left)}"

    def _line(self, text: str) -> None:
        if not self._tty:
            print(printable(text), file=sys.stderr, flush=True)

    def _render(self) -> Any:
        from rich.console import Group
        from rich.table import Table
        from rich.text import Text

        days = self._config.days
        spent = float(self._pool.spent) if self._pool is not None else 0.0
        cap = self._pool.limit if self._pool is not None else None
        if self._pool is None:             # before the run has counted its trials
            title = (f"resuming run {self._resuming}: reading what it kept …"
                     if self._resuming else "starting the run …")
        else:
            title = (f"trials {self._done}/{self._total} done · spent ${spent:.4f}"
                     + (f" of ${cap}" if cap is not None else "") + self._eta())
        n, longest = self._waiting.now() if self._waiting is not None else (0, 0.0)
        if n and longest >= WAIT_SHOWN_S:
            title += f"\n{waiting_text(n, longest)}"
        # 80 columns: no box, one space between columns, the repeat only when there are
        # repeats (a model name of 30 characters fits; longer ones fold, never cut to a
        # lookalike)
        repeats = self._config.repeats > 1
        table = Table(expand=False, box=None, padding=(0, 1), pad_edge=False,
                      collapse_padding=True, show_edge=False)
        for col in ("model", "seed", *(["rep"] if repeats else []), "status", "day",
                    self._currency, "USD"):
            table.add_column(col, justify="left" if col in ("model", "status") else "right",
                             overflow="fold", header_style="bold")
        running = [r for r in self._rows.values() if r["status"] == "running"]
        finished = [r for r in self._rows.values() if r["status"] != "running"][-8:]
        for r in [*running, *finished][:30]:
            table.add_row(Text(printable(r["model"])), str(r["seed"]),  # text, not markup
                          *([str(r["repeat"])] if repeats else []),
                          r["status"], f"{r['day']}/{days}",
                          "—" if r["net"] is None else f"{r['net']:,.0f}", f"{r['cost']:.4f}")
        return Group(Text(title, style="bold"), table)   # the title as wide as the screen


def forecast_lines(panel: dict[str, Any], days: int) -> list[str]:
    """Lines for a ``PanelForecast.as_json()`` of a ``days``-day run."""
    if not panel["models"]:
        return []
    operator = panel.get("operator") or "baseline/order-up-to"
    lines = textwrap.wrap(f"cost forecast, {days} day{'s' if days != 1 else ''} a trial, if "
                          f"the model is as busy as {operator}:", width=80,
                          subsequent_indent="  ")
    for m in panel["models"]:
        lines.append(f"  {printable(m['model'])}")         # a name: plain text
        if m["trial_usd"] is None:
            lines.append("    no price: no forecast (and no budget)")
            continue
        lines.append(f"    a trial: about {_usd(m['trial_usd'])} ({m['requests']:,} requests, "
                     f"{m['input_tokens'] / 1e6:.1f}M tokens in, {m['cached_share']:.0%} "
                     "cached)")
        thinking = m.get("thinking_tokens_per_request", 0)
        if thinking:
            lines.append(f"    with {thinking:,} thinking tokens a request (its whole budget, "
                         "a ceiling)")
        elif thinking is None:
            lines.append("    its reasoning tokens are not in it (no budget stated; "
                         "billed as output)")
        if m.get("cached_at_full_rate"):
            lines.append("    cached input at the full rate (no cache price: --price "
                         "M=IN,OUT,CACHE_READ)")
        lines.append(f"    a request reserves {_usd(m['first_request_reserves_usd'], 4)} "
                     f"at first, {_usd(m['full_request_reserves_usd'], 4)} once the "
                     "window is full")
        if m["budget_usd"] is None:
            lines += textwrap.wrap(_uncapped(m), width=80, initial_indent="    ",
                                   subsequent_indent="      ")
        covered = m["days_covered"]
        if covered is not None and covered < days:
            lasts = f"about {covered} of {days} days" if covered else "less than a day"
            lines += textwrap.wrap(f"if it is that busy, its {_usd(m['budget_usd'])} "
                                   f"budget lasts {lasts} (a trial that runs out ends "
                                   "budget_exhausted, scored 0; a model that asks less "
                                   "spends less, one that asks more runs out sooner)",
                                   width=80, initial_indent="    ",
                                   subsequent_indent="      ")
        whole = Decimal(m["trial_usd"]) * m["trials"]
        uncapped = "" if whole == Decimal(m["total_usd"]) else \
            f" within their budgets (finishing them: {_usd(str(whole))})"
        lines.append(f"    {m['trials']} trial{'s' if m['trials'] != 1 else ''}: "
                     f"{_usd(m['total_usd'])}{uncapped}")
    if panel["total_usd"] is not None:
        capped = " (the run's --total-budget)" if panel["pool_usd"] is not None and \
            Decimal(panel["total_usd"]) == Decimal(panel["pool_usd"]) else ""
        lines.append(f"  the run: {_usd(panel['total_usd'])}{capped}; the forecast's "
                     "accuracy: docs/costs.md")
    return lines


def _uncapped(m: dict[str, Any]) -> str:
    """What a trial without a --budget may spend at most (design §35.0)."""
    if m["most_usd"] is None:
        return ("no --budget, and nothing else bounds a trial's requests (its world "
                "declares no daily interaction budget): --budget caps what it may spend")
    return (f"no --budget: a trial may spend up to {_usd(m['most_usd'])}, "
            f"{m['most_requests']:,} requests at most (every day's calls, one a request, "
            f"each after the replies without a call the loop allows) at up to "
            f"{_usd(m['full_request_reserves_usd'], 4)} each, more if requests time out "
            "and are sent again; --budget caps it")


def _usd(value: str | None, places: int = 2) -> str:
    return "—" if value is None else f"${Decimal(value):,.{places}f}"
