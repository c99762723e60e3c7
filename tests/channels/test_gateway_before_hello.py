"""GatewayChannel before ``hello``: hostile connections that never authenticate (silent floods,
huge partial frames) cost little and never keep a legitimate client out."""

from __future__ import annotations

import contextlib
import json
import os
import struct
from collections.abc import AsyncIterator

import pytest
import structlog
from gateway_harness import TOKEN, Gateway, recv, recv_close, running_gateway, send
from websockets.asyncio.client import ClientConnection, connect

from flynn.errors import ConfigError
from flynn.settings import load_settings


@contextlib.asynccontextmanager
async def silent_clients(
    gateway: Gateway, count: int, *, address: str = "127.0.0.1", forwarded_for: str | None = None
) -> AsyncIterator[list[ClientConnection]]:
    """``count`` connections from ``address`` (sending ``X-Forwarded-For: forwarded_for`` when
    given) that complete the WebSocket handshake and then say nothing, opened one after the
    other (so the first is the oldest)."""
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for is not None else None
    async with contextlib.AsyncExitStack() as stack:
        clients = [
            await stack.enter_async_context(
                connect(
                    gateway.url,
                    compression=None,
                    local_addr=(address, 0),
                    additional_headers=headers,
                )
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


async def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_cap() -> None:
    # Behind a reverse proxy every connection comes from the proxy's address: without
    # trusted_proxies the per-address cap would be the cap of everybody together.
    async with (
        running_gateway(
            max_unauthenticated_per_address=2, trusted_proxies=("127.0.0.2",)
        ) as gateway,
        silent_clients(gateway, 1, address="127.0.0.2", forwarded_for="203.0.113.1") as ana,
        silent_clients(gateway, 1, address="127.0.0.2", forwarded_for="203.0.113.2") as bo,
        silent_clients(gateway, 1, address="127.0.0.2", forwarded_for="203.0.113.3") as cy,
        # Two more from Ana's address: the third of hers pushes out her oldest, nobody else's.
        silent_clients(gateway, 2, address="127.0.0.2", forwarded_for="203.0.113.1"),
    ):
        assert await recv_close(ana[0]) == 1013
        assert (bo[0].close_code, cy[0].close_code) == (None, None)


async def test_an_untrusted_peer_cannot_choose_its_address_with_the_header() -> None:
    async with (
        running_gateway(
            max_unauthenticated_per_address=2, trusted_proxies=("127.0.0.2",)
        ) as gateway,
        silent_clients(gateway, 1, address="127.0.0.3", forwarded_for="203.0.113.1") as first,
        silent_clients(gateway, 2, address="127.0.0.3", forwarded_for="203.0.113.2"),
    ):
        assert await recv_close(first[0]) == 1013  # all three count as 127.0.0.3


@pytest.mark.parametrize(
    ("peer", "trusted", "forwarded_for", "seen_as"),
    [
        # The proxy appends the address it saw; whatever the client wrote stands left of it.
        ("127.0.0.2", ("127.0.0.2",), "198.51.100.66, 203.0.113.9", "203.0.113.9"),
        # A chain of our own proxies: the rightmost address that is not one of them.
        (
            "127.0.0.2",
            ("127.0.0.0/8", "10.0.0.0/8"),
            "6.6.6.6, 203.0.113.9, 10.1.2.3",
            "203.0.113.9",
        ),
        ("127.0.0.2", ("127.0.0.2",), "[2001:db8::7]:4711", "2001:db8::7"),
        ("127.0.0.2", ("127.0.0.2",), "203.0.113.9:4711", "203.0.113.9"),
        # Not an address where the client should be: the proxy's own address, not a guess.
        ("127.0.0.2", ("127.0.0.2",), "unknown", "127.0.0.2"),
        ("127.0.0.3", ("127.0.0.2",), "203.0.113.9", "127.0.0.3"),
        ("127.0.0.2", (), "203.0.113.9", "127.0.0.2"),
    ],
)
async def test_the_client_address_is_taken_from_the_header_for_trusted_proxies_only(
    peer: str, trusted: tuple[str, ...], forwarded_for: str, seen_as: str
) -> None:
    async with running_gateway(trusted_proxies=trusted) as gateway:
        with structlog.testing.capture_logs() as logs:
            async with connect(
                gateway.url,
                compression=None,
                local_addr=(peer, 0),
                additional_headers={"X-Forwarded-For": forwarded_for},
            ) as ws:
                await send(ws, {"type": "hello", "token": "not-the-token", "client_id": "x"})
                assert (await recv(ws))["code"] == "unauthorized"
        [refused] = [entry for entry in logs if entry["event"] == "gateway.unauthorized"]
        assert refused["peer"] == seen_as


def test_trusted_proxies_must_be_addresses_or_networks() -> None:
    for bad in (["nope"], ["10.0.0.5/8"], "10.0.0.1"):
        with pytest.raises(ConfigError, match=r"channels\.gateway\.trusted_proxies"):
            load_settings({"channels": {"gateway": {"trusted_proxies": bad}}})
