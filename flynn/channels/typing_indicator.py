"""Keeps a chat's "typing…" indicator up while any of its messages still waits for a final reply."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable
from contextlib import suppress
from dataclasses import dataclass
from typing import Generic, TypeVar

import structlog

log = structlog.get_logger(__name__)

ChatT = TypeVar("ChatT", bound=Hashable)


@dataclass(slots=True)
class _Chat:
    pending: set[str]
    task: asyncio.Task[None]


class TypingIndicators(Generic[ChatT]):
    """One tracked task per chat calls ``send_typing(chat)`` every ``interval`` seconds from the
    first ``start`` until the last pending message is ``finish``ed, or ``limit`` seconds pass
    (a reply that never comes must not leave the bot typing forever). ``send_typing`` handles its
    own errors; an indicator is a courtesy."""

    def __init__(
        self,
        send_typing: Callable[[ChatT], Awaitable[None]],
        *,
        interval: float,
        limit: float,
        name: str,
    ) -> None:
        self._send_typing = send_typing
        self._interval = interval
        self._limit = limit
        self._name = name
        self._chats: dict[ChatT, _Chat] = {}

    def start(self, chat: ChatT, message_id: str) -> None:
        """``message_id`` now waits for its reply in ``chat``; typing shows until it is finished."""
        current = self._chats.get(chat)
        if current is not None:
            current.pending.add(message_id)
            return
        task = asyncio.create_task(self._keep_typing(chat), name=f"{self._name}.typing:{chat}")
        task.add_done_callback(self._log_crash)
        self._chats[chat] = _Chat({message_id}, task)

    async def finish(self, chat: ChatT, message_id: str | None) -> None:
        """``message_id`` got its final reply (None: every message of ``chat`` did). When none is
        left, the indicator stops and its task has ended by the time this returns."""
        current = self._chats.get(chat)
        if current is None:
            return
        if message_id is None:
            current.pending.clear()
        else:
            current.pending.discard(message_id)
        if current.pending:
            return
        del self._chats[chat]
        current.task.cancel()
        await asyncio.wait([current.task])

    async def aclose(self) -> None:
        """Stops every indicator and waits for their tasks."""
        tasks = [current.task for current in self._chats.values()]
        self._chats.clear()
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks)

    async def _keep_typing(self, chat: ChatT) -> None:
        with suppress(TimeoutError):
            async with asyncio.timeout(self._limit):
                while True:
                    await self._send_typing(chat)
                    await asyncio.sleep(self._interval)
        current = self._chats.get(chat)
        if current is not None and current.task is asyncio.current_task():
            del self._chats[chat]

    def _log_crash(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("typing.crashed", channel=self._name, exc_info=task.exception())
