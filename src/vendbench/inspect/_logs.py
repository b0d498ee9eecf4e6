"""Inspect's logs of vendbench's tasks, imported as trials (``vendbench import-inspect``).

Each sample becomes a trial of the model ``inspect/<model>`` (its harness: Inspect), in a
run per log, paired with every other trial of the same world, seed and epoch. A sample is
not taken on trust: its tool calls are replayed, in order, through a fresh copy of its
world, every answer must be the one the log holds, and the replayed world's score must be
the log's. The replay also writes what vendbench's own runs record (the tool calls, the
day rows the charts and metrics read), so the leaderboard, the trend and the viewer treat
the trial like any other.

Every log is read, checked and replayed before anything is written; then all of them go
in one transaction. A bad log (another task's, a truncated one, one without vendbench's
scores, one whose calls do not replay) is refused in one line and nothing is written.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from inspect_ai.event import ModelEvent, ToolEvent
from inspect_ai.log import EvalLog, EvalSample, read_eval_log

from .._secrets import redact
from ..environment import (SALT_ENV, find_scenario, scenario_names, Environment, Kept, RecordingSession, make,
                           record_tables)
from ..errors import ConfigError
from ..results import (DirectWriter, ExchangeRow, MessageRow, RunEnded, SegmentEnded, SegmentStarted, Store, Tokens,
                       TrialLog, TrialRecord, TrialStatus, begin_run, anchor_rows, dumps,
                       missing_anchors, now, salt_hash, trial_score)
from ._conversation import Conversation, stored_time
from ._worlds import refused

def tasks() -> dict[str, str]:
    """Each scenario's Inspect task (``vendbench/<name>``), to the scenario."""
    return {s.inspect_task: s.name for s in map(find_scenario, scenario_names())
            if s is not None and s.inspect_task}
SCORER = "world_score"
HARNESS = "inspect"
EXPORTED = "vendbench_export"      # the eval metadata of a log export-inspect wrote
# how a sample that did not finish its world ended, by the limit Inspect stopped it at
BY_LIMIT = {"message": TrialStatus.MAX_TURNS, "token": TrialStatus.BUDGET_EXHAUSTED,
            "cost": TrialStatus.BUDGET_EXHAUSTED, "time": TrialStatus.TIMEOUT,
            "working": TrialStatus.TIMEOUT, "context": TrialStatus.CONTEXT_OVERFLOW}


@dataclass
class _Trial:
    record: TrialRecord
    kept: Kept                   # its tool calls and day records, from the replay
    conversation: Conversation   # its messages and exchanges


@dataclass
class ImportedRun:
    """One log, read and replayed, ready to write (``trials`` once written)."""

    path: str
    run_id: str
    task: str
    scenario: str
    days: int
    model: str
    config: dict[str, Any]
    probe: Environment
    world_seeds: list[int]
    salt: str | None
    trials: list[_Trial] = field(default_factory=list)
    skipped: str | None = None       # why nothing of it was written (already imported)

    def as_json(self) -> dict[str, Any]:
        counted = [trial_score(asdict(t.record)) for t in self.trials]
        return {"log": self.path, "run_id": self.run_id, "task": self.task,
                "model": self.model, "trials": len(self.trials),
                "completed": sum(t.record.status == "completed" for t in self.trials),
                "skipped": self.skipped,
                # as the leaderboard counts it: an unfinished trial scores 0
                "mean_score": sum(counted) / len(counted) if counted else None}


def import_logs(paths: Sequence[str], db: str,
                on_read: Callable[[ImportedRun], None] | None = None) -> list[ImportedRun]:
    """Read, check and replay every log (``on_read`` is told of each), then write them
    all in one transaction."""
    runs = []
    for path in paths:
        runs.append(read_log(path))
        if on_read is not None:
            on_read(runs[-1])
    seen: set[str] = set()
    with Store(db) as store:
        for run in runs:
            if run.run_id in seen:
                run.skipped = "listed twice"
            elif store.has_run(run.run_id):
                run.skipped = f"already imported as run {run.run_id}"
            seen.add(run.run_id)
        with store.transaction():
            for run in runs:
                if run.skipped is None:
                    _write(store, run)
    return runs


def _not_a_file(path: Path) -> str:
    """What ``path``, which is not a regular file, is instead, in words (design §30)."""
    import stat

    if not path.exists():
        return "no such file"
    if path.is_dir():
        return "a directory, not a log; give the log files in it (e.g. logs/*.eval)"
    mode = path.stat().st_mode
    kind = next((word for test, word in ((stat.S_ISFIFO, "a named pipe"),
                                         (stat.S_ISCHR, "a character device"),
                                         (stat.S_ISBLK, "a block device"),
                                         (stat.S_ISSOCK, "a socket")) if test(mode)),
                "not a regular file")
    return f"{kind}, not an Inspect log file"


def read_log(path: str) -> ImportedRun:
    """One log, checked and replayed (ConfigError, in one line, when it cannot be)."""
    name = Path(path).name
    if not Path(path).is_file():
        raise ConfigError(f"{path}: {_not_a_file(Path(path))}")
    _bounded(Path(path))
    try:
        log = read_eval_log(path, resolve_attachments=True)
    except Exception as exc:            # Inspect raises what its readers raise
        raise ConfigError(f"{name}: not a readable Inspect log ({type(exc).__name__}: "
                          f"{_first_line(exc)}); a truncated or unfinished file?") from None
    exported = (log.eval.metadata or {}).get(EXPORTED)
    if isinstance(exported, dict):
        raise ConfigError(f"{name}: written by vendbench export-inspect from run "
                          f"{exported.get('run_id')}: its trials are vendbench's already; "
                          "rank them from the results file it came from")
    task = log.eval.task
    known = tasks()
    if task not in known:
        raise ConfigError(f"{name}: a log of task {task!r}, not of vendbench's "
                          f"({', '.join(known)})")
    if not log.samples:
        raise ConfigError(f"{name}: no samples (status {log.status}): nothing to import")
    try:
        scenario = known[task]
        first = _meta(log.samples[0], name)
        salt = _salt(log, name, first.get("world_salt_sha256"))
        days = _whole(first, "days", name)
        run = ImportedRun(path, _run_id(log), task, scenario, days,
                          f"{HARNESS}/{log.eval.model}", _config(log, path),
                          make(scenario, seed=1, days=days,
                               **({"world_salt": salt} if salt else {})), [], salt)
        run.trials = [_trial(run, sample, name) for sample in log.samples]
    except (KeyError, TypeError, ValueError, OverflowError) as exc:   # metadata edited
        raise ConfigError(f"{name}: its vendbench scores are not as the task writes them "
                          f"({type(exc).__name__}: {_first_line(exc)})") from None
    run.world_seeds = sorted({t.record.world_seed for t in run.trials})
    return run


def _meta(sample: EvalSample, name: str) -> dict[str, Any]:
    """What vendbench's scorer kept of the sample (ConfigError without it)."""
    score = (sample.scores or {}).get(SCORER)
    meta = score.metadata if score is not None else None
    if not meta or meta.get("vendbench") != 1:
        raise ConfigError(f"{name}: sample {sample.id} (epoch {sample.epoch}) has no "
                          f"vendbench score (scorer {SCORER!r}): was it scored, and by "
                          "vendbench's task?")
    return meta


def _trial(run: ImportedRun, sample: EvalSample, name: str) -> _Trial:
    where = f"{name}: sample {sample.id} (epoch {sample.epoch})"
    meta = _meta(sample, name)
    days = _whole(meta, "days", where)
    seed, world_seed = _whole(meta, "seed", where), _whole(meta, "world_seed", where)
    if days != run.days:
        raise ConfigError(f"{where}: {days} days, not the log's {run.days}")
    env = make(run.scenario, seed=seed, days=days, world_seed=world_seed,
               **({"world_salt": run.salt} if run.salt else {}))
    kept = Kept()
    trial_id = f"{run.run_id}-w{meta['world_seed']}-s{meta['seed']}-e{sample.epoch}"
    conversation = Conversation(trial_id, run.model)
    calls = _replay(env, RecordingSession(env, kept), sample, where, conversation)
    final, summary = env.final_state(), env.summary()
    if abs(float(final["score"]) - float(meta["standing"])) > 1e-6 or \
            summary.get("days_completed", 0) != meta["days_completed"]:
        raise ConfigError(f"{where}: its replay ends at {final['score']:,.2f} after "
                          f"{summary.get('days_completed', 0)} days, the log says "
                          f"{meta['standing']:,.2f} after {meta['days_completed']}: "
                          "not a log of this world")
    status, reason = _status(env, sample, meta)
    started = stored_time(sample.started_at) if sample.started_at else now()
    ended = stored_time(sample.completed_at) if sample.completed_at else started
    record = TrialRecord(
        trial_id, run.run_id, run.model, world_seed, seed, sample.epoch, 1, status,
        reason, final.get("initial_cash"), final.get("final_cash"),
        final.get("final_net_assets"), float(final["score"]), _cost(sample, where), None,
        _tokens(sample), conversation.exchanges, calls, summary.get("days_completed", 0),
        started, ended)
    return _Trial(record, kept, conversation)


def _replay(env: Environment, session: RecordingSession, sample: EvalSample,
            where: str, conversation: Conversation) -> int:
    """Run the sample's events through ``env`` in order: each model call is an exchange
    of the day it was made in, each of the world's tool calls runs again and must answer
    as the log says. Returns the calls recorded."""
    tools = {t["function"]["name"] for t in env.tools}
    seq, n = 0, 0
    for event in sample.events:
        if isinstance(event, ModelEvent):
            seq = conversation.exchange(event, env.day)
            continue
        if not isinstance(event, ToolEvent):
            continue
        n += 1
        if event.function not in tools:
            continue                       # another tool (a submit, a think): not the world's
        logged = event.result if isinstance(event.result, str) else None
        if event.error is not None or logged is None:
            continue                       # never reached the world (bad JSON, no world)
        if env.done:
            continue                       # the world answered "the trial is over"
        if refused(logged):                # made after its day ended: recorded, not run
            session.call(event.function, dict(event.arguments), day=env.day - 1,
                         exchange=seq or None, call_id=event.id)
            continue
        result = session.call(event.function, dict(event.arguments), exchange=seq or None,
                              call_id=event.id)
        if dumps(result, ascii=False) != logged:
            raise ConfigError(f"{where}: tool call {n} ({event.function}) answers "
                              "differently when replayed: not a log of this world (another "
                              "salt, or another version of vendbench?)")
    return session.calls


def _status(env: Environment, sample: EvalSample, meta: dict[str, Any]
            ) -> tuple[str, str | None]:
    if env.done:
        status = TrialStatus(env.status)
        return status, ("cash stayed below zero for too long"
                        if status == TrialStatus.BANKRUPT else None)
    if sample.error is not None:
        return TrialStatus.ERROR, redact(f"Inspect: {_first_line(sample.error.message)}")
    if sample.limit is not None:
        status = BY_LIMIT.get(sample.limit.type, TrialStatus.AGENT_STOPPED)
        return status, f"Inspect's {sample.limit.type} limit ({sample.limit.limit:g})"
    return TrialStatus.AGENT_STOPPED, meta.get("reason") or \
        "the agent ended before the world did"


def _tokens(sample: EvalSample) -> Tokens:
    usage = list(sample.model_usage.values())
    cache_read = sum(u.input_tokens_cache_read or 0 for u in usage)
    cache_write = sum(u.input_tokens_cache_write or 0 for u in usage)
    return Tokens(sum(u.input_tokens for u in usage) + cache_read + cache_write,
                  sum(u.output_tokens for u in usage), cache_read, cache_write)


def _cost(sample: EvalSample, where: str) -> Decimal | None:
    """What Inspect priced the sample at, where it priced every model (never a guess); a
    cost below 0 or not finite is refused (a forged log once imported a trial at
    -$1,000)."""
    costs = [u.total_cost for u in sample.model_usage.values()]
    if not costs or any(c is None for c in costs):
        return None
    for c in costs:
        if not isinstance(c, (int, float)) or isinstance(c, bool) or not math.isfinite(c) \
                or c < 0:
            raise ConfigError(f"{where}: a model's cost of {c!r} is not a cost (it must be "
                              "a finite number of dollars, at least 0)")
    return sum((Decimal(str(c)) for c in costs if c is not None), Decimal(0))


MAX_SEED = 2**31 - 1


def _whole(meta: dict[str, Any], key: str, where: str) -> int:
    """A seed, world seed or day count of the scorer's metadata, checked: a whole number
    in 0..MAX_SEED (an infinite seed once ended the import in a traceback)."""
    value = meta.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value) or value != int(value) or not 0 <= value <= MAX_SEED:
        raise ConfigError(f"{where}: its {key} {value!r} is not a whole number in "
                          f"0..{MAX_SEED:,}")
    return int(value)


# what one member of a log (a sample, its header) may expand to when it is read: at most
# MAX_MEMBER_BYTES, and beyond BOMB_FLOOR at most BOMB_RATIO times its compressed size
# (JSON compresses 5-20x; a 35 KB sample that expanded to 256 MB once took 93 s and 2.9
# GB to import)
MAX_MEMBER_BYTES = 2 << 30
BOMB_FLOOR, BOMB_RATIO = 64 << 20, 100


def _bounded(path: Path) -> None:
    """Refuse, before anything is read, a log whose members would expand past what a
    log may (a .eval is a zip; a .json log is read whole)."""
    import zipfile

    name = path.name
    if not zipfile.is_zipfile(path):
        if path.stat().st_size > MAX_MEMBER_BYTES:
            raise ConfigError(f"{name}: {path.stat().st_size:,} bytes, over the "
                              f"{MAX_MEMBER_BYTES >> 20:,} MB a log may be")
        return
    try:
        with zipfile.ZipFile(path) as z:
            members = z.infolist()
    except (zipfile.BadZipFile, OSError) as exc:
        raise ConfigError(f"{name}: not a readable Inspect log ({exc})") from None
    for m in members:
        if m.file_size > MAX_MEMBER_BYTES or (
                m.file_size > BOMB_FLOOR and m.file_size > BOMB_RATIO * max(1, m.compress_size)):
            raise ConfigError(
                f"{name}: its member {m.filename} would expand from {m.compress_size:,} to "
                f"{m.file_size:,} bytes, more than a log may ({MAX_MEMBER_BYTES >> 20:,} MB "
                f"a member, {BOMB_RATIO}x its compressed size beyond {BOMB_FLOOR >> 20} MB)")


def _salt(log: EvalLog, name: str, digest: str | None) -> str | None:
    """The private worlds' salt, from the variable the task read it from (None: public
    worlds); it must be the one the log's worlds were played with."""
    meta = (log.eval.metadata or {}).get("vendbench")
    if not isinstance(meta, dict) or not meta.get("private_worlds"):
        return None
    env_name = log.eval.task_args.get("salt_env") or SALT_ENV
    salt = os.environ.get(env_name)
    if not salt:
        raise ConfigError(f"{name}: played private worlds; set {env_name} to their salt "
                          "to replay them")
    if salt_hash(salt) != digest:
        raise ConfigError(f"{name}: the salt in {env_name} is not the one its worlds were "
                          "played with (its SHA-256 differs): not a log of this world")
    return salt


def _run_id(log: EvalLog) -> str:
    return "inspect-" + re.sub(r"[^A-Za-z0-9]+", "", log.eval.eval_id)[:22]


def _config(log: EvalLog, path: str) -> dict[str, Any]:
    return {"harness": HARNESS, "log": os.path.abspath(path), "eval_id": log.eval.eval_id,
            "task": log.eval.task, "task_args": log.eval.task_args,
            "model": log.eval.model, "solver": log.eval.solver,
            "inspect_version": log.eval.packages.get("inspect_ai")}


def _write(store: Store, run: ImportedRun) -> None:
    writer = DirectWriter(store)
    begin_run(store, run_id=run.run_id, name=f"inspect:{run.task}", scenario=run.scenario,
              days=run.days, config_json=json.dumps(run.config), env=run.probe,
              prices_json=dumps({}), total_budget=None, world_seeds=run.world_seeds)
    tables = record_tables(run.scenario)
    for trial in run.trials:
        log = TrialLog(writer, trial.record.trial_id, run.model, tables)
        log.segment_started(1, trial.record.started_at)
        for kind in (MessageRow, ExchangeRow):
            writer.add([r for r in trial.conversation.rows if isinstance(r, kind)])
        trial.kept.hand_to(log)
        log.trial(trial.record)
        log.segment_ended(1, trial.record.ended_at or trial.record.started_at,
                          trial.record.status)
    keys = {(t.record.world_seed, t.record.seed) for t in run.trials}
    for row in anchor_rows(run.scenario, run.days,
                           missing_anchors(store, run.scenario, run.days, keys, run.salt),
                           run.salt):
        store.write(row)
    store.write(RunEnded(run.run_id, TrialStatus.COMPLETED, now()))


def _first_line(value: Any) -> str:
    return (str(value).strip().splitlines() or [""])[0][:300]
