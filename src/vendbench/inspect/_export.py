"""vendbench's own runs as Inspect AI logs (``vendbench export-inspect``, design §35.7): the
other direction of ``import-inspect``, so that ``inspect view`` shows a vendbench run as it
shows Inspect's.

One log a run and model (Inspect's eval is one task and one model): a sample a trial, its
conversation as the model saw it (the stored messages, each once, in order: the briefing,
each day's report, the assistant's replies with their tool calls, the tools' results), and
for an in-process policy, which has no conversation, its tool calls and their results as
assistant and tool messages. Its score is the scorer's of vendbench's Inspect task
(``world_score``: the scenario's score, 0 unless the trial completed, its status as the
answer, its share of the oracle's gain and the trial's figures as metadata); its usage the
tokens the trial spent; its cost and vendbench's trial id in the sample's metadata.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from typing import Any

from inspect_ai.log import (EvalConfig, EvalDataset, EvalLog, EvalMetric, EvalResults,
                            EvalSample, EvalScore, EvalSpec, EvalStats, write_eval_log)
from inspect_ai.model import (ChatMessage, ChatMessageAssistant, ChatMessageSystem,
                              ChatMessageTool, ChatMessageUser, ModelUsage)
from inspect_ai.scorer import Score
from inspect_ai.tool import ToolCall

from ..environment import find_scenario
from ..errors import ConfigError
from ..results import PairKey, Store, anchors_for, latest_attempts, shares, trial_score
from ._logs import EXPORTED, SCORER


def export_runs(db: str, run: str, out: str) -> list[Path]:
    """Write ``run``'s trials ("latest", "all" or a run id) in ``db`` as Inspect logs into
    the folder ``out``, one a model; the files written."""
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{out}: a file by that name exists; give a folder for the logs")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    with Store(db, read_only=True) as store:
        runs = ([store.run(r["run_id"]) for r in store.runs()] if run == "all"
                else [store.run(run)])
        if not runs:
            raise ConfigError(f"{db} holds no run to export")
        for row in runs:
            trials = list(latest_attempts(store.trials(row["run_id"])).values())
            ranked = [t for t in trials if t["status"] not in ("running", "not_started")]
            shared = _shares(store, row, ranked)
            by_model: dict[str, list[dict[str, Any]]] = {}
            for t in ranked:
                by_model.setdefault(t["model"], []).append(t)
            for model, ts in sorted(by_model.items()):
                log = _log(store, row, model, ts, shared)
                path = folder / f"{row['run_id']}_{_slug(model)}.eval"
                write_eval_log(log, str(path))
                written.append(path)
    return written


def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", model).strip("-")[:80] or "model"


def _shares(store: Store, run: dict[str, Any], trials: list[dict[str, Any]]
            ) -> dict[str, float | None]:
    if find_scenario(run["scenario"]) is None or not trials:
        return {}
    keys = {PairKey.of(t).world for t in trials}
    anchors = anchors_for(store, run["scenario"], run["days"], keys,
                          run.get("world_salt_sha256"), None)
    return shares(trials, run["scenario"], anchors)


def _log(store: Store, run: dict[str, Any], model: str, trials: list[dict[str, Any]],
         shared: dict[str, float | None]) -> EvalLog:
    scenario, days = run["scenario"], run["days"]
    samples = [_sample(store, run, t, shared.get(t["trial_id"])) for t in trials]
    scores = [float(s.scores[SCORER].value) for s in samples if s.scores]  # type: ignore[arg-type]
    created = run["created_at"]
    spec = EvalSpec(
        created=(created.isoformat() if hasattr(created, "isoformat") else str(created)),
        task=f"vendbench/{scenario}", task_id=run["run_id"], run_id=run["run_id"],
        dataset=EvalDataset(name=f"vendbench/{scenario}", samples=len(samples),
                            sample_ids=[s.id for s in samples]),
        model=model, config=EvalConfig(),
        task_args={"days": days},
        metadata={EXPORTED: {"run_id": run["run_id"], "run_name": run.get("name"),
                             "world_seeds": sorted({t["world_seed"] for t in trials}),
                             "code_version": run.get("code_version"),
                             "exported_at": dt.datetime.now(dt.timezone.utc).isoformat()}})
    results = EvalResults(total_samples=len(samples), completed_samples=len(samples),
                          scores=[EvalScore(name=SCORER, scorer=SCORER, metrics={
                              "mean": EvalMetric(name="mean", value=sum(scores) / len(scores)
                                                 if scores else 0.0)})])
    usage = _usage(trials)
    stats = EvalStats(started_at=spec.created, completed_at=spec.created,
                      model_usage={model: usage} if usage else {})
    return EvalLog(eval=spec, status="success", results=results, stats=stats,
                   samples=samples)


def _usage(trials: list[dict[str, Any]]) -> ModelUsage | None:
    """The tokens the trials spent, as Inspect counts them (None: no LLM)."""
    inp = sum(t.get("input_tokens") or 0 for t in trials)
    if not inp:
        return None
    out = sum(t.get("output_tokens") or 0 for t in trials)
    read = sum(t.get("cache_read_tokens") or 0 for t in trials)
    write = sum(t.get("cache_write_tokens") or 0 for t in trials)
    # Inspect's input_tokens leave out the cache's (vendbench's count them in)
    return ModelUsage(input_tokens=inp - read - write, output_tokens=out,
                      total_tokens=inp + out, input_tokens_cache_read=read,
                      input_tokens_cache_write=write)


def _sample(store: Store, run: dict[str, Any], trial: dict[str, Any],
            share: float | None) -> EvalSample:
    history = store.history(trial["trial_id"])
    messages = _conversation(history) if history.messages else _calls(history)
    first = next((m.text for m in messages if m.role == "user"), "")
    value = trial_score(trial)
    meta = {"vendbench": 1, "scenario": run["scenario"], "world_seed": trial["world_seed"],
            "seed": trial["seed"], "days": run["days"], "status": trial["status"],
            "reason": trial.get("reason"), "standing": trial.get("score"),
            "days_completed": trial.get("days_completed"),
            "tool_calls": trial.get("tool_calls"), "initial_cash": trial.get("initial_cash"),
            "final_cash": trial.get("final_cash"),
            "final_net_assets": trial.get("final_net_assets"), "oracle_share": share}
    cost = trial.get("cost_usd")
    return EvalSample(
        id=trial["trial_id"], epoch=int(trial["repeat"]), input=first, target="",
        messages=messages, scores={SCORER: Score(
            value=value, answer=trial["status"], metadata=meta,
            explanation=f"{trial['status']} after {trial.get('days_completed') or 0} of "
                        f"{run['days']} days; score {value:,.2f}")},
        metadata={"trial_id": trial["trial_id"], "model": trial["model"],
                  "world_seed": trial["world_seed"], "seed": trial["seed"],
                  "cost_usd": None if cost is None else float(cost)})


# vendbench's rolling context stores its system prompt as message 0 and the note that
# stands for evicted messages as message 1: part of a window, not of the conversation
# (a trial imported from Inspect numbers its messages from 1 and has no such note)
EVICTED_NOTE_ID = 1


def _conversation(history: Any) -> list[ChatMessage]:
    """The stored messages, each once, in the order they were made."""
    out: list[ChatMessage] = []
    names: dict[str, str] = {}                  # a tool call's id -> its tool
    ours = bool(history.messages) and history.messages[0][0] == 0
    for msg_id, body, _, _ in history.messages:
        if ours and msg_id == EVICTED_NOTE_ID:
            continue
        m = json.loads(body)
        role, text = m.get("role"), _text(m.get("content"))
        if role == "system":
            out.append(ChatMessageSystem(content=text))
        elif role == "user":
            out.append(ChatMessageUser(content=text))
        elif role == "assistant":
            calls = [_call(c) for c in m.get("tool_calls") or []]
            names.update({c.id: c.function for c in calls})
            out.append(ChatMessageAssistant(content=text, tool_calls=calls or None))
        elif role == "tool":
            out.append(ChatMessageTool(content=text, tool_call_id=m.get("tool_call_id"),
                                       function=names.get(m.get("tool_call_id") or "")))
    return out


def _calls(history: Any) -> list[ChatMessage]:
    """An in-process policy's play, which has no conversation: each day a line, each
    tool call an assistant message and its result a tool message."""
    out: list[ChatMessage] = []
    day = None
    for seq, _, d, call_id, name, args, result in history.tool_calls:
        if d != day:
            day = d
            out.append(ChatMessageUser(content=f"Day {d}"))
        ident = call_id or f"call-{seq}"
        arguments = _arguments(args)
        out.append(ChatMessageAssistant(content="", tool_calls=[
            ToolCall(id=ident, function=name, arguments=arguments)]))
        out.append(ChatMessageTool(content=result or "", tool_call_id=ident, function=name))
    return out


def _call(call: dict[str, Any]) -> ToolCall:
    fn = call.get("function") or {}
    return ToolCall(id=str(call.get("id") or ""), function=str(fn.get("name") or ""),
                    arguments=_arguments(fn.get("arguments")))


def _arguments(raw: Any) -> dict[str, Any]:
    """A call's arguments as a dict (a model's text that is no JSON object kept whole)."""
    if isinstance(raw, dict):
        return raw
    try:
        value = json.loads(raw) if isinstance(raw, str) and raw else {}
    except ValueError:
        return {"arguments": raw}
    return value if isinstance(value, dict) else {"arguments": value}


def _text(content: Any) -> str:
    """A message's content as text (a list of content blocks joined)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b.get("text", "")) if isinstance(b, dict) else str(b)
                         for b in content)
    return "" if content is None else str(content)
