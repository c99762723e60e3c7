"""Test helpers for ``TelegramChannel``: a recording intake, a recording sleep, and a harness that
runs the channel against the fake Bot API server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from fakes.clock import FakeClock
from fakes.fake_telegram import OWNER_ID, TOKEN, FakeTelegram

from flynn.access import Access, ChannelAccess
from flynn.channels.base import ChannelStatus
from flynn.channels.telegram import TelegramChannel
from flynn.channels.telegram_webhook import TelegramUpdates
from flynn.coordination import Leadership
from flynn.errors import SessionBusy
from flynn.messages import InboundMessage
from flynn.settings import TelegramSettings


class Inbox:
    """A recording ``on_message``: keeps what arrives; ``fail_with`` raises on the next calls."""

    def __init__(self) -> None:
        self.messages: list[InboundMessage] = []
        self.fail_with: list[BaseException] = []
        self._arrived = asyncio.Event()

    async def __call__(self, message: InboundMessage) -> None:
        if self.fail_with:
            raise self.fail_with.pop(0)
        self.messages.append(message)
        self._arrived.set()
        self._arrived = asyncio.Event()

    async def wait_for(self, count: int = 1) -> list[InboundMessage]:
        async with asyncio.timeout(5):
            while len(self.messages) < count:
                await self._arrived.wait()
        return self.messages

    def busy(self) -> None:
        self.fail_with.append(SessionBusy("inbox full"))


class Sleeps:
    """The channel's injected sleep: records each delay and the status at that moment. Returns at
    once, unless ``hold`` is set: then it blocks (until cancelled) and sets ``holding``."""

    def __init__(self) -> None:
        self.delays: list[float] = []
        self.statuses: list[ChannelStatus] = []
        self.channel: TelegramChannel | None = None
        self.hold = False
        self.holding = asyncio.Event()

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)
        if self.channel is not None:
            self.statuses.append(self.channel.status())
        if self.hold:
            self.holding.set()
            await asyncio.Event().wait()
        await asyncio.sleep(0)


class Harness:
    """Builds channels against the fake server and runs them in the test's loop."""

    def __init__(self, server: FakeTelegram) -> None:
        self.server = server
        self.inbox = Inbox()
        self.sleeps = Sleeps()
        self.clock = FakeClock()

    def channel(
        self,
        *,
        allowed: frozenset[str] = frozenset({str(OWNER_ID)}),
        access: Access | None = None,
        token: str = TOKEN,
        updates: TelegramUpdates | None = None,
        leadership: Leadership | None = None,
        **settings: Any,
    ) -> TelegramChannel:
        """A channel on the fake Bot API; ``access`` (else ``allowed`` alone) lets people in;
        ``updates`` is where webhook mode claims updates."""
        channel = TelegramChannel(
            TelegramSettings.model_validate(
                {"enabled": True, "token": token, "base_url": self.server.base_url, **settings}
            ),
            access=access or ChannelAccess("telegram", allowed),
            clock=self.clock,
            poll_timeout=5,
            request_timeout=2.0,
            typing_interval=0.02,
            sleep=self.sleeps,
            updates=updates,
            leadership=leadership,
        )
        self.sleeps.channel = channel
        return channel

    @asynccontextmanager
    async def running(
        self,
        channel: TelegramChannel | None = None,
        on_message: Callable[[InboundMessage], Awaitable[None]] | None = None,
        *,
        started_by: str = "getUpdates",
    ) -> AsyncIterator[TelegramChannel]:
        """Runs the channel until the block ends, then cancels it and checks it stopped cleanly.
        The block begins once the fake saw ``started_by`` (``setWebhook`` in webhook mode)."""
        channel = channel or self.channel()
        task = asyncio.create_task(channel.run(on_message or self.inbox))
        try:
            await self.server.wait_for_calls(started_by)
            yield channel
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
