"""Inbound messages to sessions: store, deduplicate, queue per session, run turns one at a time per
session and concurrently across sessions, send each reply exactly once, evict idle sessions.

Intake is durable (``flynn.memory.inbound``): a message is stored before the channel is told it
was taken, its reply is stored before it is sent, and ``replay`` (at start) finishes what a crash
or a drain deadline left: turns not run are run, replies not sent are sent. A resend of the same
id joins the pending turn, gets the stored reply while that is undelivered, and nothing once it
was delivered.

Delivery is what the channel says (``Delivery``) and is recorded exactly: ``delivered`` marks the
reply delivered; ``deferred`` (a gateway client away, or not yet acknowledging) leaves it stored
for ``redeliver`` (the client's next hello) and ``acknowledged``; ``failed`` queues it for its
conversation, sent again with backoff until it goes, the conversation's later replies waiting
behind it in order. A failure the chat service calls final (the chat or topic is gone, the bot
was blocked) is not retried: the reply is closed as undeliverable, and the next one goes.

Every reply, delta and notice for a message carries that message's ``reply_handle`` back to its
channel. A message replayed after a restart has none (handles are not stored): its channel
answers it from the session and ``reply_to`` alone. Its command is read again from its stored
text, as its channel read it (a forwarded message is never a command). Its pictures and files were
kept in the person's folder at intake (the stored row names them): the replayed turn reads them
back from there, and goes on without (saying so) one forgotten meanwhile.

Each session has a bounded inbox and one worker task; the worker exits when the session has been
idle for ``idle_seconds`` (its orchestrator is dropped and resumed from the database next time).

With several workers on one database (``flynn.coordination``), a turn runs holding its session's
turn there (another worker's turn of the session, or an earlier message of it, goes first), and
``replay`` takes up only what a dead worker left: at start, and at each sweep after. A session's
turn the database cannot give (out of reach) is tried again with backoff, the message kept; the
person is told when it takes long, and answered once it is taken.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final, Protocol

import structlog

from flynn.backoff import Backoff
from flynn.channels.base import Channel
from flynn.commands import parse_command
from flynn.coordination import Coordination, LocalCoordination
from flynn.errors import SessionBusy, StoreError, StoreUnreachable
from flynn.identity import Identity, MemoryScope
from flynn.learning.secrets import redact_secrets
from flynn.memory.store import InboundLog
from flynn.messages import (
    Attachment,
    ChannelAccount,
    Delivery,
    InboundMessage,
    IntakeKey,
    OutboundMessage,
    SessionKey,
)
from flynn.sessions.orchestrator import Orchestrator
from flynn.sessions.result import TurnResult

log = structlog.get_logger(__name__)


RESEND_BACKOFF: Final = Backoff(first=1.0, most=30.0, jitter=(0.5, 1.0))
"""Waits between tries of sending a reply whose send failed: a second, doubled per further
failure up to 30 s, each drawn between half and all of that (so many chats failing at once do
not retry in step). A chat service back from an outage gets its replies within 30 s."""


TURN_RETRY: Final = Backoff(first=0.5, most=15.0, jitter=(0.5, 1.0))
"""Waits between tries of taking a session's turn the database refused (out of reach, out of
connections): half a second, doubled per further failure up to 15 s."""
TURN_NOTICE_AFTER: Final = 5
"""Failures in a row before the person is told the answer is late: 4 to 8 s of waits with
``TURN_RETRY``, plus the tries themselves (each up to the database's connect timeout)."""


@dataclass(frozen=True, slots=True)
class _Reply:
    key: SessionKey
    message: InboundMessage
    result: TurnResult


class Sessions(Protocol):
    """Creates and forgets orchestrators; ``flynn.sessions.registry.SessionRegistry`` implements
    it."""

    def orchestrator(self, key: SessionKey, account: ChannelAccount) -> Orchestrator: ...

    def scope_for(self, key: SessionKey, account: ChannelAccount) -> MemoryScope: ...

    def live(self, key: SessionKey) -> Orchestrator | None:
        """The session's orchestrator if it exists now (without creating one)."""
        ...

    def keep_files(
        self, key: SessionKey, account: ChannelAccount, attachments: tuple[Attachment, ...]
    ) -> tuple[Attachment, ...]:
        """A message's pictures and files kept in the person's folder now (durable intake),
        each marked kept or refused."""
        ...

    def discard_files(
        self, key: SessionKey, account: ChannelAccount, attachments: tuple[Attachment, ...]
    ) -> None:
        """Deletes what ``keep_files`` kept for a message that was already taken."""
        ...

    async def evict(self, key: SessionKey) -> None:
        """Drops the session's orchestrator after waiting for its compaction in flight."""
        ...


@dataclass(slots=True)
class _Worker:
    key: SessionKey
    inbox: asyncio.Queue[tuple[InboundMessage, bool]]
    """Messages in order, each with whether it is replayed from before a restart."""
    task: asyncio.Task[None] | None = None
    busy: bool = False
    current: InboundMessage | None = None


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
        resend: Backoff = RESEND_BACKOFF,
        turn_retry: Backoff = TURN_RETRY,
        notice_after: int = TURN_NOTICE_AFTER,
        coordination: Coordination | None = None,
    ) -> None:
        """``coordination``: the other workers on the database (``LocalCoordination``, none,
        unless given). ``turn_retry`` and ``notice_after``: how a turn whose session cannot be
        taken is tried again, and after how many failures the person is told."""
        self._sessions = sessions
        self._coordination = coordination or LocalCoordination()
        self._channels = channels
        self._identity = identity
        self._inbound = inbound
        self._clock = clock
        self._inbox_size = inbox_size
        self._idle_seconds = idle_seconds
        self._resend_policy = resend
        self._turn_retry = turn_retry
        self._notice_after = notice_after
        self._workers: dict[SessionKey, _Worker] = {}
        self._resends: set[asyncio.Task[None]] = set()
        self._failing: dict[SessionKey, deque[_Reply]] = {}
        """Per conversation, replies whose send failed, oldest first, with a task sending them
        again."""
        self._accepting = True
        self._idle = asyncio.Event()
        self._idle.set()
        self._sending = 0
        """Stored replies being sent again right now (not those waiting out a backoff)."""
        self._quiet = asyncio.Event()
        self._quiet.set()

    @property
    def active_sessions(self) -> int:
        return len(self._workers)

    @property
    def idle(self) -> asyncio.Event:
        """Set while no session has a worker (none was opened, or every idle one was evicted);
        cleared when a message opens one. Only the router sets or clears it."""
        return self._idle

    @property
    def quiet(self) -> asyncio.Event:
        """Set while no turn is queued or running and no stored reply is being sent again
        (one waiting out its backoff after a failed send does not count): what was taken has
        been answered and its reply sent as far as it could be. Cleared when a message is
        queued or a reply is sent again. ``drain`` waits on it; only the router sets or clears
        it."""
        return self._quiet

    def _settle(self) -> None:
        busy = self._sending or any(w.busy or not w.inbox.empty() for w in self._workers.values())
        if busy:
            self._quiet.clear()
        else:
            self._quiet.set()

    def session_key(self, message: InboundMessage) -> SessionKey:
        """The conversation a message belongs to. In multi-user mode a group chat is split per
        sender, so two people in one group never share a session (or memory)."""
        key = message.session_key
        if message.is_group and self._identity.is_multi_user:
            return replace(key, sender=message.sender_id)
        return key

    async def on_message(self, message: InboundMessage) -> None:
        """The channels' intake (``OnMessage``). Raises ``SessionBusy`` when the inbox is full or
        the daemon is stopping."""
        if not self._accepting:
            raise SessionBusy("flynn is shutting down")
        key = self.session_key(message)
        worker = self._workers.get(key)
        if worker is not None and worker.inbox.qsize() >= self._inbox_size:
            raise SessionBusy(f"session {key} has {self._inbox_size} messages waiting")
        # Off the record, nothing of a message is written: its id is kept, its text is not.
        live = self._sessions.live(key)
        keep_text = live is None or not live.off_the_record
        scope = self._sessions.scope_for(key, message.account)
        # Kept until answered, without credentials (the turn removes them as well).
        kept = replace(message, text=redact_secrets(message.text)[0])
        if keep_text and message.attachments:
            # Its files too, in the person's folder, named in the stored row: a replayed turn
            # reads them back, and this run's turn keeps them no second time.
            message = replace(
                message,
                attachments=self._sessions.keep_files(key, message.account, message.attachments),
            )
            kept = replace(kept, attachments=message.attachments)
        try:
            intake = self._inbound.accept(
                kept, str(key), scope.root, keep_text=keep_text, now=self._clock()
            )
        except BaseException:
            # Not taken (the channel asks again, or the person is told to resend): no files.
            if keep_text:
                self._sessions.discard_files(key, message.account, message.attachments)
            raise
        if intake.state != "new" and keep_text:
            # Taken before: its first arrival's files are the ones kept.
            self._sessions.discard_files(key, message.account, message.attachments)
        if intake.state == "pending":
            log.info("router.duplicate_joined", channel=message.channel)
            return
        if intake.state == "delivered":
            # The person has the reply (a redelivered update, a client's late resend).
            log.info("router.duplicate_delivered", channel=message.channel)
            return
        if intake.state == "answered":
            log.info("router.duplicate_answered", channel=message.channel)
            self._resend(key, message, intake.reply, intake.error_code)
            return
        self._coordination.accepted(message.intake_key)
        self._enqueue(key, message)

    def _enqueue(self, key: SessionKey, message: InboundMessage, *, replayed: bool = False) -> None:
        worker = self._workers.get(key)
        if worker is None:
            worker = _Worker(key, asyncio.Queue())
        worker.inbox.put_nowait((message, replayed))
        self._quiet.clear()
        if worker.task is None:
            self._workers[key] = worker
            self._idle.clear()
            worker.task = asyncio.create_task(self._work(worker), name=f"session:{key}")

    async def replay(self) -> int:
        """Finishes what the last run left (call at start, once the channels can send):
        turns accepted but not run are queued again, in the order they came, and replies stored
        but not sent are sent. With other workers on the database, only what a dead one left
        (``Coordination.take_over``), so it is called again at each sweep. Returns how many
        messages it took up. Raises ``StoreError``."""
        taken = await self._coordination.take_over(self._clock())
        if taken is not None and not taken:
            return 0
        unfinished = self._inbound.unfinished()
        if taken is not None:
            unfinished = [item for item in unfinished if item.message.intake_key in taken]
        for item in unfinished:
            message = item.message
            if not message.forwarded:
                message = replace(message, command=parse_command(message.text))
            key = SessionKey.parse(item.session)
            if item.reply is not None:
                self._resend(key, message, item.reply, item.error_code)
            elif not item.has_text:
                # Off the record: the text was never kept, so it cannot be answered now.
                self._inbound.give_up(message.intake_key, now=self._clock())
                self._resend(
                    key,
                    message,
                    "Flynn restarted before answering your off-the-record message, and kept "
                    "nothing of it; please send it again.",
                    "internal",
                )
            else:
                self._enqueue(key, message, replayed=True)
        if unfinished:
            log.info("router.replayed", messages=len(unfinished))
        return len(unfinished)

    def _resend(
        self, key: SessionKey, message: InboundMessage, reply: str | None, error_code: str | None
    ) -> None:
        """Sends a stored reply again, in the background (intake must not wait on sending)."""
        text = reply or "I already answered this message."
        self._sending += 1
        self._quiet.clear()
        task = asyncio.create_task(
            self._send_stored(_Reply(key, message, TurnResult(text, error_code))),
            name=f"resend:{key}",
        )
        self._resends.add(task)
        task.add_done_callback(self._resends.discard)

    async def _send_stored(self, reply: _Reply) -> None:
        try:
            await self._send_reply(reply)
        finally:
            self._sending -= 1
            self._settle()

    async def redeliver(self, channel: str, chat_id: str) -> int:
        """Sends again, in order and under their own ids, the replies stored for ``chat_id`` and
        not delivered yet (a gateway client that was away, or had not acknowledged them, said
        hello); returns how many went out. Raises ``StoreError``."""
        items = self._inbound.undelivered(channel, chat_id)
        for item in items:
            reply = _Reply(
                SessionKey.parse(item.session),
                item.message,
                TurnResult(item.reply or "", item.error_code),
            )
            await self._deliver(reply)
        if items:
            log.info("router.redelivered", channel=channel, replies=len(items))
        return len(items)

    def acknowledged(self, key: IntakeKey) -> None:
        """The person has the reply to ``key`` (a gateway client acknowledged it). Raises
        ``StoreError``."""
        if self._inbound.delivered(key, now=self._clock()):
            log.info("router.reply_acknowledged", channel=key.channel)

    def close_intake(self) -> None:
        """New messages are refused from now on; queued and running turns continue."""
        self._accepting = False

    async def drain(self, grace_seconds: float) -> int:
        """Waits up to ``grace_seconds`` for queued and running turns, then cancels the rest;
        returns how many sessions were cancelled (and logged)."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace_seconds):
                await self._quiet.wait()
        stragglers = [w for w in self._workers.values() if w.task is not None]
        unfinished = 0
        cut_off: list[tuple[SessionKey, InboundMessage]] = []
        for worker in stragglers:
            if worker.busy or not worker.inbox.empty():
                unfinished += 1
                log.warning(
                    "router.cancelled_turn", session=str(worker.key), queued=worker.inbox.qsize()
                )
            if worker.busy and worker.current is not None:
                cut_off.append((worker.key, worker.current))
            assert worker.task is not None
            worker.task.cancel()
        for worker in stragglers:
            assert worker.task is not None
            with contextlib.suppress(asyncio.CancelledError):
                await worker.task
        # Messages that never got their turn stay stored and are answered after the restart;
        # say so, rather than leave the person wondering.
        for key, message in cut_off:
            await self._notify_unanswered(key, message)
        for worker in stragglers:
            while not worker.inbox.empty():
                await self._notify_unanswered(worker.key, worker.inbox.get_nowait()[0])
        for task in list(self._resends):
            task.cancel()
        self._failing.clear()
        return unfinished

    async def _notify_unanswered(self, key: SessionKey, message: InboundMessage) -> None:
        live = self._sessions.live(key)
        if live is not None and live.off_the_record:
            text = (
                "Flynn is restarting and keeps nothing said off the record; please send it again."
            )
        else:
            text = "Flynn is restarting; I'll answer this when I'm back."
        await self._notice(key, message, text)

    async def _notice(self, key: SessionKey, message: InboundMessage, text: str) -> None:
        """Tells the person something about ``message`` that is not its answer (an error reply
        to it, which leaves it stored and unanswered); best effort, 2 s at most."""
        channel = self._channels.get(message.channel)
        if channel is None:
            return
        notice = OutboundMessage(
            key,
            text,
            reply_to=message.message_id,
            error_code="internal",
            reply_handle=message.reply_handle,
        )
        try:
            async with asyncio.timeout(2):
                await channel.send(notice)
        except Exception:  # noqa: BLE001 - best effort: the answer comes later
            log.warning("router.notice_failed", channel=message.channel)

    async def _work(self, worker: _Worker) -> None:
        try:
            while True:
                try:
                    async with asyncio.timeout(self._idle_seconds):
                        message, replayed = await worker.inbox.get()
                except TimeoutError:
                    if worker.inbox.empty():
                        break
                    continue
                worker.busy, worker.current = True, message
                try:
                    await self._turn_in_order(worker.key, message, replayed)
                finally:
                    worker.busy, worker.current = False, None
                    worker.inbox.task_done()
                    self._settle()
        finally:
            self._workers.pop(worker.key, None)
            if not self._workers:
                self._idle.set()
            self._settle()
            with contextlib.suppress(Exception):
                await self._sessions.evict(worker.key)

    async def _turn_in_order(
        self, key: SessionKey, message: InboundMessage, replayed: bool
    ) -> None:
        """The turn, holding the session's turn across workers; none when another worker took
        the message over meanwhile (or answered it). While the session's turn cannot be taken
        (``StoreError``: the database out of reach), tries again with backoff (``TURN_RETRY``
        unless given), the message left accepted; after ``notice_after`` failures in a row the
        person is told, once, that the answer is late, and the tries go on until the turn is
        taken or the router drains (a restart answers it then).

        A turn the database server left during its run (``StoreUnreachable``: its answer not
        stored) is tried again the same way, as a replayed one: the session's memory is read
        again from the database (what was kept here may be half-updated), its message is not
        stored twice, and once its answer is stored it is not run again (the session's turn
        says it is answered). Any other ``StoreError`` in a turn ends the session's worker, as
        before (its messages are answered at the next start)."""
        failures = 0
        while True:
            entered = False
            try:
                async with self._coordination.turn(str(key), message.intake_key) as ours:
                    entered = True
                    if ours:
                        await self._turn(key, message, replayed)
                return
            except StoreError as exc:
                if entered and not isinstance(exc, StoreUnreachable):
                    raise
                failures += 1
                if entered:
                    log.warning(
                        "router.turn_cut_off", session=str(key), failures=failures, error=str(exc)
                    )
                    await self._forget_session(key)
                    replayed = True
                else:
                    log.warning(
                        "router.turn_not_taken",
                        session=str(key),
                        failures=failures,
                        error=str(exc),
                    )
            if failures == self._notice_after:
                await self._notice(
                    key,
                    message,
                    "I can't reach my database right now, so I can't answer yet; I'll answer "
                    "this as soon as I can.",
                )
            await asyncio.sleep(self._turn_retry.delay(failures))

    async def _forget_session(self, key: SessionKey) -> None:
        """Drops the session's orchestrator (read again from the database by the next turn)."""
        try:
            await self._sessions.evict(key)
        except Exception:  # the database is away: what it would have saved is saved by a later turn
            log.exception("router.evict_failed", session=str(key))

    async def _turn(self, key: SessionKey, message: InboundMessage, replayed: bool) -> None:
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
                    OutboundMessage(
                        key,
                        text,
                        reply_to=message.message_id,
                        final=False,
                        reply_handle=message.reply_handle,
                    )
                )

            streams = channel.capabilities.can_stream
            try:
                result = await orchestrator.handle(
                    message.command if message.command and not message.forwarded else message.text,
                    on_delta if streams else None,
                    replayed=replayed,
                    forwarded=message.forwarded,
                    attachments=message.attachments,
                )
            except Exception:
                log.exception("router.turn_crashed")
                result = TurnResult(
                    "Something went wrong on my side; please try again.", "internal"
                )
            # Stored before it is sent: a crash now sends it after the restart, never twice
            # the turn.
            self._inbound.answered(
                message.intake_key,
                reply=result.text,
                error_code=result.error_code,
                now=self._clock(),
            )
            await self._send_reply(_Reply(key, message, result))

    async def _send_reply(self, reply: _Reply) -> None:
        """Sends a reply, or queues it behind its conversation's replies whose send failed; a
        failed send queues it and starts sending the queue again with backoff."""
        waiting = self._failing.get(reply.key)
        if waiting is not None:
            waiting.append(reply)
            return
        delivery = await self._deliver(reply)
        if delivery.state != "failed":
            return
        if delivery.permanent:
            self._give_up(reply, delivery)
            return
        self._failing[reply.key] = deque([reply])
        task = asyncio.create_task(self._resend_failed(reply.key), name=f"resend:{reply.key}")
        self._resends.add(task)
        task.add_done_callback(self._resends.discard)

    async def _resend_failed(self, key: SessionKey) -> None:
        """Sends the conversation's queued replies in order until none is left, waiting longer
        after each failure (``RESEND_BACKOFF`` unless given). Each stays stored until delivered:
        a stop or crash meanwhile leaves it for ``replay``. One refused for good is given up."""
        failures = 1
        try:
            while waiting := self._failing.get(key):
                await asyncio.sleep(self._resend_policy.delay(failures))
                while waiting:
                    delivery = await self._deliver_counted(waiting[0])
                    if delivery.state == "failed" and not delivery.permanent:
                        failures += 1
                        break
                    if delivery.permanent:
                        self._give_up(waiting[0], delivery)
                    waiting.popleft()
                    failures = 1
        finally:
            if not self._failing.get(key):
                self._failing.pop(key, None)

    async def _deliver_counted(self, reply: _Reply) -> Delivery:
        """``_deliver`` for a reply sent again: the router is not ``quiet`` meanwhile."""
        self._sending += 1
        self._quiet.clear()
        try:
            return await self._deliver(reply)
        finally:
            self._sending -= 1
            self._settle()

    def _give_up(self, reply: _Reply, delivery: Delivery) -> None:
        """Closes a reply the chat service refused for good, so neither a retry nor a restart
        sends it again (it stays in the conversation's history)."""
        log.warning(
            "router.reply_undeliverable", channel=reply.message.channel, reason=delivery.reason
        )
        self._inbound.give_up(reply.message.intake_key, now=self._clock())

    async def _deliver(self, reply: _Reply) -> Delivery:
        """Sends the reply once and records what the channel said: ``delivered`` marks it so;
        otherwise it stays stored (``redeliver``, ``acknowledged`` and ``replay`` finish it)."""
        message = reply.message
        channel = self._channels.get(message.channel)
        if channel is None:
            log.error("router.unknown_channel", channel=message.channel)
            return Delivery.failed("no such channel")
        outbound = OutboundMessage(
            reply.key,
            reply.result.text,
            reply_to=message.message_id,
            error_code=reply.result.error_code,
            reply_handle=message.reply_handle,
        )
        try:
            delivery = await channel.send(outbound)
        except Exception as exc:  # a channel's misuse error: counted as a failed send
            log.exception("router.send_failed")
            return Delivery.failed(type(exc).__name__)
        if delivery.is_delivered:
            self._inbound.delivered(message.intake_key, now=self._clock())
        elif delivery.state == "failed":
            log.warning("router.send_failed", channel=message.channel, reason=delivery.reason)
        return delivery
