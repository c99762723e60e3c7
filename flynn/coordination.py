"""How the workers sharing one database take turns (``Coordination``): a session's turns one at a
time across workers, intake left by a dead worker taken over, pushes handed to the worker that
holds the person's connection, one leader for work only one may do (Telegram's polling).

``LocalCoordination`` is one process alone, today's behaviour exactly (the router's per-session
queue already serialises a session's turns); ``flynn.postgres.coordination`` is the one for
several workers on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from flynn.messages import IntakeKey

Work = Callable[[], Coroutine[Any, Any, None]]


async def _nothing_loaded(root: str) -> None:
    pass


@dataclass(frozen=True, slots=True)
class WorkerEvents:
    """What ``Coordination.run`` calls when another worker (or time) asks for it: ``sweep``
    takes up what a dead worker left (``Router.replay``), ``push_waiting`` offers a queued push
    to a client connected here (``Switchboard.push_waiting``), ``jobs_changed`` wakes the
    scheduler (a job was added or cancelled elsewhere), ``forgotten`` makes the live sessions
    of a memory root drop what they loaded (``SessionRegistry.forgotten``: something of it was
    forgotten elsewhere)."""

    sweep: Callable[[], Awaitable[int]]
    push_waiting: Callable[[str, str], Awaitable[None]]
    jobs_changed: Callable[[], None]
    forgotten: Callable[[str], Awaitable[None]] = _nothing_loaded


class Leadership(Protocol):
    """Work only one worker may do at a time (Telegram's getUpdates)."""

    async def lead(self, name: str, work: Work) -> None:
        """Runs ``work`` while this worker holds the lease ``name``: waits until it may, runs
        it, cancels it as soon as the lease cannot be kept, then waits to lead again. Returns
        (or raises) when ``work`` does; on cancellation ``work`` is cancelled and the lease
        given back at once."""
        ...


class Coordination(Leadership, Protocol):
    """The seam between the workers of one database (one, locally)."""

    def turn(self, session: str, key: IntakeKey) -> contextlib.AbstractAsyncContextManager[bool]:
        """Held while the turn for ``key`` in ``session`` runs: waits for the session's turns
        under way on other workers and for messages of the session accepted before it by a live
        worker; gives whether the turn is still this worker's to run (not taken over by another
        worker meanwhile, nor answered). Raises ``StoreError`` when the database cannot be
        reached."""
        ...

    def accepted(self, key: IntakeKey) -> None:
        """The message ``key`` was accepted here (``InboundLog.accept`` said ``new``): it is
        this worker's to answer while it lives. Raises ``StoreError``."""
        ...

    async def take_over(self, now: datetime) -> frozenset[IntakeKey] | None:
        """Claims the unfinished intake whose worker is gone (compare-and-set: each row to one
        worker) and returns its keys; ``None`` when everything unfinished is this worker's
        (one process alone). Never waits on the database on the event loop. Raises
        ``StoreError``."""
        ...

    def push_waiting(self, channel: str, client: str) -> None:
        """A push for ``client`` on ``channel`` waits: nobody here could take it. The worker
        holding the client's connection is told (``WorkerEvents.push_waiting``)."""
        ...

    def jobs_changed(self) -> None:
        """A job was added or cancelled here: every worker's scheduler looks again."""
        ...

    def forgotten(self, root: str) -> None:
        """Something under the memory ``root`` was forgotten here: every other worker's live
        sessions of it drop their session context and loaded turns, which may quote it
        (``WorkerEvents.forgotten``). Never raises: a worker not told keeps what it loaded."""
        ...

    async def run(self, events: WorkerEvents) -> None:
        """Keeps this worker known to be alive, listens to the others and sweeps up what dead
        ones left, until cancelled."""
        ...

    async def release(self) -> None:
        """This worker stops (after its drain): what it leaves is taken over at once. Never
        raises but ``CancelledError``."""
        ...


class LocalCoordination:
    """One process alone: nothing to wait for, nobody to tell, always the leader."""

    @contextlib.asynccontextmanager
    async def turn(self, session: str, key: IntakeKey) -> AsyncIterator[bool]:
        yield True

    def accepted(self, key: IntakeKey) -> None:
        pass

    async def take_over(self, now: datetime) -> frozenset[IntakeKey] | None:
        return None

    def push_waiting(self, channel: str, client: str) -> None:
        pass

    def jobs_changed(self) -> None:
        pass

    def forgotten(self, root: str) -> None:
        pass

    async def lead(self, name: str, work: Work) -> None:
        await work()

    async def run(self, events: WorkerEvents) -> None:
        await asyncio.Event().wait()

    async def release(self) -> None:
        pass
