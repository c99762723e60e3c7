"""Telegram when storage fails: an update that could not be stored is left with Telegram (the
offset stays on it) and answered once storage works again; the real router and SQLite, the fake
Bot API, and a database that is full the way a full disk is."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fakes.fake_telegram import OWNER_ID, FakeTelegram
from telegram_harness import Harness

from evals.scripted_provider import ScriptedProvider
from flynn.app import App
from flynn.backoff import Backoff
from flynn.channels.telegram import NOT_STORED
from flynn.memory.database import Database
from flynn.providers.base import TASKS
from flynn.router import Router
from flynn.settings import load_settings

LONG = "Please keep this: " + "ü" * 4000
"""Several pages of UTF-8: storing it needs pages a full database cannot grow."""


@pytest.fixture
async def fake_telegram() -> AsyncIterator[FakeTelegram]:
    async with FakeTelegram() as server:
        yield server


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    provider = ScriptedProvider(default="kept it")
    app = App.open(
        load_settings({"data_dir": str(tmp_path / "data")}),
        {},
        providers=dict.fromkeys(TASKS, provider),
    )
    try:
        yield app
    finally:
        await app.aclose()


def fill_up(db: Database) -> None:
    """The database may not grow by a page: SQLite answers "database or disk is full"."""
    pages = int(db.fetchone("PRAGMA page_count")[0])
    db.execute(f"PRAGMA max_page_count = {pages}")


def make_room(db: Database) -> None:
    db.execute("PRAGMA max_page_count = 1073741823")


async def test_an_update_that_could_not_be_stored_is_delivered_again_and_answered_once(
    app: App, fake_telegram: FakeTelegram
) -> None:
    harness = Harness(fake_telegram)
    channel = harness.channel()
    router = Router(
        app.sessions,
        {"telegram": channel},
        app.identity,
        app.memory.inbound,
        clock=app.services.clock,
    )
    fill_up(app.memory.db)
    try:
        async with harness.running(channel, router.on_message):
            update_id = fake_telegram.queue_private(LONG)
            # Refused three times, and each time the bot asked Telegram for it again.
            await fake_telegram.wait_for_polls_at(update_id, 3)
            held = channel.status()
            make_room(app.memory.db)
            await fake_telegram.wait_for_offset(update_id + 1)
            await fake_telegram.wait_for_sent(2)
            await router.quiet.wait()
    finally:
        router.close_intake()
        await router.drain(5)

    assert fake_telegram.offsets[0] == 0
    assert update_id + 1 not in fake_telegram.offsets[: fake_telegram.offsets.index(update_id)]
    # Told once, honestly, then answered once.
    assert [s.text for s in fake_telegram.sent] == [NOT_STORED, "kept it"]
    assert all(s.chat_id == OWNER_ID for s in fake_telegram.sent)
    stored = app.memory.history.recent(f"telegram:{OWNER_ID}")
    assert [(m.role, m.content) for m in stored] == [("user", LONG), ("assistant", "kept it")]
    # Held while refused, without calling the connection to Telegram broken.
    assert held.connected and held.last_error is not None and "stored" in held.last_error
    waits = harness.sleeps.delays
    assert len(waits) >= 2 and waits[1] > waits[0]  # backing off, not spinning


async def test_a_reply_telegram_refused_ten_times_goes_once_it_is_healthy_without_a_restart(
    app: App, fake_telegram: FakeTelegram
) -> None:
    """Telegram failing ten sends in a row, then healthy again: the reply used to stay unsent
    until the next start. Now the router sends it again with backoff, once, and only then
    records it delivered."""
    harness = Harness(fake_telegram)
    channel = harness.channel()
    router = Router(
        app.sessions,
        {"telegram": channel},
        app.identity,
        app.memory.inbound,
        clock=app.services.clock,
        resend=Backoff(first=0.01, most=0.05),
    )
    fake_telegram.fail_sends("bad_gateway", 10)
    try:
        async with harness.running(channel, router.on_message):
            fake_telegram.queue_private("are you there?")
            [sent] = await fake_telegram.wait_for_sent(1)
            await router.quiet.wait()
    finally:
        router.close_intake()
        await router.drain(5)
    assert sent.text == "kept it"
    assert len(fake_telegram.calls_to("sendMessage")) == 11  # ten refused, one taken
    assert app.memory.inbound.undelivered("telegram", str(OWNER_ID)) == []
    assert app.memory.inbound.unfinished() == []
