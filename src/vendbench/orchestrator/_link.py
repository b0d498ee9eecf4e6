"""Framed messages between the scheduler and its worker processes.

A frame is a 4-byte little-endian length and a pickle of one message (``_messages``).
Both ends are asyncio streams, so neither side blocks its loop, and either side sees
the other's death as end-of-stream.

The frames a loop's callbacks send are written together once they have run (one write,
so one system call and one wake-up of the other end, for what many trials sent in the
same turn of the loop), never later than the loop's next turn, and in the order sent.
What it buys (design §25.1): at zero latency a worker sends 3-4 frames an exchange; each
its own write took about 3 % of a worker's trial loop (py-spy, 50 trials), and as many
wake-ups of the scheduler. In whole runs the saving is within the host's drift between
runs (benchmarks/README.md, session 22).
"""

from __future__ import annotations

import asyncio
import pickle
import struct
from typing import Any

_HEADER = struct.Struct("<I")


class LinkClosed(Exception):
    """The other end has gone (it exited, or closed its stream)."""


class Link:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader, self._writer = reader, writer
        self._pending: list[bytes] = []

    def send(self, message: Any) -> None:
        """Queue a message (pickled now); never waits (the other end drains its pipe
        continuously). It is written once this turn of the loop has run."""
        if self._writer.is_closing():
            raise LinkClosed("the link is closed")
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        if not self._pending:
            asyncio.get_running_loop().call_soon(self._flush)
        self._pending += (_HEADER.pack(len(data)), data)

    def _flush(self) -> None:
        if self._pending and not self._writer.is_closing():
            self._writer.write(b"".join(self._pending))
        self._pending.clear()

    async def recv(self) -> Any:
        try:
            size, = _HEADER.unpack(await self._reader.readexactly(_HEADER.size))
            return pickle.loads(await self._reader.readexactly(size))
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise LinkClosed("the other end closed the link") from exc

    def close(self) -> None:
        self._flush()                         # what was sent goes before the end
        if not self._writer.is_closing():
            self._writer.close()
