"""TelegramChannel in webhook mode: the real python-telegram-bot against the fake Bot API, and a
real HTTP client posting updates to the channel's listener on 127.0.0.1, as Telegram would."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fakes.fake_telegram import OWNER_ID, STRANGER_ID, TOKEN, FakeTelegram
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


@pytest.fixture(autouse=True)
def _ptb_timedelta(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PTB_TIMEDELTA", "1")  # as in test_telegram.py


@pytest.fixture
async def fake_telegram() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
def harness(fake_telegram: FakeTelegram) -> Harness:
    return Harness(fake_telegram)


@pytest.fixture
def updates(tmp_path: Path) -> Iterator[SqliteTelegramUpdates]:
    db = Database.open(tmp_path / "flynn.db", SCHEMA)
    try:
        yield SqliteTelegramUpdates(db)
    finally:
        db.close()


def _settings(harness: Harness, **extra: Any) -> TelegramSettings:
    return TelegramSettings.model_validate(
        {
            "enabled": True,
            "token": TOKEN,
            "base_url": harness.server.base_url,
            "webhook_url": URL,
            "webhook_listen": "127.0.0.1:0",
            **extra,
        }
    )


def _webhook_channel(
    harness: Harness, updates: SqliteTelegramUpdates, **extra: Any
) -> TelegramChannel:
    settings = {"webhook_url": URL, "webhook_listen": "127.0.0.1:0", **extra}
    return harness.channel(updates=updates, **settings)


class Answering:
    """An ``on_message`` that answers each message through the channel, as the router does."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.channel: TelegramChannel | None = None

    async def __call__(self, message: InboundMessage) -> None:
        await self.harness.inbox(message)
        assert self.channel is not None
        reply = OutboundMessage(
            message.session_key,
            f"you said: {message.text}",
            reply_to=message.message_id,
            reply_handle=message.reply_handle,
        )
        assert (await self.channel.send(reply)).is_delivered


def _port(channel: TelegramChannel) -> int:
    assert channel.webhook is not None and channel.webhook.bound_port is not None
    return channel.webhook.bound_port


async def _post(
    channel: TelegramChannel,
    body: bytes | dict[str, Any],
    *,
    secret: str | None,
    path: str = PATH,
) -> httpx.Response:
    headers = {"content-type": "application/json"}
    if secret is not None:
        headers[SECRET_HEADER] = secret
    content = json.dumps(body).encode() if isinstance(body, dict) else body
    async with httpx.AsyncClient(timeout=10) as client:
        return await client.post(
            f"http://127.0.0.1:{_port(channel)}{path}", content=content, headers=headers
        )


async def test_a_posted_update_is_answered_once_however_often_telegram_retries_it(
    harness: Harness, fake_telegram: FakeTelegram, updates: SqliteTelegramUpdates
) -> None:
    channel = _webhook_channel(harness, updates)
    answering = Answering(harness)
    answering.channel = channel
    secret = webhook_secret(_settings(harness))
    with capture_logs() as logs:
        async with harness.running(channel, answering, started_by="setMyCommands"):
            update_id = fake_telegram.queue_private("hello over the webhook")
            body = fake_telegram.update_body(update_id)
            first = await _post(channel, body, secret=secret)
            retried = await _post(channel, body, secret=secret)

    assert (first.status_code, retried.status_code) == (200, 200)
    assert [m.text for m in harness.inbox.messages] == ["hello over the webhook"]
    assert [m.message_id for m in harness.inbox.messages] == [str(update_id)]
    [sent] = fake_telegram.sent
    assert (sent.chat_id, sent.text) == (OWNER_ID, "you said: hello over the webhook")
    [set_webhook] = fake_telegram.calls_to("setWebhook")
    assert set_webhook.params["url"] == URL
    assert set_webhook.params["secret_token"] == secret
    assert set_webhook.json("allowed_updates") == ["message"]
    assert set_webhook.json("drop_pending_updates") is False
    # No polling, and a normal stop leaves the webhook set: another worker may serve it.
    assert fake_telegram.calls_to("getUpdates") == []
    assert fake_telegram.calls_to("deleteWebhook") == []
    assert fake_telegram.webhook_url == URL
    assert any(entry["event"] == "telegram.duplicate" for entry in logs)
    assert TOKEN not in repr(logs)
    assert secret not in repr(logs)


async def test_the_derived_secret_is_the_same_for_one_token_and_not_the_token(
    harness: Harness,
) -> None:
    one, again = webhook_secret(_settings(harness)), webhook_secret(_settings(harness))
    other = webhook_secret(_settings(harness, token="654321:another-token"))
    assert one == again != other
    assert TOKEN not in one and TOKEN.split(":")[1] not in one
    assert webhook_secret(_settings(harness, webhook_secret="chosen_Secret-1")) == (
        "chosen_Secret-1"
    )


async def test_a_post_without_the_right_secret_is_refused_and_logged_once(
    harness: Harness, fake_telegram: FakeTelegram, updates: SqliteTelegramUpdates
) -> None:
    channel = _webhook_channel(harness, updates, webhook_secret="the-right-one")
    with capture_logs() as logs:
        async with harness.running(channel, started_by="setMyCommands"):
            body = fake_telegram.update_body(fake_telegram.queue_private("let me in"))
            wrong = await _post(channel, body, secret="a-wrong-guess")
            missing = await _post(channel, body, secret=None)
            derived = await _post(channel, body, secret=webhook_secret(_settings(harness)))

    assert [wrong.status_code, missing.status_code, derived.status_code] == [403, 403, 403]
    assert harness.inbox.messages == []
    assert fake_telegram.sent == []
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
async def test_a_body_that_is_no_update_is_a_bad_request(
    harness: Harness,
    fake_telegram: FakeTelegram,
    updates: SqliteTelegramUpdates,
    body: bytes,
) -> None:
    channel = _webhook_channel(harness, updates)
    secret = webhook_secret(_settings(harness))
    async with harness.running(channel, started_by="setMyCommands"):
        answer = await _post(channel, body, secret=secret)
        # The listener is still serving: a real update after it goes through.
        good = fake_telegram.update_body(fake_telegram.queue_private("after the garbage"))
        after = await _post(channel, good, secret=secret)

    assert answer.status_code == 400
    assert after.status_code == 200
    assert [m.text for m in harness.inbox.messages] == ["after the garbage"]


async def test_an_oversized_body_is_refused_without_being_read(
    harness: Harness, fake_telegram: FakeTelegram, updates: SqliteTelegramUpdates
) -> None:
    channel = _webhook_channel(harness, updates)
    secret = webhook_secret(_settings(harness))
    huge = b'{"update_id": 1, "pad": "' + b"x" * MAX_BODY_BYTES + b'"}'

    async def chunks() -> AsyncIterator[bytes]:
        # No content-length: the listener must stop reading at its limit.
        for start in range(0, len(huge), 65536):
            yield huge[start : start + 65536]

    async with harness.running(channel, started_by="setMyCommands"):
        stated = await _post(channel, huge, secret=secret)
        async with httpx.AsyncClient(timeout=10) as client:
            chunked = await client.post(
                f"http://127.0.0.1:{_port(channel)}{PATH}",
                content=chunks(),
                headers={SECRET_HEADER: secret},
            )

    assert stated.status_code == 413
    assert chunked.status_code == 413
    assert harness.inbox.messages == []


async def test_an_update_storage_refused_is_answered_503_and_taken_when_posted_again(
    harness: Harness, fake_telegram: FakeTelegram, updates: SqliteTelegramUpdates
) -> None:
    channel = _webhook_channel(harness, updates)
    secret = webhook_secret(_settings(harness))
    harness.inbox.fail_with.append(StoreError("disk full"))
    async with harness.running(channel, started_by="setMyCommands"):
        body = fake_telegram.update_body(fake_telegram.queue_private("keep me"))
        refused = await _post(channel, body, secret=secret)
        again = await _post(channel, body, secret=secret)

    assert (refused.status_code, again.status_code) == (503, 200)
    assert [m.text for m in harness.inbox.messages] == ["keep me"]


async def test_an_update_handled_by_another_worker_is_not_handled_again(
    harness: Harness, fake_telegram: FakeTelegram, updates: SqliteTelegramUpdates
) -> None:
    """Two channels (two workers) on one database: Telegram's retry lands on the other one."""
    first = _webhook_channel(harness, updates)
    second = _webhook_channel(harness, updates)
    secret = webhook_secret(_settings(harness))
    async with (
        harness.running(first, started_by="setMyCommands"),
        harness.running(second, started_by="setMyCommands"),
    ):
        await fake_telegram.wait_for_calls("setMyCommands", 2)
        body = fake_telegram.update_body(fake_telegram.queue_private("once, please"))
        answers = [
            await _post(first, body, secret=secret),
            await _post(second, body, secret=secret),
        ]

    assert [a.status_code for a in answers] == [200, 200]
    assert [m.text for m in harness.inbox.messages] == ["once, please"]


async def test_a_webhook_update_takes_the_polling_path_for_strangers_and_groups(
    harness: Harness, fake_telegram: FakeTelegram, updates: SqliteTelegramUpdates
) -> None:
    channel = _webhook_channel(harness, updates)
    secret = webhook_secret(_settings(harness))
    async with harness.running(channel, started_by="setMyCommands"):
        for update_id in (
            fake_telegram.queue_private("hi", user_id=STRANGER_ID),
            fake_telegram.queue_group("chatter among ourselves"),
            fake_telegram.queue_group("are you there?", mention=True),
            fake_telegram.queue_private("/status"),
        ):
            answer = await _post(channel, fake_telegram.update_body(update_id), secret=secret)
            assert answer.status_code == 200

    assert [m.text for m in harness.inbox.messages] == ["are you there?", "/status"]
    assert harness.inbox.messages[1].command is not None
    [refusal] = fake_telegram.sent
    assert refusal.chat_id == STRANGER_ID


async def test_stopping_finishes_the_update_in_hand_and_leaves_the_webhook(
    harness: Harness, fake_telegram: FakeTelegram, updates: SqliteTelegramUpdates
) -> None:
    channel = _webhook_channel(harness, updates)
    secret = webhook_secret(_settings(harness))
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow(message: InboundMessage) -> None:
        entered.set()
        await release.wait()
        await harness.inbox(message)

    task = asyncio.create_task(channel.run(slow))
    await fake_telegram.wait_for_calls("setMyCommands")
    body = fake_telegram.update_body(fake_telegram.queue_private("in flight"))
    post = asyncio.create_task(_post(channel, body, secret=secret))
    async with asyncio.timeout(5):
        await entered.wait()
    task.cancel()  # what the daemon does at SIGTERM, once the router stopped its intake
    assert channel.webhook is not None
    async with asyncio.timeout(5):
        await channel.webhook.closed.wait()
    with pytest.raises(httpx.ConnectError):  # no new posts: Telegram goes to another worker
        await _post(channel, body, secret=secret)
    release.set()  # the update in hand is finished, and answered
    answer = await post
    with pytest.raises(asyncio.CancelledError):
        await task

    assert answer.status_code == 200
    assert [m.text for m in harness.inbox.messages] == ["in flight"]
    assert fake_telegram.calls_to("deleteWebhook") == []
    assert channel.listening is not None and not channel.listening.is_set()


async def test_polling_after_webhook_mode_deletes_the_webhook_first(
    harness: Harness, fake_telegram: FakeTelegram, updates: SqliteTelegramUpdates
) -> None:
    async with harness.running(_webhook_channel(harness, updates), started_by="setMyCommands"):
        pass
    assert fake_telegram.webhook_url == URL  # left set by the webhook run

    async with harness.running():  # the same bot, polling again
        fake_telegram.queue_private("polled again")
        [message] = await harness.inbox.wait_for(1)

    assert message.text == "polled again"
    methods = [call.method for call in fake_telegram.calls]
    assert methods.index("deleteWebhook") < methods.index("getUpdates")
    assert fake_telegram.webhook_url == ""


async def test_the_listen_address_in_use_fails_the_start(
    harness: Harness, fake_telegram: FakeTelegram, updates: SqliteTelegramUpdates
) -> None:
    first = _webhook_channel(harness, updates)
    async with harness.running(first, started_by="setMyCommands"):
        taken = _webhook_channel(harness, updates, webhook_listen=f"127.0.0.1:{_port(first)}")
        with pytest.raises(OSError, match="address already in use"):
            await taken.run(harness.inbox)
    assert len(fake_telegram.calls_to("setWebhook")) == 1


def test_webhook_mode_without_its_store_is_a_programming_error(harness: Harness) -> None:
    with pytest.raises(ValueError, match="webhook mode needs"):
        harness.channel(webhook_url=URL)
