"""A newcomer with no key, as ``make run`` starts Flynn: the real daemon on its offline provider,
the web chat page in headless Chromium. "remind me in 2 seconds to stretch" is confirmed, then
the reminder arrives as a push of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port
from playwright.async_api import async_playwright, expect

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = Path("/tmp/flynn-acts-phone.png")

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
)


async def test_a_keyless_web_page_sets_a_reminder_and_receives_it(tmp_path: Path) -> None:
    port = free_port()
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "data_dir": str(tmp_path / "data"),
                "llm": {"provider": "offline"},
                "memory": {"user_namespace": "user"},
                "channels": {"gateway": {"port": port, "token": GATEWAY_TOKEN}},
                "logging": {"level": "info", "format": "json"},
            }
        )
    )
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=["--no-sandbox", "--headless"]
            )
            try:
                page = await browser.new_page(viewport={"width": 390, "height": 844})
                await page.goto(f"http://127.0.0.1:{port}/#token={GATEWAY_TOKEN}")
                await expect(page.locator("#state")).to_have_text("connected")
                await page.fill("#input", "remind me in 2 seconds to stretch")
                await page.press("#input", "Enter")
                reply = page.locator(".msg.assistant").last
                # The person's first reminder is 1, though the daemon's start scheduled the
                # distillation runs before it.
                await expect(reply).to_contain_text("Reminder set: 1. stretch")
                push = page.locator(".msg.push")
                await expect(push).to_contain_text("stretch", timeout=10_000)
                await expect(push).to_contain_text("Reminder")
                await page.screenshot(path=str(SCREENSHOT))
            finally:
                await browser.close()
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()
