"""The link between the scheduler and a worker: frames sent in one turn of the loop go
out in one write, in order, and nothing sent is lost when the link closes (design §25.1)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from vendbench.orchestrator._link import Link, LinkClosed


class Counting:
    """A StreamWriter that counts its writes."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer, self.writes = writer, 0

    def write(self, data: bytes) -> None:
        self.writes += 1
        self._writer.write(data)

    def __getattr__(self, name: str):
        return getattr(self._writer, name)


async def pair() -> tuple[Link, Link, Counting]:
    a, b = socket.socketpair()
    ra, wa = await asyncio.open_connection(sock=a)
    rb, wb = await asyncio.open_connection(sock=b)
    counted = Counting(wa)
    return Link(ra, counted), Link(rb, wb), counted     # type: ignore[arg-type]


def test_what_one_turn_sends_goes_in_one_write_in_order():
    async def main() -> None:
        here, there, counted = await pair()
        for i in range(50):
            here.send(("rows", i, "x" * i))
        assert counted.writes == 0                     # not before the turn has run
        got = [await asyncio.wait_for(there.recv(), 30) for _ in range(50)]
        assert got == [("rows", i, "x" * i) for i in range(50)]
        assert counted.writes == 1
        here.send("later")                             # a later turn: a write of its own
        assert await asyncio.wait_for(there.recv(), 30) == "later"
        assert counted.writes == 2
        here.close()
        there.close()

    asyncio.run(main())


def test_what_was_sent_before_close_arrives_before_the_end():
    async def main() -> None:
        here, there, _ = await pair()
        here.send("last words")
        here.close()                                   # in the same turn as the send
        assert await asyncio.wait_for(there.recv(), 30) == "last words"
        with pytest.raises(LinkClosed):
            await asyncio.wait_for(there.recv(), 30)
        with pytest.raises(LinkClosed):
            here.send("too late")
        there.close()

    asyncio.run(main())
