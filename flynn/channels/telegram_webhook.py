"""Telegram's webhook: the HTTP listener Telegram posts updates to (behind a TLS proxy), on
aiohttp's server. It checks the secret header, refuses oversized bodies before reading them and
hands each update, parsed as JSON, to the channel; the channel's answer is the HTTP status.
Also the secret itself (configured, or derived from the bot token) and the URL as shown.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime
from typing import Final, Literal, Protocol, Self
from urllib.parse import urlsplit

import structlog
from aiohttp import web

from flynn.settings import TelegramSettings

log = structlog.get_logger(__name__)

SECRET_HEADER: Final = "X-Telegram-Bot-Api-Secret-Token"
MAX_BODY_BYTES: Final = 1024 * 1024
"""The largest update we read. Telegram's are a few kilobytes: files come by reference."""
_SECRET_CONTEXT: Final = b"flynn telegram webhook secret v1"
_REFUSED_SOURCES: Final = 1024
"""How many sources refused for a wrong secret we remember (each is logged once)."""

UpdateClaim = Literal["claimed", "done", "busy"]
"""What claiming an update found: ``claimed`` (handle it now), ``done`` (handled before: drop
it), ``busy`` (another post of it is being handled: let Telegram post it again later)."""

OnUpdate = Callable[[Mapping[str, object]], Awaitable[int]]
"""The channel's intake of one posted update (a JSON object with an integer ``update_id``):
returns the HTTP status to answer (200 handled or a duplicate, 400 not an Update, 503 to have
Telegram post it again later)."""


class TelegramUpdates(Protocol):
    """Each webhook update handled once, across retries and workers (``flynn.memory``'s
    ``SqliteTelegramUpdates``); every method raises ``StoreError`` when storage fails."""

    def claim(self, bot_id: int, update_id: int, *, now: datetime) -> UpdateClaim: ...

    def done(self, bot_id: int, update_id: int) -> None: ...

    def release(self, bot_id: int, update_id: int) -> None: ...

    def prune(self, *, before: datetime) -> int: ...


def webhook_secret(settings: TelegramSettings) -> str:
    """The secret Telegram must send: ``webhook_secret``, else an HMAC of the bot token, so every
    worker of one install agrees without sharing anything more. Never log it."""
    if settings.webhook_secret is not None:
        return settings.webhook_secret.get_secret_value()
    if settings.token is None:
        raise ValueError("a derived webhook secret needs the bot token")
    key = settings.token.get_secret_value().encode()
    return hmac.new(key, _SECRET_CONTEXT, hashlib.sha256).hexdigest()


def shown_url(url: str) -> str:
    """The webhook URL as logs and ``flynn doctor`` show it: without its query (where a
    secret may hide)."""
    parts = urlsplit(url)
    return parts._replace(query="", fragment="").geturl()


class TelegramWebhook:
    """Listens on ``host:port`` for POSTs to ``path`` while entered. Exit stops accepting
    connections (``closed`` is set then), lets the updates being handled finish (up to
    ``drain_seconds``, then cancels them) and closes. ``listening`` is set once bound; entering
    raises ``OSError`` when the address cannot be bound."""

    def __init__(
        self,
        *,
        host: str,
        port: int,
        path: str,
        secret: str,
        on_update: OnUpdate,
        max_body_bytes: int = MAX_BODY_BYTES,
        drain_seconds: float = 30.0,
    ) -> None:
        self._host = host
        self._port = port
        self._path = path or "/"
        self._secret = secret.encode()
        self._on_update = on_update
        self._max_body_bytes = max_body_bytes
        self._drain_seconds = drain_seconds
        self._refused: dict[str, None] = {}
        self._runner: web.AppRunner | None = None
        self.listening = asyncio.Event()
        self.closed = asyncio.Event()
        self.bound_port: int | None = None
        """The port bound (``port`` 0 picks a free one)."""

    async def __aenter__(self) -> Self:
        app = web.Application(client_max_size=self._max_body_bytes)
        app.router.add_post(self._path, self._post)
        # No access log: each request is logged by the channel as an event, or not at all.
        runner = web.AppRunner(
            app, access_log=None, handle_signals=False, shutdown_timeout=self._drain_seconds
        )
        await runner.setup()
        try:
            site = web.TCPSite(runner, self._host, self._port)
            await site.start()
        except BaseException:
            await runner.cleanup()
            raise
        self._runner = runner
        self.bound_port = _bound_port(runner, self._port)
        self.listening.set()
        log.info("telegram.webhook_listening", host=self._host, port=self.bound_port)
        return self

    async def __aexit__(self, *_: object) -> None:
        runner, self._runner = self._runner, None
        self.listening.clear()
        if runner is None:
            return
        for site in runner.sites:
            await site.stop()  # no new connections: Telegram posts to another worker, or later
        self.closed.set()
        log.info("telegram.webhook_draining")
        await runner.cleanup()  # waits for the handlers in flight, up to drain_seconds
        log.info("telegram.webhook_stopped")

    async def _post(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self._secret):
            self._log_refused(request)
            return web.Response(status=403)
        # A stated length is refused before a byte of the body is read; a chunked body is cut
        # off by aiohttp at the same size (413 too).
        length = request.content_length
        if length is not None and length > self._max_body_bytes:
            log.warning("telegram.webhook_too_large", length=length)
            return web.Response(status=413)
        try:
            body = await request.read()
        except web.HTTPRequestEntityTooLarge:
            log.warning("telegram.webhook_too_large", length=None)
            return web.Response(status=413)
        try:
            payload = json.loads(body)
        except (UnicodeDecodeError, ValueError):
            payload = None
        update_id = payload.get("update_id") if isinstance(payload, dict) else None
        if not isinstance(update_id, int) or isinstance(update_id, bool):
            log.warning("telegram.webhook_not_an_update", length=len(body))
            return web.Response(status=400)
        assert isinstance(payload, dict)
        return web.Response(status=await self._on_update(payload))

    def _log_refused(self, request: web.Request) -> None:
        """A warning per source (its address, as the proxy in front shows it), once."""
        source = request.remote or "unknown"
        if source in self._refused:
            return
        self._refused[source] = None
        if len(self._refused) > _REFUSED_SOURCES:
            del self._refused[next(iter(self._refused))]
        has_header = SECRET_HEADER in request.headers
        log.warning("telegram.webhook_forbidden", source=source, had_secret_header=has_header)


def _bound_port(runner: web.AppRunner, asked: int) -> int:
    for address in runner.addresses:
        if isinstance(address, tuple) and len(address) >= 2:
            return int(address[1])
    return asked
