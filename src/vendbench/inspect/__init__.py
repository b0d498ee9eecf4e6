"""The worlds inside Inspect AI (design §22), behind the optional extra ``vendbench[inspect]``.

Both directions:

- ``inspect eval vendbench/autovend --model M -T days=30 -T seed=1`` (and
  ``vendbench/network``): Inspect runs a vendbench world as a task, a sample per trial,
  with the world's tools as Inspect tools, scored by the scenario (``_tasks``);
- ``vendbench import-inspect LOGS...``: Inspect's logs of these tasks become trials in a
  results file, replayed through the world to check them (``_logs``), so the leaderboard,
  the trend and the viewer rank and show them beside vendbench's own runs;
- ``vendbench export-inspect OUT``: vendbench's own runs written as Inspect logs
  (``_export``), so ``inspect view`` shows them.

Inspect finds the tasks through its ``inspect_ai`` entry point (``_registry``). Nothing
else in vendbench imports this package: the core install does not need Inspect.
"""

from __future__ import annotations

from ..errors import ConfigError

INSTALL_HINT = ("Inspect AI is not installed: pip install 'vendbench[inspect]' (or pip "
                "install inspect-ai) to run vendbench's worlds in Inspect and import its logs")


class InspectMissing(ImportError, ConfigError):
    """Inspect AI is needed and not installed (an ImportError to Python, a one-line
    error to the CLI)."""


try:
    import inspect_ai  # noqa: F401
except ImportError as exc:
    raise InspectMissing(INSTALL_HINT) from exc

from ._export import export_runs  # noqa: E402
from ._logs import ImportedRun, import_logs  # noqa: E402
from ._tasks import autovend, network, open_sample, world_agent, world_score, world_task  # noqa: E402

__all__ = ["INSTALL_HINT", "ImportedRun", "InspectMissing", "autovend", "export_runs",
           "import_logs",
           "network", "open_sample", "world_agent", "world_score", "world_task"]
