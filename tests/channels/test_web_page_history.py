"""The web page's history in headless Chromium against a live gateway over a real SQLite history:
a reply kept for the page while it was away and the history after it show each message once,
after a reconnect the page adds what another tab said meanwhile, nothing twice, and a push the
page was shown is still there, in its place, after a reload."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from gateway_harness import TOKEN, RecordingHandler
from playwright.async_api import Page, async_playwright, expect

from flynn.channels.gateway import GatewayChannel
from flynn.memory.stores import SqliteMemory
from flynn.messages import OutboundMessage, SessionKey
from flynn.schedule.jobs import Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.sqlite import SqlitePushes
from flynn.settings import GatewaySettings

CHROMIUM = Path("/usr/bin/chromium")
CLIENT = "web-history-test"
SESSION = f"gateway:{CLIENT}"
START = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
)


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[SqliteMemory]:
    with SqliteMemory.open(tmp_path / "flynn.db", SCHEMA) as memory:
        yield memory


def store(memory: SqliteMemory, *turns: tuple[str, str]) -> None:
    """Stores turns as the sessions do, a minute after the last one."""
    for role, text in turns:
        count = len(memory.history.latest(SESSION, 200))
        memory.history.append(
            SESSION, "user", role, text, tokens=1, now=START + timedelta(minutes=count)
        )


class Gateway:
    """A gateway over ``memory`` that can be stopped and started again on the same port."""

    def __init__(self, memory: SqliteMemory) -> None:
        self.memory = memory
        self.port = 0
        self.channel = self._channel()
        self.handler = RecordingHandler(self.channel)
        self.task: asyncio.Task[None] | None = None

    def _channel(self) -> GatewayChannel:
        settings = GatewaySettings(host="127.0.0.1", port=self.port)
        return GatewayChannel(
            settings,
            token=TOKEN,
            readiness=dict,
            transcript=self.memory.history,
            push_log=SqlitePushes(self.memory.db),
        )

    async def start(self) -> None:
        if self.port:  # again, on the same port: the page reconnects
            self.channel = self.handler.channel = self._channel()
        self.task = asyncio.create_task(self.channel.run(self.handler))
        await self.channel.started.wait()
        self.port = self.channel.bound_port or 0

    async def stop(self) -> None:
        assert self.task is not None
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


@contextlib.asynccontextmanager
async def phone(gateway: Gateway) -> AsyncIterator[Page]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--headless"]
        )
        try:
            context = await browser.new_context(viewport={"width": 390, "height": 844})
            await context.add_init_script(  # not on about:blank, which has no storage
                f"if (location.protocol === 'http:') localStorage.setItem('flynn.client_id', "
                f"'{CLIENT}')"
            )
            page = await context.new_page()
            problems: list[str] = []
            page.on("pageerror", lambda error: problems.append(str(error)))
            await page.goto(f"http://127.0.0.1:{gateway.port}/#token={TOKEN}")
            await expect(page.locator("#state")).to_have_text("connected")
            yield page
            assert problems == []
        finally:
            await browser.close()


async def shown(page: Page) -> list[str]:
    texts: list[str] = await page.locator("#log .msg").all_inner_texts()
    return [text.strip() for text in texts]


async def test_a_reply_kept_while_away_shows_once_with_the_history(memory: SqliteMemory) -> None:
    store(memory, ("user", "Hi, I'm Ana."), ("assistant", "Hello *Ana*."))
    gateway = Gateway(memory)
    await gateway.start()
    try:
        async with phone(gateway) as page:
            await expect(page.locator(".msg.earlier")).to_have_count(2)
            await expect(page.locator(".msg.assistant em")).to_have_text("Ana")
            await page.fill("#input", "hold")
            await page.press("#input", "Enter")
            inbound = await gateway.handler.next()
            store(memory, ("user", "hold"))
            # The page goes away; the reply is stored, then kept for it.
            await page.goto("about:blank")
            store(memory, ("assistant", "Held **long** enough."))
            await gateway.channel.send(
                OutboundMessage(
                    inbound.session_key, "Held **long** enough.", reply_to=inbound.message_id
                )
            )
            await page.goto(f"http://127.0.0.1:{gateway.port}/#token={TOKEN}")
            await expect(page.locator(".msg.earlier")).to_have_count(4)
            assert await shown(page) == ["Hi, I'm Ana.", "Hello Ana.", "hold", "Held long enough."]
            await expect(page.locator(".msg.assistant strong")).to_have_text("long")
    finally:
        await gateway.stop()


async def test_after_a_reconnect_the_page_adds_only_what_it_missed(memory: SqliteMemory) -> None:
    store(memory, ("user", "one"), ("assistant", "echo: one"))
    gateway = Gateway(memory)
    await gateway.start()
    try:
        async with phone(gateway) as page:
            await page.fill("#input", "two")
            await page.press("#input", "Enter")
            await expect(page.locator(".msg.assistant").last).to_have_text("echo: two")
            store(memory, ("user", "two"), ("assistant", "echo: two"))
            await page.fill("#input", "/status")
            await page.press("#input", "Enter")
            await expect(page.locator(".msg.assistant").last).to_have_text("echo: /status")

            await gateway.stop()
            await expect(page.locator("#state")).to_contain_text("retrying")
            # Meanwhile another tab of the same client went on talking.
            store(memory, ("user", "three, from my other tab"), ("assistant", "echo: three"))
            await gateway.start()
            await expect(page.locator("#state")).to_have_text("connected", timeout=20_000)
            await expect(page.locator(".msg")).to_have_count(8)
            assert await shown(page) == [
                "one",
                "echo: one",
                "two",
                "echo: two",
                "three, from my other tab",
                "echo: three",
                # A command's answer is not stored; it stays where it was, after what it
                # followed on this page.
                "/status",
                "echo: /status",
            ]
    finally:
        await gateway.stop()


async def test_a_push_shown_before_a_reload_is_shown_after_it(memory: SqliteMemory) -> None:
    store(memory, ("user", "Remind me to call mum at ten."), ("assistant", "I will."))
    pushes = SqlitePushes(memory.db)
    push = pushes.add(
        namespace="user",
        kind="reminder",
        text="Call mum.",
        target=Target("gateway", CLIENT),
        now=START + timedelta(minutes=1, seconds=10),
    )
    gateway = Gateway(memory)
    await gateway.start()
    try:
        async with phone(gateway) as page:
            await expect(page.locator(".msg.earlier")).to_have_count(2)
            await gateway.channel.send(
                OutboundMessage(
                    SessionKey("gateway", CLIENT),
                    "Call mum.",
                    push="reminder",
                    push_id=str(push.id),
                )
            )
            await expect(page.locator(".msg.push")).to_have_text("ReminderCall mum.")
            # The page acknowledged it; the daemon marks it delivered, then it talks on.
            assert pushes.delivered(push.id, now=START + timedelta(minutes=1, seconds=20))
            store(memory, ("user", "Done."), ("assistant", "Good."))
            await page.reload()
            await expect(page.locator("#state")).to_have_text("connected")
            await expect(page.locator(".msg.earlier")).to_have_count(5)
            await expect(page.locator(".msg.push")).to_have_count(1)
            await expect(page.locator(".msg.push")).to_have_attribute("data-kind", "reminder")
            assert await shown(page) == [
                "Remind me to call mum at ten.",
                "I will.",
                "REMINDER\nCall mum.",  # the label is in capitals (the CSS)
                "Done.",
                "Good.",
            ]
    finally:
        await gateway.stop()
