"""A started GatewayChannel on 127.0.0.1:0 with a recording handler that answers like the router
(deltas, then a reply), plus small protocol and HTTP client helpers for the gateway tests."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from fakes.words_only import words_only
from gateway_daemon import serving_daemon
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from flynn.channels.gateway import GatewayChannel
from flynn.daemon import Daemon
from flynn.errors import SessionBusy
from flynn.messages import InboundMessage, OutboundMessage
from flynn.settings import GatewaySettings, Settings

TOKEN = "s3cret-token-for-tests"
TIMEOUT = 5.0


@dataclass
class RecordingHandler:
    """The router's intake as the gateway sees it. By the text it receives: ``busy`` raises
    SessionBusy, ``crash`` raises RuntimeError, ``fail`` answers with an llm_unavailable
    error, ``hold`` records without answering; anything else streams ``echo: <text>``."""

    channel: GatewayChannel | None = None
    received: asyncio.Queue[InboundMessage] = field(default_factory=asyncio.Queue)

    async def __call__(self, message: InboundMessage) -> None:
        self.received.put_nowait(message)
        if message.text == "busy":
            raise SessionBusy("inbox full")
        if message.text == "crash":
            raise RuntimeError("intake broke")
        if message.text == "hold":
            return
        assert self.channel is not None
        key = message.session_key
        # As the router answers: the message's id and its reply handle come back every time.
        answer = partial(
            OutboundMessage,
            key,
            reply_to=message.message_id,
            reply_handle=message.reply_handle,
        )
        if message.text == "fail":
            await self.channel.send(
                answer("the model is unavailable", error_code="llm_unavailable")
            )
            return
        await self.channel.send(answer("echo: ", final=False))
        await self.channel.send(answer(message.text, final=False))
        await self.channel.send(answer(f"echo: {message.text}"))

    async def next(self) -> InboundMessage:
        async with asyncio.timeout(TIMEOUT):
            return await self.received.get()


@dataclass
class Gateway:
    channel: GatewayChannel
    handler: RecordingHandler
    state: dict[str, object]
    task: asyncio.Task[None]
    """The task running ``channel.run``."""

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.channel.bound_port}/ws"

    @property
    def http_base(self) -> str:
        return f"http://127.0.0.1:{self.channel.bound_port}"

    @contextlib.asynccontextmanager
    async def client(
        self,
        client_id: str = "tab",
        *,
        hello: bool = True,
        token: str = TOKEN,
        person: str | None = None,
        protocol: int = 1,
        **options: Any,
    ) -> AsyncIterator[ClientConnection]:
        """A connected client; after a hello (in ``protocol``) that got its ``ready`` unless
        ``hello=False``. With a person's ``token``, ``person`` is whom the ready must name.
        ``options`` go to websockets' ``connect``."""
        async with connect(self.url, compression=None, **options) as ws:
            if hello:
                frame: dict[str, Any] = {"type": "hello", "token": token, "client_id": client_id}
                key = client_id if person is None else f"{person}@{client_id}"
                expected: dict[str, Any] = {
                    "type": "ready",
                    "session": f"gateway:{key}",
                    "person": person,
                }
                if protocol > 1:
                    frame["protocol"] = expected["protocol"] = protocol
                await ws.send(json.dumps(frame))
                ready = await recv(ws)
                assert ready == expected
            yield ws

    async def http(self, method: str, path: str) -> tuple[int, dict[str, str], bytes]:
        """One plain HTTP/1.1 request; the status, lower-cased headers and body."""
        port = self.channel.bound_port
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            async with asyncio.timeout(TIMEOUT):
                raw = await reader.read()
        finally:
            writer.close()
            await writer.wait_closed()
        head, _, body = raw.partition(b"\r\n\r\n")
        status_line, *lines = head.decode().split("\r\n")
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        return int(status_line.split()[1]), headers, body


@contextlib.asynccontextmanager
async def running_gateway(
    *, max_message_bytes: int = 65_536, trusted_proxies: tuple[str, ...] = (), **options: Any
) -> AsyncIterator[Gateway]:
    """A GatewayChannel serving on an ephemeral port until the block exits."""
    state: dict[str, object] = {"ready": True, "channels": {"gateway": {"connected": True}}}
    settings = GatewaySettings.model_validate(
        {
            "host": "127.0.0.1",
            "port": 0,
            "max_message_bytes": max_message_bytes,
            "trusted_proxies": list(trusted_proxies),
        }
    )
    channel = GatewayChannel(settings, token=TOKEN, readiness=lambda: state, **options)
    handler = RecordingHandler(channel)
    task = asyncio.create_task(channel.run(handler))
    started = asyncio.create_task(channel.started.wait())
    try:
        await asyncio.wait({task, started}, return_when=asyncio.FIRST_COMPLETED)
        started.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await started
        if task.done():
            task.result()
        yield Gateway(channel, handler, state, task)
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def fix_socket_buffer(transport: asyncio.BaseTransport, option: int) -> None:
    """Sets a connected socket's kernel buffer (``socket.SO_RCVBUF`` or ``SO_SNDBUF``) to 16 KiB,
    which also stops the kernel growing it: a peer that stops reading holds up a send soon."""
    transport.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, option, 16_384)


async def recv(ws: ClientConnection) -> Mapping[str, Any]:
    async with asyncio.timeout(TIMEOUT):
        frame = json.loads(await ws.recv())
    assert isinstance(frame, dict)
    return frame


async def send(ws: ClientConnection, frame: Mapping[str, Any]) -> None:
    await ws.send(json.dumps(frame))


async def recv_close(ws: ClientConnection) -> int | None:
    """Reads (and drops) frames until the server closes; the close code it sent."""
    async with asyncio.timeout(TIMEOUT):
        with contextlib.suppress(ConnectionClosed):
            while True:
                await ws.recv()
    return ws.close_code


async def final_answer(ws: ClientConnection, frame: Mapping[str, Any]) -> dict[str, Any]:
    """Sends ``frame`` and returns its final answer (reply or error), skipping deltas."""
    await ws.send(json.dumps(frame))
    async with asyncio.timeout(10):
        while True:
            answer = json.loads(await ws.recv())
            if answer.get("id") == frame["id"] and answer["type"] in ("reply", "error"):
                return dict(answer)


@contextlib.asynccontextmanager
async def running_daemon(settings: Settings) -> AsyncIterator[int]:
    """The whole daemon in-process until the block exits (then stopped, and it must exit 0);
    yields its gateway's port."""
    async with serving_daemon(
        Daemon(words_only(settings), {}, announce=lambda line: None)
    ) as daemon:
        yield gateway_port(daemon)


def gateway_port(daemon: Daemon) -> int:
    assert daemon.service is not None
    port = daemon.service.channels["gateway"].bound_port  # type: ignore[attr-defined]
    assert isinstance(port, int)
    return port
