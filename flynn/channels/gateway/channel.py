"""The gateway channel: its connections from ``hello`` on, protocols 1 and 2
(docs/gateway-protocol.md) at ``/ws``, frames in and out, acknowledgements and pushes, with the
probes and the web pages (``gateway.http``) on the same port; replies carry their Markdown as safe
HTML.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

import structlog
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.protocol import State

from flynn.channels.base import ChannelCapabilities, ChannelStatus, OnMessage, with_timing
from flynn.channels.gateway.admission import Waiting, WaitingRoom, client_address, peer, refuse
from flynn.channels.gateway.auth import ChannelToken, HelloRefused, HelloTokens, PersonTokens
from flynn.channels.gateway.history import PushLog, Transcript, answer_history
from flynn.channels.gateway.http import GatewayHttp
from flynn.channels.gateway.markdown import SafeMarkdown
from flynn.channels.gateway.memory import MemoryBrowser, answer_memory
from flynn.channels.gateway.protocol import (
    Ack,
    ClientText,
    FrameReply,
    HistoryRequest,
    MemoryRequest,
    Rejected,
    attachment_allowance,
    delta_frame,
    error_frame,
    hello_protocol,
    parse_frame,
    parse_json_object,
    peek_id,
    push_frame,
    ready_frame,
    reply_frame,
)
from flynn.errors import SessionBusy, StoreError
from flynn.identity import GatewayClient
from flynn.messages import Delivery, InboundMessage, OutboundMessage
from flynn.settings import GatewaySettings

log = structlog.get_logger(__name__)

CHANNEL = "gateway"

# Close codes: 44xx mirror the HTTP status a REST API would use; 1013 is the standard "try later".
CLOSE_BAD_HELLO = 4400
CLOSE_UNAUTHORIZED = 4401
CLOSE_HELLO_TIMEOUT = 4408
CLOSE_TOO_MANY_TABS = 4409
CLOSE_FLOOD = 4429
CLOSE_SERVER_FULL = 1013

_HELLO_MAX_BYTES = 4096
"""The frame cap before ``hello``: a hello is a token and a client_id, far below this."""
_REFUSE_CLOSE_SECONDS = 1.0
"""How long a connection refused before ``hello`` may take to answer our close frame."""
_TOO_FAST = "You are sending messages too fast; wait a moment and try again."
_BUSY = "Flynn is still working on your earlier messages; try again in a moment."
_NO_DATABASE = (
    "Flynn can't reach its database right now, so it could not take that message; "
    "send it again in a moment."
)

OnClientReady = Callable[[str], Awaitable[None]]
"""Called with a client_id once one of its connections is ready (see ``GatewayChannel``)."""

ACKNOWLEDGED_KEPT = 256
"""Per client, how many acknowledged frames are remembered so they are not sent to it again:
a round that read a push as waiting just before its ``ack`` was recorded offers it once
more, moments later."""

PING_SECONDS = 20.0
"""WebSocket pings every 20 s, each answered within 20 s: a connection that went silent (a
phone that slept with the page open, a cable pulled) stops counting within 40 s and is gone
10 s later (the close handshake's wait), well within a minute."""


@dataclass(frozen=True, slots=True)
class Acknowledged:
    """A protocol 2 client acknowledged a final frame: the reply to its message ``reply_to``
    (whose intake key is ``gateway``, ``client_id``, ``reply_to``), or the push ``push_id``.
    Exactly one of the two is set."""

    client_id: str
    reply_to: str | None = None
    push_id: str | None = None


OnAcknowledged = Callable[[Acknowledged], Awaitable[None]]
"""Records an acknowledgement (the daemon marks the reply or push delivered)."""


@dataclass(slots=True)
class _Client:
    """One authenticated connection: the protocol it speaks, and (protocol 2) the final frames
    sent on it (from before their send starts) and not yet acknowledged, so an offer again does
    not send them twice."""

    ws: ServerConnection
    protocol: int
    sent: set[str] = field(default_factory=set)


@dataclass(frozen=True, slots=True)
class _Awaiting:
    """A final frame sent to a protocol 2 client: what its ``ack`` confirms, and the frame's
    hash (remembered once acknowledged)."""

    confirms: Acknowledged
    frame: int


def _utc_now() -> datetime:
    return datetime.now(UTC)


class GatewayChannel:
    """Serves protocol v1 at ``ws://HOST:PORT/ws`` plus HTTP on the same port.

    One authenticated connection belongs to one ``client_id`` (session ``gateway:<client_id>``);
    a client may hold several (tabs), and every one of them receives the session's replies.
    Nothing is kept here: ``send`` says what became of a final reply or push (``Delivery``),
    and whoever keeps them durably (the router's intake, the schedule's pushes) offers them
    again from ``on_client_ready(client_id)``, awaited on each new connection after ``ready``
    and before the client's first frame is read (so what it sends arrives right after them;
    while it runs, that connection's frames wait). A protocol 1 connection that takes a final
    frame makes it ``delivered``; a protocol 2 one makes it ``deferred`` until the client
    acknowledges it (``ack``), which ``on_acknowledged`` hears. A ``history`` frame is
    answered from ``transcript`` (empty without one), a ``memory`` frame through ``memory``; a
    person's own token is checked at hello through ``person_tokens``; ``token`` is the channel
    token, or how to check one (``ChannelToken``: against a digest every worker reads).

    Before ``hello`` a connection is cheap and short-lived: its frames are capped at 4 KB (a
    larger frame is refused from its header, 1009, never buffered), it has ``hello_timeout``
    seconds to say hello, and at most ``max_unauthenticated`` such connections wait at once,
    ``max_unauthenticated_per_address`` of them from one address. Over either cap the *oldest*
    waiting connection (of that address, else of all) is closed with 1013 to make room: a
    legitimate client says hello within a round trip of connecting, so a flood would have to
    outpace that to push it out, while refusing newcomers would hand the server to whoever
    filled it first (and one address can be everyone behind a proxy). ``max_connections``
    counts authenticated connections only and is checked at hello.

    Close codes: 4400 bad hello, 4401 unauthorized, 4408 no hello in time, 4409 too many
    connections for one client_id, 4429 flooding, 1013 server full or pushed out while waiting
    for hello; 1009 for a frame above the cap (4 KB before hello, the hard cap after).
    """

    def __init__(
        self,
        settings: GatewaySettings,
        *,
        token: str | ChannelToken,
        readiness: Callable[[], Mapping[str, object]],
        clock: Callable[[], datetime] = _utc_now,
        rate_per_second: float = 5.0,
        burst: int = 20,
        hello_timeout: float = 5.0,
        flood_close_after: int = 100,
        max_connections: int = 1000,
        max_unauthenticated: int = 256,
        max_unauthenticated_per_address: int = 32,
        max_connections_per_client: int = 8,
        send_timeout: float = 10.0,
        ping_seconds: float = PING_SECONDS,
        close_seconds: float = 10.0,
        on_client_ready: OnClientReady | None = None,
        on_acknowledged: OnAcknowledged | None = None,
        transcript: Transcript | None = None,
        max_attachment_bytes: int = 0,
        push_log: PushLog | None = None,
        memory: MemoryBrowser | None = None,
        person_tokens: PersonTokens | None = None,
    ) -> None:
        self._settings = settings
        self._tokens = HelloTokens(token, person_tokens)
        self._clock = clock
        self._rate = rate_per_second
        self._burst = float(burst)
        self._hello_timeout = hello_timeout
        self._flood_close_after = flood_close_after
        self._max_connections = max_connections
        self._max_per_client = max_connections_per_client
        self._send_timeout = send_timeout
        self._ping_seconds = ping_seconds
        self._close_seconds = close_seconds
        self._on_client_ready = on_client_ready
        self._on_acknowledged = on_acknowledged
        self._transcript = transcript
        self._push_log = push_log
        self._memory = memory
        self._markdown = SafeMarkdown()
        self._max_bytes = settings.max_message_bytes
        # Frames between max_message_bytes and this cap get a too_large error frame; above it
        # websockets itself closes with 1009 rather than buffer an unbounded message.
        self._hard_max = max(4 * settings.max_message_bytes, 1 << 20)
        # A message's pictures and files, together; its frame may be longer by their base64.
        self._attachment_bytes = max_attachment_bytes
        if max_attachment_bytes > 0:
            allowance = attachment_allowance(max_attachment_bytes)
            self._hard_max = max(self._hard_max, 2 * (settings.max_message_bytes + allowance))
        self._http = GatewayHttp(readiness)
        self._clients: dict[str, list[_Client]] = {}
        self._unacknowledged: dict[str, dict[str, _Awaiting]] = {}
        """Per client: the final frames sent (or being sent) to a protocol 2 connection, by
        frame id, and what their acknowledgement confirms. Dropped with the client's last
        connection: what was not acknowledged is offered again from storage after its next
        hello."""
        self._acknowledged: dict[str, dict[str, int]] = {}
        """Per client: the last ``ACKNOWLEDGED_KEPT`` frames it acknowledged, by frame id, and
        the hash of the frame (a notice under a message's id is not its answer). Dropped with
        the client's last connection."""
        self._authenticated = 0
        self._waiting = WaitingRoom(
            max_waiting=max_unauthenticated, max_per_address=max_unauthenticated_per_address
        )
        self._on_message: OnMessage | None = None
        self._server: Server | None = None
        self._last_inbound: datetime | None = None
        self._last_error: str | None = None
        self._last_error_at: datetime | None = None
        self.started = asyncio.Event()
        """Set while the server listens; ``bound_port`` is valid then."""

    @property
    def name(self) -> str:
        return CHANNEL

    @property
    def capabilities(self) -> ChannelCapabilities:
        return ChannelCapabilities(
            can_edit=False, can_stream=True, max_len=1 << 30, length_unit="chars"
        )

    @property
    def listening(self) -> asyncio.Event:
        return self.started

    @property
    def bound_port(self) -> int | None:
        """The port actually listened on (useful with port 0); None when not listening."""
        if self._server is None or not self._server.sockets:
            return None
        port: int = self._server.sockets[0].getsockname()[1]
        return port

    def connections(self, client_id: str) -> tuple[ServerConnection, ...]:
        """The live connections of ``client_id`` now (each one's ``wait_closed()`` says when
        it is gone)."""
        return tuple(client.ws for client in self._clients.get(client_id, ()))

    def status(self) -> ChannelStatus:
        return ChannelStatus(
            CHANNEL,
            connected=self.started.is_set(),
            last_inbound=self._last_inbound,
            last_error=self._last_error,
            last_error_at=self._last_error_at,
        )

    async def run(self, on_message: OnMessage) -> None:
        """Listens until cancelled, then closes every connection (1001) and re-raises
        ``CancelledError``. Raises ``OSError`` when the port cannot be bound."""
        self._on_message = on_message
        settings = self._settings
        try:
            server = await serve(
                self._serve_connection,
                settings.host,
                settings.port,
                process_request=self._process_request,
                # Chat frames are small; deflate would cost more CPU than the bytes it saves.
                compression=None,
                # Until hello; _serve_connection raises it to _hard_max once authenticated.
                max_size=_HELLO_MAX_BYTES,
                # The HTTP upgrade gets no longer than the hello does.
                open_timeout=self._hello_timeout,
                ping_interval=self._ping_seconds,
                ping_timeout=self._ping_seconds,
                # How long a close waits for the peer's answer before the socket is dropped.
                close_timeout=self._close_seconds,
                server_header=None,
            )
        except OSError as exc:
            self._record_error(f"cannot listen on {settings.host}:{settings.port}: {exc}")
            raise
        self._server = server
        self.started.set()
        log.info("gateway.listening", host=settings.host, port=self.bound_port)
        try:
            await asyncio.get_running_loop().create_future()
        finally:
            self.started.clear()
            server.close()
            await server.wait_closed()
            self._server = None
            log.info("gateway.stopped")

    async def send(self, message: OutboundMessage) -> Delivery:
        """Sends ``message`` to every live connection of its client, under the id of the frame
        it answers (from its reply handle; rebuilt from ``reply_to`` for a message replayed
        after a restart). A push goes as a ``push`` frame (id ``p<push_id>``) to the client
        ``recipient``, else the session's. A final frame is ``delivered`` once a protocol 1
        connection took it, ``deferred`` while only protocol 2 connections have it (until their
        ``ack``) or nobody is connected; a frame already sent to a protocol 2 connection and not
        acknowledged is not sent to it again. Deltas are never acknowledged. Never raises for a
        closed connection."""
        session = message.session
        client_id = f"{session.chat_id}:{session.thread}" if session.thread else session.chat_id
        if message.push is not None:
            client_id = message.recipient or client_id
            suffix = message.push_id if message.push_id is not None else f"-{secrets.token_hex(6)}"
            frame_id = f"p{suffix}"
            text = with_timing(message.text, message)
            data = push_frame(frame_id, message.push, text, message.timing)
            confirms = Acknowledged(client_id, push_id=message.push_id)
            delivery = await self._send_final(client_id, frame_id, data, confirms)
            log.info(
                "gateway.push_sent" if delivery.is_delivered else "gateway.push_deferred",
                client=client_id,
                push_id=message.push_id,
                kind=message.push,
                awaiting_ack=bool(delivery.ids),
            )
            return delivery
        reply = message.reply_handle
        if not isinstance(reply, FrameReply) and message.reply_to is not None:
            reply = FrameReply(client_id, message.reply_to)
        frame_id = (
            reply.frame_id if isinstance(reply, FrameReply) else f"srv-{secrets.token_hex(6)}"
        )
        if not message.final:
            took = await self._broadcast(client_id, delta_frame(frame_id, message.text))
            return Delivery.delivered([frame_id]) if took else Delivery.deferred()
        if message.error_code:
            data = error_frame(message.error_code, message.text, frame_id)
        else:
            data = reply_frame(frame_id, message.text, self._markdown.render(message.text))
        confirms = Acknowledged(client_id, reply_to=message.reply_to or frame_id)
        return await self._send_final(client_id, frame_id, data, confirms)

    async def _send_final(
        self, client_id: str, frame_id: str, data: str, confirms: Acknowledged
    ) -> Delivery:
        if self._acknowledged.get(client_id, {}).get(frame_id) == hash(data):
            # This very frame was acknowledged here a moment ago (the offer read it as waiting
            # before the ack was recorded): the client has it.
            return Delivery.delivered([frame_id])
        delivered = awaiting = False
        for client in tuple(self._clients.get(client_id, ())):
            if client.protocol < 2:
                delivered = await _deliver(client.ws, data, self._send_timeout) or delivered
            elif frame_id in client.sent:
                awaiting = True
            elif client in self._clients.get(client_id, ()):  # not gone during a send before
                awaited = _Awaiting(confirms, hash(data))
                sent = await self._send_awaited(client_id, client, frame_id, data, awaited)
                awaiting = sent or awaiting
        if delivered:
            return Delivery.delivered([frame_id])
        return Delivery.deferred([frame_id] if awaiting else [])

    async def _send_awaited(
        self, client_id: str, client: _Client, frame_id: str, data: str, awaited: _Awaiting
    ) -> bool:
        """Sends a final frame to a protocol 2 connection, to await its acknowledgement;
        whether the connection took it. It counts as sent from before the send starts, which
        may wait on a tab slow to read: an offer of it meanwhile does not send it again, and an
        ``ack`` meanwhile is heard. A send that failed is forgotten."""
        waiting = self._unacknowledged.setdefault(client_id, {})
        waiting[frame_id] = awaited
        client.sent.add(frame_id)
        if await _deliver(client.ws, data, self._send_timeout):
            return True
        client.sent.discard(frame_id)
        if not any(frame_id in other.sent for other in self._clients.get(client_id, ())):
            waiting.pop(frame_id, None)
        return False

    async def _broadcast(self, client_id: str, data: str) -> bool:
        """Sends ``data`` to each live connection of ``client_id``; whether any took it."""
        delivered = False
        for client in tuple(self._clients.get(client_id, ())):
            delivered = await _deliver(client.ws, data, self._send_timeout) or delivered
        return delivered

    async def _acknowledge(self, client_id: str, frame_id: str) -> None:
        """A protocol 2 client has ``frame_id``: confirmed once (several tabs may each ack)."""
        awaited = self._unacknowledged.get(client_id, {}).pop(frame_id, None)
        for client in self._clients.get(client_id, ()):
            client.sent.discard(frame_id)
        if awaited is None:
            return
        if client_id in self._clients:
            kept = self._acknowledged.setdefault(client_id, {})
            kept[frame_id] = awaited.frame
            if len(kept) > ACKNOWLEDGED_KEPT:
                del kept[next(iter(kept))]
        if self._on_acknowledged is None:
            return
        try:
            await self._on_acknowledged(awaited.confirms)
        except Exception:  # the hook's failure: the frame is offered again after a hello
            log.exception("gateway.ack_not_recorded", client=client_id)

    # Connections

    def _process_request(self, connection: ServerConnection, request: Request) -> Response | None:
        return self._http.respond(request)

    async def _serve_connection(self, ws: ServerConnection) -> None:
        try:
            hello = await self._authenticate(ws)
        except ConnectionClosed:
            return
        if hello is None:
            return
        who, protocol = hello
        client_id = who.key  # a person's key is no client id (``GatewayClient``)
        self._authenticated += 1
        client = _Client(ws, protocol)
        try:
            # Raised before ready goes out, so a client that waits for ready (as the protocol
            # says) never has a frame measured against the hello cap.
            ws.protocol.max_message_size = self._hard_max
            await ws.send(ready_frame(f"{CHANNEL}:{client_id}", protocol, who.person))
            self._clients.setdefault(client_id, []).append(client)
            try:
                await self._client_ready(client_id)
                await self._receive(client, client_id)
            finally:
                connections = self._clients[client_id]
                connections.remove(client)
                if not connections:
                    del self._clients[client_id]
                    self._unacknowledged.pop(client_id, None)
                    self._acknowledged.pop(client_id, None)
        except ConnectionClosed:
            pass
        finally:
            self._authenticated -= 1

    async def _authenticate(self, ws: ServerConnection) -> tuple[GatewayClient, int] | None:
        """Who a valid hello says the client is (its client_id, and the person its token
        proved) and the protocol it speaks; None after refusing the connection. Raises
        ``ConnectionClosed`` when the peer went away first."""
        # Refusals before hello do not wait long for a close handshake the peer may never do.
        patient, ws.close_timeout = ws.close_timeout, _REFUSE_CLOSE_SECONDS
        waiting = Waiting(client_address(ws, self._settings.trusted_proxies))
        try:
            async with asyncio.timeout(self._hello_timeout) as deadline:
                waiting.deadline = deadline
                self._waiting.admit(ws, waiting)
                raw = await ws.recv()
        except TimeoutError:
            if waiting.is_evicted:
                await refuse(
                    ws, "rate_limited", "Too many connections; try again.", CLOSE_SERVER_FULL
                )
            else:
                await refuse(ws, "unauthorized", "No hello arrived in time.", CLOSE_HELLO_TIMEOUT)
            return None
        finally:
            self._waiting.release(ws, waiting)
        frame = parse_json_object(raw)
        client = self._tokens.read_hello(frame)
        if isinstance(client, HelloRefused):
            unauthorized = client.code == "unauthorized"
            if unauthorized:
                log.info("gateway.unauthorized", peer=waiting.address)
            close = CLOSE_UNAUTHORIZED if unauthorized else CLOSE_BAD_HELLO
            await refuse(ws, client.code, client.message, close)
            return None
        protocol = hello_protocol(frame) if frame is not None else None
        if protocol is None:
            await refuse(
                ws, "bad_request", "A hello's protocol is a whole number, 1 or 2.", CLOSE_BAD_HELLO
            )
            return None
        if len(self._clients.get(client.key, ())) >= self._max_per_client:
            await refuse(
                ws,
                "rate_limited",
                "Too many tabs are open for this client; close one and reload.",
                CLOSE_TOO_MANY_TABS,
            )
            return None
        if self._authenticated >= self._max_connections:
            log.warning("gateway.full", connections=self._authenticated)
            await refuse(ws, "rate_limited", "Flynn is full; try again later.", CLOSE_SERVER_FULL)
            return None
        ws.close_timeout = patient
        return client, protocol

    async def _client_ready(self, client_id: str) -> None:
        callback = self._on_client_ready
        if callback is None:
            return
        try:
            await callback(client_id)
        except Exception:  # the hook's failure is the hook's; the client still gets served
            log.exception("gateway.client_ready_failed", client=client_id)

    async def _receive(self, client: _Client, client_id: str) -> None:
        """Handles frames until the connection closes, under a per-connection token bucket
        (acknowledgements are free: a client acks what it is sent, however much that is)."""
        ws = client.ws
        clock = asyncio.get_running_loop().time
        rate, burst = self._rate, self._burst
        tokens, last, dropped = burst, clock(), 0
        async for raw in ws:
            if _may_be_ack(raw):
                ack = parse_frame(raw, self._max_bytes, protocol=client.protocol)
                if isinstance(ack, Ack):
                    await self._acknowledge(client_id, ack.id)
                    continue
            now = clock()
            tokens = min(burst, tokens + (now - last) * rate)
            last = now
            if tokens < 1.0:
                dropped += 1
                if dropped >= self._flood_close_after:
                    log.warning("gateway.flood", client=client_id)
                    await _close_draining(ws, CLOSE_FLOOD, "too many frames")
                    return
                await ws.send(error_frame("rate_limited", _TOO_FAST, peek_id(raw)))
                continue
            tokens -= 1.0
            dropped = 0
            frame = parse_frame(
                raw,
                self._max_bytes,
                protocol=client.protocol,
                attachment_bytes=self._attachment_bytes,
            )
            if isinstance(frame, Ack):  # an ack too long for _may_be_ack's look
                await self._acknowledge(client_id, frame.id)
            elif isinstance(frame, Rejected):
                await ws.send(error_frame(frame.code, frame.message, frame.id))
            elif isinstance(frame, HistoryRequest):
                session = f"{CHANNEL}:{client_id}"
                await ws.send(
                    await answer_history(
                        self._transcript,
                        session,
                        frame,
                        self._markdown,
                        # Protocol 1's history holds only user and assistant messages.
                        self._push_log if client.protocol >= 2 else None,
                    )
                )
            elif isinstance(frame, MemoryRequest):
                await ws.send(await answer_memory(self._memory, client_id, frame))
            else:
                await self._intake(ws, client_id, frame)

    async def _intake(self, ws: ServerConnection, client_id: str, frame: ClientText) -> None:
        assert self._on_message is not None, "frames arrive only while run() is serving"
        # A generated id is random so it never matches an earlier dedupe key.
        frame_id = frame.id or f"cmd-{secrets.token_hex(6)}"
        # Sent again (after an error its turn runs again): its answer may be the same frame as
        # the one acknowledged (the same error), and must go all the same. Sent again before
        # its answer was acknowledged, the answer goes again on this connection too: the page
        # asking again is the evidence that it does not have the first.
        self._acknowledged.get(client_id, {}).pop(frame_id, None)
        for client in self._clients.get(client_id, ()):
            if client.ws is ws:
                client.sent.discard(frame_id)
        reply = FrameReply(client_id, frame_id)
        message = InboundMessage(
            channel=CHANNEL,
            chat_id=client_id,
            sender_id=client_id,
            text=frame.text,
            message_id=frame_id,
            command=frame.command,
            reply_handle=reply,
            received_at=self._clock(),
            attachments=frame.attachments,
        )
        self._last_inbound = message.received_at
        try:
            await self._on_message(message)
        except SessionBusy:
            await ws.send(error_frame("rate_limited", _BUSY, frame_id))
        except StoreError:
            # Not taken (nothing of it kept): the client may send it again, under the same id.
            log.warning("gateway.intake_refused", client=client_id)
            self._record_error("intake refused: the database is out of reach")
            await ws.send(error_frame("internal", _NO_DATABASE, frame_id))
        except Exception as exc:  # per-frame boundary: answer, keep the connection
            log.exception("gateway.intake_failed", client=client_id)
            self._record_error(f"intake failed: {type(exc).__name__}")
            await ws.send(
                error_frame("internal", "Flynn could not take that message; try again.", frame_id)
            )

    def _record_error(self, text: str) -> None:
        self._last_error, self._last_error_at = text, self._clock()


def _may_be_ack(raw: str | bytes) -> bool:
    """Whether a frame is small enough and says ``ack``: only those are parsed before the rate
    limit, so a flood of anything else costs no parsing."""
    return isinstance(raw, str) and len(raw) <= 512 and '"ack"' in raw


async def _deliver(connection: ServerConnection, data: str, backlog_seconds: float) -> bool:
    """Sends ``data``; False when the connection is closing, closed or too slow to take it."""
    # send() on a closing connection waits for the close to finish, and one whose transport
    # was aborted has not noticed yet: skip both.
    if connection.state is not State.OPEN or connection.transport.is_closing():
        return False
    try:
        if connection.transport.get_write_buffer_size():
            # Backlogged: a tab that stopped reading must not hold up the session's sender
            # until keepalive notices. Only here, so the common path pays for no timer.
            async with asyncio.timeout(backlog_seconds):
                await connection.send(data)
        else:
            await connection.send(data)
    except ConnectionClosed:
        return False
    except TimeoutError:
        log.info("gateway.slow_client_dropped", peer=peer(connection))
        connection.transport.abort()
        return False
    return True


async def _close_draining(ws: ServerConnection, code: int, reason: str) -> None:
    """Closes while discarding what the peer already queued: with the receive queue full,
    websockets stops reading and would never see the peer's close frame."""
    closing = asyncio.ensure_future(ws.close(code, reason))
    try:
        async for _ in ws:
            pass
    except ConnectionClosed:
        pass
    finally:
        await closing
