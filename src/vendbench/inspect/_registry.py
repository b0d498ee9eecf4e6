"""What Inspect loads through vendbench's ``inspect_ai`` entry point: the tasks, so that
``inspect eval vendbench/autovend`` and ``vendbench/network`` resolve."""

from ._tasks import autovend, network

__all__ = ["autovend", "network"]
