"""GatewayChannel against a real websockets client: protocol v1, limits, outbox, HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest
import structlog
from gateway_harness import (
    TOKEN,
    Gateway,
    fix_socket_buffer,
    recv,
    recv_close,
    running_gateway,
    send,
)
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from flynn.channels.gateway import GatewayChannel
from flynn.channels.gateway.protocol import FrameReply
from flynn.commands import parse_command
from flynn.messages import Delivery, OutboundMessage, PushTiming, SessionKey
from flynn.settings import GatewaySettings


@pytest.fixture
async def gateway() -> AsyncIterator[Gateway]:
    async with running_gateway() as running:
        yield running


# Hello


async def test_hello_gets_ready_and_a_message_streams_back(gateway: Gateway) -> None:
    async with gateway.client("laptop") as ws:
        await send(ws, {"type": "message", "id": "c1", "text": "hi there"})
        inbound = await gateway.handler.next()
        assert (inbound.channel, inbound.chat_id, inbound.sender_id) == (
            "gateway",
            "laptop",
            "laptop",
        )
        assert inbound.text == "hi there"
        assert (inbound.chat_id, inbound.message_id) == ("laptop", "c1")
        assert str(inbound.session_key) == "gateway:laptop"
        assert await recv(ws) == {"type": "delta", "id": "c1", "text": "echo: "}
        assert await recv(ws) == {"type": "delta", "id": "c1", "text": "hi there"}
        assert await recv(ws) == {
            "type": "reply",
            "id": "c1",
            "text": "echo: hi there",
            "html": "<p>echo: hi there</p>\n",
        }
    assert gateway.channel.status().last_inbound == inbound.received_at


@pytest.mark.parametrize(
    "hello",
    [
        {"type": "hello", "token": "wrong", "client_id": "tab"},
        {"type": "hello", "client_id": "tab"},
        {"type": "hello", "token": 42, "client_id": "tab"},
        {"type": "hello", "token": "tökén", "client_id": "tab"},
        {"type": "message", "id": "c1", "text": "before hello"},
        ["hello"],
    ],
)
async def test_anything_but_a_valid_hello_is_unauthorized(gateway: Gateway, hello: object) -> None:
    async with gateway.client(hello=False) as ws:
        await ws.send(json.dumps(hello))
        error = await recv(ws)
        assert error["type"] == "error"
        assert error["code"] == "unauthorized"
        assert await recv_close(ws) == 4401
    assert gateway.handler.received.empty()


async def test_non_json_first_frame_is_unauthorized(gateway: Gateway) -> None:
    async with gateway.client(hello=False) as ws:
        await ws.send("not json")
        assert (await recv(ws))["code"] == "unauthorized"
        assert await recv_close(ws) == 4401


@pytest.mark.parametrize("client_id", ["", "has space", "x" * 129, 7, None])
async def test_bad_client_id_is_a_bad_request(gateway: Gateway, client_id: object) -> None:
    async with gateway.client(hello=False) as ws:
        await send(ws, {"type": "hello", "token": TOKEN, "client_id": client_id})
        assert (await recv(ws))["code"] == "bad_request"
        assert await recv_close(ws) == 4400


async def test_client_id_may_use_the_documented_punctuation(gateway: Gateway) -> None:
    async with gateway.client("phone_2.home:a-b") as ws:
        await send(ws, {"type": "message", "id": "c1", "text": "ok"})
        await recv(ws)
        inbound = await gateway.handler.next()
        assert (inbound.chat_id, inbound.message_id) == ("phone_2.home:a-b", "c1")
        assert (await recv(ws))["id"] == "c1"


async def test_idle_socket_without_hello_is_closed() -> None:
    async with running_gateway(hello_timeout=0.05) as gateway, gateway.client(hello=False) as ws:
        assert (await recv(ws))["code"] == "unauthorized"
        assert await recv_close(ws) == 4408


async def test_second_hello_is_a_bad_request(gateway: Gateway) -> None:
    async with gateway.client() as ws:
        await send(ws, {"type": "hello", "token": TOKEN, "client_id": "tab", "id": "h2"})
        assert await recv(ws) == {
            "type": "error",
            "id": "h2",
            "code": "bad_request",
            "message": "This connection has already said hello.",
        }


# Malformed frames keep the connection


@pytest.mark.parametrize(
    ("frame", "echo_id"),
    [
        ("{not json", None),
        ("[1, 2]", None),
        ('"text"', None),
        ('{"id": "x1", "text": "no type"}', "x1"),
        ('{"type": "dance", "id": "x2"}', "x2"),
        ('{"type": 5, "id": "x3"}', "x3"),
        ('{"type": "message", "id": 5, "text": "numeric id"}', None),
        ('{"type": "message", "id": "", "text": "empty id"}', None),
        ('{"type": "message", "text": "no id"}', None),
        ('{"type": "message", "id": "x4", "text": 5}', "x4"),
        ('{"type": "message", "id": "x5", "text": ""}', "x5"),
        ('{"type": "message", "id": "x6"}', "x6"),
        ('{"type": "command", "id": "x7", "name": 5}', "x7"),
        ('{"type": "command", "id": "x8", "name": "status", "arg": 5}', "x8"),
        ('{"type": "command", "id": 9, "name": "status"}', None),
        ("[" * 50_000, None),
    ],
)
async def test_malformed_frames_get_bad_request_and_the_connection_keeps_working(
    gateway: Gateway, frame: str, echo_id: str | None
) -> None:
    async with gateway.client() as ws:
        await ws.send(frame)
        error = await recv(ws)
        assert error["type"] == "error"
        assert error["code"] == "bad_request"
        assert error.get("id") == echo_id
        assert error["message"]
        await send(ws, {"type": "message", "id": "after", "text": "still here"})
        assert (await recv(ws))["type"] == "delta"
    assert (await gateway.handler.next()).text == "still here"
    assert gateway.handler.received.empty()


async def test_binary_frames_are_bad_requests(gateway: Gateway) -> None:
    async with gateway.client() as ws:
        await ws.send(b'{"type": "message", "id": "b1", "text": "bytes"}')
        assert (await recv(ws))["code"] == "bad_request"
        await send(ws, {"type": "message", "id": "c1", "text": "text"})
        assert (await recv(ws))["id"] == "c1"


async def test_unknown_command_is_a_bad_request(gateway: Gateway) -> None:
    async with gateway.client() as ws:
        await send(ws, {"type": "command", "id": "k1", "name": "dance"})
        error = await recv(ws)
        assert (error["code"], error["id"]) == ("bad_request", "k1")
        assert "status" in error["message"]
    assert gateway.handler.received.empty()


# Commands


@pytest.mark.parametrize(
    ("frame", "text"),
    [
        ({"name": "new"}, "/new"),
        ({"name": "reset"}, "/reset"),
        ({"name": "status"}, "/status"),
        ({"name": "compact"}, "/compact"),
        ({"name": "otr", "arg": "on"}, "/otr on"),
        ({"name": "forget", "arg": "  my address  "}, "/forget my address"),
        ({"name": "search", "arg": "cats"}, "/search cats"),
        ({"name": "tier", "arg": "3"}, "/tier 3"),
        ({"name": "help", "arg": ""}, "/help"),
    ],
)
async def test_commands_pass_through_as_slash_text(
    gateway: Gateway, frame: dict[str, str], text: str
) -> None:
    async with gateway.client("cli-1") as ws:
        await send(ws, {"type": "command", "id": "k1", **frame})
        inbound = await gateway.handler.next()
        assert inbound.text == text
        assert inbound.command == parse_command(text)
        assert (inbound.chat_id, inbound.message_id) == ("cli-1", "k1")
        frames = [await recv(ws) for _ in range(3)]
        assert frames[-1] == {
            "type": "reply",
            "id": "k1",
            "text": f"echo: {text}",
            "html": f"<p>echo: {text}</p>\n",
        }


async def test_a_replayed_reply_still_carries_the_clients_frame_id(gateway: Gateway) -> None:
    async with gateway.client("lap:top") as ws:
        await send(ws, {"type": "message", "id": "c:1", "text": "hold"})
        inbound = await gateway.handler.next()
        assert inbound.reply_handle == FrameReply("lap:top", "c:1")
        # After a restart the router has the stored message, without its handle.
        replayed = OutboundMessage(inbound.session_key, "late", reply_to=inbound.message_id)
        await gateway.channel.send(replayed)
        assert await recv(ws) == {
            "type": "reply",
            "id": "c:1",
            "text": "late",
            "html": "<p>late</p>\n",
        }


async def test_command_without_id_gets_a_fresh_one(gateway: Gateway) -> None:
    async with gateway.client("cli-1") as ws:
        await send(ws, {"type": "command", "name": "status"})
        await send(ws, {"type": "command", "name": "status"})
        first, second = await gateway.handler.next(), await gateway.handler.next()
        assert first.message_id.startswith("cmd-")
        assert first.message_id != second.message_id
        replies = [
            frame for frame in [await recv(ws) for _ in range(6)] if frame["type"] == "reply"
        ]
        assert [reply["id"] for reply in replies] == [
            first.message_id,
            second.message_id,
        ]


# Errors from the session side


async def test_session_busy_becomes_a_rate_limited_error(gateway: Gateway) -> None:
    async with gateway.client() as ws:
        await send(ws, {"type": "message", "id": "c9", "text": "busy"})
        assert await recv(ws) == {
            "type": "error",
            "id": "c9",
            "code": "rate_limited",
            "message": "Flynn is still working on your earlier messages; try again in a moment.",
        }
        await send(ws, {"type": "message", "id": "c10", "text": "again"})
        assert (await recv(ws))["id"] == "c10"


async def test_error_replies_carry_their_code(gateway: Gateway) -> None:
    async with gateway.client() as ws:
        await send(ws, {"type": "message", "id": "c1", "text": "fail"})
        assert await recv(ws) == {
            "type": "error",
            "id": "c1",
            "code": "llm_unavailable",
            "message": "the model is unavailable",
        }


async def test_a_crashing_intake_answers_internal_and_keeps_serving(gateway: Gateway) -> None:
    async with gateway.client() as ws:
        await send(ws, {"type": "message", "id": "c1", "text": "crash"})
        error = await recv(ws)
        assert (error["code"], error["id"]) == ("internal", "c1")
        await send(ws, {"type": "message", "id": "c2", "text": "fine"})
        assert (await recv(ws))["id"] == "c2"
    assert gateway.channel.status().last_error == "intake failed: RuntimeError"


# Size limits


async def test_too_large_frames_are_refused_and_the_connection_stays() -> None:
    async with running_gateway(max_message_bytes=1024) as gateway, gateway.client() as ws:
        await send(ws, {"type": "message", "id": "big", "text": "x" * 2000})
        assert await recv(ws) == {
            "type": "error",
            "id": "big",
            "code": "too_large",
            "message": "That message is too long (1 KB max).",
        }
        # 600 characters but 1200 bytes of UTF-8.
        await send(ws, {"type": "message", "id": "wide", "text": "é" * 600})
        assert (await recv(ws))["code"] == "too_large"
        await send(ws, {"type": "message", "id": "ok", "text": "é" * 300})
        assert (await recv(ws))["id"] == "ok"


async def test_frames_above_the_hard_cap_close_the_connection() -> None:
    async with running_gateway(max_message_bytes=1024) as gateway, gateway.client() as ws:
        await ws.send("x" * (2 << 20))
        assert await recv_close(ws) == 1009


# Floods and connection caps


async def test_flood_is_rate_limited_while_another_client_is_served() -> None:
    async with (
        running_gateway(rate_per_second=0.001, burst=3) as gateway,
        gateway.client("flooder") as flooder,
        gateway.client("calm") as calm,
    ):
        for index in range(10):
            await send(flooder, {"type": "message", "id": f"f{index}", "text": "hold"})
        limited = [await recv(flooder) for _ in range(7)]
        assert {(frame["code"], frame["type"]) for frame in limited} == {("rate_limited", "error")}
        assert [frame["id"] for frame in limited] == [f"f{index}" for index in range(3, 10)]
        await send(calm, {"type": "message", "id": "c1", "text": "hello"})
        frames = [await recv(calm) for _ in range(3)]
        assert frames[-1] == {
            "type": "reply",
            "id": "c1",
            "text": "echo: hello",
            "html": "<p>echo: hello</p>\n",
        }
        taken = [await gateway.handler.next() for _ in range(4)]
        assert [message.message_id for message in taken if message.chat_id == "flooder"] == [
            "f0",
            "f1",
            "f2",
        ]


async def test_sustained_flood_closes_the_connection() -> None:
    async with (
        running_gateway(rate_per_second=0.001, burst=1, flood_close_after=20) as gateway,
        gateway.client() as ws,
    ):
        with contextlib.suppress(ConnectionClosed):
            for index in range(40):
                await send(ws, {"type": "message", "id": f"f{index}", "text": "hold"})
        assert await recv_close(ws) == 4429


async def test_connections_per_client_are_capped() -> None:
    async with (
        running_gateway(max_connections_per_client=2) as gateway,
        gateway.client("tab"),
        gateway.client("tab"),
        gateway.client("other"),
        gateway.client("tab", hello=False) as third,
    ):
        await send(third, {"type": "hello", "token": TOKEN, "client_id": "tab"})
        assert (await recv(third))["code"] == "rate_limited"
        assert await recv_close(third) == 4409


# Outbound routing


async def test_every_tab_of_a_client_receives_the_reply(gateway: Gateway) -> None:
    async with gateway.client("me") as first, gateway.client("me") as second:
        await send(first, {"type": "message", "id": "c1", "text": "both"})
        for ws in (first, second):
            frames = [await recv(ws) for _ in range(3)]
            assert [frame["type"] for frame in frames] == ["delta", "delta", "reply"]
            assert {frame["id"] for frame in frames} == {"c1"}


async def test_a_reply_while_the_client_is_away_is_deferred_and_not_kept_here(
    gateway: Gateway,
) -> None:
    """The gateway keeps nothing in memory: the router's durable intake holds the reply and
    offers it again after the client's next hello (the daemon's on_client_ready)."""
    channel = gateway.channel
    key = SessionKey("gateway", "phone")
    async with gateway.client("phone") as ws:
        await send(ws, {"type": "message", "id": "c1", "text": "hold"})
        inbound = await gateway.handler.next()
    # The client is gone (the server may or may not have noticed yet); neither may raise.
    delta = OutboundMessage(key, "lost", reply_to=inbound.message_id, final=False)
    assert (await channel.send(delta)).state in ("deferred", "delivered")
    await _until_gone(channel, "phone")
    reply = OutboundMessage(key, "not kept", reply_to=inbound.message_id)
    assert await channel.send(reply) == Delivery.deferred()
    async with gateway.client("phone") as ws:
        await send(ws, {"type": "message", "id": "c3", "text": "next"})
        assert (await recv(ws))["id"] == "c3"


async def _until_gone(channel: GatewayChannel, client_id: str) -> None:
    """Waits until every connection of ``client_id`` the gateway holds is closed."""
    async with asyncio.timeout(5):
        for connection in channel.connections(client_id):
            await connection.wait_closed()


async def test_a_tab_that_stopped_reading_is_dropped_and_its_replies_not_counted() -> None:
    async with running_gateway(send_timeout=0.1) as gateway:
        key = SessionKey("gateway", "stuck")
        chunk = "z" * 65_536
        states = []
        # The stuck client never reads the server's close frame either: do not wait for it.
        async with gateway.client("stuck", max_queue=1, close_timeout=0) as ws:
            # Kernel buffers of a fixed size on both ends: left to the kernel they grow with the
            # traffic (by megabytes, more or less of them as the machine is busy), and so did the
            # number of sends, each rendered, that it took to fill them.
            fix_socket_buffer(ws.transport, socket.SO_RCVBUF)
            (server_side,) = gateway.channel.connections("stuck")
            fix_socket_buffer(server_side.transport, socket.SO_SNDBUF)
            for index in range(400):
                delivery = await gateway.channel.send(
                    OutboundMessage(key, chunk, reply_to=f"r{index}")
                )
                states.append(delivery.state)
                if states.count("deferred") == 5:
                    break
        assert states[0] == "delivered" and states[-1] == "deferred"
        # Once dropped, nothing more counts as delivered (the router keeps those stored).
        first_deferred = states.index("deferred")
        assert states[first_deferred:] == ["deferred"] * 5


async def test_server_initiated_message_gets_a_server_id(gateway: Gateway) -> None:
    async with gateway.client("me") as ws:
        delivery = await gateway.channel.send(
            OutboundMessage(SessionKey("gateway", "me"), "good morning")
        )
        ids = delivery.ids
        frame = await recv(ws)
        assert frame == {
            "type": "reply",
            "id": ids[0],
            "text": "good morning",
            "html": "<p>good morning</p>\n",
        }
        assert ids[0].startswith("srv-")


# Pushes


def _push(
    text: str, *, client: str = "", push_id: str = "7", recipient: str | None = None
) -> OutboundMessage:
    return OutboundMessage(
        SessionKey("gateway", client), text, push="reminder", push_id=push_id, recipient=recipient
    )


async def test_push_reaches_every_live_tab_of_the_client(gateway: Gateway) -> None:
    first_tab, second_tab, other_client = (
        gateway.client("me"),
        gateway.client("me"),
        gateway.client("someone-else"),
    )
    async with first_tab as first, second_tab as second, other_client as other:
        delivery = await gateway.channel.send(_push("stand up", client="me"))
        assert delivery == Delivery.delivered(["p7"])
        frame = {"type": "push", "id": "p7", "kind": "reminder", "text": "stand up"}
        assert await recv(first) == frame
        assert await recv(second) == frame
        # Nothing went to the other client: its next frame answers its own message.
        await send(other, {"type": "message", "id": "c1", "text": "hi"})
        assert (await recv(other))["id"] == "c1"


async def test_a_late_reminder_says_when_it_was_due_in_the_persons_zone(gateway: Gateway) -> None:
    """The frame's text says it as a chat does (the page labels the kind itself); its documented
    fields stay, and the timing comes as fields of its own too."""
    due, first = datetime(2026, 3, 25, 0, 37, tzinfo=UTC), datetime(2026, 3, 24, 23, 58, tzinfo=UTC)
    missed = PushTiming(due, "Asia/Tokyo", occurrences=3, first_due_at=first)
    async with gateway.client("me") as ws:
        await gateway.channel.send(replace(_push("stretch", client="me"), timing=missed))
        frame = await recv(ws)
    assert frame == {
        "type": "push",
        "id": "p7",
        "kind": "reminder",
        "text": "stretch\n(missed 3 times while you were away: first due "
        "Wed 25 Mar 2026 08:58 (Asia/Tokyo), last Wed 25 Mar 2026 09:37 (Asia/Tokyo))",
        "due_at": "2026-03-25T00:37:00+00:00",
        "timezone": "Asia/Tokyo",
        "late": False,
        "occurrences": 3,
        "first_due_at": "2026-03-24T23:58:00+00:00",
    }


async def test_push_to_a_recipient_needs_no_chat(gateway: Gateway) -> None:
    async with gateway.client("alice-laptop") as ws:
        message = OutboundMessage(
            SessionKey("gateway", ""),
            "weekly summary ready",
            push="distill",
            push_id="12",
            recipient="alice-laptop",
        )
        assert await gateway.channel.send(message) == Delivery.delivered(["p12"])
        assert await recv(ws) == {
            "type": "push",
            "id": "p12",
            "kind": "distill",
            "text": "weekly summary ready",
        }


async def test_push_while_away_is_deferred_and_not_kept(gateway: Gateway) -> None:
    async with gateway.client("phone"):
        pass
    await _until_gone(gateway.channel, "phone")
    assert await gateway.channel.send(_push("nobody home", client="phone")) == Delivery.deferred()
    async with gateway.client("phone") as ws:
        # The durable schedule holds the push, not the gateway: the first frame is our echo.
        await send(ws, {"type": "message", "id": "c1", "text": "back"})
        assert (await recv(ws))["type"] == "delta"


async def test_client_ready_hook_delivers_after_ready_before_the_first_frame() -> None:
    ready_for: list[str] = []

    async def deliver_queued(client_id: str) -> None:
        ready_for.append(client_id)
        kept = OutboundMessage(SessionKey("gateway", client_id), "kept", reply_to="c1")
        assert await channel.send(kept) == Delivery.delivered(["c1"])
        await channel.send(_push("missed you", client=client_id, push_id="3"))

    async with running_gateway(on_client_ready=deliver_queued) as gateway:
        channel = gateway.channel
        async with gateway.client("phone") as ws:
            assert await recv(ws) == {
                "type": "reply",
                "id": "c1",
                "text": "kept",
                "html": "<p>kept</p>\n",
            }
            assert await recv(ws) == {
                "type": "push",
                "id": "p3",
                "kind": "reminder",
                "text": "missed you",
            }
            await send(ws, {"type": "message", "id": "c2", "text": "thanks"})
            assert (await recv(ws))["id"] == "c2"
        assert ready_for == ["phone"]


async def test_a_failing_client_ready_hook_keeps_the_connection() -> None:
    calls: list[str] = []

    async def broken(client_id: str) -> None:
        calls.append(client_id)
        raise RuntimeError("schedule unavailable")

    async with running_gateway(on_client_ready=broken) as gateway:
        with structlog.testing.capture_logs() as logs:
            async with gateway.client("tab") as ws:
                await send(ws, {"type": "message", "id": "c1", "text": "still here?"})
                assert await recv(ws) == {"type": "delta", "id": "c1", "text": "echo: "}
        assert calls == ["tab"]
        [failure] = [entry for entry in logs if entry["event"] == "gateway.client_ready_failed"]
        assert failure["client"] == "tab"


# Lifecycle


async def test_run_reports_status_and_stops_on_cancel() -> None:
    async with running_gateway() as gateway:
        channel = gateway.channel
        assert channel.status().connected
        assert channel.capabilities.can_stream
        assert not channel.capabilities.can_edit
        port = channel.bound_port
        assert port
        async with gateway.client() as ws:
            pass
    assert not channel.status().connected
    assert channel.bound_port is None
    with pytest.raises(OSError):
        async with connect(f"ws://127.0.0.1:{port}/ws"):
            pass
    assert ws.close_code is not None


async def test_open_connections_are_closed_on_stop() -> None:
    async with running_gateway() as gateway, gateway.client() as ws:
        gateway.task.cancel()
        assert await recv_close(ws) == 1001
        assert not gateway.channel.status().connected


async def test_port_in_use_raises() -> None:
    async with running_gateway() as gateway:
        settings = GatewaySettings(host="127.0.0.1", port=gateway.channel.bound_port or 0)
        second = GatewayChannel(settings, token=TOKEN, readiness=dict)
        with pytest.raises(OSError):
            await second.run(gateway.handler)
        assert second.status().last_error is not None
        assert not second.status().connected


def test_an_empty_token_is_refused() -> None:
    with pytest.raises(ValueError, match="token"):
        GatewayChannel(GatewaySettings(), token="", readiness=dict)


# HTTP on the same port


async def test_healthz(gateway: Gateway) -> None:
    status, headers, body = await gateway.http("GET", "/healthz")
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert json.loads(body) == {"status": "ok"}


async def test_readyz_follows_the_readiness_callable(gateway: Gateway) -> None:
    status, _, body = await gateway.http("GET", "/readyz")
    assert status == 200
    assert json.loads(body)["channels"] == {"gateway": {"connected": True}}
    gateway.state["ready"] = False
    status, _, body = await gateway.http("GET", "/readyz")
    assert status == 503
    assert json.loads(body)["ready"] is False


async def test_readyz_without_a_verdict_checks_every_channel(gateway: Gateway) -> None:
    gateway.state.clear()
    gateway.state.update(
        {"channels": {"gateway": {"connected": True}, "telegram": {"connected": False}}}
    )
    assert (await gateway.http("GET", "/readyz"))[0] == 503
    gateway.state["channels"] = {"gateway": {"connected": True}}
    assert (await gateway.http("GET", "/readyz"))[0] == 200


async def test_web_page_is_served_with_a_strict_csp(gateway: Gateway) -> None:
    status, headers, body = await gateway.http("GET", "/")
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    csp = headers["content-security-policy"]
    assert "default-src 'none'" in csp
    assert "script-src 'self'" in csp
    assert "style-src 'self'" in csp
    assert f"ws://127.0.0.1:{gateway.channel.bound_port}" in csp
    assert "unsafe" not in csp
    assert b"<textarea" in body
    for path, kind in [("/app.js", "text/javascript"), ("/app.css", "text/css")]:
        status, headers, body = await gateway.http("GET", path)
        assert status == 200
        assert headers["content-type"].startswith(kind)
        assert body


async def test_both_pages_load_the_shared_connection_script_first(gateway: Gateway) -> None:
    status, headers, body = await gateway.http("GET", "/connection.js")
    assert status == 200
    assert headers["content-type"] == "text/javascript; charset=utf-8"
    assert headers["x-content-type-options"] == "nosniff"
    assert b"window.flynnConnection" in body
    for page, own in [("/", b"app.js"), ("/memory", b"memory.js")]:
        status, headers, html = await gateway.http("GET", page)
        assert status == 200
        # The pages' CSP lets it run: it comes from the page's own origin.
        assert "script-src 'self'" in headers["content-security-policy"]
        shared = html.index(b'<script src="connection.js" defer></script>')
        assert shared < html.index(b'<script src="' + own + b'" defer></script>')


async def test_unknown_paths_and_methods(gateway: Gateway) -> None:
    assert (await gateway.http("GET", "/nope"))[0] == 404
    assert (await gateway.http("GET", "/ws/../etc/passwd"))[0] == 404
    status, headers, _ = await gateway.http("POST", "/")
    assert status == 405
    assert headers["allow"] == "GET"
    # The socket path without an upgrade is not a page.
    assert (await gateway.http("GET", "/ws"))[0] == 426
