"""The web page in headless Chromium against the real daemon and the fake model server: after a
reload the conversation so far is back (once, also after the daemon restarts), replies are
Markdown rendered with none of the model's markup live, and errors are said in words."""

from __future__ import annotations

from pathlib import Path

import pytest
from fakes import Fail, Reply
from playwright.async_api import Page, expect
from web_harness import CHROMIUM, TOKEN, say, web_world

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
)

PLAN = (
    "Here is **the plan** for *Friday*:\n\n"
    "1. Cut over `billing` to Postgres\n"
    "2. Watch the [dashboard](https://grafana.example/d/billing)\n\n"
    "| step | owner |\n|---|---|\n| cut over | Ana |\n| watch | Flynn |\n\n"
    "```sh\nflynn memory show\n```\n\n"
    "Never live: <script>alert('script')</script> <img src=x onerror=alert('img')> "
    "[click me](javascript:alert('link'))"
)


async def conversation(page: Page) -> list[tuple[str, str]]:
    """Each bubble of the log: its kind and its text as shown."""
    shown: list[list[str]] = await page.evaluate(
        """() => Array.from(document.querySelectorAll('#log .msg'), (el) =>
            [el.classList.contains('user') ? 'user' : el.classList[1], el.innerText.trim()])"""
    )
    return [(kind, text) for kind, text in shown]


async def assert_nothing_live(page: Page) -> None:
    """The model's markup is text on the page: no element it wrote, no handler, no script URL."""
    bubble = page.locator(".msg.assistant", has_text="Never live")
    await expect(bubble).to_contain_text("<script>alert('script')</script>")
    await expect(bubble).to_contain_text("<img src=x onerror=alert('img')>")
    await expect(bubble).to_contain_text("[click me](javascript:alert('link'))")
    assert await page.locator("#log script, #log img, #log iframe").count() == 0
    handlers = await page.evaluate(
        """() => Array.from(document.querySelectorAll('#log *')).flatMap((el) =>
            Array.from(el.attributes, (a) => a.name).filter((name) => name.startsWith('on')))"""
    )
    assert handlers == []
    links = bubble.locator("a")
    await expect(links).to_have_count(1)
    assert await links.get_attribute("href") == "https://grafana.example/d/billing"
    assert await links.get_attribute("target") == "_blank"
    assert await links.get_attribute("rel") == "noopener noreferrer nofollow"


async def test_a_reload_shows_the_conversation_so_far_once(tmp_path: Path) -> None:
    async with web_world(tmp_path) as world, world.phone() as page:
        world.replies["plan"] = Reply(PLAN, chunks=8)
        await say(page, "Hi, I'm Ana; billing moves to Postgres.")
        replies = page.locator(".msg.assistant")
        await expect(replies).to_have_text(["You said: Hi, I'm Ana; billing moves to Postgres."])
        await say(page, "What's the plan for Friday?")
        # Rendered when the reply arrives: bold, a list, a table, a code block.
        await expect(replies.nth(1).locator("strong")).to_have_text("the plan")
        await expect(replies.nth(1).locator("ol li")).to_have_count(2)
        await expect(replies.nth(1).locator("table td")).to_have_count(4)
        await expect(replies.nth(1).locator("pre code")).to_have_text("flynn memory show")
        await assert_nothing_live(page)
        live = await conversation(page)
        assert [kind for kind, _ in live] == ["user", "assistant", "user", "assistant"]

        await page.reload()
        await expect(page.locator("#state")).to_have_text("connected")
        await expect(page.locator(".msg.earlier")).to_have_count(4)
        assert await conversation(page) == live
        await assert_nothing_live(page)
        await expect(page.locator(".msg.assistant").last).to_be_in_viewport()
        await page.screenshot(path="/tmp/web-history-phone.png")

        # The daemon restarts: the page reconnects, asks again, and nothing shows twice.
        await world.stop()
        await expect(page.locator("#state")).to_contain_text("retrying")
        await world.start()
        await expect(page.locator("#state")).to_have_text("connected", timeout=20_000)
        await say(page, "Still there?")
        # Its reply comes after the history the page asked for on ready.
        await expect(page.locator(".msg.assistant").last).to_have_text("You said: Still there?")
        assert await conversation(page) == [
            *live,
            ("user", "Still there?"),
            ("assistant", "You said: Still there?"),
        ]

        await page.reload()
        await expect(page.locator(".msg.earlier")).to_have_count(6)
        assert await conversation(page) == [
            *live,
            ("user", "Still there?"),
            ("assistant", "You said: Still there?"),
        ]


async def test_errors_are_said_in_words_not_codes(tmp_path: Path) -> None:
    async with web_world(tmp_path) as world:
        async with world.phone() as page:
            await page.fill("#input", "x" * 70_000)
            await page.press("#input", "Enter")
            error = page.locator(".msg.error")
            await expect(error).to_have_text("That message is too long (64 KB max).")
            await page.screenshot(path="/tmp/web-too-long-phone.png")

            world.model.enqueue(Fail.server_error(503))
            await say(page, "Is the model broken?")
            await expect(error).to_have_count(2)
            await expect(error.last).to_contain_text("couldn't reach the language model")
            await say(page, "And now?")
            await expect(page.locator(".msg.assistant").last).to_contain_text("And now?")
            shown = " ".join(text for _, text in await conversation(page))
            for code in ("too_large", "llm_unavailable", "internal", "bad_request"):
                assert code not in shown
            await page.screenshot(path="/tmp/web-errors-phone.png")

        context = await world.browser.new_context(viewport={"width": 390, "height": 844})
        try:
            page = await context.new_page()
            await page.goto(f"http://127.0.0.1:{world.port}/#token=not-{TOKEN}")
            await expect(page.locator("#state")).to_have_text("token refused")
            await expect(page.locator("#token-label")).to_have_text(
                "The token in this page's address is wrong. Open the link flynn printed when "
                "it started, or paste the token below."
            )
            await expect(page.locator(".msg")).to_have_count(0)
            await page.screenshot(path="/tmp/web-token-refused-phone.png")
        finally:
            await context.close()
