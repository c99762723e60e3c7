"""The Channel seam: how messages arrive from a chat service and how replies go back.

A channel parses its wire format once, at the edge, into ``InboundMessage`` and hands it to the
``on_message`` callback; it delivers ``OutboundMessage``s the router sends back, split to its own
limits. Access control, mention rules and typing indicators are the channel's business; turns,
memory and commands are not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from flynn.messages import Delivery, InboundMessage, OutboundMessage

LengthUnit = Literal["utf16", "chars"]

OnMessage = Callable[[InboundMessage], Awaitable[None]]
"""The router's intake. Returns once the message is accepted (deduplicated and queued); raises
``SessionBusy`` when the session's inbox is full, so the channel can say so."""


@dataclass(frozen=True, slots=True)
class ChannelCapabilities:
    can_edit: bool
    can_stream: bool
    max_len: int
    length_unit: LengthUnit


@dataclass(frozen=True, slots=True)
class ChannelStatus:
    """What ``/readyz`` reports for one channel."""

    name: str
    connected: bool
    last_inbound: datetime | None = None
    last_error: str | None = None
    last_error_at: datetime | None = None

    def as_json(self) -> dict[str, object]:
        return {
            "connected": self.connected,
            "last_inbound": self.last_inbound.isoformat() if self.last_inbound else None,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at.isoformat() if self.last_error_at else None,
        }


NOT_STREAMED = Delivery.deferred()
"""What a channel that cannot stream answers for a delta (``final=False``): nothing was sent."""


class Channel(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def capabilities(self) -> ChannelCapabilities: ...

    @property
    def listening(self) -> asyncio.Event | None:
        """For a channel that serves a port of its own (the gateway): set while it listens.
        The daemon starts such a channel before the others and waits for this (so ``/healthz``
        answers while the rest connect), and a port already taken at its first start stops the
        daemon (exit 3) rather than being retried. None for a channel that connects out to a
        chat service."""
        ...

    def status(self) -> ChannelStatus: ...

    async def run(self, on_message: OnMessage) -> None:
        """Connects and delivers inbound messages until cancelled; then disconnects cleanly and
        re-raises ``CancelledError``. Raises on a failure it cannot recover from itself (the
        daemon restarts the channel with backoff)."""
        ...

    async def send(self, message: OutboundMessage) -> Delivery:
        """Delivers ``message`` and says what became of it (``Delivery``); the caller records
        exactly that. A delivery failure is a ``failed`` result, never an exception: a channel
        raises only for a misuse (``RuntimeError`` when it is not running, ``ValueError`` for a
        chat that is not one of its own), which the caller treats as ``failed`` too. Deltas
        (``final=False``) are ignored by channels that cannot stream (``NOT_STREAMED``).

        A push (``message.push`` set) answers nothing: it goes to ``session``'s chat, or to the
        account ``recipient`` when that is set, without touching typing indicators. ``deferred``
        means the recipient cannot take it now (a gateway client with no live connection, or
        one that has not acknowledged it yet): the caller keeps it queued durably and offers it
        again later. A channel never queues a final reply or a push itself."""
        ...


def chat_push_text(message: OutboundMessage) -> str:
    """A push as a chat app (Telegram, Discord) shows it: its text says what it is (a reminder is
    labelled; the web page labels a push by its kind itself), and a late or repeatedly missed
    reminder says when it was due (``PushTiming.note``)."""
    text = message.text
    if message.push == "reminder":
        text = f"⏰ Reminder: {text}"
    return with_timing(text, message)


def with_timing(text: str, message: OutboundMessage) -> str:
    """``text`` with the push's timing note on a line of its own, when it has one."""
    note = message.timing.note() if message.timing is not None else ""
    return f"{text}\n{note}" if note else text
