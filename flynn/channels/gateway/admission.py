"""Gateway connections before ``hello``: where each comes from (behind a trusted reverse proxy:
the client ``X-Forwarded-For`` names), how many may wait at once, from one address and in all,
and which one makes room when a cap is reached (the oldest; ``GatewayChannel`` says why).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter, OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from ipaddress import IPv4Address, IPv4Network, IPv6Address, IPv6Network, ip_address

import structlog
from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from flynn.channels.gateway.protocol import error_frame

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


Network = IPv4Network | IPv6Network


def client_address(ws: ServerConnection, trusted_proxies: Sequence[Network]) -> str:
    """Where a connection comes from, for the per-address caps: its peer's address; or, when
    the peer is one of ``trusted_proxies``, the rightmost address of ``X-Forwarded-For`` that is
    not a trusted proxy itself (those left of it were written by the client, and prove
    nothing). The peer's address when the header is missing or that entry is not an address."""
    direct = peer(ws)
    if not trusted_proxies or not _is_trusted(_parse_address(direct), trusted_proxies):
        return direct
    request = ws.request
    values = request.headers.get_all("X-Forwarded-For") if request is not None else []
    hops = [hop.strip() for value in values for hop in value.split(",")]
    for hop in reversed(hops):
        address = _parse_address(hop)
        if address is None:
            return direct
        if not _is_trusted(address, trusted_proxies):
            return str(address)
    # Every hop is a proxy of ours: the leftmost is as close to the client as we can tell.
    first = _parse_address(hops[0]) if hops else None
    return str(first) if first is not None else direct


def _is_trusted(address: IPv4Address | IPv6Address | None, networks: Sequence[Network]) -> bool:
    return address is not None and any(address in network for network in networks)


def _parse_address(text: str) -> IPv4Address | IPv6Address | None:
    """An address as ``X-Forwarded-For`` or a socket gives it: bare, ``1.2.3.4:port`` or
    ``[v6]:port``; an IPv4-mapped IPv6 address as its IPv4 one. None when it is not one."""
    if text.startswith("[") and "]" in text:
        text = text[1 : text.index("]")]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        address = ip_address(text)
    except ValueError:
        return None
    if isinstance(address, IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address
