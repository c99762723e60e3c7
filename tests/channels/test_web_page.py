"""The web chat page in a real browser (Debian's Chromium driven by Playwright) against a live
gateway: token handling, streaming, error notices, commands, safe rendering, phone layout."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from gateway_harness import TOKEN, Gateway, RecordingHandler, running_gateway
from playwright.async_api import Browser, Page, async_playwright, expect

from flynn.channels.gateway import Acknowledged, GatewayChannel
from flynn.messages import Delivery, OutboundMessage, PushKind, SessionKey
from flynn.settings import GatewaySettings

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = Path("/tmp/flynn-web.png")
PUSH_SCREENSHOTS = {
    "phone": Path("/tmp/flynn-push-phone.png"),
    "desktop": Path("/tmp/flynn-push-desktop.png"),
}
ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

# One browser for the module (launching takes most of a second); a fresh context per test.
pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists(),
        reason="needs Debian's chromium at /usr/bin/chromium (apt-get install chromium)",
    ),
    pytest.mark.asyncio(loop_scope="module"),
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield browser
        finally:
            await browser.close()


@pytest_asyncio.fixture(loop_scope="module")
async def gateway() -> AsyncIterator[Gateway]:
    async with running_gateway() as running:
        yield running


@pytest_asyncio.fixture(loop_scope="module")
async def page(browser: Browser, gateway: Gateway) -> AsyncIterator[Page]:
    """A phone-sized page, opened at the chat URL with the token in the fragment."""
    context = await browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    try:
        page = await context.new_page()
        problems: list[str] = []
        page.on("pageerror", lambda error: problems.append(str(error)))
        page.on(
            "console",
            lambda message: problems.append(message.text) if message.type == "error" else None,
        )
        await page.goto(f"{gateway.http_base}/#token={TOKEN}")
        await expect(page.locator("#state")).to_have_text("connected")
        yield page
        # CSP violations and script errors show up here.
        assert problems == []
    finally:
        await context.close()


async def say(page: Page, text: str) -> None:
    await page.fill("#input", text)
    await page.press("#input", "Enter")


async def test_token_leaves_the_address_bar_and_survives_a_reload(
    gateway: Gateway, page: Page
) -> None:
    assert "token" not in page.url
    assert await page.evaluate("sessionStorage.getItem('flynn.token')") == TOKEN
    client_id = await page.evaluate("localStorage.getItem('flynn.client_id')")
    assert client_id.startswith("web-")
    await page.reload()
    await expect(page.locator("#state")).to_have_text("connected")
    assert await page.evaluate("localStorage.getItem('flynn.client_id')") == client_id


async def test_enter_sends_and_the_streamed_reply_appears(gateway: Gateway, page: Page) -> None:
    await say(page, "hello browser")
    await expect(page.locator(".msg.user")).to_have_text("hello browser")
    await expect(page.locator(".msg.assistant")).to_have_text("echo: hello browser")
    inbound = await gateway.handler.next()
    assert inbound.text == "hello browser"
    assert inbound.chat_id.startswith("web-")


async def test_shift_enter_makes_a_newline(gateway: Gateway, page: Page) -> None:
    await page.fill("#input", "line one")
    await page.press("#input", "Shift+Enter")
    await page.locator("#input").press_sequentially("line two")
    assert await page.input_value("#input") == "line one\nline two"
    await page.press("#input", "Enter")
    assert (await gateway.handler.next()).text == "line one\nline two"


async def test_deltas_grow_the_pending_bubble_until_the_reply(gateway: Gateway, page: Page) -> None:
    await say(page, "hold")
    inbound = await gateway.handler.next()
    key, reply_to = inbound.session_key, inbound.message_id
    bubble = page.locator(".msg.assistant")
    await expect(bubble).to_have_class("msg assistant pending")
    for part in ("Thinking", " it over", "…"):
        await gateway.channel.send(OutboundMessage(key, part, reply_to=reply_to, final=False))
    await expect(bubble).to_have_text("Thinking it over…")
    await gateway.channel.send(OutboundMessage(key, "Done.", reply_to=reply_to))
    await expect(bubble).to_have_text("Done.")


async def test_error_frames_are_shown_visibly(gateway: Gateway, page: Page) -> None:
    await say(page, "fail")
    notice = page.locator(".msg.error")
    await expect(notice).to_be_visible()
    await expect(notice).to_contain_text("the model is unavailable")
    color = await notice.evaluate("el => getComputedStyle(el).color")
    red, green, _ = (int(part) for part in color[color.index("(") + 1 : -1].split(",")[:3])
    assert red > green + 60


async def test_command_buttons_and_typed_commands(gateway: Gateway, page: Page) -> None:
    await page.click("button[data-command='status']")
    assert (await gateway.handler.next()).text == "/status"
    await say(page, "/otr on")
    assert (await gateway.handler.next()).text == "/otr on"
    await say(page, "/not-a-command")
    assert (await gateway.handler.next()).text == "/not-a-command"


async def test_model_output_is_rendered_as_text(gateway: Gateway, page: Page) -> None:
    await say(page, "hold")
    inbound = await gateway.handler.next()
    text = "Try this:\n```html\n<b>bold</b><img src=x onerror=alert(1)>\n```\nthen <i>reload</i>."
    await gateway.channel.send(
        OutboundMessage(inbound.session_key, text, reply_to=inbound.message_id)
    )
    bubble = page.locator(".msg.assistant")
    await expect(bubble.locator("pre code")).to_have_text("<b>bold</b><img src=x onerror=alert(1)>")
    await expect(bubble).to_contain_text("then <i>reload</i>.")
    assert await page.locator(".log b, .log img, .log i").count() == 0


async def test_phone_layout_screenshot(gateway: Gateway, page: Page) -> None:
    await say(page, "What is on my plate today?")
    await expect(page.locator(".msg.assistant")).to_have_count(1)
    await say(page, "hold")
    inbound = await gateway.handler.next()
    inbound = await gateway.handler.next()
    reply = (
        "Three things:\n1. Finish the gateway review\n2. Call the dentist\n"
        "```sh\nflynn memory show --user alice\n```\nWant reminders?"
    )
    await gateway.channel.send(
        OutboundMessage(inbound.session_key, reply, reply_to=inbound.message_id)
    )
    await say(page, "fail")
    await expect(page.locator(".msg.error")).to_be_visible()
    await page.fill("#input", "Draft a reply to")
    await page.screenshot(path=str(SCREENSHOT))
    layout = await page.evaluate(
        """() => {
            const dock = document.querySelector('.dock').getBoundingClientRect();
            const send = document.querySelector('#send').getBoundingClientRect();
            return {scrollWidth: document.documentElement.scrollWidth, dockBottom: dock.bottom,
                    sendHeight: send.height, sendRight: send.right};
        }"""
    )
    assert layout["scrollWidth"] <= 390
    assert layout["dockBottom"] <= 844
    assert layout["sendHeight"] >= 44
    assert layout["sendRight"] <= 390


async def push(page: Page, gateway: Gateway, text: str, push_id: str, kind: PushKind) -> None:
    """Sends a push to the page's client, as the schedule would."""
    client_id = await page.evaluate("localStorage.getItem('flynn.client_id')")
    message = OutboundMessage(SessionKey("gateway", client_id), text, push=kind, push_id=push_id)
    # The page speaks protocol 2: sent, and delivered once the page acknowledges it.
    assert (await gateway.channel.send(message)).ids == (f"p{push_id}",)


async def test_a_push_appears_labelled_and_apart_from_the_pending_reply(
    gateway: Gateway, page: Page
) -> None:
    await say(page, "hold")
    inbound = await gateway.handler.next()
    pending = page.locator(".msg.assistant")
    await expect(pending).to_have_class("msg assistant pending")

    await push(page, gateway, "Call the dentist before noon.", "1", "reminder")
    reminder = page.locator(".msg.push").first
    await expect(reminder).to_have_attribute("data-kind", "reminder")
    await expect(reminder.locator(".push-label")).to_have_text("Reminder")
    await expect(reminder).to_contain_text("Call the dentist before noon.")
    # Announced: it sits in the live region, after the bubble still waiting for its reply.
    assert await reminder.evaluate("el => el.closest('[aria-live]')?.id") == "log"
    assert await reminder.evaluate("el => el.previousElementSibling.className") == (
        "msg assistant pending"
    )
    await expect(pending).to_have_class("msg assistant pending")

    await gateway.channel.send(
        OutboundMessage(inbound.session_key, "Thought it over.", reply_to=inbound.message_id)
    )
    await expect(pending).to_have_text("Thought it over.")
    await expect(reminder).to_contain_text("Call the dentist before noon.")

    # A redelivered push shows once; another kind gets its own label.
    await push(page, gateway, "Call the dentist before noon.", "1", "reminder")
    await push(page, gateway, "Your monthly memory is rewritten.", "2", "distill")
    await expect(page.locator(".msg.push")).to_have_count(2)
    await expect(page.locator(".msg.push").nth(1).locator(".push-label")).to_have_text("Memory")
    background = await reminder.evaluate("el => getComputedStyle(el).backgroundColor")
    reply_background = await pending.evaluate("el => getComputedStyle(el).backgroundColor")
    assert background != reply_background


@pytest.mark.parametrize(("size", "viewport"), [("phone", (390, 844)), ("desktop", (1280, 800))])
async def test_push_screenshots(
    gateway: Gateway, page: Page, size: str, viewport: tuple[int, int]
) -> None:
    width, height = viewport
    await page.set_viewport_size({"width": width, "height": height})
    await say(page, "Remind me to call the dentist at 11")
    await expect(page.locator(".msg.assistant")).to_have_count(1)
    await push(page, gateway, "Call the dentist (you asked at 9:30).", "3", "reminder")
    await say(page, "hold")
    await gateway.handler.next()
    await gateway.handler.next()
    await push(page, gateway, "This week's notes are summarised in MEMORY_MID.md.", "4", "distill")
    await expect(page.locator(".msg.push")).to_have_count(2)
    await page.screenshot(path=str(PUSH_SCREENSHOTS[size]))
    assert await page.evaluate("document.documentElement.scrollWidth") <= width


async def test_a_refused_token_asks_for_another(browser: Browser, gateway: Gateway) -> None:
    context = await browser.new_context(viewport={"width": 390, "height": 844})
    try:
        page = await context.new_page()
        await page.goto(f"{gateway.http_base}/#token=wrong")
        await expect(page.locator("#state")).to_have_text("token refused")
        await page.fill("#token-input", TOKEN)
        await page.click("#token-form button")
        await expect(page.locator("#state")).to_have_text("connected")
        await expect(page.locator("#token-form")).to_be_hidden()
    finally:
        await context.close()


async def test_reconnects_and_gets_the_reply_made_while_offline(browser: Browser) -> None:
    """The reply made while the page was away is kept by its owner (the router's intake, here
    a list), sent again after the page's hello, shown once, and acknowledged."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    kept: list[OutboundMessage] = []
    acknowledged: asyncio.Queue[Acknowledged] = asyncio.Queue()

    async def redeliver(client_id: str) -> None:
        for message in kept:
            await channel.send(message)

    async def on_ack(ack: Acknowledged) -> None:
        acknowledged.put_nowait(ack)

    channel = GatewayChannel(
        GatewaySettings(port=port),
        token=TOKEN,
        readiness=dict,
        on_client_ready=redeliver,
        on_acknowledged=on_ack,
    )
    handler = RecordingHandler(channel)

    async def start() -> asyncio.Task[None]:
        task = asyncio.create_task(channel.run(handler))
        await channel.started.wait()
        return task

    async def stop(task: asyncio.Task[None]) -> None:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    task = await start()
    context = await browser.new_context()
    try:
        page = await context.new_page()
        await page.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
        await expect(page.locator("#state")).to_have_text("connected")
        await say(page, "hold")
        inbound = await handler.next()
        await stop(task)
        await expect(page.locator("#state")).to_contain_text("retrying")
        reply = OutboundMessage(
            inbound.session_key, "while you were away", reply_to=inbound.message_id
        )
        assert await channel.send(reply) == Delivery.deferred()  # nobody to take it
        kept.append(reply)
        task = await start()
        await expect(page.locator("#state")).to_have_text("connected")
        await expect(page.locator(".msg.assistant")).to_have_text("while you were away")
        async with asyncio.timeout(5):
            ack = await acknowledged.get()
        assert ack == Acknowledged(inbound.chat_id, reply_to=inbound.message_id)
        # Sent once more after another hello (the server sends an acknowledged frame to the
        # connection that acknowledged it no second time; a new connection gets what storage
        # still offers): the page acknowledges it again and shows it once.
        await stop(task)
        await expect(page.locator("#state")).to_contain_text("retrying")
        task = await start()
        await expect(page.locator("#state")).to_have_text("connected")
        async with asyncio.timeout(5):
            again = await acknowledged.get()
        assert again == ack
        await expect(page.locator(".msg.assistant")).to_have_count(1)
    finally:
        await context.close()
        await stop(task)
