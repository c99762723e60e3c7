"""Telegram over the Bot API: our own long-polling loop around python-telegram-bot's ``Bot``, so the
offset, recovery and cancellation are exactly ours; plus access control, mentions, typing, replies.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final, TypeVar

import httpx
import structlog
from telegram import Bot, BotCommand, Message, MessageEntity, ReplyParameters, Update, User
from telegram.constants import ChatAction, ChatType, ParseMode
from telegram.error import (
    BadRequest,
    Conflict,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
)
from telegram.request import HTTPXRequest

from flynn.channels.base import ChannelCapabilities, ChannelStatus, OnMessage
from flynn.channels.split import split_text
from flynn.channels.telegram_html import render_html, visible_length
from flynn.channels.typing_indicator import TypingIndicators
from flynn.commands import CHAT_COMMANDS
from flynn.errors import ConfigError, ConfigProblem, DeliveryFailed, SessionBusy
from flynn.messages import InboundMessage, OutboundMessage, SessionKey
from flynn.settings import TelegramSettings

log = structlog.get_logger(__name__)

MAX_LEN: Final = 4096
"""Telegram's limit on a message's visible text, in UTF-16 code units."""

REFUSAL: Final = (
    "Sorry, I only talk to my owner. If that's you, add {user_id} to "
    "channels.telegram.allowed_users."
)
BUSY: Final = "I'm still working on your earlier messages; please wait a moment."
INTAKE_FAILED: Final = "Sorry, something went wrong on my side with that message; please resend it."

Sleep = Callable[[float], Awaitable[None]]
Clock = Callable[[], datetime]
_ChatKey = tuple[int, int | None]
"""A chat and, for forum topics, the topic's thread id."""

_REMEMBERED: Final = 2048
"""How many recent update ids (and their chats) we keep for dedupe and reply threading."""
_SEND_ATTEMPTS: Final = 4
"""Tries per message part; with the default backoff, retries wait 1 + 2 + 3 s at most (flood
control waits as long as Telegram says)."""

_K = TypeVar("_K")
_V = TypeVar("_V")


def _utc_now() -> datetime:
    return datetime.now(UTC)


class TelegramUnavailable(NetworkError):
    """Telegram answered 5xx: it did not process the request, so sending again is safe."""

    def __init__(self, status: int) -> None:
        super().__init__(f"Telegram answered {status}")
        self.status = status


class _TelegramRequest(HTTPXRequest):
    """HTTPXRequest that raises ``TelegramUnavailable`` for a 5xx answer. python-telegram-bot
    turns every 5xx into a bare ``NetworkError``, which also covers a connection that broke after
    the request went out (when a retry could deliver a message twice); the status tells them
    apart, and it is only seen here."""

    # Any: the parameters pass through unchanged; their types are python-telegram-bot's private
    # aliases.
    async def do_request(self, *args: Any, **kwargs: Any) -> tuple[int, bytes]:
        status, payload = await super().do_request(*args, **kwargs)
        if status >= 500:
            raise TelegramUnavailable(status)
        return status, payload


@dataclass(frozen=True, slots=True)
class _Origin:
    """Where an accepted message came from, so its reply goes to the same chat and topic, quoting
    it in groups."""

    chat: _ChatKey
    message_id: int
    is_group: bool


class TelegramChannel:
    """The ``Channel`` for Telegram. ``allowed`` holds the user ids that may talk to the bot; an
    empty set lets nobody in. Timeouts, poll and typing intervals and ``sleep`` (used for backoff
    and flood waits) are parameters so tests can shrink them."""

    def __init__(
        self,
        settings: TelegramSettings,
        *,
        allowed: frozenset[str],
        clock: Clock = _utc_now,
        poll_timeout: int = 30,
        request_timeout: float = 10.0,
        typing_interval: float = 4.0,
        typing_limit: float = 600.0,
        backoff_initial: float = 1.0,
        backoff_max: float = 30.0,
        sleep: Sleep = asyncio.sleep,
    ) -> None:
        if settings.token is None or not settings.token.get_secret_value():
            raise ConfigError(
                [ConfigProblem("channels.telegram.token", "required when Telegram is enabled")]
            )
        self._token = settings.token
        self._base_url, self._base_file_url = _api_urls(settings.base_url)
        self._allowed = allowed
        self._require_mention = settings.require_mention_in_groups
        self._clock = clock
        self._poll_timeout = poll_timeout
        self._request_timeout = request_timeout
        self._backoff_initial = backoff_initial
        self._backoff_max = backoff_max
        self._sleep = sleep
        self._random = random.Random()

        self._bot: Bot | None = None
        self._me: User | None = None
        self._mention: re.Pattern[str] | None = None
        self._offset: int | None = None
        """The next update id to ask for; everything below it was handled."""
        self._acked: int | None = None
        """The offset the server last received, which is what it has discarded."""
        self._seen: OrderedDict[int, None] = OrderedDict()
        self._origins: OrderedDict[str, _Origin] = OrderedDict()
        self._refused_chats: OrderedDict[int, None] = OrderedDict()
        self._typing = TypingIndicators[_ChatKey](
            self._send_typing, interval=typing_interval, limit=typing_limit, name="telegram"
        )

        self._connected = False
        self._last_inbound: datetime | None = None
        self._last_error: str | None = None
        self._last_error_at: datetime | None = None

    # -- Channel ---------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return "telegram"

    @property
    def capabilities(self) -> ChannelCapabilities:
        return ChannelCapabilities(
            can_edit=False, can_stream=False, max_len=MAX_LEN, length_unit="utf16"
        )

    def status(self) -> ChannelStatus:
        return ChannelStatus(
            name=self.name,
            connected=self._connected,
            last_inbound=self._last_inbound,
            last_error=self._last_error,
            last_error_at=self._last_error_at,
        )

    async def run(self, on_message: OnMessage) -> None:
        """Connects (retrying network failures with backoff), registers the commands and polls
        until cancelled; then stops typing, acknowledges handled updates, closes the HTTP clients
        and re-raises ``CancelledError``. Raises ``ConfigError`` when Telegram refuses the token."""
        if self._bot is not None:
            raise RuntimeError("the Telegram channel is already running")
        _quiet_http_loggers()
        bot = self._make_bot()
        self._bot = bot
        try:
            await self._start(bot)
            await self._poll(bot, on_message)
        finally:
            await self._stop(bot)

    async def send(self, message: OutboundMessage) -> list[str]:
        """Delivers a final reply as Telegram HTML (plain text for errors, or when Telegram refuses
        the markup), split under 4096 UTF-16 units; returns the Telegram message ids sent. Stops
        the chat's typing indicator first. Flood control is waited out; a 5xx answer or a
        connection that could not be made is retried a few times with a short backoff. Raises
        ``DeliveryFailed`` when a part is still not delivered, or failed in a way a retry could
        duplicate (the connection broke after the request went out): the parts after it are
        not sent.

        A push goes the same way to the session's chat (``recipient``: the person's private chat,
        whose id is their user id), quoting nothing and leaving typing alone; it never raises
        ``DeliveryFailed`` but returns the ids of the parts delivered, ``[]`` when its first part
        failed. Raises ``RuntimeError`` when the channel is not running, and ``ValueError`` for a
        chat or recipient that is not a Telegram id."""
        if not message.final:
            return []
        bot = self._bot
        if bot is None:
            raise RuntimeError("the Telegram channel is not running")
        if message.push is not None:
            chat_id, thread = _push_chat(message)
            try:
                sent = await self._send_text(bot, chat_id, thread, message.text, quote=None)
            except DeliveryFailed as exc:
                sent = list(exc.sent)
            log.info(
                "telegram.push_sent" if sent else "telegram.push_undelivered",
                push_id=message.push_id,
                kind=message.push,
                chat_id=chat_id,
                parts=len(sent),
            )
            return sent
        origin = self._origins.get(message.reply_to) if message.reply_to else None
        key = origin.chat if origin is not None else _chat_of(message.session)
        chat_id, thread = key
        await self._typing.finish(key, message.reply_to)
        quote = origin.message_id if origin is not None and origin.is_group else None
        return await self._send_text(
            bot, chat_id, thread, message.text, quote=quote, plain=message.error_code is not None
        )

    async def _send_text(
        self,
        bot: Bot,
        chat_id: int,
        thread: int | None,
        text: str,
        *,
        quote: int | None,
        plain: bool = False,
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
                message_id = await self._send_part(bot, chat_id, thread, part, markup, quote)
            except DeliveryFailed as exc:
                raise DeliveryFailed(
                    str(exc), sent=tuple(sent), may_have_arrived=exc.may_have_arrived
                ) from None
            sent.append(str(message_id))
            quote = None
        return sent

    # -- lifecycle -------------------------------------------------------------------------------

    def _make_bot(self) -> Bot:
        timeout = self._request_timeout

        def request(pool_size: int) -> HTTPXRequest:
            return _TelegramRequest(
                connection_pool_size=pool_size,
                connect_timeout=timeout,
                read_timeout=timeout,
                write_timeout=timeout,
                pool_timeout=timeout,
            )

        # getUpdates has its own connection: a long poll never waits behind a reply, nor blocks one.
        return Bot(
            self._token.get_secret_value(),
            base_url=self._base_url,
            base_file_url=self._base_file_url,
            request=request(8),
            get_updates_request=request(1),
        )

    async def _start(self, bot: Bot) -> None:
        failures = 0
        while True:
            try:
                await bot.initialize()  # calls getMe
                # A webhook left behind by another deployment makes getUpdates fail with 409.
                await bot.delete_webhook(drop_pending_updates=False)
                break
            except InvalidToken:
                raise self._token_refused() from None
            except RetryAfter as exc:
                await self._sleep(_retry_after_seconds(exc))
            except TelegramError as exc:
                failures += 1
                await self._back_off("telegram.start_failed", exc, failures)
        me = bot.bot
        self._me = me
        self._mention = re.compile(
            rf"(?<![\w@])@{re.escape(me.username or '')}\b[,:]?", re.IGNORECASE
        )
        self._connected = True
        try:
            await bot.set_my_commands(
                [BotCommand(command.name, command.about) for command in CHAT_COMMANDS]
            )
        except TelegramError as exc:
            # The menu is a convenience; commands typed by hand still work without it.
            log.warning("telegram.commands_not_registered", error=type(exc).__name__)
        log.info("telegram.started", bot_id=me.id, username=me.username)

    async def _stop(self, bot: Bot) -> None:
        self._connected = False
        await self._typing.aclose()
        try:
            if self._offset is not None and self._offset != self._acked:
                # Tell Telegram what we handled, so a restart does not see it again.
                async with asyncio.timeout(self._request_timeout):
                    await bot.get_updates(offset=self._offset, timeout=0, limit=1)
                self._acked = self._offset
        except (TelegramError, TimeoutError) as exc:
            log.warning("telegram.ack_failed", error=type(exc).__name__)
        finally:
            await bot.shutdown()
            self._bot = None
            log.info("telegram.stopped")

    # -- polling ---------------------------------------------------------------------------------

    async def _poll(self, bot: Bot, on_message: OnMessage) -> None:
        failures = 0
        while True:
            offset = self._offset
            try:
                updates = await bot.get_updates(
                    offset=offset, timeout=self._poll_timeout, allowed_updates=["message"]
                )
            except InvalidToken:
                raise self._token_refused() from None
            except RetryAfter as exc:
                await self._sleep(_retry_after_seconds(exc))
                continue
            except TelegramError as exc:
                # NetworkError, TimedOut, 5xx, and Conflict (another instance polls this token).
                failures += 1
                await self._back_off("telegram.poll_failed", exc, failures)
                continue
            self._acked = offset
            if failures:
                log.info("telegram.poll_recovered", failures=failures)
                failures = 0
            self._connected = True
            for update in updates:
                if update.update_id in self._seen:
                    log.info("telegram.duplicate", update_id=update.update_id)
                else:
                    await self._handle(bot, update, on_message)
                    _remember(self._seen, update.update_id, None)
                # The server's order, not max(): after a week without updates Telegram may pick
                # the next update id at random, lower than the last.
                self._offset = update.update_id + 1

    def _token_refused(self) -> ConfigError:
        """The error to raise ``from None``: python-telegram-bot's InvalidToken quotes the token."""
        self._connected = False
        self._last_error = "InvalidToken: Telegram refused the token"
        self._last_error_at = self._clock()
        log.error("telegram.token_refused")
        return ConfigError([ConfigProblem("channels.telegram.token", "refused by Telegram (401)")])

    async def _back_off(self, event: str, exc: TelegramError, failures: int) -> None:
        self._connected = False
        self._last_error = type(exc).__name__
        if isinstance(exc, Conflict):
            self._last_error += ": another instance is polling with this token"
        self._last_error_at = self._clock()
        base = min(self._backoff_max, self._backoff_initial * 2 ** min(failures - 1, 16))
        delay = min(self._backoff_max, base * self._random.uniform(0.75, 1.25))
        # Only the type: messages of network errors can carry the request URL, and so the token.
        log.warning(event, error=type(exc).__name__, failures=failures, retry_in=round(delay, 2))
        await self._sleep(delay)

    async def _handle(self, bot: Bot, update: Update, on_message: OnMessage) -> None:
        """Passes one update on, refuses it, or skips it; returns once it is dealt with."""
        update_id = update.update_id
        message = update.message
        sender = message.from_user if message is not None else None
        if message is None or sender is None or sender.is_bot or message.text is None:
            return
        chat = message.chat
        if chat.type not in (ChatType.PRIVATE, ChatType.GROUP, ChatType.SUPERGROUP):
            return
        is_group = chat.type != ChatType.PRIVATE
        text: str | None = message.text
        if is_group and self._is_for_another_bot(message):
            return
        if is_group and self._require_mention:
            text = self._addressed_text(message, message.text)
            if text is None:
                return
        thread = message.message_thread_id if message.is_topic_message else None
        if str(sender.id) not in self._allowed:
            await self._refuse(bot, message, sender, thread)
            return
        if not text:
            return
        inbound = InboundMessage(
            channel=self.name,
            chat_id=str(chat.id),
            sender_id=str(sender.id),
            text=text,
            message_id=str(update_id),
            received_at=message.date,
            thread=str(thread) if thread is not None else None,
            sender_name=sender.full_name,
            is_group=is_group,
            # Still passed on: the person may ask about it, but it says nothing about them.
            forwarded=message.forward_origin is not None,
        )
        key = (chat.id, thread)
        _remember(self._origins, inbound.message_id, _Origin(key, message.message_id, is_group))
        # Typing starts before the hand-off: the reply may be sent before on_message returns.
        self._typing.start(key, inbound.message_id)
        quote = message.message_id if is_group else None
        try:
            await on_message(inbound)
        except SessionBusy:
            await self._typing.finish(key, inbound.message_id)
            log.info("telegram.busy", chat_id=chat.id)
            await self._send_notice(bot, chat.id, thread, BUSY, quote)
        except Exception:  # per-update boundary: log, tell the person, keep polling
            await self._typing.finish(key, inbound.message_id)
            log.exception("telegram.intake_failed", update_id=update_id)
            await self._send_notice(bot, chat.id, thread, INTAKE_FAILED, quote)
        else:
            self._last_inbound = self._clock()

    def _addressed_text(self, message: Message, text: str) -> str | None:
        """``text`` without the bot's mention when a group message is meant for the bot; None when
        it is not: no mention, no reply to the bot, no command (``/cmd@otherbot`` is not ours)."""
        me = self._me
        assert me is not None and self._mention is not None
        if _leading_command(message) is not None:
            # A bare command in a group goes to every bot there; we take it as ours too.
            return text
        stripped = self._mention.sub("", text)
        mentioned = stripped != text or any(
            entity.user is not None and entity.user.id == me.id
            for entity in message.parse_entities([MessageEntity.TEXT_MENTION])
        )
        replied = message.reply_to_message
        # In a forum topic every message "replies" to the topic's first message; that is no reply.
        is_topic_root = replied is not None and replied.message_id == message.message_thread_id
        replied_to_bot = (
            replied is not None
            and not (message.is_topic_message and is_topic_root)
            and replied.from_user is not None
            and replied.from_user.id == me.id
        )
        if not mentioned and not replied_to_bot:
            return None
        return re.sub(r"[ \t]{2,}", " ", stripped).strip().lstrip(",:;").strip()

    def _is_for_another_bot(self, message: Message) -> bool:
        """``/command@otherbot``: addressed to another bot in the same group."""
        _, at, target = (_leading_command(message) or "").partition("@")
        username = self._me.username if self._me is not None else None
        return bool(at) and target.casefold() != (username or "").casefold()

    async def _refuse(self, bot: Bot, message: Message, sender: User, thread: int | None) -> None:
        chat_id = message.chat.id
        first = chat_id not in self._refused_chats
        log.info("telegram.refused", user_id=sender.id, chat_id=chat_id, replied=first)
        if first:
            _remember(self._refused_chats, chat_id, None)
            quote = message.message_id if message.chat.type != ChatType.PRIVATE else None
            text = REFUSAL.format(user_id=sender.id)
            await self._send_notice(bot, chat_id, thread, text, quote)

    # -- typing ----------------------------------------------------------------------------------

    async def _send_typing(self, key: _ChatKey) -> None:
        bot = self._bot
        if bot is None:
            return
        chat_id, thread = key
        try:
            await bot.send_chat_action(chat_id, ChatAction.TYPING, message_thread_id=thread)
        except TelegramError as exc:
            log.debug("telegram.typing_failed", error=type(exc).__name__)

    # -- sending ---------------------------------------------------------------------------------

    async def _send_notice(
        self, bot: Bot, chat_id: int, thread: int | None, text: str, quote: int | None
    ) -> None:
        """Sends one of our own plain notices (busy, refusal); a failure is only logged: it
        answers no message."""
        with contextlib.suppress(DeliveryFailed):  # _send_part logged it
            await self._send_part(bot, chat_id, thread, text, None, quote)

    async def _send_part(
        self,
        bot: Bot,
        chat_id: int,
        thread: int | None,
        text: str,
        markup: str | None,
        quote: int | None,
    ) -> int:
        """Sends one part (``markup`` as HTML when given, else ``text`` plain); returns its message
        id. Raises ``DeliveryFailed`` (logged) when it was not delivered."""
        reply = ReplyParameters(quote, allow_sending_without_reply=True) if quote else None
        for attempt in range(1, _SEND_ATTEMPTS + 1):
            try:
                sent = await bot.send_message(
                    chat_id,
                    markup if markup is not None else text,
                    parse_mode=ParseMode.HTML if markup is not None else None,
                    message_thread_id=thread,
                    reply_parameters=reply,
                )
            except RetryAfter as exc:
                delay = _retry_after_seconds(exc)
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
                if attempt == _SEND_ATTEMPTS:
                    raise _send_failure(exc) from None
                log.warning("telegram.send_retry", error=type(exc).__name__, attempt=attempt)
                await self._sleep(self._backoff_initial * attempt)
            except TelegramError as exc:
                raise _send_failure(exc) from None
            else:
                return sent.message_id
        log.error("telegram.send_failed", error="GaveUp", attempts=_SEND_ATTEMPTS)
        raise DeliveryFailed(f"not delivered after {_SEND_ATTEMPTS} attempts")


def _chat_of(session: SessionKey) -> _ChatKey:
    """The chat and topic of a session whose inbound message we no longer remember. The router may
    extend a group's thread with a per-sender suffix (``77/u1001``, ``u1001``); the topic is the
    leading number, if any."""
    topic = re.match(r"\d+", session.thread or "")
    return int(session.chat_id), int(topic.group()) if topic else None


def _push_chat(message: OutboundMessage) -> _ChatKey:
    """Where a push goes: the recipient's private chat, or the chat (and topic) of its session."""
    if message.recipient is not None:
        return int(message.recipient), None
    return _chat_of(message.session)


def _leading_command(message: Message) -> str | None:
    """The ``/command`` (with any ``@botname``) that ``message`` starts with."""
    commands = message.parse_entities([MessageEntity.BOT_COMMAND])
    return next((text for entity, text in commands.items() if entity.offset == 0), None)


def _api_urls(base_url: str | None) -> tuple[str, str]:
    """The Bot API and file URLs in python-telegram-bot's form (the token is appended)."""
    if base_url is None:
        return "https://api.telegram.org/bot", "https://api.telegram.org/file/bot"
    base = base_url.rstrip("/")
    if not base.endswith("/bot"):
        base += "/bot"
    return base, base.removesuffix("/bot") + "/file/bot"


def _quiet_http_loggers() -> None:
    # httpx logs every request URL at INFO and python-telegram-bot logs the API URL at DEBUG;
    # both contain the bot token.
    for name in ("httpx", "httpcore", "telegram"):
        logger = logging.getLogger(name)
        if logger.getEffectiveLevel() < logging.WARNING:
            logger.setLevel(logging.WARNING)


def _retry_after_seconds(exc: RetryAfter) -> float:
    # An int (deprecated) or a timedelta, depending on PTB_TIMEDELTA.
    value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def _never_processed(exc: NetworkError) -> bool:
    """True when Telegram surely did not process the request: it answered 5xx, or no
    connection was made."""
    if isinstance(exc, TelegramUnavailable):
        return True
    return isinstance(exc.__cause__, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)


def _remember(memory: OrderedDict[_K, _V], key: _K, value: _V) -> None:
    memory[key] = value
    while len(memory) > _REMEMBERED:
        memory.popitem(last=False)


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
    return DeliveryFailed(reason, may_have_arrived=may_have_arrived)
