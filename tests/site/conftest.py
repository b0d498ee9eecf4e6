"""A nightly panel as a team would publish it: two nights (a results file each) of three
priced LLM models (a local server plays them: one only ends its days, two run the same
small business at different prices) beside the reference policy, a comparison in the
second night's file, the second night screened, and an arena in a file of its own."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from vendbench.cli import main
from vendbench.orchestrator import build_config, execute

from ..fakellm import FakeLLM, Reply, vending_script

PRICES = {"openai/cheap": ("0.1", "0.4"), "openai/mid": ("1", "4"),
          "openai/pricey": ("3", "12")}
DAYS = 8


def script(body: dict) -> Reply:
    """``cheap`` only ends its days; the others play the server's small vending agent."""
    if "cheap" in body["model"]:
        return Reply(tool_calls=[("end_day", "{}")])
    return vending_script(body)


def night(db: str, url: str, seeds: list[int]) -> str:
    models = [{"id": m, "api_base": url, "input_usd_per_mtok": i,
               "output_usd_per_mtok": o, "max_output_tokens": 512, "request_timeout_s": 5}
              for m, (i, o) in PRICES.items()]
    cfg = build_config({"days": DAYS, "seeds": seeds, "retry_backoff_s": 0.01,
                        "models": [*models, {"id": "baseline/order-up-to"}]})
    return asyncio.run(execute(cfg, db)).run_id


@pytest.fixture(scope="session")
def panel(tmp_path_factory) -> dict:
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "true")
    os.environ["OPENAI_API_KEY"] = "sk-site-test-key-0000"
    where = tmp_path_factory.mktemp("panel")
    one, two, arena = (str(where / n) for n in ("night-1.duckdb", "night-2.duckdb",
                                                 "arena.duckdb"))
    with FakeLLM(script=script) as llm:
        first = night(one, llm.url, [1, 2, 3])
        second = night(two, llm.url, [1, 2, 3])
        assert main(["compare", "openai/mid", "baseline/order-up-to", "--api-base", llm.url,
                     "--price", "openai/mid=1,4", "--days", str(DAYS), "--budget", "0.5",
                     "--trial-budget", "0.05", "--batch", "2", "--max-pairs", "4",
                     "--db", two, "--json"]) == 0
    assert main(["screen", "--db", two, "--run", second, "--format", "json"]) == 0
    assert main(["arena", "baseline/oracle", "baseline/order-up-to", "--seeds", "1", "2",
                 "--days", "3", "--db", arena, "--json"]) == 0
    return {"dir": where, "files": [one, two, arena], "nights": [first, second]}


@pytest.fixture(scope="session")
def site(panel, tmp_path_factory) -> Path:
    """The panel's site, transcripts included."""
    out = tmp_path_factory.mktemp("site") / "public"
    assert main(["site", str(out), "--db", *panel["files"], "--transcripts"]) == 0
    return out


def page_json(site: Path, path: str) -> dict:
    return json.loads((site / path).read_text())
