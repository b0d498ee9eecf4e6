"""The world over MCP: `vendbench serve` (the official Python SDK, ``mcp``).

An agent harness we do not drive — a coding agent, a framework's agent, a person's own
loop — connects as an MCP client and runs the business through the same tools, with
the same schemas, the same validation and the same results as the JSON tools an LLM
trial calls. Each MCP session gets a fresh world (stdio: the process; streamable HTTP:
each session id) and is logged as a trial of the server's run: model
``mcp/<client name>``, its tool calls, days and sales, no LLM exchanges (the client's
model is outside us, so is its cost). The leaderboard ranks it beside the models we
call, with its harness named.
"""

from ._server import ServeConfig, serve

__all__ = ["ServeConfig", "serve"]
