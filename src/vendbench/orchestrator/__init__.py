"""The orchestrator: concurrent model × seed trials, budgets, context, logging."""

from ._check import check
from ._clients import Clients
from ._context import Message
from ._log import ExchangeLog
from ._config import (ModelConfig, RunConfig, arena_problem, build_config, load_panel,
                      model_entry)
from ._forecast import ModelForecast, PanelForecast, forecast_run
from ._scheduler import RunResult, Scheduler, execute
from ._spec import TrialOutcome, TrialSpec

__all__ = ["Clients", "ExchangeLog", "Message", "arena_problem", "ModelConfig", "ModelForecast", "PanelForecast", "RunConfig", "RunResult",
           "Scheduler", "TrialOutcome", "TrialSpec", "build_config", "check", "execute",
           "forecast_run", "load_panel", "model_entry"]
