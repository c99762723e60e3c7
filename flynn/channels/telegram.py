"""Telegram over the Bot API: our own long-polling loop around python-telegram-bot's ``Bot``, so the
offset, recovery and cancellation are exactly ours, or webhook mode (``telegram_webhook``'s
listener), where every update takes the same path; plus access control, mentions and typing.
Sending (parts, retries, the reply handle) is ``telegram_delivery``'s.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import mimetypes
import random
import re
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Final, Generic, TypeVar
from urllib.parse import urlsplit

import structlog
from telegram import Bot, BotCommand, Message, MessageEntity, Update, User
from telegram.constants import ChatAction, ChatType
from telegram.error import BadRequest, Conflict, InvalidToken, RetryAfter, TelegramError
from telegram.request import HTTPXRequest

from flynn.access import Access
from flynn.backoff import Backoff
from flynn.channels.base import (
    NOT_STREAMED,
    ChannelCapabilities,
    ChannelStatus,
    OnMessage,
    chat_push_text,
)
from flynn.channels.telegram_delivery import (
    MAX_LEN,
    ChatKey,
    Sleep,
    TelegramDelivery,
    TelegramReply,
    TelegramRequest,
    push_chat,
    reply_chat,
    retry_after_seconds,
)
from flynn.channels.typing_indicator import TypingIndicators
from flynn.commands import CHAT_COMMANDS, parse_command, private_in_group
from flynn.coordination import Leadership, LocalCoordination
from flynn.errors import ConfigError, ConfigProblem, DeliveryFailed, SessionBusy, StoreError
from flynn.messages import (
    Attachment,
    AttachmentKind,
    ChannelAccount,
    Delivery,
    InboundMessage,
    OutboundMessage,
)
from flynn.settings import Settings, TelegramSettings

if TYPE_CHECKING:
    from flynn.channels.telegram_webhook import TelegramUpdates, TelegramWebhook

log = structlog.get_logger(__name__)

BUSY: Final = "I'm still working on your earlier messages; please wait a moment."
INTAKE_FAILED: Final = "Sorry, something went wrong on my side with that message; please resend it."
NOT_STORED: Final = "I can't save messages now; I'll answer yours once I can, no need to resend."

Clock = Callable[[], datetime]

POLLER_LEASE: Final = "telegram.poller"
"""The lease of the one worker that polls (``Leadership``): two getUpdates at once conflict."""

_REMEMBERED: Final = 2048
"""How many recent update ids (and refused chats) we keep."""
_ALLOWED_UPDATES: Final = ["message"]
"""What we ask Telegram for, polling or by webhook."""
_UPDATES_KEPT: Final = timedelta(days=2)
"""How long handled webhook update ids are kept (Telegram gives up on an update after a day)."""
_PRUNE_EVERY: Final = timedelta(days=1)

_K = TypeVar("_K", bound=Hashable)


def _utc_now() -> datetime:
    return datetime.now(UTC)


MAX_BOT_DOWNLOAD_BYTES = 20 * 1024 * 1024
"""The largest file the Bot API lets a bot download."""
FILE_NOT_FETCHED = "I couldn't fetch that file from Telegram; please send it again."


class _Recent(Generic[_K]):
    """The last ``_REMEMBERED`` keys seen, oldest forgotten first."""

    def __init__(self) -> None:
        self._keys: OrderedDict[_K, None] = OrderedDict()

    def __contains__(self, key: _K) -> bool:
        return key in self._keys

    def add(self, key: _K) -> None:
        self._keys[key] = None
        while len(self._keys) > _REMEMBERED:
            self._keys.popitem(last=False)


class TelegramChannel:
    """The ``Channel`` for Telegram. ``access`` says who may talk to the bot and what a stranger
    is told (each text once per chat). Timeouts, poll and typing intervals and ``sleep`` (used
    for backoff and flood waits) are parameters so tests can shrink them."""

    def __init__(
        self,
        settings: TelegramSettings,
        *,
        access: Access,
        clock: Clock = _utc_now,
        poll_timeout: int = 30,
        request_timeout: float = 10.0,
        typing_interval: float = 4.0,
        typing_limit: float = 600.0,
        backoff_initial: float = 1.0,
        backoff_max: float = 30.0,
        sleep: Sleep = asyncio.sleep,
        max_file_bytes: int = MAX_BOT_DOWNLOAD_BYTES,
        updates: TelegramUpdates | None = None,
        leadership: Leadership | None = None,
    ) -> None:
        """``leadership``: without a webhook, polls only while leading ``POLLER_LEASE`` among the
        workers on one database (always, alone)."""
        if settings.token is None or not settings.token.get_secret_value():
            raise ConfigError(
                [ConfigProblem("channels.telegram.token", "required when Telegram is enabled")]
            )
        if settings.webhook_url is not None and updates is None:
            raise ValueError("webhook mode needs the store that handles each update once")
        self._token = settings.token
        self._settings = settings
        self._updates = updates
        self._leadership = leadership or LocalCoordination()
        webhook_mode = settings.webhook_url is not None
        self._listening: asyncio.Event | None = asyncio.Event() if webhook_mode else None
        self._base_url, self._base_file_url = _api_urls(settings.base_url)
        self._access = access
        self._require_mention = settings.require_mention_in_groups
        self._max_file_bytes = max_file_bytes
        self._clock = clock
        self._poll_timeout = poll_timeout
        self._request_timeout = request_timeout
        self._backoff = Backoff(
            first=backoff_initial,
            most=backoff_max,
            jitter=(0.75, 1.25),
            random=random.Random().random,
        )
        self._sleep = sleep
        self._delivery = TelegramDelivery(sleep=sleep, backoff_initial=backoff_initial)

        self._bot: Bot | None = None
        self._me: User | None = None
        self._mention: re.Pattern[str] | None = None
        self._offset: int | None = None
        """The next update id to ask for; everything below it was handled."""
        self._acked: int | None = None
        """The offset the server last received, which is what it has discarded."""
        self._seen = _Recent[int]()
        self._refused_chats = _Recent[tuple[int, str]]()
        self._told_not_stored = _Recent[int]()
        self._typing = TypingIndicators[ChatKey](
            self._send_typing, interval=typing_interval, limit=typing_limit, name="telegram"
        )

        self._connected = False
        self._last_inbound: datetime | None = None
        self._last_error: str | None = None
        self._last_error_at: datetime | None = None
        self._pruned_at: datetime | None = None
        self.webhook: TelegramWebhook | None = None
        """The listener of the last run in webhook mode."""

    # -- Channel ---------------------------------------------------------------------------------

    @property
    def name(self) -> str:
        return "telegram"

    @property
    def capabilities(self) -> ChannelCapabilities:
        return ChannelCapabilities(
            can_edit=False, can_stream=False, max_len=MAX_LEN, length_unit="utf16"
        )

    @property
    def listening(self) -> asyncio.Event | None:
        # Polling connects out to the chat service; a webhook serves a port of its own.
        return self._listening

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
        and re-raises ``CancelledError``. Raises ``ConfigError`` when Telegram refuses the token.

        In webhook mode it listens first (``OSError`` when the address is taken), then sets the
        webhook and serves posted updates until cancelled; then it stops accepting, lets the
        updates in hand finish and stops as above, leaving the webhook set (another worker may
        serve it)."""
        if self._bot is not None:
            raise RuntimeError("the Telegram channel is already running")
        _quiet_http_loggers()
        bot = self._make_bot()
        self._bot = bot
        try:
            if self._settings.webhook_url is None:
                await self._start(bot)
                await self._leadership.lead(
                    POLLER_LEASE, lambda: self._poll_and_confirm(bot, on_message)
                )
            else:
                await self._serve_webhook(bot, on_message, self._settings.webhook_url)
        finally:
            await self._stop(bot)

    async def send(self, message: OutboundMessage) -> Delivery:
        """Delivers a final reply as Telegram HTML (plain text for errors, or when Telegram refuses
        the markup), split under 4096 UTF-16 units, to the chat and topic of its reply handle,
        quoting the message it answers in groups (without a handle, as after a restart: to the
        session's chat, quoting nothing). Stops the chat's typing indicator first. Flood control
        is waited out; a 5xx answer or a connection that could not be made is retried a few
        times with a short backoff. ``failed`` (with the ids of the parts sent before) when a
        part is still not delivered, or failed in a way a retry could duplicate (the connection
        broke after the request went out): the parts after it are not sent.

        A push goes the same way to the session's chat (``recipient``: the person's private chat,
        whose id is their user id), quoting nothing and leaving typing alone. Raises
        ``RuntimeError`` when the channel is not running, and ``ValueError`` for a chat or
        recipient that is not a Telegram id."""
        if not message.final:
            return NOT_STREAMED
        bot = self._bot
        if bot is None:
            raise RuntimeError("the Telegram channel is not running")
        if message.push is not None:
            chat = push_chat(message)
            delivery = await self._send_text(bot, chat, chat_push_text(message), quote=None)
            log.info(
                "telegram.push_sent" if delivery.is_delivered else "telegram.push_undelivered",
                push_id=message.push_id,
                kind=message.push,
                chat_id=chat[0],
                parts=len(delivery.ids),
            )
            return delivery
        chat, quote = reply_chat(message)
        await self._typing.finish(chat, message.reply_to)
        return await self._send_text(
            bot, chat, message.text, quote=quote, plain=message.error_code is not None
        )

    async def _send_text(
        self, bot: Bot, chat: ChatKey, text: str, *, quote: int | None, plain: bool = False
    ) -> Delivery:
        try:
            sent = await self._delivery.send_text(bot, chat, text, quote=quote, plain=plain)
        except DeliveryFailed as exc:
            return Delivery.failed(str(exc), exc.sent, permanent=exc.permanent)
        return Delivery.delivered(sent)

    # -- lifecycle -------------------------------------------------------------------------------

    def _make_bot(self) -> Bot:
        timeout = self._request_timeout

        def request(pool_size: int) -> HTTPXRequest:
            return TelegramRequest(
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
                me = bot.bot
                # Known before the webhook is set: posts may come the moment it is.
                self._mention = re.compile(
                    rf"(?<![\w@])@{re.escape(me.username or '')}\b[,:]?", re.IGNORECASE
                )
                self._me = me
                await self._receive_updates(bot)
                break
            except InvalidToken:
                raise self._token_refused() from None
            except RetryAfter as exc:
                await self._sleep(retry_after_seconds(exc))
            except TelegramError as exc:
                failures += 1
                await self._back_off("telegram.start_failed", exc, failures)
        self._connected = True
        try:
            await bot.set_my_commands(
                [BotCommand(command.name, command.about) for command in CHAT_COMMANDS]
            )
        except TelegramError as exc:
            # The menu is a convenience; commands typed by hand still work without it.
            log.warning("telegram.commands_not_registered", error=type(exc).__name__)
        log.info("telegram.started", bot_id=me.id, username=me.username, mode=self._mode)

    @property
    def _mode(self) -> str:
        return "polling" if self._settings.webhook_url is None else "webhook"

    async def _receive_updates(self, bot: Bot) -> None:
        """Has Telegram post updates to the webhook, or keep them for getUpdates. Nothing pending
        is dropped either way."""
        url = self._settings.webhook_url
        if url is None:
            # A webhook left behind (webhook mode before, another deployment) makes getUpdates
            # fail with 409.
            await bot.delete_webhook(drop_pending_updates=False)
            return
        from flynn.channels.telegram_webhook import shown_url, webhook_secret

        await bot.set_webhook(
            url,
            secret_token=webhook_secret(self._settings),
            allowed_updates=_ALLOWED_UPDATES,
            drop_pending_updates=False,
        )
        log.info("telegram.webhook_set", url=shown_url(url))

    async def _stop(self, bot: Bot) -> None:
        self._connected = False
        await self._typing.aclose()
        try:
            await self._confirm(bot)
        finally:
            await bot.shutdown()
            self._bot = None
            log.info("telegram.stopped")

    async def _confirm(self, bot: Bot) -> None:
        """Tells Telegram what was handled, so a restart (or the next poller) does not see it
        again."""
        try:
            if self._offset is not None and self._offset != self._acked:
                async with asyncio.timeout(self._request_timeout):
                    await bot.get_updates(offset=self._offset, timeout=0, limit=1)
                self._acked = self._offset
        except (TelegramError, TimeoutError) as exc:
            log.warning("telegram.ack_failed", error=type(exc).__name__)

    # -- polling ---------------------------------------------------------------------------------

    async def _poll_and_confirm(self, bot: Bot, on_message: OnMessage) -> None:
        """Polls while leading; stopped (the lease lost or given back), confirms what it
        handled before another worker polls."""
        try:
            await self._poll(bot, on_message)
        finally:
            await self._confirm(bot)
            # Another worker's poll starts from what Telegram confirmed.
            self._offset = self._acked = None

    async def _poll(self, bot: Bot, on_message: OnMessage) -> None:
        failures = 0
        refused = 0  # updates storage refused in a row
        while True:
            offset = self._offset
            try:
                updates = await bot.get_updates(
                    offset=offset, timeout=self._poll_timeout, allowed_updates=_ALLOWED_UPDATES
                )
            except InvalidToken:
                raise self._token_refused() from None
            except RetryAfter as exc:
                await self._sleep(retry_after_seconds(exc))
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
                elif await self._handle(bot, update, on_message):
                    self._seen.add(update.update_id)
                    refused = 0
                else:
                    # Not stored: the offset stays on it, so Telegram keeps it (and those after
                    # it) and sends it again at the next poll. The connection is fine, though.
                    self._offset = update.update_id
                    refused += 1
                    error = "StoreError: an update could not be stored; Telegram keeps it"
                    await self._wait_after(
                        "telegram.update_held", error, refused, update_id=update.update_id
                    )
                    break
                # The server's order, not max(): after a week without updates Telegram may pick
                # the next update id at random, lower than the last.
                self._offset = update.update_id + 1

    # -- webhook ---------------------------------------------------------------------------------

    async def _serve_webhook(self, bot: Bot, on_message: OnMessage, url: str) -> None:
        from flynn.channels.telegram_webhook import TelegramWebhook, webhook_secret  # aiohttp

        assert self._updates is not None and self._listening is not None
        host, port = self._settings.webhook_address

        async def on_update(payload: Mapping[str, object]) -> int:
            return await self._on_posted(bot, payload, on_message)

        self.webhook = webhook = TelegramWebhook(
            host=host,
            port=port,
            path=urlsplit(url).path,
            secret=webhook_secret(self._settings),
            on_update=on_update,
        )
        async with webhook:
            self._listening.set()
            self._forget_old_updates()
            try:
                await self._start(bot)
                await asyncio.Event().wait()  # posts are served until cancelled
            finally:
                self._listening.clear()

    async def _on_posted(
        self, bot: Bot, payload: Mapping[str, object], on_message: OnMessage
    ) -> int:
        """One posted update, through the path polling takes, at most once across retries and
        workers: 200 once it is dealt with (or was before), 400 when it is no Update, 503 (for
        Telegram to post it again) before the channel started, while another post of it is in
        hand, or when storage refused it; 500 (logged) when handling it failed unexpectedly."""
        me, updates = self._me, self._updates
        assert updates is not None
        if me is None:
            return 503
        try:
            update = Update.de_json(dict(payload), bot)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:  # the shapes' errors
            log.warning("telegram.webhook_not_an_update", error=type(exc).__name__)
            return 400
        update_id = update.update_id
        try:
            claim = updates.claim(me.id, update_id, now=self._clock())
        except StoreError as exc:
            log.warning("telegram.update_not_claimed", update_id=update_id, error=str(exc))
            return 503
        if claim != "claimed":
            log.info("telegram.duplicate", update_id=update_id, found=claim)
            return 200 if claim == "done" else 503
        handled = False
        try:
            handled = await self._handle(bot, update, on_message)
        except Exception:  # per-update boundary: log it; Telegram posts it again later
            log.exception("telegram.update_failed", update_id=update_id)
            return 500
        finally:
            # Released when not handled (or cut off): the next post of it is handled anew.
            with contextlib.suppress(StoreError):
                if handled:
                    updates.done(me.id, update_id)
                else:
                    updates.release(me.id, update_id)
        self._forget_old_updates()
        return 200 if handled else 503

    def _forget_old_updates(self) -> None:
        """Prunes the ids of updates handled long ago, at start and then once a day."""
        now = self._clock()
        if self._updates is None or (self._pruned_at and now - self._pruned_at < _PRUNE_EVERY):
            return
        self._pruned_at = now
        with contextlib.suppress(StoreError):  # tried again tomorrow
            self._updates.prune(before=now - _UPDATES_KEPT)

    def _token_refused(self) -> ConfigError:
        """The error to raise ``from None``: python-telegram-bot's InvalidToken quotes the token."""
        self._connected = False
        self._last_error = "InvalidToken: Telegram refused the token"
        self._last_error_at = self._clock()
        log.error("telegram.token_refused")
        return ConfigError([ConfigProblem("channels.telegram.token", "refused by Telegram (401)")])

    async def _back_off(self, event: str, exc: TelegramError, failures: int) -> None:
        self._connected = False
        # Only the type: messages of network errors can carry the request URL, and so the token.
        error = type(exc).__name__
        if isinstance(exc, Conflict):
            error += ": another instance is polling with this token"
        elif isinstance(exc, BadRequest):
            # Telegram's own words, which quote no URL: why setWebhook was refused, say.
            error += f": {exc.message}"
        await self._wait_after(event, error, failures)

    async def _wait_after(self, event: str, error: str, failures: int, **fields: int) -> None:
        """Shows ``error`` in the status, logs ``event``, sleeps the ``failures``-th backoff."""
        self._last_error, self._last_error_at = error, self._clock()
        delay = self._backoff.delay(failures)
        log.warning(
            event,
            error=error.partition(":")[0],
            failures=failures,
            **fields,
            retry_in=round(delay, 2),
        )
        await self._sleep(delay)

    async def _handle(self, bot: Bot, update: Update, on_message: OnMessage) -> bool:
        """Passes one update on, refuses it, or skips it; returns once it is dealt with: True,
        or False when storage refused it (it must stay with Telegram, to be delivered again)."""
        update_id = update.update_id
        message = update.message
        sender = message.from_user if message is not None else None
        if message is None or sender is None or sender.is_bot:
            return True
        has_files = bool(message.photo or message.document)
        if message.text is None and not has_files:
            return True
        chat = message.chat
        if chat.type not in (ChatType.PRIVATE, ChatType.GROUP, ChatType.SUPERGROUP):
            return True
        is_group = chat.type != ChatType.PRIVATE
        if is_group and message.text is None:
            return True  # pictures and files are taken in private chats only
        text: str | None = message.text if message.text is not None else message.caption or ""
        if is_group and self._is_for_another_bot(message):
            return True
        if is_group and self._require_mention:
            text = self._addressed_text(message, text or "")
            if text is None:
                return True
        thread = message.message_thread_id if message.is_topic_message else None
        if not self._access.is_allowed(ChannelAccount(self.name, str(sender.id))):
            await self._refuse(bot, message, sender, thread)
            return True
        if not text and not has_files:
            return True
        text = text or ""
        forwarded = message.forward_origin is not None
        chat_key: ChatKey = (chat.id, thread)
        quote = message.message_id if is_group else None
        command = None if forwarded else parse_command(text)  # without any @botname
        account = ChannelAccount(self.name, str(sender.id))
        mine = is_group and self._access.remembers_across_chats(account)
        refusal = private_in_group(command) if mine else None
        if refusal is not None:
            await self._delivery.send_notice(bot, chat_key, refusal, quote)
            return True
        try:
            attachments = await self._attachments(bot, message)
        except TelegramError as exc:
            log.warning("telegram.file_not_fetched", update_id=update_id, error=type(exc).__name__)
            await self._delivery.send_notice(bot, chat_key, FILE_NOT_FETCHED, quote)
            return True
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
            forwarded=forwarded,
            command=command,
            reply_handle=TelegramReply(chat_key, quote),
            attachments=attachments,
        )
        # Typing starts before the hand-off: the reply may be sent before on_message returns.
        self._typing.start(chat_key, inbound.message_id)
        try:
            await on_message(inbound)
        except SessionBusy:
            await self._typing.finish(chat_key, inbound.message_id)
            log.info("telegram.busy", chat_id=chat.id)
            await self._delivery.send_notice(bot, chat_key, BUSY, quote)
        except StoreError as exc:
            # Nothing was stored (a full disk, a locked database): the update stays with Telegram.
            await self._typing.finish(chat_key, inbound.message_id)
            log.warning("telegram.intake_not_stored", update_id=update_id, error=str(exc))
            if update_id not in self._told_not_stored:
                self._told_not_stored.add(update_id)
                await self._delivery.send_notice(bot, chat_key, NOT_STORED, quote)
            return False
        except Exception:  # per-update boundary: log, tell the person, keep polling
            await self._typing.finish(chat_key, inbound.message_id)
            log.exception("telegram.intake_failed", update_id=update_id)
            await self._delivery.send_notice(bot, chat_key, INTAKE_FAILED, quote)
        else:
            self._last_inbound = self._clock()
        return True

    async def _attachments(self, bot: Bot, message: Message) -> tuple[Attachment, ...]:
        """The message's photo (its largest size) or document, fetched with getFile and the
        file download; one over ``max_file_bytes`` by its stated size is passed on unfetched
        (empty data), for the turn to refuse with a reason."""
        if message.photo:
            photo = message.photo[-1]
            name = f"photo_{message.message_id}.jpg"  # Telegram sends photos as JPEG
            return (
                await self._fetch(bot, photo.file_id, photo.file_size, name, "image/jpeg", "photo"),
            )
        document = message.document
        if document is None:
            return ()
        name = document.file_name or f"file_{message.message_id}"
        media_type = (
            document.mime_type or mimetypes.guess_type(name)[0] or "application/octet-stream"
        )
        return (
            await self._fetch(
                bot, document.file_id, document.file_size, name, media_type, "document"
            ),
        )

    async def _fetch(
        self,
        bot: Bot,
        file_id: str,
        size: int | None,
        name: str,
        media_type: str,
        kind: AttachmentKind,
    ) -> Attachment:
        if size is not None and size > self._max_file_bytes:
            return Attachment(name, media_type, b"", kind, size)
        file = await bot.get_file(file_id)
        data = bytes(await file.download_as_bytearray())
        return Attachment(name, media_type, data, kind, len(data))

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
        private = message.chat.type == ChatType.PRIVATE
        account = ChannelAccount(self.name, str(sender.id))
        text = self._access.stranger_reply(account, sender.full_name, private=private)
        # Each text once per chat: a stranger who keeps writing hears their code once.
        first = (chat_id, text) not in self._refused_chats
        log.info("telegram.refused", user_id=sender.id, chat_id=chat_id, replied=first)
        if first:
            self._refused_chats.add((chat_id, text))
            quote = None if private else message.message_id
            await self._delivery.send_notice(bot, (chat_id, thread), text, quote)

    # -- typing ----------------------------------------------------------------------------------

    async def _send_typing(self, key: ChatKey) -> None:
        bot = self._bot
        if bot is None:
            return
        chat_id, thread = key
        try:
            await bot.send_chat_action(chat_id, ChatAction.TYPING, message_thread_id=thread)
        except TelegramError as exc:
            log.debug("telegram.typing_failed", error=type(exc).__name__)


def telegram_channel(
    settings: Settings,
    access: Access,
    clock: Clock,
    updates: TelegramUpdates | None,
    leadership: Leadership | None = None,
) -> TelegramChannel:
    """The channel as the daemon runs it: ``channels.telegram``, files up to
    ``files.max_file_bytes``, webhook updates claimed in ``updates``, polling while leading
    among the workers (``leadership``)."""
    return TelegramChannel(
        settings.channels.telegram,
        access=access,
        clock=clock,
        max_file_bytes=settings.files.max_file_bytes,
        updates=updates,
        leadership=leadership,
    )


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
