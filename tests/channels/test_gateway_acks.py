"""Gateway protocol 2: every final reply and push carries an id and counts as delivered only
once the client acknowledges it; nothing is kept in memory; silent connections are found by
pings. A real websockets client against a started GatewayChannel."""

from __future__ import annotations

import asyncio
import json
import socket

from gateway_harness import (
    TIMEOUT,
    TOKEN,
    fix_socket_buffer,
    recv,
    recv_close,
    running_gateway,
    send,
)
from websockets.asyncio.client import ClientConnection, connect

from flynn.channels.gateway import CLOSE_BAD_HELLO, Acknowledged, GatewayChannel
from flynn.messages import Delivery, OutboundMessage, SessionKey


def _reply(client: str, text: str, reply_to: str) -> OutboundMessage:
    return OutboundMessage(SessionKey("gateway", client), text, reply_to=reply_to)


def _push(client: str, text: str, push_id: str) -> OutboundMessage:
    return OutboundMessage(SessionKey("gateway", client), text, push="reminder", push_id=push_id)


class Acks:
    """An ``on_acknowledged`` hook that records what it hears."""

    def __init__(self) -> None:
        self.heard: asyncio.Queue[Acknowledged] = asyncio.Queue()

    async def __call__(self, ack: Acknowledged) -> None:
        self.heard.put_nowait(ack)

    async def next(self) -> Acknowledged:
        async with asyncio.timeout(5):
            return await self.heard.get()


async def test_a_v2_reply_is_deferred_until_acknowledged_once() -> None:
    acks = Acks()
    async with running_gateway(on_acknowledged=acks) as gateway:
        channel = gateway.channel
        async with (
            gateway.client("phone", protocol=2) as one,
            gateway.client("phone", protocol=2) as two,
        ):
            delivery = await channel.send(_reply("phone", "hello", "c1"))
            assert delivery == Delivery.deferred(["c1"])  # sent, not yet acknowledged
            for tab in (one, two):
                assert (await recv(tab))["id"] == "c1"
            # Offered again before the ack (a schedule round): not sent to them twice.
            assert await channel.send(_reply("phone", "hello", "c1")) == Delivery.deferred(["c1"])
            await send(one, {"type": "ack", "id": "c1"})
            assert await acks.next() == Acknowledged("phone", reply_to="c1")
            await send(two, {"type": "ack", "id": "c1"})  # the other tab's: heard once only
            await send(two, {"type": "message", "id": "c2", "text": "next"})
            assert (await recv(two))["id"] == "c2"  # nothing but our echo came in between
            assert acks.heard.empty()


async def test_a_push_is_acknowledged_by_its_id() -> None:
    acks = Acks()
    async with (
        running_gateway(on_acknowledged=acks) as gateway,
        gateway.client("phone", protocol=2) as ws,
    ):
        delivery = await gateway.channel.send(_push("phone", "stretch", "17"))
        assert delivery == Delivery.deferred(["p17"])
        frame = await recv(ws)
        assert frame == {"type": "push", "id": "p17", "kind": "reminder", "text": "stretch"}
        await send(ws, {"type": "ack", "id": "p17"})
        assert await acks.next() == Acknowledged("phone", push_id="17")


async def test_a_frame_offered_again_just_after_its_ack_is_not_sent_again() -> None:
    """A schedule round that read a push as waiting just before its ``ack`` was recorded offers
    it once more: the client has it, so it is not sent again (and counts as delivered). A
    different frame under an acknowledged id (a message's answer after a notice about it)
    still goes."""
    acks = Acks()
    async with (
        running_gateway(on_acknowledged=acks) as gateway,
        gateway.client("phone", protocol=2) as ws,
    ):
        channel = gateway.channel
        assert await channel.send(_push("phone", "stretch", "17")) == Delivery.deferred(["p17"])
        assert (await recv(ws))["id"] == "p17"
        await send(ws, {"type": "ack", "id": "p17"})
        assert await acks.next() == Acknowledged("phone", push_id="17")
        assert await channel.send(_push("phone", "stretch", "17")) == Delivery.delivered(["p17"])
        notice = OutboundMessage(
            SessionKey("gateway", "phone"), "restarting", reply_to="c1", error_code="internal"
        )
        await channel.send(notice)
        assert (await recv(ws))["type"] == "error"
        await send(ws, {"type": "ack", "id": "c1"})
        await acks.next()
        assert await channel.send(_reply("phone", "the answer", "c1")) == Delivery.deferred(["c1"])
        frame = await recv(ws)  # nothing came between: the push was not sent again
        assert (frame["type"], frame["id"], frame["text"]) == ("reply", "c1", "the answer")


async def test_what_was_not_acknowledged_is_sent_again_on_the_next_connection() -> None:
    async with running_gateway() as gateway:
        channel = gateway.channel
        async with gateway.client("phone", protocol=2) as ws:
            await channel.send(_push("phone", "first", "1"))
            assert (await recv(ws))["id"] == "p1"  # received, never acknowledged
        async with gateway.client("phone", protocol=2) as ws:
            # What the schedule offers after the hello goes to the new connection, same id.
            assert await channel.send(_push("phone", "first", "1")) == Delivery.deferred(["p1"])
            assert (await recv(ws))["id"] == "p1"


class HeldAcks:
    """An ``on_acknowledged`` hook that records what it hears and then waits for ``release``,
    as a database write under way does."""

    def __init__(self) -> None:
        self.heard: list[Acknowledged] = []
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self, ack: Acknowledged) -> None:
        self.heard.append(ack)
        self.entered.set()
        await self.release.wait()


async def _ids_until(ws: ClientConnection, last: str) -> list[str]:
    """The ids of the frames read up to and including the one with id ``last``."""
    ids: list[str] = []
    while not ids or ids[-1] != last:
        ids.append((await recv(ws))["id"])
    return ids


async def test_an_offer_while_the_first_send_of_a_frame_waits_does_not_send_it_again() -> None:
    """Two offers of one push at once (a schedule round, and another worker's word that it
    waits): while the first send waits on a tab slow to read, the second sends nothing."""
    async with running_gateway() as gateway:
        channel = gateway.channel
        async with gateway.client("phone", protocol=2, close_timeout=0) as ws:
            (server_side,) = channel.connections("phone")
            fix_socket_buffer(ws.transport, socket.SO_RCVBUF)
            fix_socket_buffer(server_side.transport, socket.SO_SNDBUF)
            ws.transport.pause_reading()
            # Far more than both kernel buffers hold: the first send waits for the tab to read.
            push = _push("phone", "z" * 512 * 1024, "1")
            offers = [asyncio.create_task(channel.send(push)) for _ in range(2)]
            done, _ = await asyncio.wait(
                offers, timeout=TIMEOUT, return_when=asyncio.FIRST_COMPLETED
            )
            ws.transport.resume_reading()
            assert await asyncio.gather(*offers) == [Delivery.deferred(["p1"])] * 2
            await channel.send(_push("phone", "next", "2"))
            assert await _ids_until(ws, "p2") == ["p1", "p2"]
            assert done == {offers[1]}  # it did not wait for the tab: it sent nothing


async def test_an_offer_while_the_acknowledgement_is_recorded_does_not_send_it_again() -> None:
    acks = HeldAcks()
    async with (
        running_gateway(on_acknowledged=acks) as gateway,
        gateway.client("phone", protocol=2) as ws,
    ):
        channel = gateway.channel
        push = _push("phone", "stretch", "1")
        assert await channel.send(push) == Delivery.deferred(["p1"])
        assert (await recv(ws))["id"] == "p1"
        await send(ws, {"type": "ack", "id": "p1"})
        try:
            async with asyncio.timeout(TIMEOUT):
                await acks.entered.wait()
            # Offered again while the database still says undelivered: the tab has it.
            delivery = await channel.send(push)
        finally:
            acks.release.set()  # else the connection's handler waits for ever, and the stop
        await channel.send(_push("phone", "next", "2"))
        assert await _ids_until(ws, "p2") == ["p2"]
        assert delivery == Delivery.delivered(["p1"])
        assert acks.heard == [Acknowledged("phone", push_id="1")]


async def test_an_offer_read_before_the_acknowledgement_was_recorded_reaches_no_tab() -> None:
    """A round that read the push as undelivered just before the acknowledgement was written
    offers it after: neither the tab that acknowledged it nor the other one gets it again."""
    acks = Acks()
    async with (
        running_gateway(on_acknowledged=acks) as gateway,
        gateway.client("phone", protocol=2) as one,
        gateway.client("phone", protocol=2) as two,
    ):
        push = _push("phone", "stretch", "1")
        assert await gateway.channel.send(push) == Delivery.deferred(["p1"])
        for tab in (one, two):
            assert (await recv(tab))["id"] == "p1"
        await send(one, {"type": "ack", "id": "p1"})
        assert await acks.next() == Acknowledged("phone", push_id="1")
        delivery = await gateway.channel.send(push)
        await gateway.channel.send(_push("phone", "next", "2"))
        for tab in (one, two):
            assert await _ids_until(tab, "p2") == ["p2"]
        assert delivery == Delivery.delivered(["p1"])


async def test_a_message_sent_again_after_its_error_was_acknowledged_gets_its_answer() -> None:
    """A message whose turn failed is answered by an error; sent again under the same id, it
    is run again, and its answer goes even when it is the very same error."""
    async with running_gateway() as gateway, gateway.client("phone", protocol=2) as ws:
        for _ in range(2):
            await send(ws, {"type": "message", "id": "c1", "text": "fail"})
            frame = await recv(ws)
            assert (frame["type"], frame["id"], frame["code"]) == ("error", "c1", "llm_unavailable")
            await send(ws, {"type": "ack", "id": "c1"})


async def test_a_message_sent_again_before_its_reply_was_acknowledged_gets_it_again() -> None:
    """The protocol's promise: a resend of an id whose reply you have not acknowledged gets
    that reply again, on the same connection too (the first may be lost to the page)."""
    async with running_gateway() as gateway, gateway.client("phone", protocol=2) as ws:
        for _ in range(2):
            await send(ws, {"type": "message", "id": "c1", "text": "hi"})
            frame = await recv(ws)
            while frame["type"] == "delta":
                frame = await recv(ws)
            assert (frame["type"], frame["id"], frame["text"]) == ("reply", "c1", "echo: hi")
        await send(ws, {"type": "ack", "id": "c1"})


async def test_a_v1_connection_takes_delivery_as_before() -> None:
    async with (
        running_gateway() as gateway,
        gateway.client("old") as v1,
        gateway.client("old", protocol=2) as v2,
    ):
        delivery = await gateway.channel.send(_reply("old", "hi", "c1"))
        assert delivery == Delivery.delivered(["c1"])
        assert (await recv(v1))["id"] == "c1"
        assert (await recv(v2))["id"] == "c1"


async def test_a_hello_may_ask_for_a_newer_protocol_and_gets_2() -> None:
    async with running_gateway() as gateway, connect(gateway.url) as ws:
        await ws.send(
            json.dumps({"type": "hello", "token": TOKEN, "client_id": "x", "protocol": 7})
        )
        assert await recv(ws) == {
            "type": "ready",
            "session": "gateway:x",
            "protocol": 2,
            "person": None,
        }


async def test_a_hello_with_a_protocol_that_is_not_a_number_is_refused() -> None:
    async with running_gateway() as gateway:
        for protocol in ("2", 0, True, 1.5, None):
            async with connect(gateway.url) as ws:
                hello = {"type": "hello", "token": TOKEN, "client_id": "x", "protocol": protocol}
                await ws.send(json.dumps(hello))
                frame = await recv(ws)
                assert (frame["type"], frame["code"]) == ("error", "bad_request")
                assert await recv_close(ws) == CLOSE_BAD_HELLO


async def test_in_v2_a_client_cannot_name_its_message_like_a_push() -> None:
    async with running_gateway() as gateway, gateway.client("x", protocol=2) as ws:
        await send(ws, {"type": "message", "id": "p17", "text": "hi"})
        frame = await recv(ws)
        assert (frame["type"], frame["code"], frame["id"]) == ("error", "bad_request", "p17")
        await send(ws, {"type": "message", "id": "photo-1", "text": "hi"})  # only p + digit
        assert (await recv(ws))["id"] == "photo-1"


async def test_acks_are_not_rate_limited() -> None:
    """A client coming back to fifty pushes acknowledges fifty frames at once."""
    acks = Acks()
    async with (
        running_gateway(on_acknowledged=acks, burst=5, rate_per_second=1) as gateway,
        gateway.client("phone", protocol=2) as ws,
    ):
        for number in range(50):
            await gateway.channel.send(_push("phone", f"n{number}", str(number)))
        for number in range(50):
            assert (await recv(ws))["id"] == f"p{number}"
            await send(ws, {"type": "ack", "id": f"p{number}"})
        heard = [(await acks.next()).push_id for _ in range(50)]
        assert heard == [str(number) for number in range(50)]


async def test_a_connection_that_went_silent_is_closed_by_pings() -> None:
    """A phone that slept with the page open answers nothing: pings find it, and what is sent
    afterwards is deferred (kept by its owner), not counted as delivered."""
    async with running_gateway(ping_seconds=0.2, close_seconds=0.2) as gateway:
        channel: GatewayChannel = gateway.channel
        async with gateway.client("phone", protocol=2, close_timeout=0) as ws:
            [server_side] = channel.connections("phone")
            ws.transport.pause_reading()  # no more pongs, as from a device that slept
            assert await channel.send(_push("phone", "sent into the void", "1")) == (
                Delivery.deferred(["p1"])  # written, never acknowledged: kept by its owner
            )
            async with asyncio.timeout(5):
                await server_side.wait_closed()
            assert await channel.send(_push("phone", "later", "2")) == Delivery.deferred()
            assert channel.connections("phone") == ()
