"""A fake Telegram Bot API server on 127.0.0.1 that python-telegram-bot talks to over real HTTP.

Tests queue updates (private, group, mention, reply to the bot, redelivered, a photo or a
document whose bytes it serves through ``getFile`` and ``/file/bot<token>/<path>``), read what
the bot sent, and script failures (500s, dropped connections, 409, 401, refused HTML, 429 flood
control). It checks the token in ``/bot<token>/<method>`` and validates HTML the way Telegram does.
It keeps the webhook ``setWebhook`` sets (``getWebhookInfo`` shows it) and, as Telegram does,
refuses getUpdates with 409 while one is set; ``update_body`` gives a queued update's JSON, as
Telegram posts it to a webhook.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections import deque
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser
from types import TracebackType
from typing import Any, Literal, Self
from urllib.parse import parse_qsl, unquote

TOKEN = "123456:TEST-fake-token"
BOT_ID = 4242
BOT_USERNAME = "flynn_test_bot"
OWNER_ID = 1001
STRANGER_ID = 666
GROUP_ID = -1005550001
SENT_AT = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
"""The ``date`` of every queued message."""

PollFailure = Literal[
    "server_error", "drop", "conflict", "unauthorized", "unauthorized_html", "bad_webhook"
]
SendFailure = Literal["rate_limited", "server_error", "bad_gateway", "drop"]

_WAIT_SECONDS = 5.0
"""How long ``wait_for_*`` waits before failing the test instead of hanging it."""
_ALLOWED_TAGS = {"b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "code", "pre", "a"}
_BARE_AMPERSAND = re.compile(r"&(?!(?:lt|gt|amp|quot|#\d+|#x[0-9a-fA-F]+);)")
_TAG = re.compile(r"</?[a-z][a-z-]*(?:\s[^<>]*)?>")


@dataclass(frozen=True)
class ApiCall:
    """One Bot API request; ``params`` are the form values (non-strings JSON-encoded)."""

    method: str
    params: dict[str, str]

    def json(self, name: str) -> Any:
        return json.loads(self.params[name]) if name in self.params else None


@dataclass(frozen=True)
class SentMessage:
    """A message the bot sent, as the fake stored it."""

    message_id: int
    chat_id: int
    text: str
    parse_mode: str | None
    reply_to: int | None
    thread: int | None


class FakeTelegram:
    """Start with ``async with FakeTelegram() as server``; point the bot at ``server.base_url``."""

    def __init__(
        self, *, token: str = TOKEN, bot_id: int = BOT_ID, username: str = BOT_USERNAME
    ) -> None:
        self.token = token
        self.bot_id = bot_id
        self.username = username
        self.calls: list[ApiCall] = []
        self.sent: list[SentMessage] = []
        self.commands: list[dict[str, str]] = []
        self.offsets: list[int] = []
        """The ``offset`` of every getUpdates call, in order (0 when none was given)."""
        self.polling = 0
        """getUpdates calls in flight now (one whose client went away ends then)."""
        self.most_polling = 0
        """The most getUpdates calls ever in flight at once: Telegram answers 409 to all but
        one."""
        self.webhook_url = ""
        """The webhook set (``setWebhook``; empty: none), as Telegram keeps it per bot."""
        self.webhook_error: str | None = None
        """What ``getWebhookInfo`` reports as the last error posting to it."""
        self._pending: list[dict[str, Any]] = []
        self._sticky: list[dict[str, Any]] = []
        self._history: dict[int, dict[str, Any]] = {}
        self._failures: dict[str, deque[PollFailure]] = {}
        self._send_failures: deque[tuple[SendFailure, int] | None] = deque()
        """Scripted sendMessage outcomes, in order; None lets a call through."""
        self._html_rejections = 0
        self._blocked: set[int] = set()
        self._next_update_id = 500_000
        self._next_message_id = 100
        self.files: dict[str, bytes] = {}
        """Served files by ``file_id`` (their ``file_path`` is ``files/<file_id>``)."""
        self.downloads: list[str] = []
        """The file paths the bot downloaded, in order."""
        self._changed = asyncio.Event()
        self._server: asyncio.Server | None = None
        self._connections: set[asyncio.Task[Any]] = set()

    # -- lifecycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)

    async def aclose(self) -> None:
        """Stop listening and cut every connection, including pending long polls."""
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
    def base_url(self) -> str:
        """python-telegram-bot's form: the token is appended."""
        return f"http://127.0.0.1:{self.port}/bot"

    # -- queueing updates --------------------------------------------------------------------

    def queue_private(
        self, text: str, *, user_id: int = OWNER_ID, first_name: str = "Ada", **extra: Any
    ) -> int:
        """A text message in the private chat with ``user_id``; returns its update id."""
        chat = {"id": user_id, "type": "private", "first_name": first_name}
        return self.queue_message(chat, _user(user_id, first_name), text, **extra)

    def queue_group(
        self,
        text: str,
        *,
        user_id: int = OWNER_ID,
        chat_id: int = GROUP_ID,
        mention: bool = False,
        reply_to_bot: bool = False,
        thread: int | None = None,
    ) -> int:
        """A supergroup message; ``mention`` prefixes ``@botname`` (with its entity),
        ``reply_to_bot`` makes it a reply to the bot's last message, ``thread`` puts it in a forum
        topic the bot created."""
        chat = {
            "id": chat_id,
            "type": "supergroup",
            "title": "Team",
            "is_forum": thread is not None,
        }
        extra: dict[str, Any] = {}
        if mention:
            handle = f"@{self.username}"
            text = f"{handle} {text}"
            extra["entities"] = [{"type": "mention", "offset": 0, "length": len(handle)}]
        if thread is not None:
            extra["message_thread_id"] = thread
            extra["is_topic_message"] = True
            # Telegram sets every topic message's reply_to_message to the topic's first message.
            extra["reply_to_message"] = self._bot_message(chat, thread, "topic created")
        if reply_to_bot:
            bot_message_id = self.sent[-1].message_id if self.sent else 1
            extra["reply_to_message"] = self._bot_message(chat, bot_message_id, "earlier reply")
        return self.queue_message(chat, _user(user_id, "Ada"), text, **extra)

    def queue_forwarded(
        self, text: str, *, user_id: int = OWNER_ID, from_name: str = "Bob", from_id: int = 777
    ) -> int:
        """A text ``user_id`` forwarded into their private chat with the bot, written by the
        user ``from_name`` (``forward_origin`` of type ``user``)."""
        origin = {
            "type": "user",
            "date": int(SENT_AT.timestamp()) - 3600,
            "sender_user": _user(from_id, from_name),
        }
        return self.queue_private(text, user_id=user_id, forward_origin=origin)

    def queue_photo(
        self, data: bytes, *, caption: str | None = None, user_id: int = OWNER_ID
    ) -> int:
        """A photo in the private chat with ``user_id`` (two sizes, as Telegram sends; the
        larger holds ``data``), with an optional caption; returns its update id."""
        file_id = self._serve_file(data)
        small_id = self._serve_file(data[: max(1, len(data) // 4)])
        sizes = [
            {"file_id": small_id, "file_unique_id": small_id, "width": 90, "height": 90},
            {
                "file_id": file_id,
                "file_unique_id": file_id,
                "width": 800,
                "height": 600,
                "file_size": len(data),
            },
        ]
        return self._queue_file({"photo": sizes}, caption, user_id)

    def queue_document(
        self,
        data: bytes,
        name: str,
        mime_type: str,
        *,
        caption: str | None = None,
        user_id: int = OWNER_ID,
        stated_size: int | None = None,
    ) -> int:
        """A document in the private chat with ``user_id``; ``stated_size`` overrides the
        ``file_size`` Telegram reports (a file too large to fetch)."""
        file_id = self._serve_file(data)
        document = {
            "file_id": file_id,
            "file_unique_id": file_id,
            "file_name": name,
            "mime_type": mime_type,
            "file_size": len(data) if stated_size is None else stated_size,
        }
        return self._queue_file({"document": document}, caption, user_id)

    def _queue_file(self, media: dict[str, Any], caption: str | None, user_id: int) -> int:
        chat = {"id": user_id, "type": "private", "first_name": "Ada"}
        message: dict[str, Any] = {
            "message_id": self._new_message_id(),
            "date": int(SENT_AT.timestamp()),
            "chat": chat,
            "from": _user(user_id, "Ada"),
            **media,
        }
        if caption is not None:
            message["caption"] = caption
        return self.queue_update({"message": message})

    def _serve_file(self, data: bytes) -> str:
        file_id = f"file{len(self.files) + 1}"
        self.files[file_id] = data
        return file_id

    def queue_message(
        self, chat: dict[str, Any], sender: dict[str, Any], text: str, **extra: Any
    ) -> int:
        message: dict[str, Any] = {
            "message_id": self._new_message_id(),
            "date": int(SENT_AT.timestamp()),
            "chat": chat,
            "from": sender,
            "text": text,
            **extra,
        }
        if text.startswith("/") and "entities" not in extra:
            command = text.split(maxsplit=1)[0]
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(command)}]
        return self.queue_update({"message": message})

    def queue_update(self, body: dict[str, Any]) -> int:
        """Any update body (``{"message": ...}``); the update id is assigned here."""
        update_id = self._next_update_id
        self._next_update_id += 1
        update = {"update_id": update_id, **body}
        self._history[update_id] = update
        self._pending.append(update)
        self._notify()
        return update_id

    def update_body(self, update_id: int) -> dict[str, Any]:
        """A queued update as Telegram posts it to a webhook (taken off the getUpdates queue)."""
        self._pending = [u for u in self._pending if u["update_id"] != update_id]
        return self._history[update_id]

    def message_id_of(self, update_id: int) -> int:
        """The Telegram message id inside a queued update."""
        message_id: int = self._history[update_id]["message"]["message_id"]
        return message_id

    def redeliver(self, update_id: int) -> None:
        """Deliver ``update_id`` once more even though it was confirmed (a server glitch)."""
        self._sticky.append(self._history[update_id])
        self._notify()

    # -- scripting failures ------------------------------------------------------------------

    def fail_polls(self, count: int, kind: PollFailure = "server_error") -> None:
        """The next ``count`` getUpdates calls fail as ``kind``."""
        self.fail_calls("getUpdates", count, kind)

    def fail_calls(self, method: str, count: int, kind: PollFailure = "server_error") -> None:
        """The next ``count`` calls to ``method`` fail as ``kind`` (sendMessage: ``fail_sends``)."""
        self._failures.setdefault(method, deque()).extend([kind] * count)

    def fail_sends(
        self, kind: SendFailure, count: int = 1, *, retry_after: int = 1, after: int = 0
    ) -> None:
        """The next ``count`` sendMessage calls fail as ``kind``: ``server_error`` is a 500,
        ``bad_gateway`` a 502 (neither sends anything), ``drop`` closes the connection after
        reading the request, ``rate_limited`` is a 429 carrying ``retry_after``. The first
        ``after`` calls go through."""
        self._send_failures.extend([None] * after)
        self._send_failures.extend([(kind, retry_after)] * count)

    def reject_html(self, count: int = 1) -> None:
        """The next ``count`` HTML sendMessage calls get Telegram's "can't parse entities"."""
        self._html_rejections += count

    def block(self, chat_id: int) -> None:
        """The person in ``chat_id`` blocked the bot: sendMessage there gets Telegram's 403."""
        self._blocked.add(chat_id)

    # -- inspecting --------------------------------------------------------------------------

    def calls_to(self, method: str) -> list[ApiCall]:
        return [call for call in self.calls if call.method == method]

    async def wait_for_calls(self, method: str, count: int = 1) -> list[ApiCall]:
        """Return once ``count`` calls to ``method`` arrived (fails the test after 5 s)."""
        await self._wait(lambda: len(self.calls_to(method)) >= count, f"{count} x {method}")
        return self.calls_to(method)

    async def wait_for_sent(self, count: int = 1) -> list[SentMessage]:
        await self._wait(lambda: len(self.sent) >= count, f"{count} sent messages")
        return self.sent

    async def wait_for_offset(self, offset: int) -> None:
        """Return once a getUpdates call confirmed everything below ``offset``."""
        await self._wait(lambda: any(o >= offset for o in self.offsets), f"offset {offset}")

    async def wait_for_polling(self, count: int) -> None:
        """Return once exactly ``count`` getUpdates calls are in flight."""
        await self._wait(lambda: self.polling == count, f"{count} getUpdates in flight")

    async def wait_for_polls_at(self, offset: int, count: int) -> None:
        """Return once ``count`` getUpdates calls asked from exactly ``offset``: the bot held it."""
        await self._wait(
            lambda: self.offsets.count(offset) >= count, f"{count} polls at offset {offset}"
        )

    async def _wait(self, predicate: Callable[[], bool], what: str) -> None:
        try:
            async with asyncio.timeout(_WAIT_SECONDS):
                await self._until(predicate)
        except TimeoutError:
            raise AssertionError(f"fake Telegram: timed out waiting for {what}") from None

    # -- the Bot API -------------------------------------------------------------------------

    async def _api(
        self, path: str, params: dict[str, str]
    ) -> tuple[int, dict[str, Any] | str | bytes] | None:
        """The status and JSON answer (or HTML page, or a file's bytes) to one request; None
        to drop the connection."""
        # python-telegram-bot quotes the download path (the token's ``:`` arrives as %3A).
        download = re.fullmatch(r"/file/bot([^/]+)/files/(\w+)", unquote(path.split("?")[0]))
        if download is not None:
            if download.group(1) != self.token or download.group(2) not in self.files:
                return _error(404, "Not Found")
            self.downloads.append(f"files/{download.group(2)}")
            self._notify()
            return 200, self.files[download.group(2)]
        match = re.fullmatch(r"/bot([^/]+)/(\w+)", path.split("?")[0])
        if match is None:
            return _error(404, "Not Found")
        if match.group(1) != self.token:
            return _error(401, "Unauthorized")
        method = match.group(2)
        self.calls.append(ApiCall(method, params))
        self._notify()
        call = self.calls[-1]
        failures = self._failures.get(method)
        if failures:
            kind = failures.popleft()
            if kind == "drop":
                return None
            return {
                "server_error": _error(500, "Internal Server Error"),
                "conflict": _error(409, "Conflict: terminated by other getUpdates request"),
                "unauthorized": _error(401, "Unauthorized"),
                # What a proxy or a captive portal in front of the Bot API answers.
                "unauthorized_html": (401, "<html><body><h1>401 Unauthorized</h1></body></html>"),
                # What setWebhook answers for a host Telegram cannot resolve.
                "bad_webhook": _error(400, "Bad Request: bad webhook: Failed to resolve host"),
            }[kind]
        if method == "getMe":
            return _ok(_user(self.bot_id, "Flynn", username=self.username, is_bot=True))
        if method == "sendChatAction":
            return _ok(True)
        if method == "setWebhook":
            self.webhook_url = call.params["url"]
            return _ok(True)
        if method == "deleteWebhook":
            self.webhook_url = ""
            return _ok(True)
        if method == "getWebhookInfo":
            info: dict[str, Any] = {
                "url": self.webhook_url,
                "has_custom_certificate": False,
                "pending_update_count": len(self._pending),
            }
            if self.webhook_error is not None:
                info["last_error_date"] = int(SENT_AT.timestamp())
                info["last_error_message"] = self.webhook_error
            return _ok(info)
        if method == "setMyCommands":
            self.commands = call.json("commands")
            return _ok(True)
        if method == "getUpdates":
            if self.webhook_url:
                return _error(
                    409,
                    "Conflict: can't use getUpdates method while webhook is active; "
                    "use deleteWebhook to delete the webhook first",
                )
            return await self._get_updates(call)
        if method == "getFile":
            file_id = call.params.get("file_id", "")
            if file_id not in self.files:
                return _error(400, "Bad Request: invalid file_id")
            return _ok(
                {
                    "file_id": file_id,
                    "file_unique_id": file_id,
                    "file_size": len(self.files[file_id]),
                    "file_path": f"files/{file_id}",
                }
            )
        if method == "sendMessage":
            return self._send_message(call)
        if method == "editMessageText":
            chat = {"id": int(call.params["chat_id"]), "type": "private"}
            message_id = int(call.params["message_id"])
            return _ok(self._bot_message(chat, message_id, call.params["text"]))
        return _error(404, "Not Found: method not found")

    async def _get_updates(self, call: ApiCall) -> tuple[int, dict[str, Any]] | None:
        self.polling += 1
        self.most_polling = max(self.most_polling, self.polling)
        try:
            return await self._poll_once(call)
        finally:
            self.polling -= 1
            self._notify()

    async def _poll_once(self, call: ApiCall) -> tuple[int, dict[str, Any]] | None:
        offset = int(call.params.get("offset", "0"))
        self.offsets.append(offset)
        self._pending = [u for u in self._pending if u["update_id"] >= offset]
        self._notify()
        timeout = float(call.params.get("timeout", "0"))
        with suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                await self._until(lambda: bool(self._pending or self._sticky))
        limit = int(call.params.get("limit", "100"))
        batch = [*self._sticky, *(u for u in self._pending if u["update_id"] >= offset)]
        self._sticky = []
        batch = batch[:limit]
        return _ok(batch)

    def _send_message(self, call: ApiCall) -> tuple[int, dict[str, Any]] | None:
        scripted = self._send_failures.popleft() if self._send_failures else None
        if scripted is not None:
            kind, retry_after = scripted
            if kind == "drop":
                return None
            if kind == "rate_limited":
                return _error(
                    429,
                    f"Too Many Requests: retry after {retry_after}",
                    parameters={"retry_after": retry_after},
                )
            if kind == "bad_gateway":
                return _error(502, "Bad Gateway")
            return _error(500, "Internal Server Error")
        if int(call.params["chat_id"]) in self._blocked:
            return _error(403, "Forbidden: bot was blocked by the user")
        text = call.params["text"]
        parse_mode = call.params.get("parse_mode")
        visible = text
        if parse_mode == "HTML":
            if self._html_rejections:
                self._html_rejections -= 1
                return _error(400, "Bad Request: can't parse entities: unsupported start tag")
            problem = _html_problem(text)
            if problem:
                return _error(400, f"Bad Request: can't parse entities: {problem}")
            visible = html.unescape(re.sub(r"<[^>]+>", "", text))
        if len(visible.encode("utf-16-le")) // 2 > 4096:
            return _error(400, "Bad Request: message is too long")
        reply = call.json("reply_parameters")
        thread = call.params.get("message_thread_id")
        sent = SentMessage(
            message_id=self._new_message_id(),
            chat_id=int(call.params["chat_id"]),
            text=text,
            parse_mode=parse_mode,
            reply_to=reply["message_id"] if reply else None,
            thread=int(thread) if thread else None,
        )
        self.sent.append(sent)
        self._notify()
        chat_type = "private" if sent.chat_id > 0 else "supergroup"
        chat = {"id": sent.chat_id, "type": chat_type}
        return _ok(self._bot_message(chat, sent.message_id, text))

    # -- HTTP/1.1 ----------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    break
                path, params = request
                if path.split("?")[0].endswith("/getUpdates"):
                    answer = await self._unless_gone(reader, self._api(path, params))
                else:
                    answer = await self._api(path, params)
                if answer is None:
                    break
                status, payload = answer
                if isinstance(payload, bytes):
                    body, content_type = payload, "application/octet-stream"
                elif isinstance(payload, str):
                    body, content_type = payload.encode(), "text/html"
                else:
                    body, content_type = json.dumps(payload).encode(), "application/json"
                head = (
                    f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n"
                    f"content-type: {content_type}\r\n"
                    f"content-length: {len(body)}\r\n\r\n"
                )
                writer.write(head.encode() + body)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._connections.discard(task)
            writer.close()
            with suppress(ConnectionError):
                await writer.wait_closed()

    @staticmethod
    async def _unless_gone(
        reader: asyncio.StreamReader,
        work: Awaitable[tuple[int, dict[str, Any] | str | bytes] | None],
    ) -> tuple[int, dict[str, Any] | str | bytes] | None:
        """``work``'s answer, or None (the connection closes) once the client went away: a long
        poll the bot gave up ends there, as on Telegram's side."""
        answer = asyncio.ensure_future(work)
        gone = asyncio.ensure_future(reader.read(1))
        await asyncio.wait({answer, gone}, return_when=asyncio.FIRST_COMPLETED)
        for task in (answer, gone):
            task.cancel()
        await asyncio.gather(answer, gone, return_exceptions=True)
        return answer.result() if not answer.cancelled() and answer.exception() is None else None

    def _notify(self) -> None:
        """Wake every waiter to re-check its predicate (an Event, so sync helpers can call it)."""
        self._changed.set()
        self._changed = asyncio.Event()

    async def _until(self, predicate: Callable[[], bool]) -> None:
        while not predicate():
            await self._changed.wait()

    def _new_message_id(self) -> int:
        self._next_message_id += 1
        return self._next_message_id

    def _bot_message(self, chat: dict[str, Any], message_id: int, text: str) -> dict[str, Any]:
        return {
            "message_id": message_id,
            "date": int(SENT_AT.timestamp()),
            "chat": chat,
            "from": _user(self.bot_id, "Flynn", username=self.username, is_bot=True),
            "text": text,
        }


async def _read_request(reader: asyncio.StreamReader) -> tuple[str, dict[str, str]] | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    _method, path, _version = lines[0].split(" ", 2)
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    raw = await reader.readexactly(int(headers.get("content-length", "0")))
    content_type = headers.get("content-type", "")
    if content_type.startswith("application/json"):
        params = {k: v if isinstance(v, str) else json.dumps(v) for k, v in json.loads(raw).items()}
    else:
        params = dict(parse_qsl(raw.decode(), keep_blank_values=True))
    return path, params


def _user(
    user_id: int, first_name: str, *, username: str | None = None, is_bot: bool = False
) -> dict[str, Any]:
    user: dict[str, Any] = {"id": user_id, "is_bot": is_bot, "first_name": first_name}
    if username:
        user["username"] = username
    return user


def _ok(result: object) -> tuple[int, dict[str, Any]]:
    return 200, {"ok": True, "result": result}


def _error(
    code: int, description: str, parameters: dict[str, Any] | None = None
) -> tuple[int, dict[str, Any]]:
    body: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
    if parameters:
        body["parameters"] = parameters
    return code, body


class _TagChecker(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problem: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in _ALLOWED_TAGS:
            self.problem = self.problem or f"unsupported start tag {tag!r}"
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack.pop() != tag:
            self.problem = self.problem or f"unexpected end tag {tag!r}"


def _html_problem(text: str) -> str | None:
    """What Telegram would refuse in ``text`` as HTML, or None."""
    if _BARE_AMPERSAND.search(text):
        return "unescaped '&'"
    tags = len(_TAG.findall(text))
    if text.count("<") != tags or text.count(">") != tags:
        return "unescaped '<' or '>'"
    checker = _TagChecker()
    checker.feed(text)
    checker.close()
    if checker.problem:
        return checker.problem
    if checker.stack:
        return f"unclosed tag {checker.stack[-1]!r}"
    return None
