"""TelegramChannel in webhook mode: the real python-telegram-bot against the fake Bot API, and a
real HTTP client posting updates to the channel's listener on 127.0.0.1, as Telegram would."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakes.fake_telegram import BOT_ID, OWNER_ID, STRANGER_ID, TOKEN, FakeTelegram
from structlog.testing import capture_logs
from telegram_harness import Harness

from flynn.channels.telegram import TelegramChannel
from flynn.channels.telegram_webhook import MAX_BODY_BYTES, SECRET_HEADER, webhook_secret
from flynn.errors import StoreError
from flynn.memory.database import Database
from flynn.memory.telegram_updates import SqliteTelegramUpdates
from flynn.messages import InboundMessage, OutboundMessage
from flynn.schedule.migrations import SCHEMA
from flynn.settings import TelegramSettings

URL = "https://bot.example.com/telegram/hook?from=telegram"
PATH = "/telegram/hook"


class _Own:
    """The worker's own secret."""


OWN = _Own()


class Worker:
    """One channel in webhook mode (a worker) on the fake Bot API, and Telegram's side of it:
    posts to its listener with the secret it expects (``secret``: another, or None for none)."""

    def __init__(self, world: World, **settings: Any) -> None:
        self.settings = {"webhook_url": URL, "webhook_listen": "127.0.0.1:0", **settings}
        self.world = world
        self.channel = world.harness.channel(updates=world.updates, **self.settings)
        self.secret = webhook_secret(
            TelegramSettings.model_validate({"token": TOKEN, **self.settings})
        )

    def running(
        self, on_message: Callable[[InboundMessage], Awaitable[None]] | None = None
    ) -> AbstractAsyncContextManager[TelegramChannel]:
        return self.world.harness.running(self.channel, on_message, started_by="setMyCommands")

    @property
    def address(self) -> str:
        webhook = self.channel.webhook
        assert webhook is not None and webhook.bound_port is not None
        return f"http://127.0.0.1:{webhook.bound_port}{PATH}"

    async def post(
        self, body: bytes | dict[str, Any], *, secret: str | _Own | None = OWN
    ) -> httpx.Response:
        headers = {"content-type": "application/json"}
        secret = self.secret if isinstance(secret, _Own) else secret
        if secret is not None:
            headers[SECRET_HEADER] = secret
        content = json.dumps(body).encode() if isinstance(body, dict) else body
        async with httpx.AsyncClient(timeout=10) as client:
            return await client.post(self.address, content=content, headers=headers)


@dataclass
class World:
    """The fake Bot API, the channel harness, and the database the workers share."""

    server: FakeTelegram
    harness: Harness
    updates: SqliteTelegramUpdates

    @property
    def inbox(self) -> list[InboundMessage]:
        return self.harness.inbox.messages

    def queued(self, text: str, **options: Any) -> dict[str, Any]:
        """A private message (``queue_private``'s options) as Telegram posts it."""
        return self.server.update_body(self.server.queue_private(text, **options))


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with FakeTelegram() as server:
        with Database.open(tmp_path / "flynn.db", SCHEMA) as db:
            yield World(server, Harness(server), SqliteTelegramUpdates(db))


class Answering:
    """An ``on_message`` that answers each message through the channel, as the router does."""

    def __init__(self, world: World, channel: TelegramChannel) -> None:
        self.world = world
        self.channel = channel

    async def __call__(self, message: InboundMessage) -> None:
        await self.world.harness.inbox(message)
        reply = OutboundMessage(
            message.session_key,
            f"you said: {message.text}",
            reply_to=message.message_id,
            reply_handle=message.reply_handle,
        )
        assert (await self.channel.send(reply)).is_delivered


async def test_a_posted_update_is_answered_once_however_often_telegram_retries_it(
    world: World,
) -> None:
    worker = Worker(world)
    with capture_logs() as logs:
        async with worker.running(Answering(world, worker.channel)):
            update = world.queued("hello over the webhook")
            first = await worker.post(update)
            retried = await worker.post(update)

    assert (first.status_code, retried.status_code) == (200, 200)
    assert [m.text for m in world.inbox] == ["hello over the webhook"]
    assert [m.message_id for m in world.inbox] == [str(update["update_id"])]
    [sent] = world.server.sent
    assert (sent.chat_id, sent.text) == (OWNER_ID, "you said: hello over the webhook")
    [set_webhook] = world.server.calls_to("setWebhook")
    assert set_webhook.params["url"] == URL
    assert set_webhook.params["secret_token"] == worker.secret
    assert set_webhook.json("allowed_updates") == ["message"]
    assert set_webhook.json("drop_pending_updates") is False
    # No polling, and a normal stop leaves the webhook set: another worker may serve it.
    assert world.server.calls_to("getUpdates") == []
    assert world.server.calls_to("deleteWebhook") == []
    assert world.server.webhook_url == URL
    assert any(entry["event"] == "telegram.duplicate" for entry in logs)
    assert TOKEN not in repr(logs)
    assert worker.secret not in repr(logs)


def test_the_derived_secret_is_the_same_for_one_token_and_not_the_token() -> None:
    def secret(**settings: str) -> str:
        return webhook_secret(TelegramSettings.model_validate({"token": TOKEN, **settings}))

    one, again, other = secret(), secret(), secret(token="654321:another-token")
    assert one == again != other
    assert TOKEN not in one and TOKEN.split(":")[1] not in one
    assert secret(webhook_secret="chosen_Secret-1") == "chosen_Secret-1"


async def test_a_post_without_the_right_secret_is_refused_and_logged_once(world: World) -> None:
    worker = Worker(world, webhook_secret="the-right-one")
    derived = Worker(world).secret
    with capture_logs() as logs:
        async with worker.running():
            update = world.queued("let me in")
            answers = [
                await worker.post(update, secret="a-wrong-guess"),
                await worker.post(update, secret=None),
                await worker.post(update, secret=derived),
            ]

    assert [answer.status_code for answer in answers] == [403, 403, 403]
    assert world.inbox == []
    assert world.server.sent == []
    refusals = [entry for entry in logs if entry["event"] == "telegram.webhook_forbidden"]
    assert len(refusals) == 1  # one source: logged once
    assert refusals[0]["source"] == "127.0.0.1"
    assert "a-wrong-guess" not in repr(logs) and "the-right-one" not in repr(logs)


@pytest.mark.parametrize(
    "body",
    [
        b"this is not json",
        b"\xff\xfe",
        b"[1, 2]",
        b'{"update_id": "7"}',
        b'{"message": {"text": "no id"}}',
        b'{"update_id": 7, "message": "not a message"}',
        b'{"update_id": 7, "message": {"message_id": 1, "chat": {"id": 1}}}',
    ],
)
async def test_a_body_that_is_no_update_is_a_bad_request(world: World, body: bytes) -> None:
    worker = Worker(world)
    async with worker.running():
        answer = await worker.post(body)
        # The listener is still serving: a real update after it goes through.
        after = await worker.post(world.queued("after the garbage"))

    assert answer.status_code == 400
    assert after.status_code == 200
    assert [m.text for m in world.inbox] == ["after the garbage"]


async def test_an_oversized_body_is_refused_without_being_read(world: World) -> None:
    worker = Worker(world)
    huge = b'{"update_id": 1, "pad": "' + b"x" * MAX_BODY_BYTES + b'"}'

    async def chunks() -> AsyncIterator[bytes]:
        # No content-length: the listener must stop reading at its limit.
        for start in range(0, len(huge), 65536):
            yield huge[start : start + 65536]

    async with worker.running():
        stated = await worker.post(huge)
        async with httpx.AsyncClient(timeout=10) as client:
            chunked = await client.post(
                worker.address, content=chunks(), headers={SECRET_HEADER: worker.secret}
            )

    assert stated.status_code == 413
    assert chunked.status_code == 413
    assert world.inbox == []


async def test_an_update_storage_refused_is_answered_503_and_taken_when_posted_again(
    world: World,
) -> None:
    worker = Worker(world)
    world.harness.inbox.fail_with.append(StoreError("disk full"))
    async with worker.running():
        update = world.queued("keep me")
        refused = await worker.post(update)
        again = await worker.post(update)

    assert (refused.status_code, again.status_code) == (503, 200)
    assert [m.text for m in world.inbox] == ["keep me"]


async def test_an_update_handled_by_another_worker_is_not_handled_again(world: World) -> None:
    """Two channels (two workers) on one database: Telegram's retry lands on the other one."""
    first, second = Worker(world), Worker(world)
    async with first.running(), second.running():
        await world.server.wait_for_calls("setMyCommands", 2)
        update = world.queued("once, please")
        answers = [await first.post(update), await second.post(update)]

    assert [answer.status_code for answer in answers] == [200, 200]
    assert [m.text for m in world.inbox] == ["once, please"]


async def test_a_webhook_update_takes_the_polling_path_for_strangers_and_groups(
    world: World,
) -> None:
    worker, server = Worker(world), world.server
    async with worker.running():
        for update_id in (
            server.queue_private("hi", user_id=STRANGER_ID),
            server.queue_group("chatter among ourselves"),
            server.queue_group("are you there?", mention=True),
            server.queue_private("/status"),
        ):
            answer = await worker.post(server.update_body(update_id))
            assert answer.status_code == 200

    assert [m.text for m in world.inbox] == ["are you there?", "/status"]
    assert world.inbox[1].command is not None
    [refusal] = server.sent
    assert refusal.chat_id == STRANGER_ID


async def test_stopping_finishes_the_update_in_hand_and_leaves_the_webhook(world: World) -> None:
    worker = Worker(world)
    channel = worker.channel
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow(message: InboundMessage) -> None:
        entered.set()
        await release.wait()
        await world.harness.inbox(message)

    task = asyncio.create_task(channel.run(slow))
    await world.server.wait_for_calls("setMyCommands")
    update = world.queued("in flight")
    post = asyncio.create_task(worker.post(update))
    async with asyncio.timeout(5):
        await entered.wait()
    task.cancel()  # what the daemon does at SIGTERM, once the router stopped its intake
    assert channel.webhook is not None
    async with asyncio.timeout(5):
        await channel.webhook.closed.wait()
    with pytest.raises(httpx.ConnectError):  # no new posts: Telegram goes to another worker
        await worker.post(update)
    release.set()  # the update in hand is finished, and answered
    answer = await post
    with pytest.raises(asyncio.CancelledError):
        await task

    assert answer.status_code == 200
    assert [m.text for m in world.inbox] == ["in flight"]
    assert world.server.calls_to("deleteWebhook") == []
    assert channel.listening is not None and not channel.listening.is_set()


async def test_old_update_ids_are_forgotten_at_start_and_then_daily(world: World) -> None:
    clock, updates = world.harness.clock, world.updates
    for update_id in (1, 2):
        updates.claim(BOT_ID, update_id, now=clock.now - timedelta(days=3))
        updates.done(BOT_ID, update_id)
    worker = Worker(world)
    async with worker.running():
        assert updates.claim(BOT_ID, 1, now=clock.now) == "claimed"  # forgotten at start
        updates.done(BOT_ID, 1)
        clock.advance(hours=23)
        await worker.post(world.queued("not a day yet"))
        assert updates.claim(BOT_ID, 1, now=clock.now) == "done"
        clock.advance(days=2)
        await worker.post(world.queued("a day later"))
        assert updates.claim(BOT_ID, 1, now=clock.now) == "claimed"
    assert updates.claim(BOT_ID, 2, now=clock.now) == "claimed"


async def test_a_refused_set_webhook_is_retried_and_telegram_s_reason_shown(
    world: World,
) -> None:
    world.server.fail_calls("setWebhook", 1, "bad_webhook")
    async with Worker(world).running():
        pass
    assert len(world.server.calls_to("setWebhook")) == 2
    [status] = world.harness.sleeps.statuses
    assert status.last_error == "BadRequest: Bad webhook: failed to resolve host"
    assert world.server.webhook_url == URL


async def test_polling_after_webhook_mode_deletes_the_webhook_first(world: World) -> None:
    async with Worker(world).running():
        pass
    assert world.server.webhook_url == URL  # left set by the webhook run

    async with world.harness.running():  # the same bot, polling again
        world.server.queue_private("polled again")
        [message] = await world.harness.inbox.wait_for(1)

    assert message.text == "polled again"
    methods = [call.method for call in world.server.calls]
    assert methods.index("deleteWebhook") < methods.index("getUpdates")
    assert world.server.webhook_url == ""


async def test_the_listen_address_in_use_fails_the_start(world: World) -> None:
    first = Worker(world)
    async with first.running():
        port = first.address.split(":")[2].split("/")[0]
        taken = Worker(world, webhook_listen=f"127.0.0.1:{port}")
        with pytest.raises(OSError, match="address already in use"):
            await taken.channel.run(world.harness.inbox)
    assert len(world.server.calls_to("setWebhook")) == 1


def test_webhook_mode_without_its_store_is_a_programming_error(world: World) -> None:
    with pytest.raises(ValueError, match="webhook mode needs"):
        world.harness.channel(webhook_url=URL)
