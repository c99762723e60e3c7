"""The Discord channel: discord.py driven inside flynn's loop, parsed once into ``InboundMessage``.

Event callbacks are a thin layer over plain methods that take duck-typed objects (the Protocols
of ``discord_client``), so access control, mention rules, typing and delivery are testable
without the network.
"""

from __future__ import annotations

import asyncio
import mimetypes
import re
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import discord
import structlog

from flynn.access import Access
from flynn.channels.base import (
    NOT_STREAMED,
    ChannelCapabilities,
    ChannelStatus,
    OnMessage,
    chat_push_text,
)
from flynn.channels.discord_client import (
    ClientFactory,
    DiscordAttachment,
    DiscordClient,
    DiscordMessage,
    DiscordTarget,
    discord_client,
    discord_intents,
)
from flynn.channels.discord_slash import (
    DiscordInteractionReply,
    command_tree,
    private_recipient,
    slash_message_id,
)
from flynn.channels.split import split_text
from flynn.commands import PRIVATE, parse_command, private_in_group
from flynn.errors import ConfigError, ConfigProblem, SessionBusy
from flynn.messages import (
    Attachment,
    AttachmentKind,
    ChannelAccount,
    CommandCall,
    Delivery,
    InboundMessage,
    OutboundMessage,
    SessionKey,
)
from flynn.settings import DiscordSettings

log = structlog.get_logger(__name__)

NAME = "discord"
MAX_LEN = 2000
BUSY_REPLY = "I'm still working on your earlier messages; please wait a moment."
FAILURE_REPLY = "Sorry, something went wrong on my side; please try again."
FILE_NOT_FETCHED = "I couldn't fetch that file from Discord; please send it again."
MAX_FILE_BYTES = 10 * 1024 * 1024
"""The default cap on a file fetched (``files.max_file_bytes`` in config sets it)."""
TYPING_LIMIT_SECONDS = 600.0
"""A final reply that never comes (a dropped duplicate, a crashed turn) must not leave the bot
typing forever."""

_REFUSALS_REMEMBERED = 1024
_THREAD_TYPES = frozenset(
    {
        discord.ChannelType.public_thread,
        discord.ChannelType.private_thread,
        discord.ChannelType.news_thread,
    }
)
_PRIVATE_TYPES = frozenset({discord.ChannelType.private, discord.ChannelType.group})


@dataclass(frozen=True, slots=True)
class DiscordReply:
    """The reply handle of an accepted message: the channel, thread or DM it was written in,
    and the message a guild reply references."""

    target: DiscordTarget
    message_id: int


def _utc_now() -> datetime:
    return datetime.now(UTC)


class DiscordChannel:
    """Talks to allowed Discord users in DMs, and in guilds when mentioned or replied to."""

    def __init__(
        self,
        settings: DiscordSettings,
        *,
        access: Access,
        clock: Callable[[], datetime] = _utc_now,
        client_factory: ClientFactory = discord_client,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        if settings.token is None:
            raise ConfigError([ConfigProblem("channels.discord.token", "required")])
        self._token = settings.token.get_secret_value()
        self._require_mention = settings.require_mention_in_guilds
        self._access = access
        self._clock = clock
        self._client_factory = client_factory
        self._max_file_bytes = max_file_bytes
        self._client: DiscordClient | None = None
        self._on_message: OnMessage | None = None
        self._typing: dict[SessionKey, asyncio.Task[None]] = {}
        self._refused: OrderedDict[tuple[int, str], None] = OrderedDict()
        self._connected = False
        self._last_inbound: datetime | None = None
        self._last_error: str | None = None
        self._last_error_at: datetime | None = None

    @property
    def name(self) -> str:
        return NAME

    @property
    def capabilities(self) -> ChannelCapabilities:
        return ChannelCapabilities(
            can_edit=False, can_stream=False, max_len=MAX_LEN, length_unit="chars"
        )

    @property
    def listening(self) -> asyncio.Event | None:
        return None  # it connects out to the chat service

    def status(self) -> ChannelStatus:
        return ChannelStatus(
            name=NAME,
            connected=self._connected,
            last_inbound=self._last_inbound,
            last_error=self._last_error,
            last_error_at=self._last_error_at,
        )

    # -- lifecycle ---------------------------------------------------------------------------

    async def run(self, on_message: OnMessage) -> None:
        """Logs in and serves until cancelled; on cancellation stops typing, closes the client
        and re-raises ``CancelledError``. Gateway disconnects are retried by discord.py and only
        show in ``status()``. Raises ``ConfigError`` for a refused token or a missing message
        content intent (restarting helps neither), other errors discord.py gives up on, and
        ``ConnectionError`` if the client stops by itself. Raises ``RuntimeError`` if already
        running."""
        if self._client is not None:
            raise RuntimeError("the Discord channel is already running")
        client = self._client_factory(discord_intents())
        # The unit tests' stand-in client has no command tree; discord.py's own has one.
        tree = (
            command_tree(client, self.handle_interaction)
            if isinstance(client, discord.Client)
            else None
        )
        self._register_events(client, tree)
        self._client, self._on_message = client, on_message
        try:
            async with client:
                try:
                    await client.start(self._token)
                finally:
                    # Stop intake first, so no new typing task starts while we stop the others.
                    self._on_message = None
                    await self._stop_all_typing()
        except (discord.LoginFailure, discord.PrivilegedIntentsRequired) as exc:
            # Restarting cannot fix these; ConfigError tells the daemon to leave the channel down.
            self._record_error(f"{type(exc).__name__}: {exc}")
            problem = (
                "refused by Discord"
                if isinstance(exc, discord.LoginFailure)
                else "the bot lacks the message content intent (enable it in the portal)"
            )
            raise ConfigError([ConfigProblem("channels.discord.token", problem)]) from None
        except Exception as exc:
            # The daemon logs the crash; status() keeps it for /readyz.
            self._record_error(f"{type(exc).__name__}: {exc}")
            raise
        finally:
            self._client, self._on_message = None, None
            self._connected = False
        self._record_error("the Discord client stopped by itself")
        raise ConnectionError("the Discord client stopped by itself")

    def _register_events(
        self, client: DiscordClient, tree: discord.app_commands.CommandTree | None
    ) -> None:
        # The thin layer: discord.py looks handlers up by function name.
        synced = False

        async def on_ready() -> None:
            nonlocal synced
            self.handle_connected("ready")
            if tree is not None and not synced:
                synced = await _sync(tree)

        async def on_resumed() -> None:
            self.handle_connected("resumed")

        async def on_disconnect() -> None:
            self.handle_disconnected()

        async def on_message(message: discord.Message) -> None:
            await self.handle_discord_message(message)

        client.event(on_ready)
        client.event(on_resumed)
        client.event(on_disconnect)
        client.event(on_message)

    def handle_connected(self, how: str) -> None:
        """The gateway session is up (``ready``) or back (``resumed``)."""
        self._connected = True
        user = self._client.user if self._client else None
        log.info(f"discord.{how}", bot_id=user.id if user else None)

    def handle_disconnected(self) -> None:
        """The gateway connection dropped; discord.py reconnects by itself."""
        self._connected = False
        if self._on_message is not None:  # closing on shutdown is not an error
            self._record_error("disconnected from the Discord gateway")
            log.warning("discord.disconnected")

    def _record_error(self, error: str) -> None:
        self._last_error, self._last_error_at = error, self._clock()

    # -- inbound -----------------------------------------------------------------------------

    async def handle_discord_message(self, message: DiscordMessage) -> None:
        """Decides what one Discord message is: ignored, refused, or passed on (then typing
        starts). Messages arriving while not running are ignored. Raises only
        ``CancelledError``; every other failure is logged and answered."""
        client, on_message = self._client, self._on_message
        me = client.user if client is not None else None
        if on_message is None or me is None:
            return
        author = message.author
        if author.bot or author.id == me.id:
            return
        is_group = message.guild is not None
        if is_group and self._require_mention and not _addresses(message, me.id):
            return
        self._last_inbound = self._clock()
        target = message.channel
        account = ChannelAccount(NAME, str(author.id))
        if not self._access.is_allowed(account):
            text = self._access.stranger_reply(account, author.display_name, private=not is_group)
            await self._refuse_once(target, author.id, text)
            return
        forwarded = _is_forward(message)
        text = _strip_mention(message.content, me.id)
        if forwarded and not text:
            # Still passed on: the person may ask about it, but it says nothing about them.
            text = "\n\n".join(s.content for s in message.message_snapshots if s.content).strip()
        if not text and not message.attachments:
            return
        mine = is_group and not forwarded and self._access.remembers_across_chats(account)
        refusal = private_in_group(parse_command(text)) if mine else None
        if refusal is not None:
            await self._say(target, refusal + " (or use the slash command, which only you see)")
            return
        try:
            attachments = await self._fetch_all(message.attachments)
        except Exception as exc:
            # A per-message boundary: discord.py raises HTTPException for a refused download
            # and lets aiohttp's own errors through for a failed one; either way, say so.
            log.warning(
                "discord.file_not_fetched",
                chat_id=str(target.id),
                error=type(exc).__name__,
                exc_info=True,
            )
            await self._say(target, FILE_NOT_FETCHED)
            return
        inbound = _inbound(message, text, attachments, is_group=is_group, forwarded=forwarded)
        try:
            await on_message(inbound)
        except SessionBusy:
            await self._say(target, BUSY_REPLY)
            return
        except Exception:
            log.exception("discord.intake_failed", chat_id=inbound.chat_id)
            await self._say(target, FAILURE_REPLY)
            return
        self._start_typing(inbound.session_key, target)

    async def handle_interaction(
        self, interaction: discord.Interaction, name: str, arg: str
    ) -> None:
        """Runs slash command ``name`` like the typed ``/name arg``: passed on (stored by the
        intake) and then acknowledged with a deferral ("thinking", ephemeral when the answer is
        private), which ``send`` follows up. A stranger, a full inbox or a failed intake is
        answered at once, to the asker alone. Raises only ``CancelledError``."""
        on_message = self._on_message
        if on_message is None:
            return
        user = interaction.user
        is_group = interaction.guild_id is not None
        private = name in PRIVATE
        self._last_inbound = self._clock()
        account = ChannelAccount(NAME, str(user.id))
        if not self._access.is_allowed(account):
            text = self._access.stranger_reply(account, user.display_name, private=True)
            log.info("discord.refused", user_id=str(user.id), command=name)
            await _answer_now(interaction, text)
            return
        acknowledged: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        handle = DiscordInteractionReply(interaction, private, acknowledged)
        chat_id, thread = _place(interaction.channel, interaction.channel_id or 0)
        inbound = InboundMessage(
            channel=NAME,
            chat_id=chat_id,
            sender_id=str(user.id),
            text=f"/{name} {arg}".strip(),
            message_id=slash_message_id(
                interaction.id, private_to=user.id if private and is_group else None
            ),
            received_at=interaction.created_at,
            thread=thread,
            sender_name=user.display_name,
            is_group=is_group,
            command=CommandCall(name, arg),
            reply_handle=handle,
        )
        try:
            try:
                await on_message(inbound)
            except SessionBusy:
                await _answer_now(interaction, BUSY_REPLY)
                return
            except Exception:
                log.exception("discord.intake_failed", chat_id=chat_id, command=name)
                await _answer_now(interaction, FAILURE_REPLY)
                return
            try:
                await interaction.response.defer(ephemeral=private, thinking=True)
            except discord.HTTPException as exc:
                # Too late (Discord waits 3 seconds) or refused: the answer goes to the chat.
                log.warning("discord.defer_failed", command=name, status=exc.status)
                acknowledged.set_result(False)
            else:
                acknowledged.set_result(True)
        finally:
            if not acknowledged.done():
                acknowledged.set_result(False)

    async def _fetch_all(self, attached: Sequence[DiscordAttachment]) -> tuple[Attachment, ...]:
        """The message's files, downloaded from Discord's CDN; one over ``max_file_bytes`` by
        its stated size is passed on unfetched (empty data), for the turn to refuse with a
        reason. An image by its content type is a photo, anything else a document. Raises
        what the download raises (``discord.HTTPException``, aiohttp's connection errors)."""
        taken = []
        for file in attached:
            media_type = _media_type(file.content_type, file.filename)
            kind: AttachmentKind = "photo" if media_type.startswith("image/") else "document"
            if file.size > self._max_file_bytes:
                taken.append(Attachment(file.filename, media_type, b"", kind, file.size))
                continue
            data = await file.read()
            taken.append(Attachment(file.filename, media_type, data, kind, len(data)))
        return tuple(taken)

    async def _refuse_once(self, target: DiscordTarget, user_id: int, text: str) -> None:
        """Says ``text`` unless this channel heard it already: a stranger who keeps writing
        hears their pairing code once."""
        if (target.id, text) in self._refused:
            return
        self._refused[(target.id, text)] = None
        if len(self._refused) > _REFUSALS_REMEMBERED:
            self._refused.popitem(last=False)
        log.info("discord.refused", user_id=str(user_id), chat_id=str(target.id))
        await self._say(target, text)

    async def _say(self, target: DiscordTarget, text: str) -> None:
        try:
            await target.send(text, allowed_mentions=discord.AllowedMentions.none())
        except discord.HTTPException as exc:
            log.warning("discord.notice_failed", chat_id=str(target.id), status=exc.status)

    # -- typing ------------------------------------------------------------------------------

    def _start_typing(self, key: SessionKey, target: DiscordTarget) -> None:
        if self._on_message is None or key in self._typing:
            return
        task = asyncio.create_task(self._keep_typing(target), name=f"discord-typing-{key}")
        self._typing[key] = task
        task.add_done_callback(lambda done: self._forget_typing(key, done))

    def _forget_typing(self, key: SessionKey, task: asyncio.Task[None]) -> None:
        if self._typing.get(key) is task:
            del self._typing[key]

    async def _keep_typing(self, target: DiscordTarget) -> None:
        try:
            async with asyncio.timeout(TYPING_LIMIT_SECONDS), target.typing():
                await asyncio.Event().wait()  # until the final reply (or shutdown) cancels us
        except TimeoutError:
            log.info("discord.typing_limit", chat_id=str(target.id))
        except Exception:
            # A task boundary: a refused typing call must not cost the reply.
            log.warning("discord.typing_failed", chat_id=str(target.id), exc_info=True)

    async def _stop_typing(self, key: SessionKey) -> None:
        task = self._typing.pop(key, None)
        if task is not None:
            task.cancel()
            # wait() rather than awaiting the task: our own cancellation must still propagate.
            await asyncio.wait([task])

    async def _stop_all_typing(self) -> None:
        tasks = list(self._typing.values())
        self._typing.clear()
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    # -- outbound ----------------------------------------------------------------------------

    async def send(self, message: OutboundMessage) -> Delivery:
        """Stops the session's typing and delivers ``message`` in parts of at most 2000
        characters where its reply handle says, the first referencing the message it answers
        in guilds (without a handle, as after a restart: to the session's channel or thread,
        referencing nothing); never pings anyone. Deltas (``final=False``) are ignored.
        ``failed`` (with the ids of the parts sent before) when Discord refused a part or could
        not be reached, when the channel is not running, or when the chat cannot be found: the
        caller keeps the message and tries again.

        A push goes to the session's channel or thread, or as a DM to the user ``recipient``;
        it replies to nothing and leaves typing alone."""
        if not message.final:
            return NOT_STREAMED
        if message.push is None:
            # Before sending: a typing call racing our message would show "typing" after the reply.
            await self._stop_typing(message.session)
        text = message.text if message.push is None else chat_push_text(message)
        parts = split_text(text, MAX_LEN, "chars")
        if not parts:
            return Delivery.delivered()
        handle = message.reply_handle if message.push is None else None
        if isinstance(handle, DiscordInteractionReply):
            answered = await self._follow_up(handle, parts, message.session)
            if answered is not None:
                return answered
            handle = None  # the interaction is gone: the answer goes where a replayed one would
        recipient = message.recipient
        if recipient is None and message.push is None and handle is None:
            # A private slash answer without its interaction (after a restart) is never posted
            # in a guild channel: it goes to the asker's DMs.
            recipient = private_recipient(message.reply_to)
        target: DiscordTarget | None
        if recipient is not None:
            target = await self._resolve_dm(recipient)
        elif isinstance(handle, DiscordReply):
            target = handle.target
        else:
            target = await self._resolve(message.session)
        if target is None:
            return Delivery.failed("the chat cannot be reached now")
        reference = _reference(handle, target)
        mentions = discord.AllowedMentions.none()
        sent: list[str] = []
        failure: str | None = None
        permanent = False
        for part in parts:
            try:
                if reference is None:
                    posted = await target.send(part, allowed_mentions=mentions)
                else:
                    posted = await target.send(
                        part, allowed_mentions=mentions, reference=reference, mention_author=False
                    )
            except (discord.HTTPException, OSError, TimeoutError) as exc:
                # discord.py already waited out 429s; the caller retries the rest with backoff,
                # unless Discord refused it for good (the channel is gone, or closed to us).
                permanent = isinstance(exc, discord.Forbidden | discord.NotFound)
                status = getattr(exc, "status", None)
                failure = (
                    f"Discord refused the message ({status})" if status else type(exc).__name__
                )
                log.warning(
                    "discord.send_failed",
                    session=str(message.session),
                    status=status,
                    code=getattr(exc, "code", None),
                    sent=len(sent),
                    parts=len(parts),
                )
                break
            sent.append(str(posted.id))
            reference = None
        if message.push is not None:
            log.info(
                "discord.push_undelivered" if failure else "discord.push_sent",
                push_id=message.push_id,
                kind=message.push,
                chat_id=str(target.id),
                parts=len(sent),
            )
        if failure is not None:
            return Delivery.failed(failure, sent, permanent=permanent)
        return Delivery.delivered(sent)

    async def _follow_up(
        self, handle: DiscordInteractionReply, parts: list[str], session: SessionKey
    ) -> Delivery | None:
        """Sends ``parts`` as the interaction's followups (the first replaces its "thinking");
        ``None`` when the interaction was never acknowledged or Discord no longer knows it
        (its token lasts 15 minutes) before any part went out."""
        try:
            async with asyncio.timeout(TYPING_LIMIT_SECONDS):
                acknowledged = await asyncio.shield(handle.acknowledged)
        except TimeoutError:
            acknowledged = False
        if not acknowledged:
            return None
        followup = handle.interaction.followup
        mentions = discord.AllowedMentions.none()
        sent: list[str] = []
        for part in parts:
            try:
                posted = await followup.send(
                    part, ephemeral=handle.private, allowed_mentions=mentions, wait=True
                )
            except discord.NotFound:
                if not sent:
                    return None
                return Delivery.failed("the interaction expired", sent, permanent=True)
            except (discord.HTTPException, OSError, TimeoutError) as exc:
                status = getattr(exc, "status", None)
                log.warning(
                    "discord.followup_failed", session=str(session), status=status, sent=len(sent)
                )
                reason = f"Discord refused the message ({status})" if status else type(exc).__name__
                return Delivery.failed(reason, sent)
            sent.append(str(posted.id))
        return Delivery.delivered(sent)

    async def _resolve_dm(self, recipient: str) -> DiscordTarget | None:
        """The DM channel with user ``recipient``, opened through the API if need be."""
        client = self._client
        if client is None:
            log.warning("discord.send_while_stopped", recipient=recipient)
            return None
        if not recipient.isdigit():
            log.warning("discord.bad_recipient", recipient=recipient)
            return None
        try:
            user = await client.fetch_user(int(recipient))
            found = await user.create_dm()
        except discord.DiscordException as exc:
            log.warning("discord.dm_unavailable", recipient=recipient, error=type(exc).__name__)
            return None
        if not isinstance(found, DiscordTarget):
            log.warning("discord.not_messageable", recipient=recipient)
            return None
        return found

    async def _resolve(self, session: SessionKey) -> DiscordTarget | None:
        """The channel or thread to write to, from discord.py's cache or else the API."""
        client = self._client
        if client is None:
            log.warning("discord.send_while_stopped", session=str(session))
            return None
        try:
            channel_id = int(session.thread or session.chat_id)
        except ValueError:
            log.warning("discord.bad_session", session=str(session))
            return None
        found = client.get_channel(channel_id)
        if found is None:
            try:
                found = await client.fetch_channel(channel_id)
            except discord.DiscordException as exc:
                log.warning(
                    "discord.channel_unavailable", session=str(session), error=type(exc).__name__
                )
                return None
        if not isinstance(found, DiscordTarget):
            log.warning("discord.not_messageable", session=str(session))
            return None
        return found


def _addresses(message: DiscordMessage, bot_id: int) -> bool:
    """Whether a guild message mentions the bot or replies to one of its messages."""
    if any(user.id == bot_id for user in message.mentions):
        return True
    resolved = message.reference.resolved if message.reference is not None else None
    # A deleted replied-to message resolves to a stub without an author.
    author = getattr(resolved, "author", None)
    return getattr(author, "id", None) == bot_id


def _is_forward(message: DiscordMessage) -> bool:
    reference = message.reference
    return reference is not None and reference.type is discord.MessageReferenceType.forward


def _strip_mention(content: str, bot_id: int) -> str:
    return re.sub(rf"<@!?{bot_id}>", "", content).strip()


async def _sync(tree: discord.app_commands.CommandTree) -> bool:
    """Registers the slash commands with Discord (a bulk overwrite); a failure is logged and
    leaves the typed commands working."""
    try:
        synced = await tree.sync()
    except discord.HTTPException as exc:
        log.warning("discord.commands_not_synced", status=exc.status)
        return False
    log.info("discord.commands_synced", commands=len(synced))
    return True


async def _answer_now(interaction: discord.Interaction, text: str) -> None:
    try:
        await interaction.response.send_message(
            text, ephemeral=True, allowed_mentions=discord.AllowedMentions.none()
        )
    except discord.HTTPException as exc:
        log.warning("discord.notice_failed", status=exc.status)


def _media_type(content_type: str | None, filename: str) -> str:
    """The MIME type without its parameters (Discord says ``text/plain; charset=utf-8``),
    guessed from the name when Discord gave none."""
    if content_type:
        return content_type.split(";")[0].strip().lower()
    return mimetypes.guess_type(filename)[0] or "application/octet-stream"


def _place(channel: object, channel_id: int) -> tuple[str, str | None]:
    """The chat id and thread of a message written in ``channel``."""
    if getattr(channel, "type", None) in _THREAD_TYPES:
        # A thread is a conversation inside its parent channel, like a Telegram forum topic.
        parent_id = getattr(channel, "parent_id", None)
        return str(parent_id or channel_id), str(channel_id)
    return str(channel_id), None


def _inbound(
    message: DiscordMessage,
    text: str,
    attachments: tuple[Attachment, ...],
    *,
    is_group: bool,
    forwarded: bool,
) -> InboundMessage:
    channel = message.channel
    chat_id, thread = _place(channel, channel.id)
    return InboundMessage(
        channel=NAME,
        chat_id=chat_id,
        sender_id=str(message.author.id),
        text=text,
        message_id=str(message.id),
        received_at=message.created_at,
        thread=thread,
        sender_name=message.author.display_name,
        is_group=is_group,
        forwarded=forwarded,
        command=None if forwarded else parse_command(text),
        reply_handle=DiscordReply(channel, message.id),
        attachments=attachments,
    )


def _reference(handle: object, target: DiscordTarget) -> discord.MessageReference | None:
    """A reply reference in guild channels; in a DM the reply would only add noise."""
    if not isinstance(handle, DiscordReply):
        return None
    if target.type is None or target.type in _PRIVATE_TYPES:
        return None
    # fail_if_not_exists=False: if the original was deleted, send without the reply link.
    return discord.MessageReference(
        message_id=handle.message_id, channel_id=target.id, fail_if_not_exists=False
    )
