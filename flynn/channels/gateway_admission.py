"""Gateway connections before ``hello``: how many may wait at once, from one address and in all,
and which one makes room when a cap is reached (the oldest; ``GatewayChannel`` says why).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, OrderedDict
from dataclasses import dataclass

import structlog
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from flynn.channels.gateway_frames import error_frame

log = structlog.get_logger(__name__)


@dataclass(slots=True)
class Waiting:
    """A connection waiting for its hello: where from, and the deadline that ends the wait."""

    address: str
    deadline: asyncio.Timeout | None = None
    is_evicted: bool = False

    def evict(self) -> None:
        """Ends the wait now; the connection's own task then refuses it."""
        self.is_evicted = True
        if self.deadline is not None:
            self.deadline.reschedule(asyncio.get_running_loop().time())


class WaitingRoom:
    """The connections that have not said hello yet, oldest first: at most ``max_waiting``, and
    ``max_per_address`` from one address."""

    def __init__(self, *, max_waiting: int, max_per_address: int) -> None:
        self._max_waiting = max_waiting
        self._max_per_address = max_per_address
        self._waiting: OrderedDict[ServerConnection, Waiting] = OrderedDict()
        self._per_address: Counter[str] = Counter()

    def __len__(self) -> int:
        return len(self._waiting)

    def admit(self, ws: ServerConnection, waiting: Waiting) -> None:
        """Registers ``ws`` as waiting for hello, first pushing out the oldest waiting connection
        of its address, or of all, when a cap is reached."""
        address = waiting.address
        oldest: ServerConnection | None = None
        if self._per_address[address] >= self._max_per_address:
            oldest = next(c for c, w in self._waiting.items() if w.address == address)
        elif len(self._waiting) >= self._max_waiting:
            oldest = next(iter(self._waiting))
        if oldest is not None:
            evicted = self._waiting[oldest]
            self.release(oldest, evicted)
            evicted.evict()
            log.info("gateway.waiting_evicted", peer=evicted.address, waiting=len(self._waiting))
        self._waiting[ws] = waiting
        self._per_address[address] += 1

    def release(self, ws: ServerConnection, waiting: Waiting) -> None:
        """``ws`` no longer waits (it said hello, was refused, or went away)."""
        if self._waiting.pop(ws, None) is not None:
            self._per_address[waiting.address] -= 1
            if not self._per_address[waiting.address]:
                del self._per_address[waiting.address]


async def refuse(ws: ServerConnection, code: str, message: str, close_code: int) -> None:
    """Answers with an error frame and closes; a peer already gone is no error."""
    with contextlib.suppress(ConnectionClosed):
        await ws.send(error_frame(code, message))
        await ws.close(close_code, message)


def peer(ws: ServerConnection) -> str:
    address = ws.remote_address
    return str(address[0]) if address else "?"
