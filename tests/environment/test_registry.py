"""The scenario registry: scenarios are entries, not branches, loaded on first use."""

from __future__ import annotations

import subprocess
import sys

import pytest

from vendbench.environment import make, metric_directions, scenario, trial_metrics
from vendbench.errors import ConfigError
from vendbench.orchestrator import build_config


def test_a_registered_scenario_is_made_measured_and_accepted_by_a_run(toy):
    env = make("toy", seed=3, days=2)
    assert env.call("end_day")["ok"] and env.call("end_day")["ok"] and env.done
    assert trial_metrics("toy", {"days": [], "toy_prices": []}, [{}, {}, {}]) == \
        {"cups_per_day": None, "calls": 3.0}
    assert metric_directions("toy") == {"cups_per_day": "higher", "calls": "lower"}
    assert build_config({"scenario": "toy", "models": [{"id": "baseline/fixed-price"}]}
                        ).scenario == "toy"


def test_an_unknown_scenario_is_one_clear_error_everywhere():
    with pytest.raises(ConfigError, match="autovend"):
        scenario("nowhere")
    with pytest.raises(ConfigError, match="unknown scenario 'nowhere'; known: autovend"):
        build_config({"scenario": "nowhere", "models": [{"id": "baseline/order-up-to"}]})
    for command in (["baseline", "--scenario", "nowhere", "--days", "1"],
                    ["serve", "--scenario", "nowhere"]):
        out = subprocess.run([sys.executable, "-m", "vendbench", *command],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and "nowhere" in out.stderr and "autovend" in out.stderr
        assert "Traceback" not in out.stderr


def test_choosing_a_scenario_imports_only_it():
    code = ("import sys; from vendbench.environment import make, REGISTRY; "
            "print(any(m.startswith('vendbench.environment.autovend') for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "False"


def test_a_built_in_scenario_never_scans_the_installed_packages():
    """The entry points of out-of-tree scenarios are read only for a name that is not
    built in, or when every scenario is listed (design §21)."""
    code = ("from vendbench.environment import make, _registry; "
            "make('network', seed=1, days=1); print(_registry._discovered); "
            "_registry.names(); print(_registry._discovered)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.split() == ["False", "True"], out.stderr


def test_each_scenario_has_its_own_default_horizon(capsys):
    from vendbench.cli import main

    assert build_config({"models": [{"id": "baseline/oracle"}]}).days == 180
    assert build_config({"scenario": "network", "models": [{"id": "baseline/oracle"}]}
                        ).days == 30
    assert build_config({"scenario": "network", "days": 365,
                         "models": [{"id": "baseline/oracle"}]}).days == 365
    assert main(["baseline", "--scenario", "network", "--json"]) == 0
    record = __import__("json").loads(capsys.readouterr().out)
    assert record["days"] == 30 and record["days_completed"] == 30


def test_each_metric_is_declared_once_with_its_direction_and_display():
    """A metric spec per metric (design §21): every metric a scenario computes has one
    ``Metric``, which gives both its direction and its column; a wrong direction is
    refused where it is written."""
    from vendbench.environment import Metric, display_columns
    from vendbench.environment._registry import metrics

    for name in ("autovend", "network"):
        specs = metrics(name)
        assert len({m.name for m in specs}) == len(specs)
        assert metric_directions(name) == {m.name: m.direction for m in specs}
        assert [c[0] for c in display_columns(name)] == [m.name for m in specs if m.header]
    computed = trial_metrics("network", {"days": [], "sales": []}, [])
    assert set(computed) == {m.name for m in metrics("network")}
    with pytest.raises(ValueError, match="direction"):
        Metric("speed", "faster")


def test_a_worlds_facts_are_its_descriptors(toy):
    """design §26.3: the default world, the tool that ends a day, the Inspect task and the
    default scenario are each said once, in the descriptor, and read from there."""
    from dataclasses import replace

    from vendbench.environment import (DEFAULT_SCENARIO, REGISTRY, make, nudge,
                                       register, scenario)
    from vendbench.inspect._logs import tasks
    from vendbench.orchestrator import build_config

    assert scenario("network").day_tool == "wait_for_next_day"
    assert "wait_for_next_day" in nudge(make("network", seed=1, days=2))
    assert "end_day" in nudge(make("toy", seed=1))
    assert tasks() == {"vendbench/autovend": "autovend", "vendbench/network": "network"}
    assert build_config({"models": [{"id": "baseline/order-up-to"}]}).scenario == \
        DEFAULT_SCENARIO == "autovend"
    register(replace(REGISTRY["toy"], world_seed=7, day_tool="close_stand", inspect=True))
    config = build_config({"scenario": "toy", "models": [{"id": "baseline/fixed-price"}]})
    assert config.world_seeds == [7] and not config.names_worlds
    assert "close_stand" in nudge(make("toy", seed=1))
    assert tasks()["vendbench/toy"] == "toy"
