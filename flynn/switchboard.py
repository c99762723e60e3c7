"""How the daemon's parts reach each other through the channels: ``Switchboard`` answers what a
channel asks of the router and the scheduler (``/readyz``, a gateway client back, an
acknowledgement), ``PushDelivery`` hands the scheduler's pushes to their channels."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Protocol

import structlog

from flynn.channels.base import Channel
from flynn.channels.gateway import Acknowledged, GatewayChannel
from flynn.memory.embeddings_health import EmbeddingsStatus
from flynn.memory.health import StorageHealth
from flynn.messages import Delivery, IntakeKey, OutboundMessage, PushTiming, SessionKey
from flynn.router import Router
from flynn.schedule.jobs import Push, Pushes
from flynn.schedule.scheduler import Scheduler

log = structlog.get_logger(__name__)

GATEWAY_CHANNEL = "gateway"
"""The channel whose clients come and go (``Switchboard.client_ready``, ``acknowledged``)."""


class Report(Protocol):
    """A part's entry in ``/readyz`` (``flynn.providers.health.ModelsStatus``)."""

    def as_json(self) -> dict[str, object]: ...


class Switchboard:
    """What channels ask of the parts built after them: ``/readyz`` (``readiness``), a gateway
    client back (``client_ready``: what waits for it goes now), an acknowledgement
    (``acknowledged``: now it is delivered).

    The router and the scheduler send through the channels, so they are built after them, and
    these answers need them: the cycle is closed in one explicit step, ``connect``, before
    anything runs. Unconnected, ``readiness`` says not ready and the hooks do nothing."""

    def __init__(
        self,
        pushes: Pushes,
        storage: StorageHealth,
        *,
        clock: Callable[[], datetime],
        embeddings: Callable[[], EmbeddingsStatus] | None = None,
    ) -> None:
        self._pushes = pushes
        self._storage = storage
        self._embeddings = embeddings
        self._clock = clock
        self._channels: Mapping[str, Channel] = {}
        self._router: Router | None = None
        self._scheduler: Scheduler | None = None
        self._models: Callable[[], Report] | None = None
        self.ready = asyncio.Event()
        """Set by the daemon once everything started (``readiness`` says ready only then)."""

    def connect(
        self, channels: Mapping[str, Channel], router: Router, scheduler: Scheduler
    ) -> None:
        self._channels, self._router, self._scheduler = channels, router, scheduler

    def show_models(self, status: Callable[[], Report]) -> None:
        """``/readyz`` tells how the chat models fare (``model``: ``status()``) from now on."""
        self._models = status

    def readiness(self) -> dict[str, object]:
        statuses = {name: channel.status() for name, channel in self._channels.items()}
        ready = self.ready.is_set() and all(status.connected for status in statuses.values())
        # A database that cannot be written fails every message: not ready, and why.
        storage = self._storage.check()
        state: dict[str, object] = {
            "ready": ready and storage.ok,
            "storage": storage.as_json(),
            "channels": {name: status.as_json() for name, status in statuses.items()},
            "sessions": self._router.active_sessions if self._router else 0,
        }
        # Not part of ``ready``: a model unavailable or failing leaves recall to words, and
        # every message is still answered; the entry says it is degraded, and why.
        if self._embeddings is not None:
            state["embeddings"] = self._embeddings().as_json()
        # Nor is the chat model: commands, reminders and what is stored still work without it,
        # and each person whose reply failed was told so.
        if self._models is not None:
            state["model"] = self._models().as_json()
        return state

    async def client_ready(self, client_id: str) -> None:
        """A gateway client said hello: what it has not received (or not acknowledged) goes
        now, in order: the replies to its messages, then the pushes."""
        if self._router is not None:
            await self._router.redeliver(GATEWAY_CHANNEL, client_id)
        if self._scheduler is not None:
            await self._scheduler.deliver_pending(GATEWAY_CHANNEL, client_id)
            # A round under way held some of them (leased while it offered them to the old
            # connection): one more round right after it, not the next retry in 30 s.
            self._scheduler.wake()

    async def push_waiting(self, channel: str, client: str) -> None:
        """Another worker has a push for ``client`` that it could send to nobody: if the client
        is connected here, it goes now (``Coordination``'s ``WorkerEvents.push_waiting``)."""
        gateway = self._channels.get(channel)
        if not isinstance(gateway, GatewayChannel) or not gateway.connections(client):
            return
        if self._scheduler is not None:
            await self._scheduler.deliver_pending(channel, client)

    async def acknowledged(self, ack: Acknowledged) -> None:
        """A gateway client acknowledged a reply or a push: now it is delivered."""
        if ack.reply_to is not None and self._router is not None:
            self._router.acknowledged(IntakeKey(GATEWAY_CHANNEL, ack.client_id, ack.reply_to))
        elif ack.push_id is not None and ack.push_id.isdigit():
            delivered = self._pushes.delivered(int(ack.push_id), now=self._clock())
            log.info("schedule.push_acknowledged", push_id=ack.push_id, first=delivered)


class PushDelivery:
    """The scheduler's ``Deliver``: a push to its channel, with its timing in ``timezone(push)``
    (the reminder's); the channel renders it."""

    def __init__(self, channels: Mapping[str, Channel], *, timezone: Callable[[Push], str]) -> None:
        self._channels = channels
        self._timezone = timezone

    async def deliver(self, push: Push) -> Delivery:
        """``deferred`` when the push's channel is not running here, so it stays queued."""
        target = push.target
        channel = self._channels.get(target.channel)
        if channel is None:
            log.warning("schedule.no_channel", channel=target.channel, push=push.id)
            return Delivery.deferred()
        message = OutboundMessage(
            SessionKey(target.channel, target.chat_id, target.thread),
            push.text,
            push=push.kind,
            push_id=str(push.id),
            recipient=target.recipient,
            timing=self._timing(push),
        )
        return await channel.send(message)

    def _timing(self, push: Push) -> PushTiming | None:
        """When it was due, for a push that came late or stands for several firings."""
        missed = push.occurrences > 1 and push.first_due_at is not None
        if push.due_at is None or not (missed or push.late):
            return None
        return PushTiming(
            push.due_at,
            self._timezone(push),
            late=push.late,
            occurrences=push.occurrences,
            first_due_at=push.first_due_at,
        )
