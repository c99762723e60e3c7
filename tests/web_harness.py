"""The web page's world for browser tests: the real daemon (in-process, restartable on a fixed
port) talking to the fake OpenAI server, and Debian's Chromium driven by Playwright."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

from fakes import Fail, FakeOpenAI, RecordedRequest, Reply
from fakes.words_only import words_only
from playwright.async_api import Browser, BrowserContext, Page, async_playwright, expect
from worker_pool import model_config

from flynn.daemon import Daemon
from flynn.settings import Settings, load_settings

CHROMIUM = Path("/usr/bin/chromium")
TOKEN = "web-page-token-for-tests"
PHONE = {"width": 390, "height": 844}
ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
# Learning's extraction calls do not stream; what they get changes nothing here.
_NOTHING_LEARNT = '{"profile": [], "actions": [], "observations": []}'


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class WebWorld:
    """A running daemon on ``port`` and a browser. ``replies`` maps a word in the person's
    message to the model's streamed reply (or failure); anything else is answered
    ``You said: ...``."""

    model: FakeOpenAI
    browser: Browser
    settings: Settings
    port: int
    replies: dict[str, Reply | Fail] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    _stop: asyncio.Event | None = None
    _running: asyncio.Task[int] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/#token={TOKEN}"

    def respond(self, request: RecordedRequest) -> Reply | Fail:
        if request.json.get("stream") is not True:
            return Reply(_NOTHING_LEARNT)
        said = self.model.last_user_text(request)
        for word, reply in self.replies.items():
            if word in said:
                return reply
        return Reply(f"You said: {said.strip()}")

    async def start(self) -> None:
        """Starts the daemon and waits until it serves."""
        daemon = Daemon(words_only(self.settings), {}, announce=lambda line: None)
        self._stop = asyncio.Event()
        self._running = asyncio.create_task(daemon.run(self._stop))
        ready = asyncio.create_task(daemon.ready.wait())
        await asyncio.wait({ready, self._running}, return_when=asyncio.FIRST_COMPLETED, timeout=20)
        if not ready.done():
            ready.cancel()
            raise AssertionError(f"the daemon did not start: {self._running}")

    async def stop(self) -> None:
        """Stops the daemon as SIGTERM does; it must exit cleanly."""
        assert self._stop is not None and self._running is not None
        self._stop.set()
        assert await asyncio.wait_for(self._running, 20) == 0
        self._running = None

    @contextlib.asynccontextmanager
    async def phone(self) -> AsyncIterator[Page]:
        """A phone-sized page at the chat URL, connected; script errors and CSP violations
        fail the test when the page closes."""
        context: BrowserContext = await self.browser.new_context(
            viewport=PHONE, is_mobile=True, has_touch=True, device_scale_factor=2
        )
        try:
            page = await context.new_page()
            page.on("pageerror", lambda error: self.problems.append(str(error)))
            page.on(
                "console",
                lambda message: (
                    self.problems.append(message.text) if message.type == "error" else None
                ),
            )
            page.on("dialog", lambda dialog: self.problems.append(f"dialog: {dialog.message}"))
            await page.goto(self.url)
            await expect(page.locator("#state")).to_have_text("connected")
            yield page
            assert self.problems == []
        finally:
            await context.close()


@contextlib.asynccontextmanager
async def web_world(tmp_path: Path) -> AsyncIterator[WebWorld]:
    """The fake model, the daemon on it (streaming), and Chromium; all gone on exit."""
    port = free_port()
    async with FakeOpenAI() as model, async_playwright() as playwright:
        settings = load_settings(
            {
                "data_dir": str(tmp_path / "data"),
                "llm": model_config(model),
                "channels": {"gateway": {"host": "127.0.0.1", "port": port, "token": TOKEN}},
            },
            env={},
        )
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        world = WebWorld(model, browser, settings, port)
        model.responder = world.respond
        try:
            await world.start()
            yield world
        finally:
            if world._running is not None:
                await world.stop()
            await browser.close()


async def say(page: Page, text: str) -> None:
    await page.fill("#input", text)
    await page.press("#input", "Enter")
