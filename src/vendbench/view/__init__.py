"""The transcript viewer (``vendbench view``): runs → trials → a trial's days → a day's
requests, replies, tool calls and results → the window a request carried; search within a
trial; two trials of one world and seed side by side. Served read-only on this machine,
or written as files (``write_static``)."""

from ._pages import Page, Pages
from ._server import ViewConfig, app, view
from ._static import static_plan, write_static

__all__ = ["Page", "Pages", "ViewConfig", "app", "static_plan", "view", "write_static"]
