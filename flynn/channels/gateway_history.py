"""The gateway's ``history`` frame (DESIGN.md section 8): a session's stored conversation, read
through a narrow seam, rendered for the web page and sent back to the tab that asked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

import structlog

from flynn.channels.gateway_frames import (
    HistoryEntry,
    HistoryRequest,
    error_frame,
    history_frame,
)
from flynn.channels.gateway_markdown import SafeMarkdown

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


async def answer_history(
    transcript: Transcript | None,
    session: str,
    request: HistoryRequest,
    markdown: SafeMarkdown,
) -> str:
    """The frame answering ``request`` for ``session`` (``gateway:<client_id>``): only that
    session's messages, the assistant's also as HTML. Without a transcript (a gateway run
    without memory) the history is empty. A failed read is an ``internal`` error frame,
    logged with its traceback; never raises but on cancellation."""
    if transcript is None:
        return history_frame((), request.id)
    try:
        turns = transcript.latest(session, request.limit)
        # Rendering up to HISTORY_MAX replies is the slow part: off the event loop.
        entries = await asyncio.to_thread(_entries, turns, markdown)
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
