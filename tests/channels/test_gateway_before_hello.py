"""GatewayChannel before ``hello``: hostile connections that never authenticate (silent floods,
huge partial frames) cost little and never keep a legitimate client out."""

from __future__ import annotations

import contextlib
import json
import os
import struct
from collections.abc import AsyncIterator

from gateway_harness import TOKEN, Gateway, recv, recv_close, running_gateway, send
from websockets.asyncio.client import ClientConnection, connect


@contextlib.asynccontextmanager
async def silent_clients(
    gateway: Gateway, count: int, *, address: str = "127.0.0.1"
) -> AsyncIterator[list[ClientConnection]]:
    """``count`` connections from ``address`` that complete the WebSocket handshake and then
    say nothing, opened one after the other (so the first is the oldest)."""
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                connect(gateway.url, compression=None, local_addr=(address, 0))
            )
            for _ in range(count)
        ]
        yield clients


def partial_frame(length: int, sent: int) -> bytes:
    """The header of a masked text frame of ``length`` bytes and its first ``sent`` bytes."""
    return b"\x81\xff" + struct.pack("!Q", length) + os.urandom(4) + b"x" * sent


async def test_a_silent_flood_does_not_lock_out_a_client() -> None:
    # The connection cap counts authenticated connections: 300 that never said hello used to
    # fill it and the next legitimate client got 1013.
    async with (
        running_gateway(max_connections=100) as gateway,
        silent_clients(gateway, 300) as flood,
        gateway.client("me") as ws,
    ):
        await send(ws, {"type": "message", "id": "c1", "text": "still here"})
        assert (await gateway.handler.next()).text == "still here"
        # The oldest waiting connections made room; the newest still wait for their hello.
        assert await recv_close(flood[0]) == 1013
        assert flood[-1].close_code is None


async def test_waiting_connections_are_capped_per_address_then_in_total() -> None:
    async with (
        running_gateway(max_unauthenticated=3, max_unauthenticated_per_address=2) as gateway,
        silent_clients(gateway, 2, address="127.0.0.2") as first,
        silent_clients(gateway, 1, address="127.0.0.3") as other,
        # A third from the same address pushes out that address's oldest, nobody else's.
        silent_clients(gateway, 1, address="127.0.0.2"),
    ):
        assert await recv_close(first[0]) == 1013
        assert (first[1].close_code, other[0].close_code) == (None, None)
        # A new address, with three already waiting: the oldest of all goes.
        async with silent_clients(gateway, 1, address="127.0.0.4"):
            assert await recv_close(first[1]) == 1013
            assert other[0].close_code is None


async def test_authenticated_connections_are_capped_at_hello() -> None:
    async with (
        running_gateway(max_connections=2) as gateway,
        silent_clients(gateway, 5),
        gateway.client("one"),
        gateway.client("two"),
        gateway.client(hello=False) as third,
    ):
        await send(third, {"type": "hello", "token": TOKEN, "client_id": "three"})
        assert (await recv(third))["code"] == "rate_limited"
        assert await recv_close(third) == 1013


async def test_a_huge_frame_before_hello_is_refused_without_waiting_for_it() -> None:
    # Half of a 1 MB frame: the server must refuse it from its header, not buffer it.
    async with running_gateway() as gateway, gateway.client(hello=False) as ws:
        ws.transport.write(partial_frame(1_000_000, 500_000))
        assert await recv_close(ws) == 1009


async def test_an_oversized_hello_closes_the_connection() -> None:
    async with running_gateway() as gateway, gateway.client(hello=False) as ws:
        hello = {"type": "hello", "token": TOKEN, "client_id": "tab", "pad": "x" * 5000}
        await ws.send(json.dumps(hello))
        assert await recv_close(ws) == 1009


async def test_after_ready_frames_may_be_as_large_as_messages() -> None:
    async with running_gateway() as gateway, gateway.client("me") as ws:
        text = "y" * 60_000
        await send(ws, {"type": "message", "id": "big", "text": text})
        assert (await gateway.handler.next()).text == text
