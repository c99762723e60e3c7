"""DiscordChannel driving the real discord.py against a fake Discord (gateway WebSocket and REST
API over real HTTP on 127.0.0.1): messages, replies, typing, reconnects and slash commands."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import discord
import pytest
from fakes.fake_discord import (
    GUILD_CHANNEL_ID,
    OWNER_ID,
    STRANGER_ID,
    TOKEN,
    FakeDiscord,
)
from pydantic import SecretStr

from flynn.access import ChannelAccess
from flynn.channels.discord import FILE_NOT_FETCHED, MAX_LEN, DiscordChannel
from flynn.channels.discord_slash import SLASH_COMMANDS
from flynn.messages import Attachment, CommandCall, InboundMessage, OutboundMessage
from flynn.settings import DiscordSettings


@dataclass
class Wire:
    server: FakeDiscord
    channel: DiscordChannel
    inbox: list[InboundMessage] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def on_message(self, message: InboundMessage) -> None:
        self.inbox.append(message)
        self.changed.set()

    async def next_message(self) -> InboundMessage:
        count = len(self.inbox)
        async with asyncio.timeout(5):
            while len(self.inbox) == count:
                self.changed.clear()
                await self.changed.wait()
        return self.inbox[-1]

    async def answer(self, message: InboundMessage, text: str) -> None:
        delivery = await self.channel.send(
            OutboundMessage(
                message.session_key,
                text,
                reply_to=message.message_id,
                reply_handle=message.reply_handle,
            )
        )
        assert delivery.is_delivered, delivery


@pytest.fixture
async def wire(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Wire]:
    async with FakeDiscord() as server:
        server.redirect(monkeypatch)
        channel = DiscordChannel(
            DiscordSettings(enabled=True, token=SecretStr(TOKEN)),
            access=ChannelAccess("discord", frozenset({str(OWNER_ID)})),
            max_file_bytes=1000,
        )
        harness = Wire(server, channel)
        task = asyncio.create_task(channel.run(harness.on_message))
        await server.wait_live()
        try:
            yield harness
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task


async def test_a_dm_is_answered_in_the_dm_without_a_reply_link_or_pings(wire: Wire) -> None:
    sent_id = wire.server.dm("hello there")
    message = await wire.next_message()
    assert (message.text, message.sender_id, message.message_id) == (
        "hello there",
        str(OWNER_ID),
        str(sent_id),
    )
    assert not message.is_group
    assert message.chat_id == str(wire.server.dm_channels[OWNER_ID])

    await wire.answer(message, "hi Ann")
    (sent,) = wire.server.sent
    assert (sent.content, sent.channel_id) == ("hi Ann", wire.server.dm_channels[OWNER_ID])
    assert sent.reference is None
    assert sent.allowed_mentions == {"parse": []}


async def test_guild_messages_need_a_mention_or_a_reply_and_replies_reference_them(
    wire: Wire,
) -> None:
    wire.server.guild_message("nobody asked you")
    wire.server.guild_message("what's up?", mention=True)
    message = await wire.next_message()
    assert message.text == "what's up?"
    assert message.is_group and message.chat_id == str(GUILD_CHANNEL_ID)
    assert len(wire.inbox) == 1  # the message without a mention was ignored

    await wire.answer(message, "all quiet")
    first = wire.server.sent[0]
    assert first.reference is not None
    assert str(first.reference["message_id"]) == message.message_id

    wire.server.guild_message("and now?", reply_to=first)
    followed = await wire.next_message()
    assert followed.text == "and now?"


async def test_a_long_reply_is_split_at_2000_characters(wire: Wire) -> None:
    wire.server.dm("tell me everything")
    message = await wire.next_message()
    text = "\n\n".join(f"Paragraph {n}: " + "word " * 150 for n in range(8))
    assert len(text) > 2 * MAX_LEN

    await wire.answer(message, text)
    parts = [sent.content for sent in wire.server.sent]
    assert len(parts) >= 3
    assert all(len(part) <= MAX_LEN for part in parts)
    assert "".join(parts).replace("\n", "").replace(" ", "") == text.replace("\n", "").replace(
        " ", ""
    )


async def test_typing_shows_from_an_accepted_message_until_the_reply(wire: Wire) -> None:
    wire.server.dm("think hard")
    message = await wire.next_message()
    channel_id = wire.server.dm_channels[OWNER_ID]
    await wire.server.wait_for(lambda: channel_id in wire.server.typing, "a typing call")

    await wire.answer(message, "done")
    assert wire.server.sent[-1].content == "done"


async def test_a_stranger_hears_the_refusal_once_and_is_not_passed_on(wire: Wire) -> None:
    wire.server.dm("let me in", user_id=STRANGER_ID)
    wire.server.dm("please", user_id=STRANGER_ID)
    await wire.server.wait_for_sent(1)
    wire.server.dm("it's me")
    await wire.next_message()
    (refusal,) = wire.server.sent
    assert refusal.channel_id == wire.server.dm_channels[STRANGER_ID]
    assert [m.sender_id for m in wire.inbox] == [str(OWNER_ID)]


async def test_a_picture_arrives_as_a_photo_with_its_bytes_and_caption(wire: Wire) -> None:
    picture = b"\xff\xd8\xff\xe0 label pixels \xff\xd9"
    label = wire.server.attachment("label.jpg", "image/jpeg", picture)
    wire.server.dm("the boiler label", attachments=[label])
    message = await wire.next_message()
    assert message.text == "the boiler label"  # no "[Attached: ...]": the file itself came
    assert message.attachments == (
        Attachment("label.jpg", "image/jpeg", picture, "photo", len(picture)),
    )
    assert wire.server.downloads == [label["url"].split("/", 3)[3]]


async def test_a_file_alone_is_a_document_typed_without_parameters_or_by_its_name(
    wire: Wire,
) -> None:
    notes = wire.server.attachment("notes.txt", "text/plain; charset=utf-8", b"pressure 1.5")
    unnamed = wire.server.attachment("data.csv", None, b"a,b\n1,2\n")
    wire.server.dm("", attachments=[notes, unnamed])
    message = await wire.next_message()
    assert message.text == ""
    assert [(a.name, a.media_type, a.kind, a.data) for a in message.attachments] == [
        ("notes.txt", "text/plain", "document", b"pressure 1.5"),
        ("data.csv", "text/csv", "document", b"a,b\n1,2\n"),
    ]


async def test_a_file_over_the_cap_is_passed_on_unfetched_with_its_stated_size(
    wire: Wire,
) -> None:
    huge = wire.server.attachment("huge.log", "text/plain", b"x" * 10, size=50_000_000)
    wire.server.dm("read this", attachments=[huge])
    message = await wire.next_message()
    assert message.attachments == (
        Attachment("huge.log", "text/plain", b"", "document", 50_000_000),
    )
    assert wire.server.downloads == []


async def test_a_file_that_cannot_be_fetched_is_answered_and_not_passed_on(wire: Wire) -> None:
    gone = wire.server.attachment("gone.png", "image/png", b"png")
    wire.server.remove_file(gone)
    wire.server.dm("look", attachments=[gone])
    (notice,) = await wire.server.wait_for_sent(1)
    assert notice.content == FILE_NOT_FETCHED
    assert notice.channel_id == wire.server.dm_channels[OWNER_ID]
    assert wire.inbox == []


# -- the gateway connection --------------------------------------------------------------------


async def test_a_dropped_socket_is_resumed_and_what_came_meanwhile_arrives(wire: Wire) -> None:
    await wire.server.drop()
    assert wire.channel.status().connected is False
    wire.server.dm("sent while you were away")  # Discord keeps it for the resume

    message = await wire.next_message()
    assert message.text == "sent while you were away"
    await wire.server.wait_live(identifies=1, resumes=1)
    await wire.server.wait_for(lambda: wire.channel.status().connected, "resumed status")
    assert wire.server.heartbeats >= 2  # one on each connection's HELLO


async def test_a_reconnect_request_resumes_the_same_session(wire: Wire) -> None:
    await wire.server.ask_reconnect()
    await wire.server.wait_live(identifies=1, resumes=1)
    wire.server.dm("still there?")
    assert (await wire.next_message()).text == "still there?"


async def test_an_invalidated_session_identifies_anew(
    wire: Wire, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def identify_at_once(client: discord.Client, shard_id: int | None, **_: object) -> None:
        pass

    # The documented hook: discord.py waits 5 seconds before identifying again, which a test
    # need not.
    monkeypatch.setattr(discord.Client, "before_identify_hook", identify_at_once)
    await wire.server.invalidate()
    await wire.server.wait_live(identifies=2)
    assert wire.server.resumes == 0
    wire.server.dm("new session")
    assert (await wire.next_message()).text == "new session"


# -- slash commands ----------------------------------------------------------------------------


async def test_the_slash_commands_are_registered_with_their_options(wire: Wire) -> None:
    await wire.server.wait_for(lambda: bool(wire.server.commands), "a command sync")
    by_name = {command["name"]: command for command in wire.server.commands}
    assert set(by_name) == set(SLASH_COMMANDS)
    assert not by_name["status"].get("options")
    (words,) = by_name["forget"]["options"]
    assert (words["name"], words["type"], words["required"]) == ("what", 3, False)
    assert all(len(command["description"]) <= 100 for command in wire.server.commands)


async def test_a_private_slash_command_is_deferred_and_answered_ephemerally(wire: Wire) -> None:
    await wire.server.wait_for(lambda: bool(wire.server.commands), "a command sync")
    interaction_id = wire.server.slash("forget", {"what": "city"})
    message = await wire.next_message()
    assert message.command == CommandCall("forget", "city")
    assert message.text == "/forget city"
    await wire.server.wait_for(lambda: bool(wire.server.callbacks), "the deferral")
    (callback,) = wire.server.callbacks
    assert (callback.interaction_id, callback.type, callback.ephemeral) == (
        interaction_id,
        5,
        True,
    )

    await wire.answer(message, "Forgotten: city")
    (followup,) = wire.server.sent
    assert followup.interaction_id == interaction_id
    assert followup.ephemeral and followup.content == "Forgotten: city"


async def test_new_is_answered_for_everyone_to_see(wire: Wire) -> None:
    await wire.server.wait_for(lambda: bool(wire.server.commands), "a command sync")
    wire.server.slash("new", in_guild=True)
    message = await wire.next_message()
    assert message.command == CommandCall("new", "")
    assert message.is_group and message.chat_id == str(GUILD_CHANNEL_ID)
    await wire.answer(message, "Started a new conversation.")
    assert wire.server.callbacks[0].ephemeral is False
    assert wire.server.sent[0].ephemeral is False


async def test_a_stranger_s_slash_command_is_refused_to_them_alone(wire: Wire) -> None:
    await wire.server.wait_for(lambda: bool(wire.server.commands), "a command sync")
    wire.server.slash("status", user_id=STRANGER_ID, in_guild=True)
    await wire.server.wait_for(lambda: bool(wire.server.callbacks), "the refusal")
    (callback,) = wire.server.callbacks
    assert (callback.type, callback.ephemeral) == (4, True)
    assert wire.inbox == []


async def test_a_private_answer_without_its_interaction_goes_to_the_asker_s_dms(
    wire: Wire,
) -> None:
    await wire.server.wait_for(lambda: bool(wire.server.commands), "a command sync")
    wire.server.slash("status", in_guild=True)
    message = await wire.next_message()
    # As after a restart: the stored message comes back without the interaction.
    delivery = await wire.channel.send(
        OutboundMessage(message.session_key, "Session: ...", reply_to=message.message_id)
    )
    assert delivery.is_delivered
    (sent,) = wire.server.sent
    assert sent.channel_id == wire.server.dm_channels[OWNER_ID]
    assert sent.interaction_id is None
