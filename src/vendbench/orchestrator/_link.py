"""Framed messages between the scheduler and its worker processes.

A frame is a 4-byte little-endian length and a pickle of one message (``_messages``).
Both ends are asyncio streams, so neither side blocks its loop, and either side sees
the other's death as end-of-stream.
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

    def send(self, message: Any) -> None:
        """Queue a message; never waits (the other end drains its pipe continuously)."""
        if self._writer.is_closing():
            raise LinkClosed("the link is closed")
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self._writer.write(_HEADER.pack(len(data)) + data)

    async def recv(self) -> Any:
        try:
            size, = _HEADER.unpack(await self._reader.readexactly(_HEADER.size))
            return pickle.loads(await self._reader.readexactly(size))
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise LinkClosed("the other end closed the link") from exc

    def close(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()
