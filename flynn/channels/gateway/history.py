"""The gateway's ``history`` frame (docs/gateway-protocol.md): a session's stored conversation and
the pushes delivered to its client, read through narrow seams, rendered for the web page and sent
back to the tab that asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

import structlog

from flynn.channels.gateway.markdown import SafeMarkdown
from flynn.channels.gateway.protocol import (
    HistoryEntry,
    HistoryRequest,
    error_frame,
    history_frame,
)

log = structlog.get_logger(__name__)


class StoredTurn(Protocol):
    """One stored message as the gateway reads it (``flynn.memory``'s ``StoredMessage``)."""

    @property
    def role(self) -> str: ...

    @property
    def content(self) -> str: ...

    @property
    def created_at(self) -> datetime: ...


class Transcript(Protocol):
    """Where a session's conversation is kept (``flynn.memory``'s ``SqliteHistory``)."""

    def latest(self, session: str, limit: int) -> Sequence[StoredTurn]:
        """The session's newest ``limit`` user and assistant messages with text, compacted
        ones included, oldest first. Off-the-record turns were never stored."""
        ...


class DeliveredPush(Protocol):
    """One push as the gateway reads it back (``flynn.schedule``'s ``Push``)."""

    @property
    def id(self) -> int: ...

    @property
    def kind(self) -> str: ...

    @property
    def text(self) -> str: ...

    @property
    def delivered_at(self) -> datetime | None: ...


class PushLog(Protocol):
    """Where delivered pushes are kept (``flynn.schedule``'s ``SqlitePushes``)."""

    def delivered_to(self, channel: str, chat_id: str, *, limit: int) -> Sequence[DeliveredPush]:
        """The newest ``limit`` pushes delivered on ``channel`` to ``chat_id``, oldest first."""
        ...


async def answer_history(
    transcript: Transcript | None,
    session: str,
    request: HistoryRequest,
    markdown: SafeMarkdown,
    pushes: PushLog | None = None,
) -> str:
    """The frame answering ``request`` for ``session`` (``gateway:<client_id>``): only that
    session's messages, the assistant's also as HTML, and the pushes delivered to that client
    (role ``push``), all in time order, the newest ``limit`` of them. Without a transcript (a
    gateway run without memory) the history is empty. A failed read is an ``internal`` error
    frame, logged with its traceback; never raises but on cancellation."""
    if transcript is None:
        return history_frame((), request.id)
    channel, _, client_id = session.partition(":")
    try:
        turns = transcript.latest(session, request.limit)
        shown = (
            () if pushes is None else pushes.delivered_to(channel, client_id, limit=request.limit)
        )
        # Rendering up to HISTORY_MAX replies is the slow part: off the event loop.
        entries = await asyncio.to_thread(_entries, turns, markdown)
        entries = sorted(entries + _push_entries(shown), key=lambda entry: entry.at)
        entries = entries[-request.limit :]
    except Exception:  # per-frame boundary: answer, keep the connection
        log.exception("gateway.history_failed", session=session)
        return error_frame(
            "internal", "The conversation so far could not be read; try again.", request.id
        )
    return history_frame(entries, request.id)


def _entries(turns: Sequence[StoredTurn], markdown: SafeMarkdown) -> list[HistoryEntry]:
    return [
        HistoryEntry(
            turn.role,
            turn.content,
            turn.created_at,
            markdown.render(turn.content) if turn.role == "assistant" else None,
        )
        for turn in turns
    ]


def _push_entries(pushes: Sequence[DeliveredPush]) -> list[HistoryEntry]:
    return [
        HistoryEntry("push", push.text, push.delivered_at, kind=push.kind, id=f"p{push.id}")
        for push in pushes
        if push.delivered_at is not None
    ]
