"""DiscordChannel driven through a fake client and fake messages: no network, no gateway state."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import SimpleNamespace, TracebackType
from typing import Any, TypeVar

import discord
import pytest
from fakes.clock import FakeClock
from pydantic import SecretStr

from flynn.access import ChannelAccess
from flynn.channels.base import NOT_STREAMED
from flynn.channels.discord import BUSY_REPLY, FAILURE_REPLY, MAX_LEN, DiscordChannel, DiscordReply
from flynn.channels.discord_client import DiscordAttachment, discord_client, discord_intents
from flynn.errors import ConfigError, SessionBusy
from flynn.messages import (
    CommandCall,
    Delivery,
    InboundMessage,
    OutboundMessage,
    PushTiming,
    SessionKey,
)
from flynn.settings import DiscordSettings

BOT_ID = 1000
OWNER_ID = 42
STRANGER_ID = 666
GUILD = object()
SENT_AT = datetime(2026, 11, 2, 9, 29, tzinfo=UTC)


@dataclass
class FakeUser:
    id: int
    bot: bool = False
    display_name: str = "Ann"


@dataclass
class FakeSent:
    id: int


@dataclass
class Sent:
    content: str
    allowed_mentions: discord.AllowedMentions | None
    reference: discord.MessageReference | None


class FakeTarget:
    """A channel, thread or DM that records what it is sent and whether it shows typing."""

    _next_id = 5000

    def __init__(self, id: int, type: discord.ChannelType, *, parent_id: int | None = None) -> None:
        self.id = id
        self.type = type
        self.parent_id = parent_id
        self.sent: list[Sent] = []
        self.is_typing = False
        self.typing_started = asyncio.Event()
        self.typing_stopped = asyncio.Event()
        self.fail_sends_after: int | None = None

    @asynccontextmanager
    async def _typing(self) -> AsyncIterator[None]:
        self.is_typing = True
        self.typing_started.set()
        try:
            yield
        finally:
            self.is_typing = False
            self.typing_stopped.set()

    def typing(self) -> Any:
        return self._typing()

    async def send(
        self,
        content: str,
        *,
        allowed_mentions: discord.AllowedMentions | None = None,
        reference: discord.MessageReference | None = None,
        mention_author: bool | None = None,
    ) -> FakeSent:
        if self.fail_sends_after is not None and len(self.sent) >= self.fail_sends_after:
            raise discord.HTTPException(SimpleNamespace(status=500, reason="boom"), "boom")
        self.sent.append(Sent(content, allowed_mentions, reference))
        FakeTarget._next_id += 1
        return FakeSent(FakeTarget._next_id)

    @property
    def texts(self) -> list[str]:
        return [sent.content for sent in self.sent]


@dataclass
class FakeReference:
    resolved: object | None = None
    type: discord.MessageReferenceType = discord.MessageReferenceType.default


@dataclass
class FakeSnapshot:
    content: str


@dataclass
class FakeMessage:
    id: int
    author: FakeUser
    content: str
    channel: FakeTarget
    guild: object | None = None
    mentions: Sequence[FakeUser] = ()
    reference: FakeReference | None = None
    message_snapshots: Sequence[FakeSnapshot] = ()
    created_at: datetime = SENT_AT
    attachments: Sequence[DiscordAttachment] = ()

    @classmethod
    def forward(cls, id: int, author: FakeUser, text: str, channel: FakeTarget) -> FakeMessage:
        """A forward as Discord delivers it: no content of its own, the text in a snapshot."""
        forward = FakeReference(type=discord.MessageReferenceType.forward)
        return cls(
            id, author, "", channel, reference=forward, message_snapshots=[FakeSnapshot(text)]
        )


@dataclass
class FakeAccount:
    """A user the bot can DM; ``create_dm`` returns the same DM channel every time."""

    id: int
    dm: FakeTarget

    async def create_dm(self) -> FakeTarget:
        return self.dm


Handler = Callable[..., Coroutine[Any, Any, Any]]
HandlerT = TypeVar("HandlerT", bound=Handler)


class FakeClient:
    """Stands in for ``discord.Client``: ``start`` fires ``on_ready`` and then blocks like a live
    gateway connection until cancelled."""

    def __init__(self, *, login_error: BaseException | None = None) -> None:
        self.user = FakeUser(BOT_ID, bot=True, display_name="flynn")
        self.login_error = login_error
        self.handlers: dict[str, Handler] = {}
        self.channels: dict[int, object] = {}
        """discord.py's cache: what ``get_channel`` finds."""
        self.remote_channels: dict[int, object] = {}
        """What only ``fetch_channel`` (the API) finds."""
        self.accounts: dict[int, FakeAccount] = {}
        self.intents: discord.Intents | None = None
        self.token: str | None = None
        self.ready = asyncio.Event()
        self.closed = False

    def event(self, coro: HandlerT, /) -> HandlerT:
        self.handlers[coro.__name__] = coro
        return coro

    async def __aenter__(self) -> FakeClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.closed = True

    async def start(self, token: str, *, reconnect: bool = True) -> None:
        self.token = token
        if self.login_error is not None:
            raise self.login_error
        await self.dispatch("ready")
        self.ready.set()
        await asyncio.Event().wait()

    def get_channel(self, id: int, /) -> object | None:
        return self.channels.get(id)

    async def fetch_channel(self, channel_id: int, /) -> object:
        if channel_id in self.remote_channels:
            return self.remote_channels[channel_id]
        raise discord.NotFound(SimpleNamespace(status=404, reason="Not Found"), "Unknown Channel")

    async def fetch_user(self, user_id: int, /) -> FakeAccount:
        if user_id in self.accounts:
            return self.accounts[user_id]
        raise discord.NotFound(SimpleNamespace(status=404, reason="Not Found"), "Unknown User")

    async def dispatch(self, event: str, *args: object) -> None:
        await self.handlers[f"on_{event}"](*args)

    def factory(self, intents: discord.Intents) -> FakeClient:
        self.intents = intents
        return self


@dataclass
class Harness:
    channel: DiscordChannel
    client: FakeClient
    clock: FakeClock
    inbox: list[InboundMessage] = field(default_factory=list)
    intake_error: Exception | None = None

    async def on_message(self, message: InboundMessage) -> None:
        if self.intake_error is not None:
            raise self.intake_error
        self.inbox.append(message)

    def target(self, id: int, type: discord.ChannelType, **kwargs: Any) -> FakeTarget:
        target = FakeTarget(id, type, **kwargs)
        self.client.channels[id] = target
        return target

    async def deliver(self, message: FakeMessage) -> None:
        await self.client.dispatch("message", message)


def settings(*, require_mention: bool = True) -> DiscordSettings:
    return DiscordSettings(
        enabled=True, token=SecretStr("t0ken"), require_mention_in_guilds=require_mention
    )


@asynccontextmanager
async def running(
    *, require_mention: bool = True, allowed: frozenset[str] = frozenset({str(OWNER_ID)})
) -> AsyncIterator[Harness]:
    client, clock = FakeClient(), FakeClock()
    channel = DiscordChannel(
        settings(require_mention=require_mention),
        access=ChannelAccess("discord", allowed),
        clock=clock,
        client_factory=client.factory,
    )
    harness = Harness(channel, client, clock)
    task = asyncio.create_task(channel.run(harness.on_message))
    await client.ready.wait()
    try:
        yield harness
    finally:
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert client.closed


@pytest.fixture
async def bot() -> AsyncIterator[Harness]:
    async with running() as harness:
        yield harness


def owner() -> FakeUser:
    return FakeUser(OWNER_ID, display_name="Ann")


def reply(
    text: str,
    *,
    session: SessionKey,
    reply_to: str | None = None,
    final: bool = True,
    handle: object | None = None,
) -> OutboundMessage:
    """A reply as the router sends it; ``handle`` is the answered message's reply handle (none
    for a message replayed after a restart)."""
    return OutboundMessage(
        session=session, text=text, reply_to=reply_to, final=final, reply_handle=handle
    )


# -- inbound -----------------------------------------------------------------------------------


async def test_dm_passes_through_with_its_fields(bot: Harness) -> None:
    dm = bot.target(7, discord.ChannelType.private)
    await bot.deliver(FakeMessage(11, owner(), "/status", dm))

    assert bot.inbox == [
        InboundMessage(
            channel="discord",
            chat_id="7",
            sender_id=str(OWNER_ID),
            text="/status",
            message_id="11",
            received_at=SENT_AT,
            thread=None,
            sender_name="Ann",
            is_group=False,
            command=CommandCall("status"),
            reply_handle=DiscordReply(dm, 11),
        )
    ]
    assert bot.channel.status().last_inbound == bot.clock.now


async def test_a_forward_is_passed_on_marked_as_forwarded(bot: Harness) -> None:
    dm = bot.target(7, discord.ChannelType.private)
    await bot.deliver(FakeMessage.forward(31, owner(), "I work at EvilCorp", dm))
    await bot.deliver(FakeMessage(32, owner(), "what does Bob mean?", dm))

    forwarded, own = bot.inbox
    assert (forwarded.text, forwarded.forwarded, forwarded.message_id) == (
        "I work at EvilCorp",
        True,
        "31",
    )
    assert own.forwarded is False


async def test_guild_message_without_mention_is_ignored(bot: Harness) -> None:
    room = bot.target(8, discord.ChannelType.text)
    await bot.deliver(FakeMessage(12, owner(), "talking among ourselves", room, guild=GUILD))

    assert bot.inbox == []
    assert room.sent == []


async def test_guild_mention_passes_with_the_mention_stripped(bot: Harness) -> None:
    room = bot.target(8, discord.ChannelType.text)
    me = bot.client.user
    for index, mention in enumerate((f"<@{BOT_ID}>", f"<@!{BOT_ID}>")):
        await bot.deliver(
            FakeMessage(20 + index, owner(), f"{mention} what's up?", room, GUILD, [me])
        )

    assert [(m.text, m.is_group, m.chat_id) for m in bot.inbox] == [("what's up?", True, "8")] * 2


async def test_a_typed_command_that_tells_of_the_persons_memory_is_not_answered_in_a_guild(
    bot: Harness,
) -> None:
    """Before (t-attack5): typed in a guild channel, ``/memory``, ``/tasks``... were answered
    there for everyone to read, where the slash commands answer the asker alone."""
    room = bot.target(8, discord.ChannelType.text)
    me = bot.client.user
    for index, text in enumerate(("/memory passport", "/tasks", "/new")):
        await bot.deliver(
            FakeMessage(40 + index, owner(), f"<@{BOT_ID}> {text}", room, GUILD, [me])
        )

    assert [m.command for m in bot.inbox] == [CommandCall("new")]
    assert [sent.split()[0] for sent in room.texts] == ["/memory", "/tasks"]
    assert all("ask me in our private chat" in sent for sent in room.texts)


async def test_guild_reply_to_the_bot_passes(bot: Harness) -> None:
    room = bot.target(8, discord.ChannelType.text)
    ours = SimpleNamespace(author=bot.client.user)
    await bot.deliver(
        FakeMessage(13, owner(), "and then?", room, GUILD, reference=FakeReference(ours))
    )
    deleted = FakeReference(SimpleNamespace(id=3))  # a deleted message has no author
    await bot.deliver(FakeMessage(14, owner(), "hello?", room, GUILD, reference=deleted))

    assert [m.text for m in bot.inbox] == ["and then?"]


async def test_guild_messages_pass_without_mention_when_not_required() -> None:
    async with running(require_mention=False) as bot:
        room = bot.target(8, discord.ChannelType.text)
        await bot.deliver(FakeMessage(15, owner(), "no mention needed", room, GUILD))

        assert [m.text for m in bot.inbox] == ["no mention needed"]


async def test_thread_message_keeps_parent_as_chat_and_thread_id(bot: Harness) -> None:
    thread = bot.target(9, discord.ChannelType.public_thread, parent_id=8)
    await bot.deliver(
        FakeMessage(16, owner(), f"<@{BOT_ID}> in a thread", thread, GUILD, [bot.client.user])
    )

    [message] = bot.inbox
    assert (message.chat_id, message.thread) == ("8", "9")
    assert message.session_key == SessionKey("discord", "8", "9")

    await bot.channel.send(
        reply("threaded answer", session=message.session_key, handle=message.reply_handle)
    )
    # Replayed after a restart (no handle): the session names the thread.
    await bot.channel.send(reply("again", session=message.session_key, reply_to="16"))
    assert thread.texts == ["threaded answer", "again"]


async def test_bot_and_own_messages_are_ignored(bot: Harness) -> None:
    dm = bot.target(7, discord.ChannelType.private)
    await bot.deliver(FakeMessage(17, FakeUser(OWNER_ID, bot=True), "beep", dm))
    await bot.deliver(FakeMessage(18, bot.client.user, "my own words", dm))

    assert bot.inbox == []
    assert dm.sent == []


async def test_stranger_is_refused_once_per_channel_and_not_passed_on(bot: Harness) -> None:
    stranger = FakeUser(STRANGER_ID, display_name="Mallory")
    dm, other_dm = (bot.target(id, discord.ChannelType.private) for id in (30, 31))
    for id in (40, 41):
        await bot.deliver(FakeMessage(id, stranger, "hi", dm))
    await bot.deliver(FakeMessage(42, stranger, "hi", other_dm))

    assert bot.inbox == []
    assert dm.texts == [
        "Sorry, I only talk to my owner. "
        f"If that's you, add {STRANGER_ID} to channels.discord.allowed_users."
    ]
    assert len(other_dm.texts) == 1
    assert dm.sent[0].allowed_mentions is not None
    assert dm.sent[0].allowed_mentions.to_dict() == discord.AllowedMentions.none().to_dict()


async def test_empty_allow_list_admits_nobody() -> None:
    async with running(allowed=frozenset()) as bot:
        dm = bot.target(7, discord.ChannelType.private)
        await bot.deliver(FakeMessage(11, owner(), "it's me", dm))

        assert bot.inbox == []
        assert len(dm.texts) == 1


async def test_messages_delivered_after_stop_are_ignored() -> None:
    async with running() as bot:
        channel, dm = bot.channel, bot.target(7, discord.ChannelType.private)
    await channel.handle_discord_message(FakeMessage(11, owner(), "late", dm))

    assert bot.inbox == []
    assert channel.status().connected is False


# -- intake failures ---------------------------------------------------------------------------


async def test_session_busy_is_answered(bot: Harness) -> None:
    dm = bot.target(7, discord.ChannelType.private)
    bot.intake_error = SessionBusy("full")
    await bot.deliver(FakeMessage(11, owner(), "one more", dm))

    assert dm.texts == [BUSY_REPLY]
    assert not dm.typing_started.is_set()


async def test_intake_failure_is_answered_and_serving_continues(bot: Harness) -> None:
    dm = bot.target(7, discord.ChannelType.private)
    bot.intake_error = RuntimeError("router exploded")
    await bot.deliver(FakeMessage(11, owner(), "first", dm))
    bot.intake_error = None
    await bot.deliver(FakeMessage(12, owner(), "second", dm))

    assert dm.texts == [FAILURE_REPLY]
    assert [m.text for m in bot.inbox] == ["second"]


# -- typing ------------------------------------------------------------------------------------


async def test_typing_runs_from_accepted_message_until_final_reply(bot: Harness) -> None:
    dm = bot.target(7, discord.ChannelType.private)
    await bot.deliver(FakeMessage(11, owner(), "think hard", dm))
    await dm.typing_started.wait()
    session = bot.inbox[0].session_key

    assert await bot.channel.send(reply("partial", session=session, final=False)) == NOT_STREAMED
    assert dm.is_typing

    await bot.channel.send(reply("done", session=session))
    assert not dm.is_typing
    assert dm.texts == ["done"]


async def test_typing_stops_on_shutdown() -> None:
    async with running() as bot:
        dm = bot.target(7, discord.ChannelType.private)
        await bot.deliver(FakeMessage(11, owner(), "think hard", dm))
        await dm.typing_started.wait()
    assert dm.typing_stopped.is_set()
    assert not dm.is_typing


async def test_refused_typing_does_not_break_the_reply(bot: Harness) -> None:
    dm = bot.target(7, discord.ChannelType.private)

    @asynccontextmanager
    async def refused() -> AsyncIterator[None]:
        dm.typing_started.set()
        raise discord.Forbidden(SimpleNamespace(status=403, reason="Forbidden"), "no")
        yield

    dm.typing = refused  # type: ignore[method-assign]
    await bot.deliver(FakeMessage(11, owner(), "hi", dm))
    await dm.typing_started.wait()

    assert (await bot.channel.send(reply("hello", session=bot.inbox[0].session_key))).ids
    assert dm.texts == ["hello"]


# -- outbound ----------------------------------------------------------------------------------


def _fences_balanced(part: str) -> bool:
    return len(re.findall(r"^\s*```", part, flags=re.MULTILINE)) % 2 == 0


async def test_long_reply_is_split_with_code_blocks_kept_whole(bot: Harness) -> None:
    dm = bot.target(7, discord.ChannelType.private)
    code = "```python\n" + "\n".join(f"print({n})" for n in range(400)) + "\n```"
    text = "Here you go:\n\n" + code + "\n\n" + "And that's all. " * 50

    ids = (await bot.channel.send(reply(text, session=SessionKey("discord", "7")))).ids

    assert len(ids) == len(dm.sent) > 1
    assert len(set(ids)) == len(ids)
    assert all(len(part) <= MAX_LEN for part in dm.texts)
    assert all(_fences_balanced(part) for part in dm.texts)
    none = discord.AllowedMentions.none().to_dict()
    assert all(s.allowed_mentions and s.allowed_mentions.to_dict() == none for s in dm.sent)


async def test_first_part_replies_to_the_original_in_guilds(bot: Harness) -> None:
    room = bot.target(8, discord.ChannelType.text)
    text = "word " * 600

    answer = reply(text, session=SessionKey("discord", "8"), handle=DiscordReply(room, 12))
    await bot.channel.send(answer)

    first, *rest = room.sent
    assert first.reference is not None
    assert (first.reference.message_id, first.reference.channel_id) == (12, 8)
    assert first.reference.fail_if_not_exists is False
    assert rest and all(s.reference is None for s in rest)


async def test_a_reply_without_a_handle_references_nothing(bot: Harness) -> None:
    room = bot.target(8, discord.ChannelType.text)
    # Replayed after a restart: the handle was not stored; reply_to is no Discord id to trust.
    await bot.channel.send(reply("late", session=SessionKey("discord", "8"), reply_to="12"))

    assert room.texts == ["late"] and room.sent[0].reference is None


async def test_dm_replies_are_not_reply_linked(bot: Harness) -> None:
    dm = bot.target(7, discord.ChannelType.private)
    await bot.channel.send(
        reply("hi", session=SessionKey("discord", "7"), handle=DiscordReply(dm, 11))
    )

    assert dm.sent[0].reference is None


async def test_an_http_error_is_a_failed_delivery_with_what_was_sent(bot: Harness) -> None:
    """Discord used to log and return: the router then counted the reply delivered. Now it
    reports the failure, like Telegram, and the router sends it again with backoff."""
    dm = bot.target(7, discord.ChannelType.private)
    dm.fail_sends_after = 1

    delivery = await bot.channel.send(reply("word " * 600, session=SessionKey("discord", "7")))

    assert delivery.state == "failed" and delivery.reason
    assert len(delivery.ids) == 1
    assert len(dm.sent) == 1


async def test_unknown_channel_or_stopped_channel_fails_the_send(bot: Harness) -> None:
    for session in (SessionKey("discord", "99"), SessionKey("discord", "x")):
        delivery = await bot.channel.send(reply("hi", session=session))
        assert (delivery.state, delivery.ids) == ("failed", ())
    stopped = DiscordChannel(
        settings(),
        access=ChannelAccess("discord", frozenset()),
        client_factory=FakeClient().factory,
    )
    delivery = await stopped.send(reply("hi", session=SessionKey("discord", "7")))
    assert delivery.state == "failed"


async def test_blank_reply_sends_nothing(bot: Harness) -> None:
    dm = bot.target(7, discord.ChannelType.private)
    delivery = await bot.channel.send(reply("  \n", session=SessionKey("discord", "7")))
    assert delivery == Delivery.delivered()
    assert dm.sent == []


# -- pushes ------------------------------------------------------------------------------------


def push(
    text: str, *, chat_id: str = "", thread: str | None = None, recipient: str | None = None
) -> OutboundMessage:
    return OutboundMessage(
        SessionKey("discord", chat_id, thread),
        text,
        push="reminder",
        push_id="7",
        recipient=recipient,
    )


def _pings_nobody(sent: Sent) -> bool:
    none = discord.AllowedMentions.none().to_dict()
    return sent.allowed_mentions is not None and sent.allowed_mentions.to_dict() == none


async def test_push_goes_to_a_channel_fetched_when_not_cached(bot: Harness) -> None:
    room = FakeTarget(8, discord.ChannelType.text)
    bot.client.remote_channels[8] = room

    ids = (await bot.channel.send(push("Standup in 5 minutes, @everyone", chat_id="8"))).ids

    assert room.texts == ["⏰ Reminder: Standup in 5 minutes, @everyone"]
    assert len(ids) == 1
    assert room.sent[0].reference is None
    assert _pings_nobody(room.sent[0])


async def test_a_late_reminder_says_when_it_was_due_in_the_persons_zone(bot: Harness) -> None:
    room = bot.target(8, discord.ChannelType.text)
    late = PushTiming(datetime(2026, 3, 25, 0, 30, tzinfo=UTC), "Asia/Tokyo", late=True)
    await bot.channel.send(replace(push("take the **pills**", chat_id="8"), timing=late))
    assert room.texts == [
        "⏰ Reminder: take the **pills**\n"
        "(late: it was due Wed 25 Mar 2026 09:30 (Asia/Tokyo), while I was offline)"
    ]


async def test_push_to_a_thread_goes_to_the_thread(bot: Harness) -> None:
    thread = bot.target(9, discord.ChannelType.public_thread, parent_id=8)
    await bot.channel.send(push("in the thread", chat_id="8", thread="9"))
    assert thread.texts == ["⏰ Reminder: in the thread"]


async def test_push_to_a_recipient_is_a_direct_message(bot: Harness) -> None:
    dm = FakeTarget(70, discord.ChannelType.private)
    bot.client.accounts[OWNER_ID] = FakeAccount(OWNER_ID, dm)

    ids = (await bot.channel.send(push("word " * 600, recipient=str(OWNER_ID)))).ids

    assert len(ids) == len(dm.sent) == 2
    assert all(s.reference is None and _pings_nobody(s) for s in dm.sent)


async def test_push_leaves_the_pending_reply_typing(bot: Harness) -> None:
    dm = bot.target(7, discord.ChannelType.private)
    await bot.deliver(FakeMessage(11, owner(), "think hard", dm))
    await dm.typing_started.wait()

    await bot.channel.send(push("time to stretch", chat_id="7"))
    assert dm.is_typing
    await bot.channel.send(reply("thought hard", session=bot.inbox[0].session_key))
    assert not dm.is_typing
    assert dm.texts == ["⏰ Reminder: time to stretch", "thought hard"]


async def test_a_push_nobody_can_take_fails_and_stays_queued(bot: Harness) -> None:
    for message in (
        push("hi", recipient="12345"),
        push("hi", recipient="someone"),
        push("hi", chat_id="99"),
    ):
        assert (await bot.channel.send(message)).state == "failed"
    dm = bot.target(7, discord.ChannelType.private)
    dm.fail_sends_after = 0
    delivery = await bot.channel.send(push("hi", chat_id="7"))
    assert (delivery.state, delivery.ids) == ("failed", ())


# -- lifecycle and status ----------------------------------------------------------------------


async def test_run_logs_in_with_the_token_and_the_needed_intents(bot: Harness) -> None:
    assert bot.client.token == "t0ken"
    intents = bot.client.intents
    assert intents is not None
    assert intents.guilds and intents.dm_messages and intents.guild_messages
    assert intents.message_content
    assert not intents.members and not intents.presences


async def test_status_follows_ready_disconnect_and_resume(bot: Harness) -> None:
    assert bot.channel.status().connected is True
    assert bot.channel.status().last_error is None

    bot.clock.advance(minutes=1)
    await bot.client.dispatch("disconnect")
    status = bot.channel.status()
    assert status.connected is False
    assert status.last_error and "disconnected" in status.last_error
    assert status.last_error_at == bot.clock.now

    await bot.client.dispatch("resumed")
    assert bot.channel.status().connected is True
    assert bot.channel.status().name == "discord"


async def test_login_failure_propagates_and_closes_the_client() -> None:
    client = FakeClient(login_error=discord.LoginFailure("Improper token has been passed."))
    channel = DiscordChannel(
        settings(), access=ChannelAccess("discord", frozenset()), client_factory=client.factory
    )

    with pytest.raises(ConfigError, match=r"channels\.discord\.token"):
        await channel.run(_never_called)

    assert client.closed
    status = channel.status()
    assert status.connected is False
    assert status.last_error and "LoginFailure" in status.last_error


async def test_run_twice_at_once_is_refused(bot: Harness) -> None:
    with pytest.raises(RuntimeError, match="already running"):
        await bot.channel.run(_never_called)


async def test_client_stopping_by_itself_is_an_error() -> None:
    client = FakeClient()

    async def returns(token: str, *, reconnect: bool = True) -> None:
        return None

    client.start = returns  # type: ignore[method-assign]
    channel = DiscordChannel(
        settings(), access=ChannelAccess("discord", frozenset()), client_factory=client.factory
    )

    with pytest.raises(ConnectionError):
        await channel.run(_never_called)
    assert client.closed
    assert channel.status().last_error == "the Discord client stopped by itself"


def test_missing_token_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"channels\.discord\.token"):
        DiscordChannel(DiscordSettings(enabled=True), access=ChannelAccess("discord", frozenset()))


def test_capabilities() -> None:
    channel = DiscordChannel(settings(), access=ChannelAccess("discord", frozenset()))
    assert channel.name == "discord"
    caps = channel.capabilities
    assert (caps.max_len, caps.length_unit, caps.can_edit, caps.can_stream) == (
        2000,
        "chars",
        False,
        False,
    )


def test_default_client_is_a_discord_client_that_pings_nobody() -> None:
    client = discord_client(discord_intents())
    assert isinstance(client, discord.Client)
    assert client.allowed_mentions is not None
    assert client.allowed_mentions.to_dict() == discord.AllowedMentions.none().to_dict()


async def _never_called(message: InboundMessage) -> None:
    raise AssertionError("no message expected")
