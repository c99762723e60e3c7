"""A small HTTP/1.1 server on asyncio streams, the base of the fake model servers.

It runs in the test's own event loop (no thread), keeps connections alive, streams server-sent
events with chunked encoding, and records every request. Subclasses speak a vendor's wire format.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from http import HTTPStatus
from types import TracebackType
from typing import Any, Literal, Self

from .script import Fail, Hang, Malformed, Reply, Step

ToolSupport = Literal["supported", "refused", "ignored"]
"""What a fake server does with the ``tools`` of a request: lets the script call them, refuses
every request that carries them (400, like Ollama or llama.cpp for a model without tool support),
or ignores them (scripted tool calls are dropped, as from a server that never showed the model
its tools)."""

TOOLS_REFUSAL = "registry.ollama.ai/library/gemma:2b does not support tools"


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it; header names are lower-cased."""

    method: str
    path: str
    headers: dict[str, str]
    raw_body: bytes
    body: Any = None
    """The parsed JSON body, or None when it was empty or not JSON."""
    connection: int = 0
    """Which TCP connection carried it, numbered from 1 in order of arrival."""

    @property
    def json(self) -> dict[str, Any]:
        if not isinstance(self.body, dict):
            raise AssertionError(f"request body is not a JSON object: {self.raw_body[:200]!r}")
        return self.body


@dataclass(frozen=True)
class HttpResponse:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class WaitFor:
    """Inside an event stream: pause until ``event`` is set."""

    event: asyncio.Event


@dataclass(frozen=True)
class DropConnection:
    """Inside an event stream: close the connection without finishing the body."""


@dataclass(frozen=True)
class EventStream:
    """A ``text/event-stream`` body sent frame by frame, with chunked transfer encoding;
    ``interval`` seconds before each frame after the first."""

    frames: tuple[bytes | WaitFor | DropConnection, ...]
    headers: tuple[tuple[str, str], ...] = ()
    interval: float = 0.0


Action = HttpResponse | EventStream | Hang


def json_response(
    status: int, payload: object, headers: tuple[tuple[str, str], ...] = ()
) -> HttpResponse:
    return HttpResponse(status, json.dumps(payload).encode(), headers=headers)


def sse_frame(data: object, event: str | None = None) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data)
    prefix = f"event: {event}\n" if event else ""
    return f"{prefix}data: {text}\n\n".encode()


class FakeModelServer:
    """Base of the fake vendors: a queue of scripted steps, a record of requests, one port."""

    vendor = "fake"
    api_path = "/"

    def __init__(
        self,
        *,
        api_key: str | None = None,
        tools: ToolSupport = "supported",
        tools_refusal: str = TOOLS_REFUSAL,
    ) -> None:
        self.api_key = api_key
        """When set, requests that do not carry this key are answered 401."""
        self.tools = tools
        self.tools_refusal = tools_refusal
        """The message of the 400 answer when ``tools`` is ``"refused"``."""
        self.requests: list[RecordedRequest] = []
        self.responder: Callable[[RecordedRequest], Step] | None = None
        """What to do when the queue is empty; the default echoes the last user message."""
        self._steps: deque[Step] = deque()
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()
        self._connection_count = 0
        self._arrived = asyncio.Condition()

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)

    async def aclose(self) -> None:
        """Stop listening and cut every open connection, including hanging ones."""
        if self._server is None:
            return
        server, self._server = self._server, None
        server.close()
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)
        await server.wait_closed()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("server not started")
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What the vendor's SDK takes as ``base_url``."""
        return self.root_url

    # -- scripting ---------------------------------------------------------------------------

    def enqueue(self, *steps: Step) -> None:
        """Answer the next requests with ``steps``, in order."""
        self._steps.extend(steps)

    @property
    def pending(self) -> int:
        """Scripted steps not used yet."""
        return len(self._steps)

    async def wait_for_requests(self, count: int) -> None:
        """Return once at least ``count`` requests have arrived."""
        async with self._arrived:
            await self._arrived.wait_for(lambda: len(self.requests) >= count)

    @property
    def last(self) -> RecordedRequest:
        if not self.requests:
            raise AssertionError("no request received")
        return self.requests[-1]

    # -- vendor hooks --------------------------------------------------------------------------

    def is_authorized(self, request: RecordedRequest) -> bool:
        return True

    def last_user_text(self, request: RecordedRequest) -> str:
        return ""

    def render(self, step: Reply | Fail | Malformed, request: RecordedRequest) -> Action:
        raise NotImplementedError

    # -- HTTP ------------------------------------------------------------------------------------

    def _next_step(self, request: RecordedRequest) -> Step:
        if self._steps:
            return self._steps.popleft()
        if self.responder is not None:
            return self.responder(request)
        return Reply(f"echo: {self.last_user_text(request)}")

    def _action_for(self, request: RecordedRequest) -> Action:
        if request.method != "POST" or request.path.split("?")[0] != self.api_path:
            return json_response(404, {"error": {"message": f"no route {request.path}"}})
        if not self.is_authorized(request):
            return self.render(Fail.unauthorized(), request)
        offered_tools = isinstance(request.body, dict) and bool(request.body.get("tools"))
        if self.tools == "refused" and offered_tools:
            # Refused before the script is consulted: the queued step answers the retry.
            return self.render(Fail.bad_request(self.tools_refusal), request)
        step = self._next_step(request)
        if isinstance(step, Hang):
            return step
        if self.tools == "ignored" and isinstance(step, Reply):
            step = replace(step, tool_calls=())
        return self.render(step, request)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self._connection_count += 1
        connection = self._connection_count
        try:
            while True:
                request = await _read_request(reader, connection)
                if request is None:
                    break
                self.requests.append(request)
                async with self._arrived:
                    self._arrived.notify_all()
                keep_alive = await _send(self._action_for(request), reader, writer)
                if not keep_alive or request.headers.get("connection", "").lower() == "close":
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with suppress(ConnectionError):
                await writer.wait_closed()


async def _read_request(reader: asyncio.StreamReader, connection: int) -> RecordedRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _version = lines[0].split(" ", 2)
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    if headers.get("transfer-encoding", "").lower() == "chunked":
        raw = await _read_chunked(reader)
    else:
        raw = await reader.readexactly(int(headers.get("content-length", "0")))
    body: Any = None
    if raw:
        with suppress(ValueError):
            body = json.loads(raw)
    return RecordedRequest(method, path, headers, raw, body, connection)


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    parts: list[bytes] = []
    while True:
        size = int((await reader.readline()).split(b";")[0].strip(), 16)
        if size == 0:
            await reader.readline()
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readline()


def _status_line(status: int) -> str:
    try:
        reason = HTTPStatus(status).phrase
    except ValueError:
        reason = "Overloaded" if status == 529 else "Unknown"
    return f"HTTP/1.1 {status} {reason}\r\n"


def _head(status: int, headers: list[tuple[str, str]]) -> bytes:
    lines = [_status_line(status), *(f"{name}: {value}\r\n" for name, value in headers), "\r\n"]
    return "".join(lines).encode("latin-1")


async def _send(action: Action, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
    """Write the response; False when the connection must be closed afterwards."""
    if isinstance(action, Hang):
        # Wait for the client to give up (EOF) or the server to shut down (cancellation).
        await reader.read()
        return False
    if isinstance(action, HttpResponse):
        headers = [
            ("content-type", action.content_type),
            ("content-length", str(len(action.body))),
            *action.headers,
        ]
        writer.write(_head(action.status, headers) + action.body)
        await writer.drain()
        return True
    headers = [
        ("content-type", "text/event-stream"),
        ("cache-control", "no-cache"),
        ("transfer-encoding", "chunked"),
        *action.headers,
    ]
    writer.write(_head(200, headers))
    for position, frame in enumerate(action.frames):
        if action.interval and position:
            await writer.drain()
            # A server's own pace: the trickle is what the client under test must bound.
            await asyncio.sleep(action.interval)
        if isinstance(frame, WaitFor):
            await writer.drain()
            await frame.event.wait()
            continue
        if isinstance(frame, DropConnection):
            await writer.drain()
            return False
        writer.write(b"%x\r\n%s\r\n" % (len(frame), frame))
        await writer.drain()
    writer.write(b"0\r\n\r\n")
    await writer.drain()
    return True
