"""Inbound messages to sessions: deduplicate, queue per session, run turns one at a time per session
and concurrently across sessions, send each reply exactly once, evict idle sessions.

Each session has a bounded inbox and one worker task; the worker exits when the session has been
idle for ``idle_seconds`` (its orchestrator is dropped and resumed from the database next time).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

import structlog

from flynn.channels.base import Channel
from flynn.errors import SessionBusy
from flynn.identity import Identity
from flynn.memory.store import InboundLog
from flynn.messages import ChannelAccount, InboundMessage, OutboundMessage, SessionKey
from flynn.sessions.orchestrator import Orchestrator
from flynn.sessions.result import TurnResult

log = structlog.get_logger(__name__)


class Sessions(Protocol):
    """Creates and forgets orchestrators; ``flynn.app.App`` implements it."""

    def orchestrator(self, key: SessionKey, account: ChannelAccount) -> Orchestrator: ...

    async def evict(self, key: SessionKey) -> None:
        """Drops the session's orchestrator after waiting for its compaction in flight."""
        ...


@dataclass(slots=True)
class _Worker:
    key: SessionKey
    inbox: asyncio.Queue[InboundMessage]
    task: asyncio.Task[None] | None = None
    busy: bool = False


class Router:
    """Owns the per-session workers. Start with ``run()``; stop intake with ``close_intake()``,
    then ``drain(deadline)``."""

    def __init__(
        self,
        sessions: Sessions,
        channels: Mapping[str, Channel],
        identity: Identity,
        inbound: InboundLog,
        *,
        clock: Callable[[], datetime],
        inbox_size: int = 8,
        idle_seconds: float = 900.0,
    ) -> None:
        self._sessions = sessions
        self._channels = channels
        self._identity = identity
        self._inbound = inbound
        self._clock = clock
        self._inbox_size = inbox_size
        self._idle_seconds = idle_seconds
        self._workers: dict[SessionKey, _Worker] = {}
        self._accepting = True
        self._idle = asyncio.Event()
        self._idle.set()

    @property
    def active_sessions(self) -> int:
        return len(self._workers)

    async def wait_quiet(self) -> None:
        """Returns once every queued and running turn has finished; sessions stay open."""
        while any(w.busy or not w.inbox.empty() for w in self._workers.values()):
            for worker in list(self._workers.values()):
                await worker.inbox.join()

    async def wait_until_idle(self) -> None:
        """Returns once no session has a worker (all idle sessions were evicted)."""
        await self._idle.wait()

    def session_key(self, message: InboundMessage) -> SessionKey:
        """The conversation a message belongs to. In multi-user mode a group chat is split per
        sender, so two people in one group never share a session (or memory)."""
        key = message.session_key
        if message.is_group and self._identity.is_multi_user:
            thread = f"{key.thread}/" if key.thread else ""
            return SessionKey(key.channel, key.chat_id, f"{thread}u{message.sender_id}")
        return key

    async def on_message(self, message: InboundMessage) -> None:
        """The channels' intake (``OnMessage``). Raises ``SessionBusy`` when the inbox is full or
        the daemon is stopping."""
        if not self._accepting:
            raise SessionBusy("flynn is shutting down")
        key = self.session_key(message)
        worker = self._workers.get(key)
        if worker is None:
            worker = _Worker(key, asyncio.Queue(self._inbox_size))
        if worker.inbox.full():
            raise SessionBusy(f"session {key} has {self._inbox_size} messages waiting")
        if not self._inbound.claim(
            message.channel, message.message_id, str(key), now=self._clock()
        ):
            log.info("router.duplicate", channel=message.channel)
            return
        worker.inbox.put_nowait(message)
        if worker.task is None:
            self._workers[key] = worker
            self._idle.clear()
            worker.task = asyncio.create_task(self._work(worker), name=f"session:{key}")

    def close_intake(self) -> None:
        """New messages are refused from now on; queued and running turns continue."""
        self._accepting = False

    async def drain(self, grace_seconds: float) -> int:
        """Waits up to ``grace_seconds`` for queued and running turns, then cancels the rest;
        returns how many sessions were cancelled (and logged)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace_seconds):
                for worker in list(self._workers.values()):
                    await worker.inbox.join()
        stragglers = [w for w in self._workers.values() if w.task is not None]
        unfinished = 0
        for worker in stragglers:
            if worker.busy or not worker.inbox.empty():
                unfinished += 1
                log.warning(
                    "router.cancelled_turn", session=str(worker.key), queued=worker.inbox.qsize()
                )
            assert worker.task is not None
            worker.task.cancel()
        for worker in stragglers:
            assert worker.task is not None
            with contextlib.suppress(asyncio.CancelledError):
                await worker.task
        # Messages that never got their turn: say so, rather than leave them unanswered.
        for worker in stragglers:
            while not worker.inbox.empty():
                await self._notify_unanswered(worker.key, worker.inbox.get_nowait())
        return unfinished

    async def _notify_unanswered(self, key: SessionKey, message: InboundMessage) -> None:
        channel = self._channels.get(message.channel)
        if channel is None:
            return
        notice = OutboundMessage(
            key,
            "Flynn is restarting and could not answer this message; please send it again in a "
            "moment.",
            reply_to=message.message_id,
            error_code="internal",
        )
        try:
            async with asyncio.timeout(2):
                await channel.send(notice)
        except Exception:  # noqa: BLE001 - best effort during shutdown
            log.warning("router.notice_failed", channel=message.channel)

    async def _work(self, worker: _Worker) -> None:
        try:
            while True:
                try:
                    async with asyncio.timeout(self._idle_seconds):
                        message = await worker.inbox.get()
                except TimeoutError:
                    if worker.inbox.empty():
                        break
                    continue
                worker.busy = True
                try:
                    await self._turn(worker.key, message)
                finally:
                    worker.busy = False
                    worker.inbox.task_done()
        finally:
            self._workers.pop(worker.key, None)
            if not self._workers:
                self._idle.set()
            with contextlib.suppress(Exception):
                await self._sessions.evict(worker.key)

    async def _turn(self, key: SessionKey, message: InboundMessage) -> None:
        channel = self._channels.get(message.channel)
        if channel is None:
            log.error("router.unknown_channel", channel=message.channel)
            return
        bound = structlog.contextvars.bound_contextvars(
            session=str(key), channel=message.channel, message=message.message_id
        )
        with bound:
            orchestrator = self._sessions.orchestrator(key, message.account)

            async def on_delta(text: str) -> None:
                await channel.send(
                    OutboundMessage(key, text, reply_to=message.message_id, final=False)
                )

            streams = channel.capabilities.can_stream
            try:
                result = await orchestrator.handle(message.text, on_delta if streams else None)
            except Exception:
                log.exception("router.turn_crashed")
                result = TurnResult(
                    "Something went wrong on my side; please try again.", "internal"
                )
            reply = OutboundMessage(
                key, result.text, reply_to=message.message_id, error_code=result.error_code
            )
            try:
                await channel.send(reply)
            except Exception:
                log.exception("router.send_failed")
                return
            self._inbound.complete(message.channel, message.message_id, now=self._clock())
