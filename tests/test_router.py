"""The router with a real App (SQLite in tmp_path), a scripted provider and a recording channel."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fakes.channel import RecordingChannel
from fakes.gated_provider import GatedProvider

from evals.scripted_provider import ScriptedProvider
from flynn.app import App
from flynn.backoff import Backoff
from flynn.coordination import LocalCoordination
from flynn.errors import SessionBusy, StoreError
from flynn.messages import Delivery, IntakeKey, OutboundMessage, SessionKey
from flynn.providers.base import TASKS, Provider, Task
from flynn.providers.offline import memory_in
from flynn.router import Router
from flynn.settings import load_settings


async def make(
    tmp_path: Path, provider: Provider, *, settings: dict[str, Any] | None = None, **router: Any
) -> tuple[App, Router, RecordingChannel]:
    data: dict[str, Any] = {"data_dir": str(tmp_path / "data"), **(settings or {})}
    providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)
    app = App.open(load_settings(data), {}, providers=providers)
    channel = RecordingChannel()
    return (
        app,
        Router(
            app.sessions,
            {"gateway": channel},
            app.identity,
            app.memory.inbound,
            clock=app.services.clock,
            **router,
        ),
        channel,
    )


@pytest.fixture
async def closing() -> AsyncIterator[list[tuple[App, Router]]]:
    made: list[tuple[App, Router]] = []
    yield made
    for app, router in made:
        router.close_intake()
        await router.drain(0)
        await app.aclose()


async def test_a_reply_goes_back_once_even_when_the_message_is_redelivered(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    app, router, channel = await make(tmp_path, ScriptedProvider(default="hello back"))
    closing.append((app, router))
    message = channel.inbound("hello", message_id="42")
    await router.on_message(message)
    await router.on_message(message)
    reply = await channel.reply()
    assert reply.text == "hello back" and reply.reply_to == "42"
    await router.drain(5)
    assert [m.text for m in channel.sent if m.final] == ["hello back"]
    assert len(app.memory.history.recent("gateway:c1")) == 2


async def test_turns_are_serial_within_a_session_and_concurrent_across_sessions(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    provider = GatedProvider()
    app, router, channel = await make(tmp_path, provider)
    closing.append((app, router))
    await router.on_message(channel.inbound("one", chat_id="a"))
    await router.on_message(channel.inbound("two", chat_id="a"))
    await router.on_message(channel.inbound("three", chat_id="b"))
    while provider.in_flight < 2:
        provider.entered.clear()
        await provider.entered.wait()
    assert provider.in_flight == 2  # a's first turn and b's turn; a's second waits
    provider.gate.set()
    replies = [await channel.reply() for _ in range(3)]
    assert sorted(r.text for r in replies) == ["re: one", "re: three", "re: two"]
    a_replies = [r.text for r in replies if r.session.chat_id == "a"]
    assert a_replies == ["re: one", "re: two"]
    assert provider.peak == 2


async def test_a_full_inbox_is_refused_with_session_busy(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    provider = GatedProvider()
    app, router, channel = await make(tmp_path, provider, inbox_size=2)
    closing.append((app, router))
    await router.on_message(channel.inbound("first"))
    await provider.entered.wait()
    await router.on_message(channel.inbound("second"))
    await router.on_message(channel.inbound("third"))
    refused = channel.inbound("fourth", message_id="x4")
    with pytest.raises(SessionBusy):
        await router.on_message(refused)
    provider.gate.set()
    for _ in range(3):
        await channel.reply()
    # Refused messages were not claimed, so the channel's redelivery is accepted later.
    await router.on_message(refused)
    assert (await channel.reply()).text == "re: fourth"


async def test_streaming_channels_get_deltas_before_the_reply(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    app, router, channel = await make(tmp_path, ScriptedProvider(default="a streamed answer"))
    closing.append((app, router))
    message = channel.inbound("go", message_id="s1")
    await router.on_message(message)
    reply = await channel.reply()
    deltas = [m.text for m in channel.sent if not m.final]
    assert "".join(deltas) == "a streamed answer" == reply.text
    assert all(m.reply_to == "s1" for m in channel.sent)
    # The channel's own handle comes back with every delta and the reply.
    assert all(m.reply_handle is message.reply_handle for m in channel.sent)


async def test_idle_sessions_are_evicted_and_resumed_from_the_database(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    provider = ScriptedProvider(default="ok")
    app, router, channel = await make(tmp_path, provider, idle_seconds=0.05)
    closing.append((app, router))
    await router.on_message(channel.inbound("remember the blue door"))
    await channel.reply()
    await router.idle.wait()
    assert app.sessions.live(channel.inbound("").session_key) is None
    await router.on_message(channel.inbound("where was I?"))
    await channel.reply()
    contents = [m.content for m in provider.requests[-1].messages]
    assert "remember the blue door" in contents[0]


async def test_drain_finishes_in_flight_turns_and_intake_closes(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    provider = GatedProvider()
    app, router, channel = await make(tmp_path, provider)
    closing.append((app, router))
    await router.on_message(channel.inbound("slow one"))
    await provider.entered.wait()
    router.close_intake()
    with pytest.raises(SessionBusy):
        await router.on_message(channel.inbound("too late"))
    drained = asyncio.create_task(router.drain(5))
    provider.gate.set()
    assert await drained == 0
    assert [m.text for m in channel.sent if m.final] == ["re: slow one"]


async def test_drain_cancels_stragglers_after_the_grace_period(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    provider = GatedProvider()
    app, router, channel = await make(tmp_path, provider)
    closing.append((app, router))
    await router.on_message(channel.inbound("never finishes"))
    await provider.entered.wait()
    await router.on_message(channel.inbound("queued behind it", message_id="q2"))
    router.close_intake()
    assert await router.drain(0.05) == 1
    assert router.active_sessions == 0
    notices = [await channel.reply(), await channel.reply()]
    assert [(n.reply_to, n.error_code) for n in notices] == [("m1", "internal"), ("q2", "internal")]
    assert all("I'll answer this when I'm back" in notice.text for notice in notices)


async def test_what_a_drain_cut_off_is_answered_after_the_restart_in_order(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    provider = GatedProvider()
    app, router, channel = await make(tmp_path, provider)
    await router.on_message(channel.inbound("never finishes", message_id="m1"))
    await provider.entered.wait()
    await router.on_message(channel.inbound("queued behind it", message_id="q2"))
    router.close_intake()
    await router.drain(0.05)
    await app.aclose()

    # The restart: the same database, a model that answers.
    app, router, channel = await make(
        tmp_path, ScriptedProvider(default=lambda r: "re: " + r.messages[-1].content)
    )
    closing.append((app, router))
    assert await router.replay() == 2
    first, second = await channel.reply(), await channel.reply()
    assert (first.reply_to, first.text) == ("m1", "re: never finishes")
    assert (second.reply_to, second.text) == ("q2", "re: queued behind it")
    # Handles are not stored: a replayed message's channel answers from reply_to alone.
    assert first.reply_handle is None and second.reply_handle is None
    assert await router.replay() == 0  # answered once, for good
    # A resend after the reply was delivered (an update seen again): nothing a second time.
    await router.on_message(channel.inbound("never finishes", message_id="m1"))
    await router.quiet.wait()
    assert channel.finals.empty()
    stored = [m.content for m in app.memory.history.recent("gateway:c1")]
    assert stored.count("queued behind it") == 1


async def test_a_resend_while_pending_is_joined_and_after_is_answered_from_the_stored_reply(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    provider = GatedProvider()
    app, router, channel = await make(tmp_path, provider)
    closing.append((app, router))
    message = channel.inbound("slow question", message_id="s1")
    await router.on_message(message)
    await provider.entered.wait()
    await router.on_message(message)  # the client resends the same id: joined, not dropped
    provider.gate.set()
    reply = await channel.reply()
    assert reply.reply_to == "s1"
    await router.on_message(message)  # once delivered, a resend gets nothing a second time
    await router.quiet.wait()
    await router.drain(5)
    assert len([m for m in channel.sent if m.final]) == 1
    assert len(app.memory.history.recent("gateway:c1")) == 2


async def test_a_reply_that_could_not_be_sent_is_sent_after_the_restart(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    app, router, channel = await make(tmp_path, ScriptedProvider(default="the answer"))
    broken = BrokenChannel(can_stream=False)
    router = Router(
        app.sessions,
        {"gateway": broken},
        app.identity,
        app.memory.inbound,
        clock=app.services.clock,
    )
    await router.on_message(channel.inbound("question", message_id="x1"))
    await router.drain(5)
    assert broken.attempts >= 1
    await app.aclose()

    app, router, channel = await make(tmp_path, ScriptedProvider(default="never asked"))
    closing.append((app, router))
    assert await router.replay() == 1
    reply = await channel.reply()
    assert (reply.reply_to, reply.text) == ("x1", "the answer")
    await router.quiet.wait()
    assert await router.replay() == 0


class BrokenChannel(RecordingChannel):
    def __init__(self, *, can_stream: bool) -> None:
        super().__init__(can_stream=can_stream)
        self.attempts = 0

    async def send(self, message: OutboundMessage) -> Delivery:
        self.attempts += 1
        raise RuntimeError("the network is down")


async def test_two_people_in_one_group_never_see_each_others_memory(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    provider = ScriptedProvider(default="ok")
    users = {"alice": {"gateway": ["alice-id"]}, "bob": {"gateway": ["bob-id"]}}
    # On the gateway a person is a client authenticated with their own token: <person>@<id>.
    app, router, channel = await make(tmp_path, provider, settings={"users": users})
    closing.append((app, router))
    await router.on_message(
        channel.inbound(
            "My name is Alice.", chat_id="group", sender_id="alice@alice-id", is_group=True
        )
    )
    await channel.reply()
    await router.on_message(
        channel.inbound("My name is Bob.", chat_id="group", sender_id="bob@bob-id", is_group=True)
    )
    await channel.reply()
    # The profile joins the prompt at a session start.
    await router.on_message(
        channel.inbound("/new", chat_id="group", sender_id="bob@bob-id", is_group=True)
    )
    await channel.reply()
    await router.on_message(
        channel.inbound("who am I?", chat_id="group", sender_id="bob@bob-id", is_group=True)
    )
    await channel.reply()
    bob_prompt = provider.requests[-1]
    assert "Alice" not in bob_prompt.system
    assert all("Alice" not in m.content for m in bob_prompt.messages)
    assert memory_in(bob_prompt.system).user_name == "Bob"
    await router.on_message(
        channel.inbound("hi", chat_id="alice@alice-id", sender_id="alice@alice-id")
    )
    await channel.reply()
    alice_dm = provider.requests[-1]
    assert "Bob" not in alice_dm.system
    assert memory_in(alice_dm.system).user_name == "Alice"


async def test_a_groups_sender_is_a_field_of_the_key_and_its_text_stays_as_stored(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    users = {"alice": {"telegram": ["1001"]}, "bob": {"telegram": ["1002"]}}
    app, router, channel = await make(tmp_path, ScriptedProvider(), settings={"users": users})
    closing.append((app, router))
    message = replace(
        channel.inbound("hi", chat_id="-100", sender_id="1001", is_group=True),
        channel="telegram",
        thread="77",
    )

    key = router.session_key(message)

    assert key == SessionKey("telegram", "-100", "77", sender="1001")
    # The text sessions, messages and intake rows already hold for this conversation.
    assert str(key) == "telegram:-100:77/u1001"
    assert router.session_key(replace(message, is_group=False)) == message.session_key


async def test_the_command_a_channel_parsed_runs_and_text_is_taken_as_it_is(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    provider = ScriptedProvider(default=lambda r: "re: " + r.messages[-1].content)
    app, router, channel = await make(tmp_path, provider)
    closing.append((app, router))
    await router.on_message(channel.inbound("/status"))
    assert "Unknown command" not in (await channel.reply()).text
    assert provider.requests == []
    # The router never reads a command out of text: only the channel's parse counts.
    forwarded = channel.inbound("/forget everything", forwarded=True)
    assert forwarded.command is None
    await router.on_message(forwarded)
    assert (await channel.reply()).text.startswith("re: ")


async def test_a_command_replayed_after_a_restart_is_still_a_command(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    provider = GatedProvider()
    app, router, channel = await make(tmp_path, provider)
    await router.on_message(channel.inbound("never finishes", message_id="m1"))
    await provider.entered.wait()
    await router.on_message(channel.inbound("/help", message_id="h2"))
    router.close_intake()
    await router.drain(0.05)
    await app.aclose()

    chat = ScriptedProvider(default="answered")
    app, router, channel = await make(tmp_path, chat)
    closing.append((app, router))
    assert await router.replay() == 2
    first, second = await channel.reply(), await channel.reply()
    assert first.reply_to == "m1" and second.reply_to == "h2"
    assert "/new" in second.text and len(chat.requests) == 1


async def test_replies_whose_send_failed_go_in_order_once_the_chat_service_is_back(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    """Telegram refusing 10 sends, then healthy again: the replies go out without a restart,
    in the order they were answered, each once, and only then count as delivered."""
    app, router, channel = await make(
        tmp_path,
        ScriptedProvider(default=lambda r: "re: " + r.messages[-1].content),
        resend=Backoff(first=0.001, most=0.01),
    )
    closing.append((app, router))
    channel.failing = 10
    for number in range(3):
        await router.on_message(channel.inbound(f"q{number}", message_id=f"m{number}"))
    replies = [await channel.reply() for _ in range(3)]
    assert [(r.reply_to, r.text) for r in replies] == [(f"m{n}", f"re: q{n}") for n in range(3)]
    assert channel.failing == 0
    await router.quiet.wait()
    assert app.memory.inbound.undelivered("gateway", "c1") == []
    assert app.memory.inbound.unfinished() == []


async def test_a_failed_send_is_not_recorded_as_delivered(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    app, router, channel = await make(
        tmp_path, ScriptedProvider(default="hi"), resend=Backoff(first=3600, most=3600)
    )
    closing.append((app, router))
    channel.failing = 1
    await router.on_message(channel.inbound("hello", message_id="m1"))
    await router.quiet.wait()
    undelivered = app.memory.inbound.undelivered("gateway", "c1")
    assert [(u.message.message_id, u.reply) for u in undelivered] == [("m1", "hi")]
    # Acknowledged later (a gateway client's ack): delivered, once.
    router.acknowledged(IntakeKey("gateway", "c1", "m1"))
    assert app.memory.inbound.undelivered("gateway", "c1") == []


async def test_a_reply_refused_for_good_is_given_up_and_the_next_one_goes(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    """A deleted forum topic, a bot that was blocked: retrying cannot help, and must not hold
    up the replies after it (nor come back at every restart)."""
    app, router, channel = await make(
        tmp_path,
        ScriptedProvider(default=lambda r: "re: " + r.messages[-1].content),
        resend=Backoff(first=3600, most=3600),
    )
    closing.append((app, router))
    channel.refusing = 1
    await router.on_message(channel.inbound("lost", message_id="m1"))
    await router.on_message(channel.inbound("next", message_id="m2"))
    reply = await channel.reply()
    assert (reply.reply_to, reply.text) == ("m2", "re: next")  # not queued behind m1
    assert app.memory.inbound.unfinished() == []  # m1 is closed: no retry, no replay


async def test_a_failing_conversation_does_not_hold_up_another_thread_of_the_same_chat(
    tmp_path: Path, closing: list[tuple[App, Router]]
) -> None:
    app, router, channel = await make(
        tmp_path, ScriptedProvider(default="ok"), resend=Backoff(first=3600, most=3600)
    )
    closing.append((app, router))
    channel.failing = 1
    stuck = replace(channel.inbound("in topic 1", message_id="t1"), thread="1")
    await router.on_message(stuck)
    await router.quiet.wait()
    other = replace(channel.inbound("in topic 2", message_id="t2"), thread="2")
    await router.on_message(other)
    reply = await channel.reply()
    assert reply.reply_to == "t2"


class RefusingCoordination(LocalCoordination):
    """One process alone whose first ``refusals`` session turns cannot be taken (the database
    out of reach, as ``PostgresCoordination.turn`` raises it)."""

    def __init__(self, refusals: int) -> None:
        self.refusals = refusals
        self.tries = 0

    @contextlib.asynccontextmanager
    async def turn(self, session: str, key: IntakeKey) -> AsyncIterator[bool]:
        self.tries += 1
        if self.tries <= self.refusals:
            raise StoreError("cannot connect (postgresql://flynn@db/flynn): connection refused")
        yield True


@pytest.mark.parametrize(
    ("refusals", "notice_after", "told"),
    [(2, 5, False), (4, 2, True)],
    ids=["tried-again-and-answered", "told-then-answered"],
)
async def test_a_turn_the_database_refused_is_tried_again_and_answered_once(
    tmp_path: Path,
    closing: list[tuple[App, Router]],
    refusals: int,
    notice_after: int,
    told: bool,
) -> None:
    coordination = RefusingCoordination(refusals)
    app, router, channel = await make(
        tmp_path,
        ScriptedProvider(default="the answer"),
        coordination=coordination,
        turn_retry=Backoff(first=0, most=0),
        notice_after=notice_after,
    )
    closing.append((app, router))
    await router.on_message(channel.inbound("question", message_id="q1"))
    if told:
        # Refused past ``notice_after`` tries: the person is told once, and the tries go on.
        notice = await channel.reply()
        assert (notice.reply_to, notice.error_code) == ("q1", "internal")
        assert "can't reach my database" in notice.text
    reply = await channel.reply()
    assert (reply.reply_to, reply.text, reply.error_code) == ("q1", "the answer", None)
    await router.quiet.wait()
    assert coordination.tries == refusals + 1
    assert channel.finals.empty()  # nothing said after the answer
    # Answered once, stored once, nothing left for a replay.
    assert app.memory.inbound.unfinished() == []
    stored = [m.content for m in app.memory.history.recent("gateway:c1")]
    assert stored == ["question", "the answer"]
