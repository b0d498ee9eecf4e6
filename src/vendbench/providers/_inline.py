"""litellm's request building, run in the event loop's own thread.

``litellm.acompletion`` builds every request in a thread: it hands its synchronous
``completion`` to ``loop.run_in_executor(None, ...)`` and awaits the coroutine that
comes back, which then does the HTTP. For the providers below that building is Python
work on the request alone (no file, no network: their keys come from the request or the
environment), so the hand-off buys nothing and costs a thread's wake-up, a wake-up of
the loop to take the result, and the two threads' contention for the GIL.

What it buys (design §25.1, measured in one sitting): bare ``litellm.acompletion`` from
50 loops against the zero-latency server, eight alternating rounds of 2,000 requests,
4.79 ms of CPU a request (207 requests/s) built in the loop against 5.08 ms (193/s) in a
thread. In whole 50-trial runs the difference is within the host's drift between runs
(benchmarks/README.md, session 22). What it costs: while a request is being built, the
loop serves nothing else (about 1 ms), as it would wait for the GIL anyway.

Only litellm's own ``completion``, only while ``LiteLLMProvider`` awaits a request for a
provider listed in ``INLINE_PREFIXES`` (a context variable says so), runs inline; every
other use of the default executor (aiohttp's DNS look-ups, say) goes to threads as
before. Every other provider keeps the thread, and so does any litellm whose internals
no longer match (then nothing is recognised and nothing changes).
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

# litellm model prefixes whose request building does no I/O in litellm's code (it builds
# the body and returns the coroutine that sends it) and that the tests' server speaks;
# any other keeps the thread: ollama's asks the server about its model,
# gemini's may create a cached content, vertex_ai's and bedrock's fetch credentials
INLINE_PREFIXES = frozenset({"openai", "anthropic", "deepseek", "hosted_vllm"})

_building: contextvars.ContextVar[bool] = contextvars.ContextVar("litellm_inline",
                                                                 default=False)
_installed: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


class InlineBuild(ThreadPoolExecutor):
    """A default executor that runs litellm's request building in the calling thread
    while ``_building`` is set, and everything else in its threads."""

    def __init__(self, completion: Callable[..., Any]) -> None:
        super().__init__(thread_name_prefix="asyncio")
        self._completion = completion

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any
               ) -> Future[Any]:
        if _building.get() and self._is_build(fn):
            done: Future[Any] = Future()
            try:
                done.set_result(fn(*args, **kwargs))
            except Exception as exc:              # the awaiting caller gets it, as before
                done.set_exception(exc)
            return done
        return super().submit(fn, *args, **kwargs)

    def _is_build(self, fn: Callable[..., Any]) -> bool:
        # litellm: partial(ctx.run, partial(completion, **kwargs))
        inner = fn.args[0] if isinstance(fn, functools.partial) and fn.args else None
        return isinstance(inner, functools.partial) and inner.func is self._completion


def inline_for(model: str, litellm: Any) -> contextvars.Token[bool] | None:
    """Before awaiting ``litellm.acompletion`` for ``model``: let its building run in
    this loop if the provider allows it (the token to ``done`` with after), else None."""
    if model.split("/", 1)[0] not in INLINE_PREFIXES:
        return None
    loop = asyncio.get_running_loop()
    if loop not in _installed:
        completion = getattr(getattr(litellm, "main", None), "completion", None)
        if completion is None:
            return None
        old = getattr(loop, "_default_executor", None)
        loop.set_default_executor(InlineBuild(completion))
        _installed.add(loop)
        if old is not None:                   # made by an earlier run_in_executor
            old.shutdown(wait=False)
    return _building.set(True)


def done(token: contextvars.Token[bool] | None) -> None:
    if token is not None:
        _building.reset(token)
