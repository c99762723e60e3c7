"""A fake Discord (gateway WebSocket and REST API) on 127.0.0.1 that the real discord.py talks to.

The gateway speaks HELLO, heartbeats and their ACKs, IDENTIFY -> READY (+ GUILD_CREATE), RESUME ->
the missed dispatches + RESUMED, INVALID_SESSION and RECONNECT; it can drop the socket. The REST
side answers what discord.py calls: ``users/@me``, the application, messages, typing, DM channels,
the bulk overwrite of application commands, interaction callbacks and followups; its CDN path
serves the bytes of attachments made with ``attachment``. Tests queue messages and slash
commands, and read what the bot sent and downloaded. ``redirect(monkeypatch)`` points
discord.py's REST base and default gateway here.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import TracebackType
from typing import Any, Self

import discord
import discord.gateway
import discord.http
import pytest
import yarl
from aiohttp import WSMsgType, web

TOKEN = "fake-discord-token.for-tests"
BOT_ID = 900_001
APP_ID = 900_002
OWNER_ID = 42
STRANGER_ID = 666
GUILD_ID = 700_001
GUILD_CHANNEL_ID = 700_002
SENT_AT = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
"""The timestamp of every queued message."""

_WAIT_SECONDS = 5.0
"""How long ``wait_*`` waits before failing the test instead of hanging it."""
_EPHEMERAL = 64


@dataclass(frozen=True)
class SentMessage:
    """A message the bot posted (to a channel, or as an interaction's followup)."""

    id: int
    channel_id: int
    content: str
    allowed_mentions: dict[str, Any] | None
    reference: dict[str, Any] | None
    ephemeral: bool = False
    interaction_id: int | None = None


@dataclass(frozen=True)
class Callback:
    """An interaction callback: ``type`` 4 answers at once, 5 defers ("thinking")."""

    interaction_id: int
    type: int
    ephemeral: bool
    content: str | None


@dataclass
class _Session:
    id: str
    events: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    """Every dispatch of the session with its sequence number, for RESUME."""


class FakeDiscord:
    """Start with ``async with FakeDiscord() as server``; then ``server.redirect(monkeypatch)``."""

    def __init__(self, *, token: str = TOKEN) -> None:
        self.token = token
        self.sent: list[SentMessage] = []
        self.callbacks: list[Callback] = []
        self.typing: list[int] = []
        """The channel id of every typing call, in order."""
        self.commands: list[dict[str, Any]] = []
        """The application commands as the last bulk overwrite left them."""
        self.identifies = 0
        self.resumes = 0
        self.heartbeats = 0
        self.dm_channels: dict[int, int] = {}
        """User id -> the id of the DM channel opened with them."""
        self.downloads: list[str] = []
        """The CDN path of every attachment download, in order."""
        self._files: dict[str, bytes] = {}
        self._session: _Session | None = None
        self._ws: web.WebSocketResponse | None = None
        self._live = False
        self._next_id = 1_000_000
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self._port = 0
        self._interaction_tokens: dict[str, int] = {}

    # -- lifecycle ---------------------------------------------------------------------------

    async def __aenter__(self) -> Self:
        app = web.Application()
        app.router.add_get("/gateway", self._gateway)
        app.router.add_route("*", "/api/v10/{path:.*}", self._rest)
        app.router.add_get("/attachments/{path:.*}", self._cdn)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert isinstance(server, asyncio.Server)
        self._port = server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self._port}/gateway"

    def redirect(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Points discord.py's REST base and its first gateway here (undone after the test)."""
        monkeypatch.setattr(discord.http.Route, "BASE", f"http://127.0.0.1:{self._port}/api/v10")
        monkeypatch.setattr(
            discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(self.gateway_url)
        )

    # -- waiting -----------------------------------------------------------------------------

    async def wait_for(self, what: Callable[[], bool], description: str) -> None:
        """Returns once ``what()`` holds, checked after every change the fake sees."""
        try:
            async with asyncio.timeout(_WAIT_SECONDS):
                while not what():
                    self._changed.clear()
                    await self._changed.wait()
        except TimeoutError:
            raise AssertionError(f"fake Discord: timed out waiting for {description}") from None

    async def wait_for_sent(self, count: int) -> list[SentMessage]:
        await self.wait_for(lambda: len(self.sent) >= count, f"{count} sent messages")
        return self.sent

    async def wait_live(self, *, identifies: int = 1, resumes: int = 0) -> None:
        """Until the bot has identified (and resumed) that many times and is connected."""
        await self.wait_for(
            lambda: self._live and self.identifies >= identifies and self.resumes >= resumes,
            f"a live session after {identifies} identifies and {resumes} resumes",
        )

    def _touch(self) -> None:
        self._changed.set()

    # -- what tests send ---------------------------------------------------------------------

    def dm(
        self,
        text: str,
        *,
        user_id: int = OWNER_ID,
        name: str = "Ann",
        attachments: list[dict[str, Any]] | None = None,
    ) -> int:
        """A direct message from ``user_id``; returns its message id."""
        channel_id = self.dm_channels.setdefault(user_id, self._new_id())
        return self._message_create(channel_id, None, _user(user_id, name), text, attachments)

    def guild_message(
        self,
        text: str,
        *,
        user_id: int = OWNER_ID,
        name: str = "Ann",
        mention: bool = False,
        reply_to: SentMessage | None = None,
        channel_id: int = GUILD_CHANNEL_ID,
    ) -> int:
        """A message in the guild's text channel; ``mention`` starts it with the bot's
        mention, ``reply_to`` makes it a reply to a message the bot sent."""
        extra: dict[str, Any] = {}
        if mention:
            text = f"<@{BOT_ID}> {text}"
            extra["mentions"] = [_user(BOT_ID, "flynn", bot=True)]
        if reply_to is not None:
            extra["message_reference"] = {
                "type": 0,
                "message_id": str(reply_to.id),
                "channel_id": str(reply_to.channel_id),
                "guild_id": str(GUILD_ID),
            }
            extra["referenced_message"] = _message(
                reply_to.id, reply_to.channel_id, _user(BOT_ID, "flynn", bot=True), reply_to.content
            )
        return self._message_create(channel_id, GUILD_ID, _user(user_id, name), text, None, **extra)

    def slash(
        self,
        name: str,
        options: dict[str, str] | None = None,
        *,
        user_id: int = OWNER_ID,
        in_guild: bool = False,
    ) -> int:
        """A slash command ``name`` used in a DM (or the guild channel); returns the
        interaction id. ``options`` are string options by name."""
        interaction_id = self._new_id()
        token = f"interaction-token-{interaction_id}"
        self._interaction_tokens[token] = interaction_id
        user = _user(user_id, "Ann")
        data: dict[str, Any] = {
            "id": str(interaction_id),
            "application_id": str(APP_ID),
            "type": 2,
            "token": token,
            "version": 1,
            "attachment_size_limit": 8_388_608,
            "app_permissions": "0",
            "locale": "en-US",
            "data": {
                "id": str(self._command_id(name)),
                "name": name,
                "type": 1,
                "options": [
                    {"name": key, "type": 3, "value": value}
                    for key, value in (options or {}).items()
                ],
            },
        }
        if in_guild:
            data["guild_id"] = str(GUILD_ID)
            data["channel"] = {"id": str(GUILD_CHANNEL_ID), "type": 0, "guild_id": str(GUILD_ID)}
            data["channel_id"] = str(GUILD_CHANNEL_ID)
            data["member"] = _member(user)
            data["context"] = 0
        else:
            channel_id = self.dm_channels.setdefault(user_id, self._new_id())
            data["channel"] = {"id": str(channel_id), "type": 1, "recipients": [user]}
            data["channel_id"] = str(channel_id)
            data["user"] = user
            data["context"] = 1
        self._dispatch("INTERACTION_CREATE", data)
        return interaction_id

    def attachment(
        self, name: str, content_type: str | None, data: bytes, *, size: int | None = None
    ) -> dict[str, Any]:
        """An attachment's metadata as MESSAGE_CREATE carries it, its bytes served at its URL
        on this server's CDN path. ``size`` states another weight than ``len(data)``."""
        attachment_id = self._new_id()
        path = f"attachments/1/{attachment_id}/{name}"
        self._files[path] = data
        url = f"http://127.0.0.1:{self._port}/{path}"
        metadata: dict[str, Any] = {
            "id": str(attachment_id),
            "filename": name,
            "size": len(data) if size is None else size,
            "url": url,
            "proxy_url": url,
        }
        if content_type is not None:
            metadata["content_type"] = content_type
        return metadata

    def remove_file(self, attachment: dict[str, Any]) -> None:
        """The attachment's URL answers 404 from now on, as for a deleted message."""
        del self._files[str(yarl.URL(attachment["url"]).path).lstrip("/")]

    def _command_id(self, name: str) -> int:
        for command in self.commands:
            if command["name"] == name:
                return int(command["id"])
        return 1

    def _message_create(
        self,
        channel_id: int,
        guild_id: int | None,
        author: dict[str, Any],
        text: str,
        attachments: list[dict[str, Any]] | None,
        **extra: Any,
    ) -> int:
        message_id = self._new_id()
        data = _message(message_id, channel_id, author, text, attachments=attachments, **extra)
        if guild_id is not None:
            data["guild_id"] = str(guild_id)
            data["member"] = _member(author)
        self._dispatch("MESSAGE_CREATE", data)
        return message_id

    # -- what tests do to the connection -----------------------------------------------------

    async def drop(self, code: int = 4000) -> None:
        """Closes the socket with ``code`` (4000: an unknown error, which a client resumes)."""
        ws, self._ws, self._live = self._ws, None, False
        if ws is not None:
            await ws.close(code=code)
        self._touch()

    async def invalidate(self) -> None:
        """INVALID_SESSION (not resumable): the client must identify anew; the dispatches it
        missed are lost, as on Discord."""
        self._session = None
        if self._ws is not None:
            await self._ws.send_json({"op": 9, "d": False})

    async def ask_reconnect(self) -> None:
        """RECONNECT: the client closes and resumes."""
        if self._ws is not None:
            await self._ws.send_json({"op": 7, "d": None})

    # -- gateway -----------------------------------------------------------------------------

    def _dispatch(self, event: str, data: dict[str, Any]) -> None:
        """Sends a dispatch now, or keeps it for a RESUME when the client is away."""
        session = self._session
        if session is None:
            raise AssertionError(f"fake Discord: no gateway session to dispatch {event} in")
        seq = len(session.events) + 1
        session.events.append((seq, event, data))
        if self._ws is not None and self._live:
            frame = {"op": 0, "t": event, "s": seq, "d": data}
            task = asyncio.get_running_loop().create_task(self._ws.send_json(frame))
            task.add_done_callback(lambda done: done.exception())

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._ws, self._live = ws, False
        await ws.send_json({"op": 10, "d": {"heartbeat_interval": 41_250}})
        async for message in ws:
            if message.type is not WSMsgType.TEXT:
                break
            payload = json.loads(message.data)
            await self._on_frame(ws, payload["op"], payload.get("d"))
        if self._ws is ws:
            self._ws, self._live = None, False
            self._touch()
        return ws

    async def _on_frame(self, ws: web.WebSocketResponse, op: int, data: Any) -> None:
        if op == 1:
            self.heartbeats += 1
            await ws.send_json({"op": 11})
        elif op == 2:
            if data.get("token") != self.token:
                await ws.close(code=4004)
                return
            self._session = _Session(f"session-{self._new_id()}")
            self.identifies += 1
            self._live = True
            self._dispatch("READY", self._ready(self._session.id))
            self._dispatch("GUILD_CREATE", _guild())
        elif op == 6:
            session = self._session
            if session is None or data.get("session_id") != session.id:
                await ws.send_json({"op": 9, "d": False})
                return
            self.resumes += 1
            for seq, event, payload in session.events:
                if seq > (data.get("seq") or 0):
                    await ws.send_json({"op": 0, "t": event, "s": seq, "d": payload})
            self._live = True
            self._dispatch("RESUMED", {})
        self._touch()

    def _ready(self, session_id: str) -> dict[str, Any]:
        return {
            "v": 10,
            "user": _user(BOT_ID, "flynn", bot=True),
            "guilds": [{"id": str(GUILD_ID), "unavailable": True}],
            "session_id": session_id,
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(APP_ID), "flags": 0},
            "private_channels": [],
        }

    # -- REST --------------------------------------------------------------------------------

    async def _cdn(self, request: web.Request) -> web.StreamResponse:
        path = "attachments/" + request.match_info["path"]
        self.downloads.append(path)
        self._touch()
        data = self._files.get(path)
        if data is None:
            return web.Response(status=404, text="Not Found")
        return web.Response(body=data, content_type="application/octet-stream")

    async def _rest(self, request: web.Request) -> web.StreamResponse:
        path = "/" + request.match_info["path"]
        parts = path.strip("/").split("/")
        is_webhook = parts[0] in ("webhooks", "interactions")
        if not is_webhook and request.headers.get("Authorization") != f"Bot {self.token}":
            return _json({"message": "401: Unauthorized", "code": 0}, status=401)
        body: Any = await request.json() if request.can_read_body else None
        try:
            return self._answer(request.method, parts, body)
        finally:
            self._touch()

    def _answer(self, method: str, parts: list[str], body: Any) -> web.StreamResponse:
        match method, parts:
            case "GET", ["users", "@me"]:
                return _json(_user(BOT_ID, "flynn", bot=True))
            case "GET", ["oauth2", "applications", "@me"]:
                return _json(_application())
            case "GET", ["users", user_id]:
                return _json(_user(int(user_id), "Ann"))
            case "POST", ["users", "@me", "channels"]:
                user_id = int(body["recipient_id"])
                channel_id = self.dm_channels.setdefault(user_id, self._new_id())
                return _json(
                    {"id": str(channel_id), "type": 1, "recipients": [_user(user_id, "Ann")]}
                )
            case "GET", ["channels", channel_id]:
                if int(channel_id) == GUILD_CHANNEL_ID:
                    return _json(_guild()["channels"][0])
                return _json({"message": "Unknown Channel", "code": 10003}, status=404)
            case "POST", ["channels", channel_id, "typing"]:
                self.typing.append(int(channel_id))
                return web.Response(status=204)
            case "POST", ["channels", channel_id, "messages"]:
                return _json(self._post(int(channel_id), body))
            case "PUT", ["applications", _app, "commands"]:
                self.commands = [
                    {**command, "id": str(self._new_id()), "application_id": str(APP_ID)}
                    for command in body
                ]
                return _json(self.commands)
            case "POST", ["interactions", interaction_id, _token, "callback"]:
                return _json(self._callback(int(interaction_id), body))
            case "POST", ["webhooks", _app, token]:
                interaction_id = self._interaction_tokens[token]
                return _json(self._post(0, body, interaction_id=interaction_id))
        return _json({"message": "404: Not Found", "code": 0}, status=404)

    def _post(
        self, channel_id: int, body: dict[str, Any], *, interaction_id: int | None = None
    ) -> dict[str, Any]:
        sent = SentMessage(
            id=self._new_id(),
            channel_id=channel_id,
            content=body.get("content") or "",
            allowed_mentions=body.get("allowed_mentions"),
            reference=body.get("message_reference"),
            ephemeral=bool((body.get("flags") or 0) & _EPHEMERAL),
            interaction_id=interaction_id,
        )
        self.sent.append(sent)
        return _message(sent.id, channel_id, _user(BOT_ID, "flynn", bot=True), sent.content)

    def _callback(self, interaction_id: int, body: dict[str, Any]) -> dict[str, Any]:
        data = body.get("data") or {}
        ephemeral = bool((data.get("flags") or 0) & _EPHEMERAL)
        self.callbacks.append(
            Callback(interaction_id, body["type"], ephemeral, data.get("content"))
        )
        return {
            "interaction": {
                "id": str(interaction_id),
                "type": 2,
                "response_message_loading": body["type"] == 5,
                "response_message_ephemeral": ephemeral,
            }
        }

    def _new_id(self) -> int:
        self._next_id += 1
        return self._next_id


def _json(data: Any, *, status: int = 200) -> web.Response:
    # discord.py parses a body as JSON only when the content type is exactly this.
    return web.Response(
        body=json.dumps(data).encode(), status=status, headers={"Content-Type": "application/json"}
    )


def _user(user_id: int, name: str, *, bot: bool = False) -> dict[str, Any]:
    return {
        "id": str(user_id),
        "username": name.lower(),
        "global_name": name,
        "discriminator": "0",
        "avatar": None,
        "bot": bot,
    }


def _member(user: dict[str, Any]) -> dict[str, Any]:
    return {
        "user": user,
        "roles": [],
        "joined_at": (SENT_AT - timedelta(days=30)).isoformat(),
        "deaf": False,
        "mute": False,
        "flags": 0,
        "permissions": "0",
    }


def _message(
    message_id: int,
    channel_id: int,
    author: dict[str, Any],
    content: str,
    *,
    attachments: list[dict[str, Any]] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": author,
        "content": content,
        "timestamp": SENT_AT.isoformat(),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "attachments": attachments or [],
        "embeds": [],
        "pinned": False,
        "type": 0,
        "flags": 0,
        **extra,
    }


def _guild() -> dict[str, Any]:
    return {
        "id": str(GUILD_ID),
        "name": "Team",
        "icon": None,
        "owner_id": str(OWNER_ID),
        "roles": [
            {
                "id": str(GUILD_ID),
                "name": "@everyone",
                "permissions": "3072",
                "position": 0,
                "color": 0,
                "hoist": False,
                "managed": False,
                "mentionable": False,
            }
        ],
        "emojis": [],
        "features": [],
        "member_count": 2,
        "members": [_member(_user(BOT_ID, "flynn", bot=True))],
        "channels": [
            {
                "id": str(GUILD_CHANNEL_ID),
                "type": 0,
                "guild_id": str(GUILD_ID),
                "name": "general",
                "position": 0,
                "permission_overwrites": [],
            }
        ],
        "threads": [],
        "large": False,
        "unavailable": False,
    }


def _application() -> dict[str, Any]:
    return {
        "id": str(APP_ID),
        "name": "flynn",
        "icon": None,
        "description": "",
        "bot_public": False,
        "bot_require_code_grant": False,
        "owner": _user(OWNER_ID, "Ann"),
        "verify_key": "0" * 64,
        "flags": 0,
    }
