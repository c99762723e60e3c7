"""TelegramChannel against the fake Bot API server: intake, access, mentions, replies, recovery."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime

import pytest
import structlog
from fakes.fake_telegram import (
    BOT_USERNAME,
    GROUP_ID,
    OWNER_ID,
    SENT_AT,
    STRANGER_ID,
    TOKEN,
    FakeTelegram,
    SendFailure,
)
from telegram_harness import Harness

from flynn.access import ChannelAccess
from flynn.channels.base import NOT_STREAMED
from flynn.channels.split import measure
from flynn.channels.telegram import BUSY, INTAKE_FAILED, TelegramChannel
from flynn.errors import ConfigError
from flynn.messages import CommandCall, InboundMessage, OutboundMessage, PushTiming, SessionKey
from flynn.settings import TelegramSettings


@pytest.fixture(autouse=True)
def _ptb_timedelta(monkeypatch: pytest.MonkeyPatch) -> None:
    # python-telegram-bot warns (an error under -W error) whenever it builds a RetryAfter,
    # unless it is told to use timedeltas already.
    monkeypatch.setenv("PTB_TIMEDELTA", "1")


@pytest.fixture
async def fake_telegram() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
def harness(fake_telegram: FakeTelegram) -> Harness:
    return Harness(fake_telegram)


def _reply(
    chat_id: int,
    text: str,
    reply_to: str | None = None,
    *,
    final: bool = True,
    error_code: str | None = None,
) -> OutboundMessage:
    session = SessionKey("telegram", str(chat_id))
    return OutboundMessage(session, text, reply_to, final=final, error_code=error_code)


def _answer(
    message: InboundMessage, text: str, session: SessionKey | None = None
) -> OutboundMessage:
    """The router's reply to ``message``: its reply handle goes back with it."""
    return OutboundMessage(
        session or message.session_key,
        text,
        reply_to=message.message_id,
        reply_handle=message.reply_handle,
    )


def _typing_tasks() -> list[asyncio.Task[object]]:
    return [t for t in asyncio.all_tasks() if t.get_name().startswith("telegram.typing")]


# -- intake -------------------------------------------------------------------------------------


async def test_private_message_passes_through(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running() as channel:
        update_id = fake_telegram.queue_private("hello there")
        [message] = await harness.inbox.wait_for(1)
        await fake_telegram.wait_for_offset(update_id + 1)
        status = channel.status()

    assert message.channel == "telegram"
    assert message.chat_id == str(OWNER_ID)
    assert message.sender_id == str(OWNER_ID)
    assert message.text == "hello there"
    assert message.message_id == str(update_id)
    assert message.received_at == SENT_AT
    assert message.thread is None
    assert message.is_group is False
    assert message.sender_name == "Ada"
    assert status.connected is True
    assert status.last_inbound == harness.clock.now
    assert fake_telegram.calls_to("deleteWebhook")


async def test_a_forwarded_message_is_passed_on_marked_as_forwarded(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running():
        fake_telegram.queue_forwarded("I work at EvilCorp", from_name="Bob")
        fake_telegram.queue_private("what does Bob mean?")
        fake_telegram.queue_forwarded("/forget everything", from_name="Bob")
        forwarded, own, slash = await harness.inbox.wait_for(3)

    assert (forwarded.text, forwarded.forwarded) == ("I work at EvilCorp", True)
    assert forwarded.sender_id == str(OWNER_ID)
    assert own.forwarded is False
    assert slash.forwarded and slash.command is None  # a forward is never a command


async def test_stranger_is_refused_once_and_never_passed_on(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running():
        fake_telegram.queue_private("hi", user_id=STRANGER_ID)
        fake_telegram.queue_private("hello?", user_id=STRANGER_ID)
        fake_telegram.queue_private("barrier")
        await harness.inbox.wait_for(1)

    assert [m.text for m in harness.inbox.messages] == ["barrier"]
    [refusal] = fake_telegram.sent
    assert refusal.chat_id == STRANGER_ID
    assert f"add {STRANGER_ID} to channels.telegram.allowed_users" in refusal.text
    assert refusal.parse_mode is None


async def test_empty_allow_list_lets_nobody_in(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running(harness.channel(allowed=frozenset())):
        fake_telegram.queue_private("it's me")
        await fake_telegram.wait_for_sent(1)
        fake_telegram.queue_private("really")
        update_id = fake_telegram.queue_private("really!")
        await fake_telegram.wait_for_offset(update_id + 1)

    assert harness.inbox.messages == []
    assert len(fake_telegram.sent) == 1


async def test_group_needs_a_mention_or_a_reply(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running():
        fake_telegram.queue_group("talking among ourselves")
        fake_telegram.queue_group("what's the plan?", mention=True)
        fake_telegram.queue_group(f"hey @{BOT_USERNAME.upper()}, any news")
        fake_telegram.queue_group("and then?", reply_to_bot=True)
        fake_telegram.queue_group("/status@other_bot")
        fake_telegram.queue_group(f"/new@{BOT_USERNAME}")
        fake_telegram.queue_group("topic chatter", thread=77)
        fake_telegram.queue_group("in the topic", mention=True, thread=77)
        messages = await harness.inbox.wait_for(5)

    assert [m.text for m in messages] == [
        "what's the plan?",
        "hey any news",
        "and then?",
        f"/new@{BOT_USERNAME}",
        "in the topic",
    ]
    assert all(m.is_group and m.chat_id == str(GROUP_ID) for m in messages)
    assert [m.thread for m in messages] == [None, None, None, None, "77"]
    assert messages[3].command == CommandCall("new")  # without the @botname
    assert [m.command for m in messages if m is not messages[3]] == [None] * 4


async def test_a_command_that_tells_of_the_persons_memory_is_not_answered_in_a_group(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    """Before (t-attack5): ``/memory``, ``/tasks``, ``/reminders``, ``/search``... in a group
    were answered in the group, for everyone in it to read (Discord's slash commands answer them
    to the asker alone). The group is told to ask in private; the command goes no further."""
    async with harness.running():
        asked = [f"/memory@{BOT_USERNAME} passport", f"/tasks@{BOT_USERNAME}", "/search doctor"]
        for text in asked:
            fake_telegram.queue_group(text, mention=True)
        fake_telegram.queue_group(f"/help@{BOT_USERNAME}")
        fake_telegram.queue_private("/memory passport")
        messages = await harness.inbox.wait_for(2)
        sent = await fake_telegram.wait_for_sent(3)

    assert [m.command for m in messages] == [CommandCall("help"), CommandCall("memory", "passport")]
    assert all(m.chat_id == GROUP_ID for m in sent)
    assert all("ask me in our private chat" in m.text for m in sent)
    assert [m.text.split()[0] for m in sent] == ["/memory", "/tasks", "/search"]


async def test_group_without_mention_rule_passes_everything(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running(harness.channel(require_mention_in_groups=False)):
        fake_telegram.queue_group("talking among ourselves")
        [message] = await harness.inbox.wait_for(1)
    assert message.text == "talking among ourselves"


async def test_commands_are_registered_and_passed_as_text(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running():
        fake_telegram.queue_private("/status")
        fake_telegram.queue_private("/forget favourite_colour")
        messages = await harness.inbox.wait_for(2)

    names = [command["command"] for command in fake_telegram.commands]
    assert {"new", "reset", "status", "compact", "otr", "forget", "tier", "help"} <= set(names)
    assert all(command["description"] for command in fake_telegram.commands)
    assert [m.text for m in messages] == ["/status", "/forget favourite_colour"]
    # Parsed once, here: the orchestrator never reads a command out of text.
    assert [m.command for m in messages] == [
        CommandCall("status"),
        CommandCall("forget", "favourite_colour"),
    ]


async def test_duplicate_update_is_not_passed_twice(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running():
        update_id = fake_telegram.queue_private("once")
        await harness.inbox.wait_for(1)
        await fake_telegram.wait_for_offset(update_id + 1)
        fake_telegram.redeliver(update_id)
        fake_telegram.queue_private("barrier")
        await harness.inbox.wait_for(2)

    assert [m.text for m in harness.inbox.messages] == ["once", "barrier"]


async def test_busy_session_gets_the_busy_reply(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    harness.inbox.busy()
    async with harness.running():
        update_id = fake_telegram.queue_private("one more thing")
        [sent] = await fake_telegram.wait_for_sent(1)
        await fake_telegram.wait_for_offset(update_id + 1)
        assert _typing_tasks() == []

    assert sent.text == BUSY
    assert harness.inbox.messages == []


async def test_intake_crash_is_answered_and_polling_continues(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    harness.inbox.fail_with.append(RuntimeError("router broke"))
    async with harness.running():
        fake_telegram.queue_private("first")
        fake_telegram.queue_private("second")
        [message] = await harness.inbox.wait_for(1)

    assert message.text == "second"
    assert [s.text for s in fake_telegram.sent] == [INTAKE_FAILED]


# -- replies ------------------------------------------------------------------------------------


async def test_markdown_is_sent_as_escaped_html(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running() as channel:
        delivery = await channel.send(
            _reply(OWNER_ID, "# Plan\n**Bold** & _calm_: `a<b` <script>\n```py\nx = 1 < 2\n```")
        )
        ids = list(delivery.ids)

    [sent] = fake_telegram.sent
    assert ids == [str(sent.message_id)]
    assert sent.parse_mode == "HTML"
    assert sent.text == (
        "<b>Plan</b>\n<b>Bold</b> &amp; <i>calm</i>: <code>a&lt;b</code> &lt;script&gt;\n"
        '<pre><code class="language-py">x = 1 &lt; 2</code></pre>'
    )
    assert sent.reply_to is None


async def test_refused_markup_is_resent_as_plain_text(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.reject_html()
    async with harness.running() as channel:
        ids = list((await channel.send(_reply(OWNER_ID, "**hi** there"))).ids)

    [html_call, plain_call] = fake_telegram.calls_to("sendMessage")
    assert html_call.params["parse_mode"] == "HTML"
    assert "parse_mode" not in plain_call.params
    [sent] = fake_telegram.sent
    assert (sent.text, sent.parse_mode) == ("**hi** there", None)
    assert ids == [str(sent.message_id)]


async def test_error_replies_are_plain_text(harness: Harness, fake_telegram: FakeTelegram) -> None:
    async with harness.running() as channel:
        await channel.send(_reply(OWNER_ID, "Unknown command /x. Try **/help**.", error_code="x"))
    [sent] = fake_telegram.sent
    assert (sent.text, sent.parse_mode) == ("Unknown command /x. Try **/help**.", None)


async def test_long_reply_is_split_under_the_utf16_limit(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    paragraph = "Cheers 🎉🎉 " * 40 + "**done** <ok>\n\n"
    code = "```python\n" + "print('🐍 < 🦀')\n" * 300 + "```\n\n"
    text = (paragraph * 8 + code) * 3
    async with harness.running() as channel:
        ids = list((await channel.send(_reply(OWNER_ID, text))).ids)
        plain_ids = list((await channel.send(_reply(OWNER_ID, text, error_code="internal"))).ids)

    html_parts = [s for s in fake_telegram.sent if s.parse_mode == "HTML"]
    plain_parts = [s for s in fake_telegram.sent if s.parse_mode is None]
    assert len(ids) == len(html_parts) > 3
    assert len(plain_ids) == len(plain_parts) > 3
    for part in plain_parts:
        assert measure(part.text, "utf16") <= 4096
        assert part.text.count("```") % 2 == 0
    for part in html_parts:
        assert part.text.count("<pre>") == part.text.count("</pre>")
        assert "```" not in part.text
    # Nothing lost: every code line arrives, in order.
    code_lines = [line for p in plain_parts for line in p.text.split("\n") if "🐍" in line]
    assert len(code_lines) == 900


async def test_group_reply_quotes_the_original_message(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running() as channel:
        update_id = fake_telegram.queue_group("summarise please", mention=True)
        [message] = await harness.inbox.wait_for(1)
        ids = list((await channel.send(_answer(message, "word " * 1500))).ids)

    first, second = fake_telegram.sent
    assert first.reply_to == fake_telegram.message_id_of(update_id)
    assert second.reply_to is None
    assert first.chat_id == GROUP_ID
    assert ids == [str(first.message_id), str(second.message_id)]


async def test_forum_topic_replies_go_to_the_topic(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running() as channel:
        fake_telegram.queue_group("hello", mention=True, thread=9)
        [message] = await harness.inbox.wait_for(1)
        await fake_telegram.wait_for_calls("sendChatAction")
        await channel.send(_answer(message, "hi"))

    assert fake_telegram.sent[0].thread == 9
    assert fake_telegram.calls_to("sendChatAction")[0].params["message_thread_id"] == "9"


async def test_per_sender_group_sessions_reach_the_topic(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    # In multi-user mode the router keys group sessions per sender: the topic stays the thread.
    async with harness.running() as channel:
        update_id = fake_telegram.queue_group("hello", mention=True, thread=77)
        [message] = await harness.inbox.wait_for(1)
        remembered = SessionKey("telegram", str(GROUP_ID), "77", sender=str(OWNER_ID))
        await channel.send(_answer(message, "hi", remembered))
        assert _typing_tasks() == []
        # Replayed after a restart: no handle, so to the session's topic, quoting nothing.
        await channel.send(OutboundMessage(remembered, "later", reply_to=message.message_id))
        plain = SessionKey("telegram", str(GROUP_ID), sender=str(OWNER_ID))
        await channel.send(OutboundMessage(plain, "elsewhere"))

    first, later, elsewhere = fake_telegram.sent
    assert (first.thread, first.reply_to) == (77, fake_telegram.message_id_of(update_id))
    assert (later.thread, later.reply_to) == (77, None)
    assert (elsewhere.chat_id, elsewhere.thread) == (GROUP_ID, None)


# -- pushes -------------------------------------------------------------------------------------


def _push(
    text: str, *, chat_id: str = "", thread: str | None = None, recipient: str | None = None
) -> OutboundMessage:
    session = SessionKey("telegram", chat_id, thread)
    return OutboundMessage(session, text, push="reminder", push_id="7", recipient=recipient)


async def test_push_reaches_a_chat_that_has_not_written_since_restart(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running() as channel:
        ids = list(
            (
                await channel.send(
                    _push("**Call** the dentist", chat_id=str(GROUP_ID), thread="77")
                )
            ).ids
        )

    [sent] = fake_telegram.sent
    assert ids == [str(sent.message_id)]
    assert (sent.chat_id, sent.thread, sent.reply_to) == (GROUP_ID, 77, None)
    # A chat app's push says what it is (the daemon no longer writes that for it).
    assert (sent.text, sent.parse_mode) == ("⏰ Reminder: <b>Call</b> the dentist", "HTML")


async def test_a_late_reminder_says_when_it_was_due_in_the_persons_zone(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    late = PushTiming(datetime(2026, 3, 25, 0, 30, tzinfo=UTC), "Asia/Tokyo", late=True)
    async with harness.running() as channel:
        await channel.send(replace(_push("take the **pills**", chat_id=str(GROUP_ID)), timing=late))
        missed = PushTiming(
            datetime(2026, 3, 25, 0, 37, tzinfo=UTC),
            "Asia/Tokyo",
            occurrences=3,
            first_due_at=datetime(2026, 3, 24, 23, 58, tzinfo=UTC),
        )
        await channel.send(replace(_push("stretch", chat_id=str(GROUP_ID)), timing=missed))

    first, second = fake_telegram.sent
    assert first.text == (
        "⏰ Reminder: take the <b>pills</b>\n"
        "(late: it was due Wed 25 Mar 2026 09:30 (Asia/Tokyo), while I was offline)"
    )
    assert second.text == (
        "⏰ Reminder: stretch\n(missed 3 times while you were away: first due "
        "Wed 25 Mar 2026 08:58 (Asia/Tokyo), last Wed 25 Mar 2026 09:37 (Asia/Tokyo))"
    )


async def test_push_to_a_recipient_goes_to_their_private_chat(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running() as channel:
        ids = list((await channel.send(_push("word " * 1500, recipient=str(OWNER_ID)))).ids)

    assert len(ids) == len(fake_telegram.sent) == 2
    assert all(s.chat_id == OWNER_ID and s.reply_to is None for s in fake_telegram.sent)
    assert all(measure(s.text, "utf16") <= 4096 for s in fake_telegram.sent)


async def test_push_leaves_typing_and_the_pending_reply_alone(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running() as channel:
        update_id = fake_telegram.queue_group("think about it", mention=True)
        [message] = await harness.inbox.wait_for(1)
        await fake_telegram.wait_for_calls("sendChatAction")

        await channel.send(_push("time to stretch", chat_id=str(GROUP_ID)))
        assert len(_typing_tasks()) == 1  # still working on the question
        await channel.send(_answer(message, "thought about it"))
        assert _typing_tasks() == []

    push, reply = fake_telegram.sent
    assert (push.text, push.reply_to) == ("⏰ Reminder: time to stretch", None)
    assert reply.reply_to == fake_telegram.message_id_of(update_id)


async def test_a_push_nobody_could_take_fails(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.block(OWNER_ID)
    async with harness.running() as channel:
        delivery = await channel.send(_push("ping", recipient=str(OWNER_ID)))
        assert (delivery.state, delivery.ids) == ("failed", ())
    assert fake_telegram.sent == []


async def test_push_while_stopped_raises(harness: Harness) -> None:
    with pytest.raises(RuntimeError, match="not running"):
        await harness.channel().send(_push("ping", recipient=str(OWNER_ID)))


async def test_commands_for_other_bots_are_ignored_in_any_group(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running(harness.channel(require_mention_in_groups=False)):
        fake_telegram.queue_group("/status@other_bot")
        fake_telegram.queue_group("/new")
        [message] = await harness.inbox.wait_for(1)
    assert message.text == "/new"


async def test_deltas_are_ignored(harness: Harness, fake_telegram: FakeTelegram) -> None:
    async with harness.running() as channel:
        assert await channel.send(_reply(OWNER_ID, "partial", final=False)) == NOT_STREAMED
    assert fake_telegram.calls_to("sendMessage") == []
    assert channel.capabilities.can_stream is False
    assert (channel.capabilities.max_len, channel.capabilities.length_unit) == (4096, "utf16")


async def test_flood_control_is_waited_out(harness: Harness, fake_telegram: FakeTelegram) -> None:
    fake_telegram.fail_sends("rate_limited", retry_after=7)
    async with harness.running() as channel:
        ids = list((await channel.send(_reply(OWNER_ID, "hello"))).ids)

    assert harness.sleeps.delays == [7.0]
    assert len(ids) == 1
    assert len(fake_telegram.calls_to("sendMessage")) == 2


async def test_a_send_that_may_have_arrived_is_not_retried_nor_reported_sent(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.fail_sends("drop")
    async with harness.running() as channel:
        delivery = await channel.send(_reply(OWNER_ID, "hello"))

    assert (delivery.state, delivery.ids) == ("failed", ())
    assert len(fake_telegram.calls_to("sendMessage")) == 1


@pytest.mark.parametrize("kind", ["server_error", "bad_gateway"])
async def test_a_server_error_is_retried_after_a_short_backoff(
    harness: Harness, fake_telegram: FakeTelegram, kind: SendFailure
) -> None:
    # Telegram answers 5xx for a request it did not process: sending again cannot duplicate.
    fake_telegram.fail_sends(kind, 2)
    async with harness.running() as channel:
        ids = list((await channel.send(_reply(OWNER_ID, "hello"))).ids)

    assert [sent.text for sent in fake_telegram.sent] == ["hello"]
    assert ids == [str(fake_telegram.sent[0].message_id)]
    assert len(fake_telegram.calls_to("sendMessage")) == 3
    assert harness.sleeps.delays == [1.0, 2.0]


async def test_a_reply_telegram_never_took_fails_after_a_few_attempts(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    # A failed delivery keeps the router from marking the reply delivered: it sends it again.
    fake_telegram.fail_sends("bad_gateway", 10)
    async with harness.running() as channel:
        delivery = await channel.send(_reply(OWNER_ID, "hello"))

    assert (delivery.state, delivery.ids) == ("failed", ())
    assert delivery.reason and "Telegram" in delivery.reason
    assert fake_telegram.sent == []
    assert len(fake_telegram.calls_to("sendMessage")) == 4
    assert sum(harness.sleeps.delays) <= 6.0


async def test_a_reply_cut_off_after_its_first_part_fails_with_what_arrived(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.fail_sends("server_error", 10, after=1)
    async with harness.running() as channel:
        delivery = await channel.send(_reply(OWNER_ID, "word " * 1000))

    [first] = fake_telegram.sent
    assert (delivery.state, delivery.ids) == ("failed", (str(first.message_id),))
    assert len(fake_telegram.calls_to("sendMessage")) == 5


async def test_a_push_telegram_never_took_fails(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.fail_sends("server_error", 10)
    async with harness.running() as channel:
        delivery = await channel.send(_push("ping", recipient=str(OWNER_ID)))
        assert (delivery.state, delivery.ids) == ("failed", ())
    assert len(fake_telegram.calls_to("sendMessage")) == 4


async def test_send_when_not_running_raises(harness: Harness) -> None:
    with pytest.raises(RuntimeError, match="not running"):
        await harness.channel().send(_reply(OWNER_ID, "hello"))


# -- typing -------------------------------------------------------------------------------------


async def test_typing_runs_until_the_final_reply(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    async with harness.running() as channel:
        fake_telegram.queue_private("first")
        fake_telegram.queue_private("second")
        first, second = await harness.inbox.wait_for(2)
        await fake_telegram.wait_for_calls("sendChatAction", 2)
        assert len(_typing_tasks()) == 1

        await channel.send(_reply(OWNER_ID, "to the first", first.message_id))
        assert len(_typing_tasks()) == 1  # the second message is still waiting
        seen = len(fake_telegram.calls_to("sendChatAction"))
        await fake_telegram.wait_for_calls("sendChatAction", seen + 1)

        await channel.send(_reply(OWNER_ID, "to the second", second.message_id))
        assert _typing_tasks() == []
        stopped_at = len(fake_telegram.calls_to("sendChatAction"))
        # A full round trip later, no more typing went out.
        fake_telegram.queue_private(f"/status@{BOT_USERNAME}", user_id=STRANGER_ID)
        await fake_telegram.wait_for_sent(3)
        assert len(fake_telegram.calls_to("sendChatAction")) == stopped_at

    action = fake_telegram.calls_to("sendChatAction")[0]
    assert (action.params["chat_id"], action.params["action"]) == (str(OWNER_ID), "typing")


async def test_shutdown_cancels_typing(harness: Harness, fake_telegram: FakeTelegram) -> None:
    async with harness.running():
        fake_telegram.queue_private("never answered")
        await fake_telegram.wait_for_calls("sendChatAction")
        assert len(_typing_tasks()) == 1
    assert _typing_tasks() == []


# -- polling, recovery, lifecycle ---------------------------------------------------------------


async def test_polling_recovers_and_status_reports_it(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.fail_polls(2, "server_error")
    fake_telegram.fail_polls(1, "drop")
    async with harness.running() as channel:
        fake_telegram.queue_private("still there?")
        await harness.inbox.wait_for(1)
        recovered = channel.status()

    failing = harness.sleeps.statuses
    assert [s.connected for s in failing] == [False, False, False]
    assert [s.last_error for s in failing] == [*["TelegramUnavailable"] * 2, "NetworkError"]
    assert all(s.last_error_at == harness.clock.now for s in failing)
    first, second, third = harness.sleeps.delays
    assert 0.75 <= first <= 1.25 and 1.5 <= second <= 2.5 and 3.0 <= third <= 5.0
    assert recovered.connected is True
    assert recovered.last_error == "NetworkError"


async def test_conflict_backs_off(harness: Harness, fake_telegram: FakeTelegram) -> None:
    fake_telegram.fail_polls(1, "conflict")
    async with harness.running() as channel:
        fake_telegram.queue_private("hi")
        await harness.inbox.wait_for(1)
        status = channel.status()
    assert status.last_error is not None and status.last_error.startswith("Conflict")
    assert len(harness.sleeps.delays) == 1


async def test_refused_token_is_fatal_and_never_shown(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    channel = harness.channel(token="999:wrong-token")
    with structlog.testing.capture_logs() as logs, pytest.raises(ConfigError) as caught:
        await channel.run(harness.inbox)

    assert len(fake_telegram.calls) == 0  # the fake does not record refused tokens
    assert harness.sleeps.delays == []
    assert "wrong-token" not in str(caught.value)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert "wrong-token" not in repr(logs)
    status = channel.status()
    assert status.connected is False
    assert status.last_error is not None and status.last_error.startswith("InvalidToken")


async def test_token_refused_while_polling_is_fatal(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.fail_polls(1, "unauthorized")
    with pytest.raises(ConfigError, match=r"channels\.telegram\.token"):
        await harness.channel().run(harness.inbox)
    assert len(fake_telegram.calls_to("getUpdates")) == 1


async def test_start_retries_until_telegram_answers(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    fake_telegram.fail_calls("getMe", 1, "drop")
    fake_telegram.fail_calls("getMe", 1, "server_error")
    async with harness.running() as channel:
        fake_telegram.queue_private("hi")
        await harness.inbox.wait_for(1)
        assert channel.status().connected is True

    assert len(fake_telegram.calls_to("getMe")) == 3
    assert [s.connected for s in harness.sleeps.statuses] == [False, False]


async def test_clean_shutdown_acknowledges_and_closes(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    with structlog.testing.capture_logs() as logs:
        async with harness.running() as channel:
            update_id = fake_telegram.queue_private("bye")
            await harness.inbox.wait_for(1)

    assert max(fake_telegram.offsets) == update_id + 1
    assert channel.status().connected is False
    with pytest.raises(RuntimeError):
        await channel.send(_reply(OWNER_ID, "late"))
    events = [entry["event"] for entry in logs]
    assert "telegram.started" in events and "telegram.stopped" in events
    # The long poll in flight was cancelled; the confirming call still went through.
    assert "telegram.ack_failed" not in events
    assert fake_telegram.calls_to("getUpdates")[-1].params["timeout"] == "0"
    assert TOKEN not in repr(logs)
    assert logging.getLogger("httpx").getEffectiveLevel() >= logging.WARNING
    assert logging.getLogger("telegram").getEffectiveLevel() >= logging.WARNING


async def test_shutdown_confirms_handled_updates(
    harness: Harness, fake_telegram: FakeTelegram
) -> None:
    harness.sleeps.hold = True
    async with harness.running():
        fake_telegram.fail_polls(1, "drop")
        update_id = fake_telegram.queue_private("handled, then the network went away")
        await harness.inbox.wait_for(1)
        await harness.sleeps.holding.wait()
        assert update_id + 1 not in fake_telegram.offsets

    assert fake_telegram.offsets[-1] == update_id + 1
    assert fake_telegram.calls_to("getUpdates")[-1].params["timeout"] == "0"


async def test_run_twice_at_once_is_refused(harness: Harness) -> None:
    async with harness.running() as channel:
        with pytest.raises(RuntimeError, match="already running"):
            await channel.run(harness.inbox)


def test_missing_token_is_a_config_error() -> None:
    settings = TelegramSettings.model_validate({"enabled": True})
    with pytest.raises(ConfigError, match=r"channels\.telegram\.token"):
        TelegramChannel(settings, access=ChannelAccess("telegram", frozenset({str(OWNER_ID)})))
