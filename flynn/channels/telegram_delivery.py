"""Sending to Telegram: where a reply goes (``TelegramReply``, the channel's reply handle), the
HTTP request that tells a 5xx answer apart, and delivery in parts with retries that never
deliver a message twice.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

import httpx
import structlog
from telegram import Bot, ReplyParameters
from telegram.constants import ParseMode
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError
from telegram.request import HTTPXRequest

from flynn.backoff import Backoff
from flynn.channels.split import split_text
from flynn.channels.telegram_html import render_html, visible_length
from flynn.errors import DeliveryFailed
from flynn.messages import OutboundMessage, SessionKey

log = structlog.get_logger(__name__)

MAX_LEN: Final = 4096
"""Telegram's limit on a message's visible text, in UTF-16 code units."""

SEND_ATTEMPTS: Final = 4
"""Tries per message part; with the default backoff, retries wait 1 + 2 + 3 s at most (flood
control waits as long as Telegram says)."""

Sleep = Callable[[float], Awaitable[None]]
ChatKey = tuple[int, int | None]
"""A chat and, for forum topics, the topic's thread id."""


@dataclass(frozen=True, slots=True)
class TelegramReply:
    """The reply handle of an accepted message: its chat and topic, and in groups the message
    to quote, so the reply lands next to it."""

    chat: ChatKey
    quote: int | None


def reply_chat(message: OutboundMessage) -> tuple[ChatKey, int | None]:
    """Where a reply goes and what it quotes. Without a handle (a message replayed after a
    restart), to its session's chat, quoting nothing."""
    handle = message.reply_handle
    if isinstance(handle, TelegramReply):
        return handle.chat, handle.quote
    return session_chat(message.session), None


def push_chat(message: OutboundMessage) -> ChatKey:
    """Where a push goes: the recipient's private chat, or the chat (and topic) of its session."""
    if message.recipient is not None:
        return int(message.recipient), None
    return session_chat(message.session)


def session_chat(session: SessionKey) -> ChatKey:
    """The chat and topic of a session, for what answers no message we hold a handle for (a
    group split per sender is the group's chat); the topic is the thread's leading number."""
    topic = re.match(r"\d+", session.thread or "")
    return int(session.chat_id), int(topic.group()) if topic else None


class TelegramUnavailable(NetworkError):
    """Telegram answered 5xx: it did not process the request, so sending again is safe."""

    def __init__(self, status: int) -> None:
        super().__init__(f"Telegram answered {status}")
        self.status = status


class TelegramRequest(HTTPXRequest):
    """HTTPXRequest that raises ``TelegramUnavailable`` for a 5xx answer. python-telegram-bot
    turns every 5xx into a bare ``NetworkError``, which also covers a connection that broke after
    the request went out (when a retry could deliver a message twice); the status tells them
    apart, and it is only seen here. An answer that is not JSON (a proxy's HTML error page)
    raises as python-telegram-bot raises it, without the traceback it logs."""

    # Any: the parameters pass through unchanged; their types are python-telegram-bot's private
    # aliases.
    async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        status, payload = await super().do_request(*args, **kwargs)
        if status >= 500:
            raise TelegramUnavailable(status)
        return status, payload

    @staticmethod
    def parse_json_payload(payload: bytes) -> dict[str, Any]:
        """The JSON object of an answer; raises ``TelegramError`` when it is none. Unlike
        python-telegram-bot's, logs nothing: it logs the whole body with a traceback, and a
        proxy's error page may quote the request URL, which holds the token."""
        try:
            data = json.loads(payload.decode("utf-8", "replace"))
        except ValueError as exc:
            raise TelegramError("Invalid server response") from exc
        if not isinstance(data, dict):
            raise TelegramError("Invalid server response")
        return data


class TelegramDelivery:
    """Sends text to a chat in parts under Telegram's limit. ``sleep`` waits out flood control
    and the backoff between retries (``backoff_initial`` times the attempt)."""

    def __init__(self, *, sleep: Sleep, backoff_initial: float) -> None:
        self._sleep = sleep
        # ``backoff_initial`` times 1, 2, 3: doubling, capped at the third wait.
        self._backoff = Backoff(first=backoff_initial, most=3 * backoff_initial)

    async def send_text(
        self, bot: Bot, chat: ChatKey, text: str, *, quote: int | None, plain: bool = False
    ) -> list[str]:
        """Sends ``text`` in parts (HTML unless ``plain``), the first quoting ``quote``; the ids
        of the parts. Raises ``DeliveryFailed`` (with the ids sent before) at the first part
        that failed."""
        sent: list[str] = []
        for part in split_text(text, MAX_LEN, "utf16"):
            markup: str | None = None
            if not plain:
                markup = render_html(part)
                if visible_length(markup) > MAX_LEN:
                    markup = None
            try:
                message_id = await self.send_part(bot, chat, part, markup, quote)
            except DeliveryFailed as exc:
                raise DeliveryFailed(
                    str(exc),
                    sent=tuple(sent),
                    may_have_arrived=exc.may_have_arrived,
                    permanent=exc.permanent,
                ) from None
            sent.append(str(message_id))
            quote = None
        return sent

    async def send_notice(self, bot: Bot, chat: ChatKey, text: str, quote: int | None) -> None:
        """Sends one of our own plain notices (busy, refusal); a failure is only logged: it
        answers no message."""
        with contextlib.suppress(DeliveryFailed):  # send_part logged it
            await self.send_part(bot, chat, text, None, quote)

    async def send_part(
        self, bot: Bot, chat: ChatKey, text: str, markup: str | None, quote: int | None
    ) -> int:
        """Sends one part (``markup`` as HTML when given, else ``text`` plain); returns its message
        id. Raises ``DeliveryFailed`` (logged) when it was not delivered."""
        chat_id, thread = chat
        reply = ReplyParameters(quote, allow_sending_without_reply=True) if quote else None
        for attempt in range(1, SEND_ATTEMPTS + 1):
            try:
                sent = await bot.send_message(
                    chat_id,
                    markup if markup is not None else text,
                    parse_mode=ParseMode.HTML if markup is not None else None,
                    message_thread_id=thread,
                    reply_parameters=reply,
                )
            except RetryAfter as exc:
                delay = retry_after_seconds(exc)
                log.warning("telegram.rate_limited", chat_id=chat_id, retry_after=delay)
                await self._sleep(delay)
            except BadRequest as exc:
                if markup is None:
                    raise _send_failure(exc) from None
                # A 400 means nothing was sent. Usually Telegram could not parse our entities;
                # the words still matter more than the formatting, so send them plain.
                log.warning("telegram.markup_refused", description=exc.message)
                markup = None
            except NetworkError as exc:
                if not _never_processed(exc):
                    # It may have arrived: a retry could deliver the reply twice.
                    raise _send_failure(exc, may_have_arrived=True) from None
                if attempt == SEND_ATTEMPTS:
                    raise _send_failure(exc) from None
                log.warning("telegram.send_retry", error=type(exc).__name__, attempt=attempt)
                await self._sleep(self._backoff.delay(attempt))
            except TelegramError as exc:
                raise _send_failure(exc) from None
            else:
                return sent.message_id
        log.error("telegram.send_failed", error="GaveUp", attempts=SEND_ATTEMPTS)
        raise DeliveryFailed(f"not delivered after {SEND_ATTEMPTS} attempts")


def retry_after_seconds(exc: RetryAfter) -> float:
    # An int (deprecated) or a timedelta, depending on PTB_TIMEDELTA.
    value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def _never_processed(exc: NetworkError) -> bool:
    """True when Telegram surely did not process the request: it answered 5xx, or no
    connection was made."""
    if isinstance(exc, TelegramUnavailable):
        return True
    return isinstance(exc.__cause__, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)


def _send_failure(exc: TelegramError, *, may_have_arrived: bool = False) -> DeliveryFailed:
    """Logs a part that was not delivered; the ``DeliveryFailed`` to raise for it (``from None``:
    whoever logs it with a traceback must not print the SDK error's text)."""
    # No traceback and no message: a network error's text can carry the request URL (the token).
    # Telegram's own description of a refused request is safe and says what was wrong.
    description = exc.message if isinstance(exc, BadRequest) else None
    log.error(
        "telegram.send_failed",
        error=type(exc).__name__,
        description=description,
        may_have_arrived=may_have_arrived,
    )
    reason = f"Telegram: {description}" if description else f"Telegram: {type(exc).__name__}"
    # Refused as such (a 400 for plain text: the chat or topic is gone; a 403: the bot was
    # blocked or removed): another try would be refused the same way.
    permanent = isinstance(exc, BadRequest | Forbidden)
    return DeliveryFailed(reason, may_have_arrived=may_have_arrived, permanent=permanent)
