"""The garbage collector, once a process holds what it keeps for the whole run.

CPython's collector walks every tracked object on each full pass. A vendbench process
keeps a large heap that never becomes garbage (litellm's import alone leaves ~380,000
objects; the scenario modules, numpy and pydantic ~47,000 more) and allocates fast (each
exchange and each simulated day builds and drops thousands of objects), so full passes
came often and cost much: measured, a busy worker made 10 in a one-minute run (six while
it imported litellm) at 0.3-0.4 s each, each one stalling its event loop, and a 180-day
episode one of ~0.1 s.

``settle`` freezes what exists (``gc.freeze``: the permanent generation, never walked,
still freed when its reference count falls to zero) and makes full passes ten times
rarer than CPython's default. Call it where a process holds what it will keep, not in a
loop: an object frozen alive that later dies only as part of a reference cycle is never
reclaimed.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

# second-generation passes between full ones (CPython's default is 10); a full pass also
# waits until the objects promoted since the last one are a quarter of the old ones
FULL_PASS_EVERY = 100


def settle(collect: bool = True) -> None:
    """Collect what is garbage now (``collect``: a full pass, 0.4 s over litellm's heap),
    freeze the rest out of the collector's walks and make full passes rarer."""
    if collect:
        gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, FULL_PASS_EVERY)


@contextmanager
def loading() -> Iterator[None]:
    """Load what the process keeps (an import): no collection meanwhile, since the load
    makes (almost) no garbage but its allocations would start full passes over the growing
    heap (six while litellm is imported, about 1.5 s of CPU), then ``settle`` without one."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
    settle(collect=False)
