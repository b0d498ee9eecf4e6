"""A finished trial's diagnostics as its page shows them (design §32.1)."""

from __future__ import annotations

from typing import Any

from ..results import FLAG_SEVERITIES, Screening, Transcripts


def trial_diagnosis(tx: Transcripts, t: dict[str, Any]) -> dict[str, Any] | None:
    """A finished trial's diagnostics (design §32.1) as its page shows them: each
    failure mode's instances with the day and call they link to (None: its scenario
    declares none, or is not installed here)."""
    from ..environment import diagnose, diagnostics, failure_modes, find_scenario, \
        record_tables

    scenario = t["scenario"]
    if find_scenario(scenario) is None or not diagnostics(scenario):
        return None
    run = tx.store.run(t["run_id"])
    found = diagnose(scenario, tx.store.trial_records(t["trial_id"], record_tables(scenario)),
                     tx.store.trial_calls(t["trial_id"]), seed=t["seed"],
                     world_seed=t["world_seed"], days=t["horizon"],
                     initial=float(t["initial_cash"] or 0.0),
                     private=bool(run.get("world_salt_sha256")))
    if found is None:
        return None
    headers = {m.kind: m.header for m in failure_modes(scenario)}
    declared = diagnostics(scenario)
    return {"figures": [(x.header, x.unit, found.values.get(x.name), x.scale, x.decimals)
                       for x in declared],
            "incidents": [{**i.as_json(), "header": headers.get(i.kind, i.kind)}
                          for i in found.incidents if i.kind != "idle_day"],
            "idle_days": [i.day for i in found.incidents if i.kind == "idle_day"],
            "notes": found.notes}


class Flags(list[dict[str, Any]]):
    """A trial's flags, and whether it was screened at all."""

    screened = False

    def at(self, seq: int) -> list[dict[str, Any]]:
        """The flags of request ``seq``."""
        return [f for f in self if f["exchange"] == seq]


def trial_flags(tx: Transcripts, trial_id: str, day: int | None = None) -> Flags:
    """A trial's flags (what vendbench screen found at severity warning or high, design
    §32.2), of one day or all, each with where it links: the tool call, else the request
    whose reply it is in."""
    out = Flags()
    out.screened = trial_id in Screening(tx.store).screened()
    for f in Screening(tx.store).findings([trial_id], FLAG_SEVERITIES):
        if day is not None and f["day"] != day:
            continue
        anchor = f"#call-{f['call']}" if f["call"] is not None else \
            f"#exchange-{f['exchange']}-1" if f["exchange"] is not None else ""
        out.append({**f, "href": f"day-{f['day']}.html{anchor}" if f["day"] else None})
    return out
