"""Several workers on one PostgreSQL database (``flynn.coordination``'s ``Coordination``).

- A session's turn runs under an advisory lock on the session's key, held by a connection for
  the turn's life: a worker whose connection dies (killed, cut off) frees it at once. The lock
  connections are a fixed few per worker (``lock_connections``, 16 unless given); a turn waits
  for a free one in the order it came. A turn whose session is taken gives its connection back
  and waits for the holder's "turn done" (or looks again after ``recheck_seconds``), so a
  waiter never holds a connection and the few never all wait on each other. Taken, the lock is
  kept only if no message of the session accepted before this one by a live worker is still
  waiting (that one goes first: the lock is given back until it is answered): turns of a
  session run in the order they were accepted.
- Each worker keeps a lease on life (``workers.alive_until``), renewed every few seconds; each
  accepted message names its worker (``intake.owner``). What a worker whose lease ran out left
  (turns not run, replies not delivered) is claimed by compare-and-set, one row to one worker,
  at a start and by a sweep on every worker, and finished there.
- Workers talk through ``LISTEN``/``NOTIFY`` on one channel per schema: a push nobody here could
  take (to the worker holding its client), a job added (to every scheduler), a turn done (to a
  turn waiting for it), a lease given back, a worker gone. One listening connection per
  worker, connected again after a failure; what a lost notification would have said is found
  by the next periodic look, only later.
- A leader lease (``leader_leases``: holder, until), taken by compare-and-set and renewed while
  held; a holder that cannot renew stops its work before the lease ends, so two workers never
  do the work at once while their clocks agree.
- What runs on its own time (the lease on life and the sweep's claim, the leader lease, the
  goodbye) runs its statements in a thread, never on the event loop: with the server gone, a
  statement may wait (``PostgresDatabase``'s ``REACH_SECONDS``), and the loop serves meanwhile.

Only the composition root builds it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import psycopg
import structlog
from psycopg import sql

from flynn.coordination import Work, WorkerEvents
from flynn.errors import StoreError
from flynn.messages import IntakeKey
from flynn.postgres.database import AsyncConnection, PostgresDatabase

log = structlog.get_logger(__name__)

_SESSION_LOCK_CLASS = 0x466C7973  # "Flys": a session whose turn runs
LOCK_CONNECTIONS = 16
"""A worker's connections for session locks unless told otherwise: as many turns run at once
on one worker (more wait for one, in order). Each is a server backend of
``max_connections`` (100 by default), beside the database's pool and the listener."""


@dataclass(frozen=True, slots=True)
class WorkerTimes:
    """How long things last; a dead worker costs at most about ``alive_seconds`` plus
    ``renew_seconds`` for its intake, and ``leader_seconds`` plus ``leader_try_seconds`` for its
    leadership."""

    alive_seconds: float = 15.0
    """A worker's lease on life; renewed every ``renew_seconds``."""
    renew_seconds: float = 5.0
    """Between renewals of the lease, each followed by a sweep for what dead workers left."""
    unowned_seconds: float = 15.0
    """A message accepted without an owner (between ``accept`` and ``accepted``, or before this
    schema) is an orphan after this long."""
    recheck_seconds: float = 2.0
    """The longest a turn waits behind an earlier message without looking again."""
    leader_seconds: float = 25.0
    leader_renew_seconds: float = 10.0
    leader_try_seconds: float = 4.0
    """How often a worker that is not the leader tries to become it."""
    leader_margin_seconds: float = 5.0
    """A leader that could not renew stops its work this long before its lease ends."""
    listen_retry_seconds: float = 5.0


def default_worker_id() -> str:
    """This process: host, pid and a random part (a restarted worker is a new one)."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


_HEARTBEAT = """
INSERT INTO workers (worker, alive_until) VALUES (%(me)s, %(until)s)
ON CONFLICT (worker) DO UPDATE SET alive_until = excluded.alive_until
"""
_FORGET_DEAD = "DELETE FROM workers WHERE alive_until < %(long_ago)s"
_OWN = """
UPDATE intake SET owner = %s
WHERE channel = %s AND chat_id = %s AND message_id = %s AND state = 'accepted'
"""
_ORPHAN = """
(state IN ('accepted', 'answered')
 OR (state = 'failed' AND completed_at IS NULL AND reply IS NOT NULL))
AND owner IS DISTINCT FROM %(me)s
AND (CASE WHEN owner IS NULL THEN received_at < %(unowned)s
          ELSE owner NOT IN (SELECT worker FROM workers WHERE alive_until > %(now)s) END)
"""
# The sub-select skips rows another sweep is claiming; the outer condition is checked again on
# the row as it is updated (READ COMMITTED re-reads a row another transaction changed), so of
# two sweeps one claims each row.
_TAKE_OVER = f"""
UPDATE intake SET owner = %(me)s
WHERE id IN (SELECT id FROM intake WHERE {_ORPHAN} ORDER BY id FOR UPDATE SKIP LOCKED)
  AND {_ORPHAN}
RETURNING channel, chat_id, message_id
"""
# Is the turn still ours (not taken over meanwhile, not answered by another), and does an
# earlier message of the session wait for a live worker?
_TURN_CHECK = """
SELECT mine.owner = %(me)s AND mine.state = 'accepted' AS ours,
       EXISTS (SELECT 1 FROM intake AS earlier
               WHERE earlier.session = %(session)s AND earlier.state = 'accepted'
                 AND earlier.id < mine.id AND earlier.owner IS DISTINCT FROM %(me)s
                 AND (CASE WHEN earlier.owner IS NULL THEN earlier.received_at >= %(unowned)s
                           ELSE earlier.owner IN (SELECT worker FROM workers
                                                  WHERE alive_until > %(now)s) END)) AS behind
FROM intake AS mine
WHERE mine.channel = %(channel)s AND mine.chat_id = %(chat)s AND mine.message_id = %(message)s
"""
_TRY_LOCK = "SELECT pg_try_advisory_lock(%s, hashtext(current_schema() || ' ' || %s)) AS granted"
_UNLOCK = (
    "SELECT pg_advisory_unlock(%s, hashtext(current_schema() || ' ' || %s)), pg_notify(%s, %s)"
)
_LEAD = """
INSERT INTO leader_leases (name, holder, until) VALUES (%(name)s, %(me)s, %(until)s)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, until = excluded.until
WHERE leader_leases.holder = excluded.holder OR leader_leases.until <= %(now)s
RETURNING until
"""
_RESIGN = "DELETE FROM leader_leases WHERE name = %s AND holder = %s"
_GONE = "DELETE FROM workers WHERE worker = %s"
_NOTIFY = "SELECT pg_notify(%s, %s)"


def _utc_now() -> datetime:
    return datetime.now(UTC)


class _Lost(Exception):
    """The leader lease could not be kept."""


class _LockConnections:
    """At most ``size`` connections for session locks, kept open between turns. ``take`` waits,
    first come first served, while all are taken; one given back broken is closed, and a new
    one opened in its place when next needed."""

    def __init__(self, connect: Callable[[], Awaitable[AsyncConnection]], size: int) -> None:
        if size < 1:
            raise ValueError(f"lock_connections must be at least 1, not {size}")
        self._connect = connect
        self._free = asyncio.Semaphore(size)
        self._idle: list[AsyncConnection] = []
        self._closed = False
        self.opened = 0
        """Open now, taken or idle."""

    async def take(self) -> tuple[AsyncConnection, bool]:
        """A connection of the few, in no transaction, and whether it was kept from before (the
        server may have dropped it since); waits for one while all are taken. Give it back with
        ``give_back`` whatever happens. Raises ``StoreError`` when a new one cannot be opened
        (nothing is taken then)."""
        await self._free.acquire()
        try:
            while self._idle:
                connection = self._idle.pop()
                if not connection.closed and connection.info.transaction_status == 0:  # IDLE
                    return connection, True
                await self._close(connection)
            connection = await self._connect()
        except BaseException:
            self._free.release()
            raise
        self.opened += 1
        return connection, False

    async def give_back(self, connection: AsyncConnection, *, broken: bool = False) -> None:
        """Returns a connection from ``take``; ``broken`` (or closed) ones are closed, and
        what they held (a lock) with them."""
        try:
            if broken or connection.closed or self._closed:
                await self._close(connection)
            else:
                self._idle.append(connection)
        finally:
            self._free.release()

    async def _close(self, connection: AsyncConnection) -> None:
        self.opened -= 1
        with contextlib.suppress(psycopg.Error):
            await connection.close()

    async def close(self) -> None:
        """Closes the idle ones (those taken are closed as they come back)."""
        self._closed = True
        idle, self._idle = self._idle, []
        for connection in idle:
            await self._close(connection)


class PostgresCoordination:
    """``Coordination`` for one of several workers on ``db``'s database (its schema: workers of
    another schema are another deployment)."""

    def __init__(
        self,
        db: PostgresDatabase,
        *,
        worker_id: str | None = None,
        clock: Callable[[], datetime] = _utc_now,
        times: WorkerTimes = WorkerTimes(),
        lock_connections: int = LOCK_CONNECTIONS,
    ) -> None:
        """``lock_connections``: how many connections hold session locks, so how many turns run
        at once here (``LOCK_CONNECTIONS`` unless given). Raises ``StoreError`` when the
        database cannot be read."""
        self._db = db
        self.worker_id = worker_id or default_worker_id()
        self._clock = clock
        self._times = times
        row = db.fetchone("SELECT current_schema() AS schema")
        assert row is not None
        self._channel = f"flynn {row['schema']}"
        """The ``NOTIFY`` channel of this deployment."""
        self._locks = _LockConnections(db.connect_async, lock_connections)
        self._turns_done: dict[str, asyncio.Event] = {}
        self._leases_free: dict[str, asyncio.Event] = {}
        self._sweep_now = asyncio.Event()
        self.released = False
        """Set by ``release``: this worker is leaving."""
        self._alive_lock = threading.Lock()
        """Held by a renewal of the lease on life and by the goodbye, each in a thread: a
        renewal under way when the worker says goodbye must not bring it back to life."""
        self.listening = asyncio.Event()
        """Set while this worker hears the others (its ``LISTEN`` connection is up)."""
        self.turn_waited = asyncio.Event()
        """Set once a turn here found its session taken (by a turn elsewhere, or an earlier
        message) and waited; what tests of contention wait for."""

    # -- turns -----------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def turn(self, session: str, key: IntakeKey) -> AsyncIterator[bool]:
        try:
            connection, ours = await self._take_session(session, key)
        finally:
            # One turn of a session at a time here (the router's queue): nobody else waits.
            self._turns_done.pop(session, None)
        try:
            yield ours
        except BaseException:
            # Cancelled or failed with the lock held: the connection goes, and the lock with it.
            await self._locks.give_back(connection, broken=True)
            raise
        try:
            await connection.execute(
                _UNLOCK, (_SESSION_LOCK_CLASS, session, self._channel, f"turn {session}")
            )
        except psycopg.Error:
            await self._locks.give_back(connection, broken=True)
            log.warning("workers.unlock_failed", session=session)
            return
        except BaseException:
            # Cancelled while giving the lock back (a drain's deadline as the turn ends): whether
            # the unlock ran is unknown, so the connection goes, and the lock with it; kept by
            # nobody, it would stay open, and its place among the few would be lost.
            await self._locks.give_back(connection, broken=True)
            raise
        await self._locks.give_back(connection)

    async def _take_session(self, session: str, key: IntakeKey) -> tuple[AsyncConnection, bool]:
        """A lock connection holding the session's lock once no earlier message of it waits for a
        live worker, and whether the turn for ``key`` is still this worker's to run (when not,
        the lock is held all the same, and given back with the connection at the turn's end).
        Between tries it holds no connection. Raises ``StoreError`` when no connection can be
        opened or a statement fails."""
        while True:
            done = self._turns_done.setdefault(session, asyncio.Event())
            done.clear()
            connection, kept = await self._locks.take()
            try:
                taken = await self._try_session(connection, session, key)
            except StoreError:
                await self._locks.give_back(connection, broken=True)
                if kept:
                    # Kept since an earlier turn and dropped by the server meanwhile (a restart,
                    # a failover, an idle timeout): another, or a new one.
                    continue
                raise
            except BaseException:
                await self._locks.give_back(connection, broken=True)
                raise
            if taken is not None:
                return connection, taken
            await self._locks.give_back(connection)
            self.turn_waited.set()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._times.recheck_seconds):
                    await done.wait()

    async def _try_session(
        self, connection: AsyncConnection, session: str, key: IntakeKey
    ) -> bool | None:
        """One try: whether the turn is ours with the lock held on ``connection``, or None when
        the session is taken or an earlier message goes first (the lock not held)."""
        try:
            cursor = await connection.execute(_TRY_LOCK, (_SESSION_LOCK_CLASS, session))
            granted = await cursor.fetchone()
            if granted is None or not granted["granted"]:
                return None
            cursor = await connection.execute(_TURN_CHECK, self._turn_params(session, key))
            row = await cursor.fetchone()
            if row is None or not row["ours"]:
                log.info("workers.turn_not_ours", session=session)
                return False
            if not row["behind"]:
                return True
            # An earlier message goes first, wherever it was accepted.
            await connection.execute(
                _UNLOCK, (_SESSION_LOCK_CLASS, session, self._channel, f"turn {session}")
            )
            return None
        except psycopg.Error as exc:
            raise StoreError(f"cannot take the session's turn: {exc}") from None

    def _turn_params(self, session: str, key: IntakeKey) -> dict[str, object]:
        now = self._clock()
        return {
            "me": self.worker_id,
            "session": session,
            "now": now,
            "unowned": now - timedelta(seconds=self._times.unowned_seconds),
            "channel": key.channel,
            "chat": key.chat_id,
            "message": key.message_id,
        }

    @property
    def lock_connections(self) -> int:
        """Lock connections open now (never more than the ``lock_connections`` given)."""
        return self._locks.opened

    # -- intake ----------------------------------------------------------------------------------

    def accepted(self, key: IntakeKey) -> None:
        self._db.execute(_OWN, (self.worker_id, key.channel, key.chat_id, key.message_id))

    async def take_over(self, now: datetime) -> frozenset[IntakeKey] | None:
        return await asyncio.to_thread(self.claim_orphans, now)

    def claim_orphans(self, now: datetime) -> frozenset[IntakeKey]:
        """``take_over``'s work, blocking (in a thread). Raises ``StoreError``."""
        # Known alive first: what it claims is not an orphan the moment it is claimed.
        self._renew()
        if self.released:
            # Leaving (``release`` may have said goodbye already): claimed now, it would be
            # an orphan again until the others' next sweep.
            return frozenset()
        params = {
            "me": self.worker_id,
            "now": now,
            "unowned": now - timedelta(seconds=self._times.unowned_seconds),
        }
        rows = self._db.fetchall(_TAKE_OVER, params)
        if rows:
            log.info("workers.took_over", messages=len(rows))
        return frozenset(IntakeKey(r["channel"], r["chat_id"], r["message_id"]) for r in rows)

    # -- telling the others ----------------------------------------------------------------------

    def push_waiting(self, channel: str, client: str) -> None:
        self._notify(f"push {channel} {client}")

    def jobs_changed(self) -> None:
        self._notify("jobs")

    def forgotten(self, root: str) -> None:
        self._notify(f"forgotten {root}")

    def _notify(self, payload: str) -> None:
        try:
            self._db.execute(_NOTIFY, (self._channel, payload))
        except StoreError:
            # The others find it at their next periodic look.
            log.warning("workers.notify_failed", payload=payload.split(" ", 1)[0])

    # -- the leader ------------------------------------------------------------------------------

    async def lead(self, name: str, work: Work) -> None:
        try:
            while True:
                until = await self._become_leader(name)
                log.info("workers.leading", lease=name)
                try:
                    await self._while_leading(name, until, work)
                    return
                except _Lost:
                    log.warning("workers.lead_lost", lease=name)
        finally:
            await asyncio.shield(self._resign(name))

    async def _become_leader(self, name: str) -> datetime:
        while True:
            free = self._leases_free.setdefault(name, asyncio.Event())
            free.clear()
            until = await asyncio.to_thread(self._try_lead, name)
            if until is not None:
                return until
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._times.leader_try_seconds):
                    await free.wait()

    def _try_lead(self, name: str) -> datetime | None:
        """Takes or renews the lease: its new end, or None when another worker holds it or the
        database cannot be reached (then it is not known to be held)."""
        now = self._clock()
        until = now + timedelta(seconds=self._times.leader_seconds)
        try:
            row = self._db.fetchone(
                _LEAD, {"name": name, "me": self.worker_id, "until": until, "now": now}
            )
        except StoreError:
            log.warning("workers.lease_not_renewed", lease=name)
            return None
        return until if row is not None else None

    async def _while_leading(self, name: str, until: datetime, work: Work) -> None:
        """Runs ``work`` while the lease is renewed; raises ``_Lost`` (``work`` cancelled) when it
        cannot be kept to within ``leader_margin_seconds`` of its end."""
        times = self._times
        task = asyncio.create_task(work(), name=f"lead:{name}")
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=times.leader_renew_seconds)
                if done:
                    task.result()  # raises what ``work`` raised
                    return
                renewed = await asyncio.to_thread(self._try_lead, name)
                if renewed is not None:
                    until = renewed
                elif self._clock() >= until - timedelta(seconds=times.leader_margin_seconds):
                    raise _Lost
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def _resign(self, name: str) -> None:
        await asyncio.to_thread(self._give_up_lease, name)

    def _give_up_lease(self, name: str) -> None:
        try:
            if self._db.execute(_RESIGN, (name, self.worker_id)):
                self._notify(f"lease {name}")
        except StoreError:
            log.warning("workers.resign_failed", lease=name)

    # -- running ---------------------------------------------------------------------------------

    async def run(self, events: WorkerEvents) -> None:
        # Known alive before anything is accepted here (this runs before the channels start).
        await asyncio.to_thread(self._renew)
        async with asyncio.TaskGroup() as group:
            group.create_task(self._keep_alive(events), name="workers:alive")
            group.create_task(self._listen(events, group), name="workers:listen")

    def _renew(self) -> None:
        """Renews the lease on life (blocking: in a thread); nothing once ``released``."""
        with self._alive_lock:
            if self.released:
                return
            now = self._clock()
            until = now + timedelta(seconds=self._times.alive_seconds)
            try:
                self._db.execute(_HEARTBEAT, {"me": self.worker_id, "until": until})
                self._db.execute(_FORGET_DEAD, {"long_ago": now - timedelta(days=1)})
            except StoreError:
                log.warning("workers.alive_not_renewed")

    async def _keep_alive(self, events: WorkerEvents) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self._times.renew_seconds):
                    await self._sweep_now.wait()
            self._sweep_now.clear()
            if self.released:
                return
            await asyncio.to_thread(self._renew)
            try:
                await events.sweep()
            except StoreError:
                log.warning("workers.sweep_failed")

    async def _listen(self, events: WorkerEvents, group: asyncio.TaskGroup) -> None:
        channel = sql.SQL("LISTEN {}").format(sql.Identifier(self._channel))
        while True:
            try:
                connection = await self._db.connect_async()
                async with connection:
                    await connection.execute(channel)
                    self.listening.set()
                    log.info("workers.listening")
                    # What was said while nobody listened: look again now.
                    events.jobs_changed()
                    self._sweep_now.set()
                    async for note in connection.notifies():
                        self._heard(note.payload, events, group)
            except (StoreError, psycopg.Error) as exc:
                log.warning("workers.listen_failed", error=type(exc).__name__)
            finally:
                self.listening.clear()
            await asyncio.sleep(self._times.listen_retry_seconds)

    def _heard(self, payload: str, events: WorkerEvents, group: asyncio.TaskGroup) -> None:
        kind, _, rest = payload.partition(" ")
        if kind == "turn":
            if (done := self._turns_done.get(rest)) is not None:
                done.set()
        elif kind == "lease":
            if (free := self._leases_free.get(rest)) is not None:
                free.set()
        elif kind == "gone":
            self._sweep_now.set()
        elif kind == "jobs":
            events.jobs_changed()
        elif kind == "push":
            channel, _, client = rest.partition(" ")
            group.create_task(self._offer(events, channel, client), name=f"push:{client}")
        elif kind == "forgotten":
            group.create_task(self._drop(events, rest), name="forgotten")

    @staticmethod
    async def _offer(events: WorkerEvents, channel: str, client: str) -> None:
        try:
            await events.push_waiting(channel, client)
        except Exception:  # a task boundary: one push's offer
            log.exception("workers.push_offer_failed", channel=channel)

    @staticmethod
    async def _drop(events: WorkerEvents, root: str) -> None:
        try:
            await events.forgotten(root)
        except Exception:  # a task boundary: one root's sessions
            log.exception("workers.forgotten_failed")

    async def release(self) -> None:
        if self.released:
            return
        self.released = True
        self._sweep_now.set()
        try:
            await asyncio.to_thread(self._say_gone)
        finally:
            await self._locks.close()

    def _say_gone(self) -> None:
        with self._alive_lock:
            try:
                self._db.execute(_GONE, (self.worker_id,))
                self._notify(f"gone {self.worker_id}")
            except StoreError:
                log.warning("workers.release_failed")
