"""A channel that records what it is asked to send and lets tests inject inbound messages."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from flynn.channels.base import ChannelCapabilities, ChannelStatus, OnMessage
from flynn.commands import parse_command
from flynn.messages import Delivery, InboundMessage, OutboundMessage


class ReplyHandle:
    """An opaque reply handle, as a channel makes one: compared by identity."""

    def __init__(self, message_id: str) -> None:
        self.message_id = message_id


class RecordingChannel:
    def __init__(self, name: str = "gateway", *, can_stream: bool = True) -> None:
        self._name = name
        self._capabilities = ChannelCapabilities(
            can_edit=False, can_stream=can_stream, max_len=100_000, length_unit="chars"
        )
        self.sent: list[OutboundMessage] = []
        self.finals: asyncio.Queue[OutboundMessage] = asyncio.Queue()
        self.pushes: asyncio.Queue[OutboundMessage] = asyncio.Queue()
        """Pushes delivered (not those refused while ``away``); ``sent`` has every attempt."""
        self.away = False
        """While True, pushes are ``deferred``, as for a gateway client with no connection."""
        self.failing = 0
        """How many of the next final sends fail (a chat service that is down)."""
        self.refusing = 0
        """How many of the next final sends are refused for good (the chat is gone)."""
        self._counter = 0

    @property
    def name(self) -> str:
        return self._name

    @property
    def capabilities(self) -> ChannelCapabilities:
        return self._capabilities

    @property
    def listening(self) -> asyncio.Event | None:
        return None

    def status(self) -> ChannelStatus:
        return ChannelStatus(self._name, connected=True)

    async def run(self, on_message: OnMessage) -> None:
        await asyncio.Event().wait()

    async def send(self, message: OutboundMessage) -> Delivery:
        self.sent.append(message)
        if message.final and self.refusing > 0:
            self.refusing -= 1
            return Delivery.failed("the chat is gone", permanent=True)
        if message.final and self.failing > 0:
            self.failing -= 1
            return Delivery.failed("the chat service is down")
        if message.push is not None:
            if self.away:
                return Delivery.deferred()
            self.pushes.put_nowait(message)
        elif message.final:
            self.finals.put_nowait(message)
        self._counter += 1
        return Delivery.delivered([str(self._counter)])

    def inbound(
        self,
        text: str,
        *,
        chat_id: str = "c1",
        sender_id: str | None = None,
        message_id: str | None = None,
        is_group: bool = False,
        forwarded: bool = False,
    ) -> InboundMessage:
        """A message as a channel parses it: its command read once (never a forward's), a
        fresh reply handle."""
        self._counter += 1
        message_id = message_id or f"m{self._counter}"
        return InboundMessage(
            channel=self._name,
            chat_id=chat_id,
            sender_id=sender_id or chat_id,
            text=text,
            message_id=message_id,
            received_at=datetime(2026, 11, 2, 10, 0, tzinfo=UTC),
            is_group=is_group,
            forwarded=forwarded,
            command=None if forwarded else parse_command(text),
            reply_handle=ReplyHandle(message_id),
        )

    async def reply(self, within: float = 5.0) -> OutboundMessage:
        async with asyncio.timeout(within):
            return await self.finals.get()

    async def push(self, within: float = 5.0) -> OutboundMessage:
        """The next push delivered."""
        async with asyncio.timeout(within):
            return await self.pushes.get()
