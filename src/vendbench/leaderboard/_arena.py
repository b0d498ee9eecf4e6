"""The arena's leaderboard (design §23.5): models that met in matches, ranked by mean
score and by head-to-head wins, with valid intervals (design §18) paired by match.

Arena trials are their own cohort: they are read here and nowhere else. A trial counts
as in the single-agent leaderboard (its score if it completed, else 0), and as a share
of what the scenario's oracle gains alone over doing nothing on the same world, seed
and horizon (design §34: 0 is an operator that only ends its days, 1 the oracle alone;
floored and capped as the scenario declares), so a model's mean share has the betting
interval of ``mean_interval``. Head to head, each match where models A and B both sat
gives one value: 1 if A scored more, 0 if less, 1/2 for a tie (averaged over their seats
when one of them sat twice): a bounded value per match, so the win rate's interval is
the same betting interval, valid at any number of matches, for any shape of scores.

Money between seats (design §29.2) buys score: a seat's earned score is its score less
the net transfers it received from the other seats (plus what it paid them). The board
ranks, shares and meets on earned scores, and shows the score and the transfers beside
them: a model is ranked on the business it ran, not on what a partner handed it. A seat
whose score is above the oracle's alone is flagged, as on single-agent boards.
"""

from __future__ import annotations

import json
import textwrap
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from itertools import combinations
from typing import Any

from ..environment import Anchors, share, share_bounds
from .._text import count, printable
from ..errors import ResultsError
from ..results import SET_APART, PairKey, Store, anchors_for, trial_score
from ._board import INTERVAL_METHOD, Roles, flags_of, mean_interval
from ._table import fit_table, share_ci

LEVEL = 0.95


def arena_seats(run: Mapping[str, Any]) -> int:
    """How many operators each of ``run``'s matches has (0: not an arena run)."""
    if run.get("arena") is not None:
        return int(run["arena"])
    config = json.loads(run.get("config_json") or "{}")
    return len(config.get("seats") or ())


@dataclass
class ArenaRow:
    model: str
    trials: int                      # seats it took
    completed: int
    mean_score: float
    oracle_share: float | None       # of its earned score
    ci_oracle_share: tuple[float, float] | None
    wins: float                      # head-to-head: opponents beaten, match by match
    meetings: int                    # head-to-head values it is in
    cost_usd: Decimal | None
    mean_earned: float = 0.0         # the score less the net transfers received
    net_transfers: float = 0.0       # mean, received less paid
    above_oracle: int = 0            # seats whose score is above the oracle's alone
    shares: list[float] = field(default_factory=list)   # each seat's, of its earned score
    flags: int | None = None         # vendbench screen's flags over its seats (design §32.2)


@dataclass
class HeadToHead:
    model: str
    opponent: str
    matches: int
    wins: int
    ties: int
    losses: int
    win_rate: float
    ci_win_rate: tuple[float, float]
    mean_margin: float               # its score minus the opponent's, per match

    @property
    def verdict(self) -> str:
        low, high = self.ci_win_rate
        return ("better" if low > 0.5 else "worse" if high < 0.5 else "undecided")


@dataclass
class ArenaBoard:
    runs: list[str]
    scenario: str
    days: int
    seats: int
    matches: int
    rows: list[ArenaRow] = field(default_factory=list)
    pairs: list[HeadToHead] = field(default_factory=list)
    by_seat: list[dict[str, Any]] = field(default_factory=list)
    apart: list[dict[str, Any]] = field(default_factory=list)
    flagged: list[dict[str, Any]] = field(default_factory=list)   # above the oracle
    oracle_above: float = 0.0        # the oracle's own best share of itself alone, above 1
    db: str = ""
    pending_oracle: int = 0          # ended matches' seeds whose oracle score the live
                                     # run has not computed yet
    findings: list[dict[str, Any]] = field(default_factory=list)   # flags (design §32.2)

    @property
    def screened(self) -> bool:
        """Whether vendbench screen has read any seat of these matches."""
        return any(r.flags is not None for r in self.rows)

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        for row in out["rows"]:
            row["cost_usd"] = None if row["cost_usd"] is None else float(row["cost_usd"])
        for pair, h in zip(out["pairs"], self.pairs):
            pair["verdict"] = h.verdict
        out["interval_method"] = INTERVAL_METHOD
        return out


def build_arena(db: str, run: str = "latest") -> ArenaBoard:
    """The arena leaderboard of ``run`` (an arena run's id, "latest": the newest arena
    run, "all": every arena run of the newest one's kind)."""
    with Store(db, read_only=True) as store:
        arenas = [r for r in store.runs() if arena_seats(r)]
        if not arenas:
            raise ResultsError(f"no arena runs in {db}; run `vendbench arena` first")
        if run == "latest":
            chosen = [max(arenas, key=lambda r: r["created_at"])]
        elif run == "all":
            newest = max(arenas, key=lambda r: r["created_at"])
            chosen = [r for r in arenas if (r["scenario"], r["days"], arena_seats(r))
                      == (newest["scenario"], newest["days"], arena_seats(newest))]
        else:
            found = store.run(run)
            if not arena_seats(found):
                raise ResultsError(f"run {run} is not an arena run: its leaderboard is "
                                   f"vendbench leaderboard --run {run}")
            chosen = [r for r in arenas if r["run_id"] == run]
        head = store.run(chosen[-1]["run_id"])
        seats = store.match_seats([r["run_id"] for r in chosen])
        # the oracle's scores only for matches that ended: on an arena still running,
        # computing them for every match (a second or more each at 365 days) kept a
        # reader waiting 89 s for an empty table
        ended = _ended(seats)
        keys = {PairKey.of(s).world for s in seats if s["match_id"] in ended}
        # while an arena runs, the oracle's scores are the run's to compute (it keeps
        # them as it goes): a reader shows those kept, and the rest as pending
        live = store.live is not None
        anchors = anchors_for(store, head["scenario"], head["days"], keys,
                              head.get("world_salt_sha256"), None, compute=not live)
        pending = len({k for k in keys if k not in anchors}) if live else 0
        findings, screened = flags_of(store, [s["trial_id"] for s in seats])
    board = ArenaBoard([r["run_id"] for r in chosen], head["scenario"], head["days"],
                       arena_seats(head), len({s["match_id"] for s in seats}), db=db,
                       pending_oracle=pending)
    _rank(board, seats, anchors)
    for r in board.rows:
        mine = {s["trial_id"] for s in seats if s["model"] == r.model}
        if mine & screened.keys():
            r.flags = sum(f["trial_id"] in mine for f in findings)
    board.findings = findings
    return board


def _ended(seats: Sequence[Mapping[str, Any]]) -> set[str]:
    """The matches ``_rank`` counts: every seat scored (none running, unstarted, or
    kept apart)."""
    apart = {s["match_id"] for s in seats if s["status"] in SET_APART}
    return {s["match_id"] for s in seats} - apart


def _rank(board: ArenaBoard, seats: Sequence[Mapping[str, Any]],
          anchors: Mapping[tuple[int, int], Anchors]) -> None:
    apart = SET_APART                 # harness errors, interrupted, never started
    board.apart = [{k: s[k] for k in ("match_id", "seat", "model", "status", "reason")}
                   for s in seats if s["status"] in apart]
    matches: dict[str, list[Mapping[str, Any]]] = {}
    for s in seats:
        matches.setdefault(s["match_id"], []).append(s)
    # a match counts only when every seat has a score (none kept apart)
    ended = _ended(seats)
    whole = {m: ss for m, ss in matches.items() if m in ended}
    board.matches = len(whole)
    bounds = share_bounds(board.scenario, anchors.values())
    per_model: dict[str, list[Mapping[str, Any]]] = {}
    for ss in whole.values():
        for s in ss:
            per_model.setdefault(s["model"], []).append(s)
    meets: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for ss in whole.values():
        models = sorted({s["model"] for s in ss})
        for a, b in combinations(models, 2):
            sa = [earned(s) for s in ss if s["model"] == a]
            sb = [earned(s) for s in ss if s["model"] == b]
            outcome = statistics.fmean(_beat(x, y) for x in sa for y in sb)
            margin = statistics.fmean(sa) - statistics.fmean(sb)
            meets.setdefault((a, b), []).append((outcome, margin))
    for (a, b), values in sorted(meets.items()):
        for model, opponent, sign in ((a, b, 1), (b, a, -1)):
            won = [v if sign > 0 else 1 - v for v, _ in values]
            board.pairs.append(HeadToHead(
                model, opponent, len(won), sum(v == 1 for v in won), sum(v == 0.5 for v in won),
                sum(v == 0 for v in won), statistics.fmean(won),
                mean_interval(won, level=LEVEL, bounds=(0.0, 1.0)),
                statistics.fmean(sign * m for _, m in values)))
    oracle = Roles.of(board.scenario).ceiling
    for ss in whole.values():
        for s in ss:
            value = share(trial_score(s), anchors.get(PairKey.of(s).world), board.scenario)
            if value is None or value <= 1:
                continue
            if s["model"] == oracle and (s.get("net_transfers") or 0.0) <= 0:
                # the oracle in a market, paid nothing by the others, is no exploit of it:
                # a rival's pull and empty shelves leave it customers it has not alone
                # (design §35.4; it undercut an idle rival to 101 % of itself and was
                # marked "!"); one a partner paid is flagged as any seat is
                board.oracle_above = max(board.oracle_above, value)
                continue
            board.flagged.append({"match_id": s["match_id"], "seat": s["seat"],
                                  "model": s["model"], "oracle_share": value,
                                  "net_transfers": s.get("net_transfers") or 0.0})
    for model, ss in per_model.items():
        scores = [trial_score(s) for s in ss]
        shares = [v for s in ss if (v := share(
            earned(s), anchors.get(PairKey.of(s).world), board.scenario)) is not None]
        mine = [p for p in board.pairs if p.model == model]
        costs = [s["cost_usd"] for s in ss if s["cost_usd"] is not None]
        board.rows.append(ArenaRow(
            model, len(ss), sum(s["status"] == "completed" for s in ss),
            statistics.fmean(scores), statistics.fmean(shares) if shares else None,
            mean_interval(shares, level=LEVEL, bounds=bounds) if shares else None,
            sum(p.win_rate * p.matches for p in mine), sum(p.matches for p in mine),
            sum(costs, Decimal(0)) if len(costs) == len(ss) else None,
            statistics.fmean(earned(s) for s in ss),
            statistics.fmean(s.get("net_transfers") or 0.0 for s in ss),
            sum(f["model"] == model for f in board.flagged), shares))
    board.rows.sort(key=lambda r: (-r.mean_earned, -r.wins, r.model))
    by_seat: dict[int, list[float]] = {}
    for ss in whole.values():
        for s in ss:
            by_seat.setdefault(s["seat"], []).append(earned(s))
    board.by_seat = [{"seat": seat, "trials": len(v), "mean_score": statistics.fmean(v)}
                     for seat, v in sorted(by_seat.items())]


def earned(seat: Mapping[str, Any]) -> float:
    """What a seat's own business made: its score (0 unless it completed) less the net
    transfers it received from the other seats (a seat that paid gets them back)."""
    if seat["status"] != "completed":
        return trial_score(seat)
    return trial_score(seat) - float(seat.get("net_transfers") or 0.0)


def _beat(x: float, y: float) -> float:
    return 1.0 if x > y else 0.0 if x < y else 0.5


def render_arena(board: ArenaBoard, fmt: str = "table") -> str:
    """The arena leaderboard as an 80-column table, markdown, csv (the ranking, one
    value per cell) or json (html: ``arena_html``, which draws the charts)."""
    from tabulate import tabulate

    if fmt == "json":
        return json.dumps(board.as_json(), default=str)
    if fmt == "csv":
        return _csv(board)
    wide = fmt == "markdown"

    def table_text(headers: list[str], rows: list[list[str]]) -> str:
        if wide:
            text: str = tabulate([[_code(r[0]), *r[1:]] for r in rows],
                                 headers=headers, tablefmt="github", disable_numparse=True)
            return text
        drop = tuple(h for h in ("cost $", "score", "transfers", "margin") if h in headers)
        return fit_table(headers, rows, width=80, drop=drop)[0]

    (ranking, rows), (h2h, pairs) = arena_tables(board)
    lines = [arena_title(board), table_text(ranking, rows)]
    if pairs:
        lines.append("head to head (paired by match; 1 a win, 1/2 a tie):")
        lines.append(table_text(h2h, [[r[0], _code(r[1]) if wide else r[1], *r[2:]]
                                      for r in pairs]))
    if not wide:
        lines.append("every column (score, transfers, cost): --format markdown, csv, json "
                     "or html")
    lines += arena_notes(board)
    if wide:
        return "\n\n".join(lines)
    return "\n".join(textwrap.fill(line, 80, subsequent_indent="  ")
                     if "\n" not in line else line for line in lines)


def _code(name: str) -> str:
    """A model's name as markdown code (its flag outside)."""
    flagged = name.endswith(" !")
    return f"`{name[:-2] if flagged else name}`" + (" !" if flagged else "")


def arena_title(board: ArenaBoard) -> str:
    return (f"arena: {board.scenario}, {board.days} days, {board.seats} operators a match, "
            f"{count(board.matches, 'match', 'matches')} (runs {', '.join(board.runs)})")


def arena_tables(board: ArenaBoard) -> tuple[tuple[list[str], list[list[str]]],
                                             tuple[list[str], list[list[str]]]]:
    """The ranking and the head-to-head table: headers and rows of text (names
    printable)."""
    from ..environment import currency

    ranking = ["model", "seats", f"earned {currency(board.scenario)}", "score", "transfers",
               "of oracle, 95% CI", "h2h wins", "cost $"]
    rows = [[printable(r.model) + (" !" if r.above_oracle else ""), str(r.trials),
             f"{r.mean_earned:,.0f}", f"{r.mean_score:,.0f}", f"{r.net_transfers:+,.2f}",
             share_ci(r.oracle_share, r.ci_oracle_share), f"{r.wins:g}/{r.meetings}",
             "—" if r.cost_usd is None else f"{r.cost_usd:,.2f}"] for r in board.rows]
    if board.screened:
        ranking.append("flags")
        rows = [[*row, "—" if r.flags is None else str(r.flags)]
                for row, r in zip(rows, board.rows)]
    h2h = ["model", "vs", "W-T-L", "win rate, 95% CI", "margin", "verdict"]
    pairs = [[printable(p.model), printable(p.opponent), f"{p.wins}-{p.ties}-{p.losses}",
              share_ci(p.win_rate, p.ci_win_rate), f"{p.mean_margin:+,.0f}", p.verdict]
             for p in board.pairs if p.model < p.opponent]
    return (ranking, rows), (h2h, pairs)


def arena_notes(board: ArenaBoard) -> list[str]:
    """What the tables do not say: by seat, seats above the oracle, matches still playing
    or kept apart, what ranks and what the shares are."""
    from ..environment import currency

    money = currency(board.scenario)
    lines = ["by seat: " + ", ".join(f"seat {s['seat']} {s['mean_score']:,.2f} "
                                     f"({s['trials']})" for s in board.by_seat)]
    if board.screened:
        lines.append(f"flags: findings of vendbench screen at severity warning or high "
                     f"({len(board.findings)}); --flags lists them")
    for f in board.flagged:
        lines.append(f"! above the oracle alone: {f['match_id']} seat {f['seat']} "
                     f"{printable(f['model'])} at {f['oracle_share']:.0%} of it (received "
                     f"{f['net_transfers']:+,.2f} {money} from other seats)")
    if board.oracle_above > 1:
        lines.append(f"the oracle itself scored up to {board.oracle_above:.0%} of the oracle "
                     "alone here: a market leaves it customers a rival's empty shelves "
                     "or pull bring (not an exploit, not flagged)")
    going = [a for a in board.apart if a["status"] in ("running", "not_started")]
    if going:
        lines.append(f"still playing, not ranked yet: "
                     f"{count(len({a['match_id'] for a in going}), 'match', 'matches')}")
    if board.pending_oracle:
        lines.append(f"shares pending for {count(board.pending_oracle, 'seed')}: the "
                     "running arena computes the oracle's and doing nothing's scores as its "
                     "matches end")
    for a in board.apart:
        if a not in going:
            lines.append(f"kept apart: {a['match_id']} seat {a['seat']} "
                         f"{printable(a['model'])} ({a['status']}): {a['reason']}")
    lines.append("ranked by earned score (score less the net transfers received from "
                 "other seats); shares and head to head on it too")
    lines.append(f"of oracle: the earned score's share of what the oracle alone gains over "
                 f"doing nothing on the same seed (0% only ends its days, 100% the oracle "
                 f"alone); intervals: {INTERVAL_METHOD}")
    return lines


def _csv(board: ArenaBoard) -> str:
    import csv
    import io

    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["rank", "model", "seats", "completed", "mean_earned", "mean_score",
                     "net_transfers", "oracle_share", "ci_oracle_share_low",
                     "ci_oracle_share_high", "h2h_wins", "h2h_meetings", "cost_usd",
                     "above_oracle"])
    for rank, r in enumerate(board.rows, 1):
        low, high = r.ci_oracle_share or (None, None)
        writer.writerow([rank, r.model, r.trials, r.completed, f"{r.mean_earned:.2f}",
                         f"{r.mean_score:.2f}", f"{r.net_transfers:.2f}",
                         "" if r.oracle_share is None else f"{r.oracle_share:.6g}",
                         "" if low is None else f"{low:.6g}",
                         "" if high is None else f"{high:.6g}", f"{r.wins:g}", r.meetings,
                         # the exact decimal, never "0E-9" (design §35.6)
                         "" if r.cost_usd is None else format(r.cost_usd, "f"),
                         r.above_oracle])
    return out.getvalue().rstrip("\n")
