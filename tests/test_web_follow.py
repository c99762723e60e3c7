"""A reply streamed slowly by the fake model server through the real daemon, read on a phone-sized
page in headless Chromium: the page keeps the newest text in view as it arrives, unless the
person scrolled up to read, and the composer stays on screen and usable."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fakes import Reply
from playwright.async_api import Page, expect
from web_harness import CHROMIUM, PHONE, say, web_world

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
)

STORY = "\n\n".join(
    f"**Part {n}.** The billing tables move to Postgres one at a time; each night the copy is "
    "checked against the old database before the next one starts."
    for n in range(1, 21)
)

# Records, for every change to the log, whether the newest reply's end is in the log's view:
# a MutationObserver runs after the page's own handler for the frame, so it sees where that
# handler left the scroll.
WATCH = """() => {
    window.samples = [];
    const log = document.getElementById('log');
    new MutationObserver(() => {
        const replies = log.querySelectorAll('.msg.assistant');
        const last = replies[replies.length - 1];
        if (!last) return;
        const box = last.getBoundingClientRect();
        const view = log.getBoundingClientRect();
        window.samples.push({
            chars: last.textContent.length,
            inView: box.bottom <= view.bottom + 1 && box.bottom >= view.top,
            overflows: log.scrollHeight > log.clientHeight,
            scrollTop: log.scrollTop,
        });
    }).observe(log, {childList: true, subtree: true, characterData: true});
}"""


def last_reply_longer_than(chars: int) -> str:
    return f"""() => {{
        const replies = document.querySelectorAll('#log .msg.assistant');
        return replies.length > 0 && replies[replies.length - 1].textContent.length > {chars};
    }}"""


async def samples(page: Page) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = await page.evaluate("window.samples")
    return found


async def test_a_streamed_reply_is_followed_on_a_phone(tmp_path: Path) -> None:
    async with web_world(tmp_path) as world, world.phone() as page:
        world.replies["story"] = Reply(STORY, chunks=60, interval=0.03)
        for n in range(3):
            await say(page, f"Warm-up {n}")
            await expect(page.locator(".msg.assistant")).to_have_count(n + 1)
            await expect(page.locator(".msg.assistant").last).to_have_text(f"You said: Warm-up {n}")
        await page.evaluate(WATCH)

        await say(page, "Tell me the story of the migration")
        await page.wait_for_function(last_reply_longer_than(len(STORY) // 2))
        # While streaming: plain text, the newest words just above the composer.
        await page.screenshot(path="/tmp/web-follow-streaming-phone.png")
        reply = page.locator(".msg.assistant").last
        await expect(reply).to_have_class("msg assistant md")
        await expect(reply.locator("strong")).to_have_count(20)
        await expect(reply).to_be_in_viewport()
        await page.screenshot(path="/tmp/web-follow-done-phone.png")

        seen = await samples(page)
        streaming = [s for s in seen if s["overflows"]]
        assert len(streaming) >= 20, seen
        assert all(s["inView"] for s in seen), [s for s in seen if not s["inView"]]
        assert len({s["scrollTop"] for s in streaming}) >= 10  # it really moved along

        layout = await page.evaluate(
            """() => {
                const dock = document.querySelector('.dock').getBoundingClientRect();
                const input = document.querySelector('#input').getBoundingClientRect();
                const send = document.querySelector('#send').getBoundingClientRect();
                return {scrollWidth: document.documentElement.scrollWidth,
                        dockBottom: dock.bottom, inputTop: input.top, inputHeight: input.height,
                        sendHeight: send.height, sendRight: send.right};
            }"""
        )
        assert layout["scrollWidth"] <= PHONE["width"]
        assert layout["dockBottom"] <= PHONE["height"]
        assert layout["inputTop"] > PHONE["height"] / 2
        assert layout["inputHeight"] >= 44 and layout["sendHeight"] >= 44
        assert layout["sendRight"] <= PHONE["width"]


async def test_scrolling_up_to_read_stops_the_following_until_asked(tmp_path: Path) -> None:
    async with web_world(tmp_path) as world, world.phone() as page:
        world.replies["story"] = Reply(STORY, chunks=60, interval=0.03)
        await say(page, "Tell me the story of the migration")
        await page.wait_for_function(last_reply_longer_than(len(STORY) // 3))

        # The person scrolls up to read the start while the rest still streams in.
        log = page.locator("#log")
        box = await log.bounding_box()
        assert box is not None
        await page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        await page.mouse.wheel(0, -400)
        await page.wait_for_function(
            "() => { const l = document.getElementById('log');"
            " return l.scrollHeight - l.scrollTop - l.clientHeight > 300; }"
        )
        top = await log.evaluate("el => el.scrollTop")
        read = await page.locator(".msg.assistant").last.evaluate("el => el.textContent.length")
        await page.wait_for_function(last_reply_longer_than(read + 300))
        assert await log.evaluate("el => el.scrollTop") == top
        jump = page.locator("#jump")
        await expect(jump).to_be_visible()
        await page.screenshot(path="/tmp/web-follow-scrolled-up-phone.png")

        # "Latest" goes back to the end and follows again.
        await jump.click()
        await expect(jump).to_be_hidden()
        await expect(page.locator(".msg.assistant").last).to_have_class("msg assistant md")
        await expect(page.locator(".msg.assistant").last.locator("strong").last).to_be_in_viewport()
        assert await log.evaluate("el => el.scrollHeight - el.scrollTop - el.clientHeight") <= 2
