"""Two workers on one PostgreSQL database, in one test process: each its own connection pool and
worker id, its own router, scheduler, switchboard and channels (a real gateway, real websockets
clients), built as the daemon builds them (``build_service``) with the PostgreSQL stores and
``PostgresCoordination``. A session's turns across both, a worker that dies mid-turn, a push
fired on one for a client of the other, and Telegram's one poller."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import psycopg
import pytest
from channels.telegram_harness import Harness, Inbox
from e2e_daemon import next_frame
from fakes.clock import FakeClock
from fakes.fake_telegram import FakeTelegram
from fakes.gated_provider import GatedProvider
from together import at_once
from websockets.asyncio.client import ClientConnection, connect

from evals.scripted_provider import ScriptedProvider
from flynn.app import App, Service, ServiceOptions, build_service
from flynn.channels.gateway import GatewayChannel
from flynn.coordination import WorkerEvents
from flynn.messages import InboundMessage, IntakeKey
from flynn.postgres.coordination import LOCK_CONNECTIONS, PostgresCoordination, WorkerTimes
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.inbound import PostgresInboundLog
from flynn.providers.base import TASKS, ChatRequest, ChatResponse, Provider, Task
from flynn.schedule.jobs import Target
from flynn.schedule.postgres import PostgresPushes, PostgresRuns, PostgresSchedule
from flynn.settings import load_settings

TOKEN = "workers-gateway-token"
FAST = WorkerTimes(
    renew_seconds=0.05,
    recheck_seconds=0.05,
    leader_renew_seconds=0.05,
    leader_try_seconds=0.05,
    listen_retry_seconds=0.05,
)
"""Looks taken every 50 ms of real time; leases still last what they last on the shared
``FakeClock``, which the tests move."""


class TurnLog(GatedProvider):
    """``GatedProvider`` that also records each chat turn's start and end (a turn cut off has
    no end), by its text."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, str]] = []
        self.ended: asyncio.Queue[str] = asyncio.Queue()

    async def chat(self, request: ChatRequest) -> ChatResponse:
        text = str(request.messages[-1].content)
        self.log.append(("start", text))
        response = await super().chat(request)
        self.log.append(("end", text))
        self.ended.put_nowait(text)
        return response


@dataclass
class Worker:
    name: str
    db: PostgresDatabase
    app: App
    service: Service
    coordination: PostgresCoordination
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    @property
    def gateway(self) -> GatewayChannel:
        channel = self.service.channels["gateway"]
        assert isinstance(channel, GatewayChannel)
        return channel

    @property
    def port(self) -> int:
        port = self.gateway.bound_port
        assert port is not None
        return port

    async def start(self) -> None:
        service = self.service
        events = WorkerEvents(
            service.router.replay, service.switchboard.push_waiting, service.scheduler.wake
        )
        self.tasks.append(asyncio.create_task(self.coordination.run(events)))
        self.tasks.append(asyncio.create_task(self.gateway.run(service.router.on_message)))
        listening = self.gateway.listening
        assert listening is not None
        await listening.wait()
        await service.router.replay()
        service.switchboard.ready.set()
        await self.coordination.listening.wait()

    async def stop(self) -> None:
        """As SIGTERM: drain, tell the others, stop."""
        self.service.router.close_intake()
        await self.service.router.drain(0)
        await self.coordination.release()
        await self._cancel()

    async def die(self, postgres_url: str) -> None:
        """As kill -9: its connections cut, nothing more done, nothing given back."""
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = %s",
                (self.name,),
            )
        self.db.close()
        await self._cancel()
        self.service.router.close_intake()
        await self.service.router.drain(0)

    async def _cancel(self) -> None:
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        self.tasks.clear()


def _worker(
    tmp_path: Path,
    postgres_url: str,
    name: str,
    provider: Provider,
    clock: FakeClock,
    lock_connections: int = LOCK_CONNECTIONS,
) -> Worker:
    db = PostgresDatabase.open(f"{postgres_url}&application_name={name}")
    settings = load_settings(
        {
            "data_dir": str(tmp_path / name),
            "memory": {"user_namespace": "user"},
            "channels": {"gateway": {"host": "127.0.0.1", "port": 0, "token": TOKEN}},
        }
    )
    providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)
    app = App.open(settings, {}, providers=providers, clock=clock)
    # The stores the workers share (what ``storage.url`` chooses): intake, schedule, pushes.
    app.memory.inbound = PostgresInboundLog(db)
    app.schedule, app.pushes, app.runs = PostgresSchedule(db), PostgresPushes(db), PostgresRuns(db)
    app.coordination = PostgresCoordination(
        db, worker_id=name, clock=clock, times=FAST, lock_connections=lock_connections
    )
    service = build_service(app, ServiceOptions())
    return Worker(name, db, app, service, app.coordination)


Workers = Callable[..., tuple[Worker, Worker]]
"""``workers(provider, clock, lock_connections=...)``: two workers, built, not started."""


@pytest.fixture
async def workers(tmp_path: Path, postgres_url: str) -> AsyncIterator[Workers]:
    made: list[Worker] = []

    def two(
        provider: Provider, clock: FakeClock, lock_connections: int = LOCK_CONNECTIONS
    ) -> tuple[Worker, Worker]:
        a = _worker(tmp_path, postgres_url, "worker-a", provider, clock, lock_connections)
        b = _worker(tmp_path, postgres_url, "worker-b", provider, clock, lock_connections)
        made.extend((a, b))
        return a, b

    yield two
    for worker in made:
        with contextlib.suppress(Exception):
            await worker.stop()
        await worker.app.aclose()
        worker.db.close()


async def _a_turn_waits(*workers: Worker) -> None:
    """Returns once a turn on one of ``workers`` found its session taken and waits."""
    waits = [asyncio.create_task(w.coordination.turn_waited.wait()) for w in workers]
    try:
        async with asyncio.timeout(20):
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()


async def _hello(port: int, client_id: str = "phone") -> ClientConnection:
    ws = await connect(f"ws://127.0.0.1:{port}/ws", close_timeout=0)
    hello = {"type": "hello", "token": TOKEN, "client_id": client_id, "protocol": 2}
    await ws.send(json.dumps(hello))
    assert json.loads(await ws.recv())["type"] == "ready"
    return ws


async def _status(ws: ClientConnection) -> None:
    """A ``/status`` and its reply: what the client sent before was taken, and nothing but this
    reply came meanwhile."""
    frame_id = f"status-{secrets.token_hex(4)}"
    await ws.send(json.dumps({"type": "command", "id": frame_id, "name": "status"}))
    async with asyncio.timeout(20):
        frame = json.loads(await ws.recv())
    assert (frame["type"], frame["id"]) == ("reply", frame_id)
    await ws.send(json.dumps({"type": "ack", "id": frame_id}))


async def test_one_sessions_turns_on_two_workers_run_one_after_the_other_in_order(
    workers: Workers,
) -> None:
    provider = TurnLog()
    a, b = workers(provider, FakeClock())
    await a.start()
    await b.start()
    # One person, two tabs, one on each worker: a message from each at the same moment.
    tabs = [await _hello(a.port), await _hello(b.port)]
    await asyncio.gather(
        *(
            tab.send(json.dumps({"type": "message", "id": f"m{n}", "text": f"tab {n}"}))
            for n, tab in enumerate(tabs)
        )
    )
    await provider.entered.wait()
    # The other turn waits for the session (without coordination it would be in the model).
    await _a_turn_waits(a, b)
    assert provider.in_flight == 1
    rows = a.db.fetchall("SELECT text FROM intake ORDER BY id")
    first, second = (str(row["text"]) for row in rows)
    provider.gate.set()
    # Each tab has its reply, from the worker holding it.
    for n, tab in enumerate(tabs):
        assert (await next_frame(tab, "reply"))["text"] == f"re: tab {n}"
        await tab.close()
    turns = [entry for entry in provider.log if entry[1] in (first, second)]
    assert turns == [("start", first), ("end", first), ("start", second), ("end", second)]
    rows = a.db.fetchall("SELECT state, owner FROM intake ORDER BY id")
    assert {row["owner"] for row in rows} == {"worker-a", "worker-b"}


async def test_many_sessions_on_one_worker_share_a_few_lock_connections_and_all_are_answered(
    workers: Workers, postgres_url: str
) -> None:
    provider = TurnLog()
    a, _ = workers(provider, FakeClock(), lock_connections=2)
    await a.start()
    # Ten people at once, two messages each, on a worker with two lock connections.
    people = [await _hello(a.port, f"person-{n}") for n in range(10)]
    for n, ws in enumerate(people):
        for m in (1, 2):
            frame = {"type": "message", "id": f"m{m}", "text": f"person {n} says {m}"}
            await ws.send(json.dumps(frame))
    while provider.in_flight < 2:
        provider.entered.clear()
        await provider.entered.wait()
    # Two turns run; the other eighteen wait for a connection, none opened for them.
    assert a.coordination.lock_connections == 2
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        row = admin.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'worker-a'"
        ).fetchone()
    assert row is not None and row[0] <= 4 + 1 + 2  # the database's pool, the listener, locks
    provider.gate.set()
    for n, ws in enumerate(people):
        replies = [await next_frame(ws, "reply") for _ in (1, 2)]
        assert [(r["id"], r["text"]) for r in replies] == [
            ("m1", f"re: person {n} says 1"),
            ("m2", f"re: person {n} says 2"),
        ]
        await ws.close()
    assert provider.peak == 2
    assert a.coordination.lock_connections <= 2
    assert provider.log.count(("end", "person 0 says 1")) == 1


def _one_lock_and_two_messages(
    db: PostgresDatabase, clock: FakeClock
) -> tuple[PostgresCoordination, list[IntakeKey]]:
    """A worker with one lock connection, and two messages of one session it accepted."""
    coordination = PostgresCoordination(
        db, worker_id="locks", clock=clock, times=FAST, lock_connections=1
    )
    inbound = PostgresInboundLog(db)
    keys = []
    for n in (1, 2):
        message = InboundMessage(
            channel="gateway",
            chat_id="c1",
            sender_id="p",
            text=f"message {n}",
            message_id=f"m{n}",
            received_at=clock(),
        )
        inbound.accept(message, "gateway:c1", "user", keep_text=True, now=clock())
        coordination.accepted(message.intake_key)
        keys.append(message.intake_key)
    return coordination, keys


async def test_a_kept_lock_connection_the_server_dropped_is_replaced(postgres_url: str) -> None:
    clock = FakeClock()
    db = PostgresDatabase.open(f"{postgres_url}&application_name=locks")
    try:
        coordination, keys = _one_lock_and_two_messages(db, clock)
        async with coordination.turn("gateway:c1", keys[0]) as ours:
            assert ours
        # The server drops every connection of this worker (a restart, a failover).
        with psycopg.connect(postgres_url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE application_name = 'locks'"
            )
        async with coordination.turn("gateway:c1", keys[1]) as ours:
            assert ours
        assert coordination.lock_connections == 1
        await coordination.release()
        assert coordination.lock_connections == 0
    finally:
        db.close()


async def test_a_turn_cancelled_as_it_gives_its_lock_back_closes_its_connection(
    postgres_url: str,
) -> None:
    """A drain's cancellation landing as a turn gives its session back (the unlock under way)
    closes the lock connection: kept by nobody, it stayed open (a ``ResourceWarning`` when
    collected) and its place among the few was lost, so a worker with one waited for ever."""
    clock = FakeClock()
    db = PostgresDatabase.open(f"{postgres_url}&application_name=locks")
    try:
        coordination, keys = _one_lock_and_two_messages(db, clock)

        async def cancelled_at_its_end() -> None:
            async with coordination.turn("gateway:c1", keys[0]) as ours:
                assert ours
                task = asyncio.current_task()
                assert task is not None
                task.cancel()  # delivered at the turn's next wait: the unlock's statement

        with pytest.raises(asyncio.CancelledError):
            await asyncio.create_task(cancelled_at_its_end())
        assert coordination.lock_connections == 0
        # The one lock connection is to be had again, and the session's lock went with it.
        async with asyncio.timeout(20), coordination.turn("gateway:c1", keys[1]) as ours:
            assert ours
        await coordination.release()
        assert coordination.lock_connections == 0
    finally:
        db.close()


async def test_a_worker_killed_mid_turn_has_its_message_answered_once_by_the_other(
    workers: Workers, postgres_url: str
) -> None:
    provider = TurnLog()
    clock = FakeClock()
    a, b = workers(provider, clock)
    await a.start()
    await b.start()
    ws = await _hello(a.port)
    await ws.send(json.dumps({"type": "message", "id": "m1", "text": "plan my week"}))
    await provider.entered.wait()  # the turn runs on a, holding the session
    await a.die(postgres_url)
    with contextlib.suppress(Exception):
        await ws.close()
    provider.gate.set()
    # b takes nothing while a's lease on life lasts; once it ran out, b's sweep takes it up.
    clock.advance(seconds=FAST.alive_seconds + 1)
    async with asyncio.timeout(20):
        assert await provider.ended.get() == "plan my week"
        await b.service.router.quiet.wait()  # the turn ended: its reply stored, nobody here
    row = b.db.fetchone("SELECT state, owner FROM intake WHERE message_id = 'm1'")
    assert row == {"state": "answered", "owner": "worker-b"}
    # The person comes back through the load balancer, to b: the stored reply, once.
    ws = await _hello(b.port)
    reply = await next_frame(ws, "reply")
    assert (reply["id"], reply["text"]) == ("m1", "re: plan my week")
    await ws.send(json.dumps({"type": "ack", "id": "m1"}))
    await _status(ws)  # the acknowledgement, sent before, was taken
    await ws.close()
    row = b.db.fetchone("SELECT state FROM intake WHERE message_id = 'm1'")
    assert row == {"state": "delivered"}
    # Answered once: one turn ran to its end (a's was cut off), one reply stored.
    assert provider.log.count(("end", "plan my week")) == 1
    ws = await _hello(b.port)  # delivered: nothing comes again
    await _status(ws)
    await ws.close()


async def test_a_reminder_fired_on_one_worker_reaches_a_client_of_the_other_once(
    workers: Workers,
) -> None:
    clock = FakeClock()
    a, b = workers(ScriptedProvider(default="ok"), clock)
    await a.start()
    await b.start()
    ws = await _hello(b.port)
    a.app.schedule.add(
        namespace="user",
        kind="reminder",
        text="stretch",
        at=clock(),
        repeat=None,
        timezone="UTC",
        target=Target("gateway", chat_id="phone"),
        now=clock(),
    )
    # a fires it and has nobody to give it to; b, holding the client, sends it.
    assert await a.service.scheduler.tick() == 0
    push = await next_frame(ws, "push")
    assert push["text"].endswith("stretch")
    await ws.send(json.dumps({"type": "ack", "id": push["id"]}))
    await _status(ws)
    row = a.db.fetchone("SELECT count(*) AS n FROM pushes WHERE delivered_at IS NOT NULL")
    assert row == {"n": 1}
    # Acknowledged: no worker offers it again.
    assert await a.service.scheduler.tick() == 0
    assert await b.service.scheduler.deliver_pending("gateway", "phone") == 0
    await _status(ws)  # no push frame came before this reply
    await ws.close()


@dataclass
class Poller:
    coordination: PostgresCoordination
    inbox: Inbox
    task: asyncio.Task[None]


async def test_one_worker_polls_telegram_and_another_takes_over_when_it_dies_or_stops(
    postgres_url: str,
) -> None:
    clock = FakeClock()
    async with FakeTelegram() as server:
        harness = Harness(server)
        pollers: list[Poller] = []
        databases = [
            PostgresDatabase.open(f"{postgres_url}&application_name=poller-{n}") for n in range(3)
        ]
        try:
            for n, db in enumerate(databases):
                coordination = PostgresCoordination(
                    db, worker_id=f"poller-{n}", clock=clock, times=FAST
                )
                channel = harness.channel(leadership=coordination)
                inbox = Inbox()
                pollers.append(Poller(coordination, inbox, asyncio.create_task(channel.run(inbox))))
            await server.wait_for_calls("getUpdates")
            leader = _leader(databases[0])
            # The leader dies: its renewals fail; it stops polling before its lease ends, and
            # only then may another take it.
            databases[leader].close()
            clock.advance(seconds=FAST.leader_seconds - FAST.leader_margin_seconds + 1)
            await server.wait_for_polling(0)
            polls = len(server.calls_to("getUpdates"))
            clock.advance(seconds=FAST.leader_margin_seconds)
            await server.wait_for_calls("getUpdates", polls + 1)
            alive = [n for n in range(3) if n != leader]
            second = _leader(databases[alive[0]])
            assert second in alive
            server.queue_private("hello after the takeover")
            messages = await pollers[second].inbox.wait_for(1)
            assert messages[0].text == "hello after the takeover"
            # The next leader stops (SIGTERM): it hands the lease over at once, no clock moved.
            pollers[second].task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pollers[second].task
            (third,) = [n for n in alive if n != second]
            polls = len(server.calls_to("getUpdates"))
            await server.wait_for_calls("getUpdates", polls + 1)
            assert _leader(databases[third]) == third
            server.queue_private("hello to the third")
            assert (await pollers[third].inbox.wait_for(1))[0].text == "hello to the third"
            assert server.most_polling == 1
        finally:
            for poller in pollers:
                poller.task.cancel()
            await asyncio.gather(*(p.task for p in pollers), return_exceptions=True)
            for db in databases:
                db.close()


def _leader(db: PostgresDatabase) -> int:
    row = db.fetchone("SELECT holder FROM leader_leases WHERE name = 'telegram.poller'")
    return -1 if row is None else int(str(row["holder"]).rsplit("-", 1)[1])


async def test_a_stopping_worker_hands_its_unanswered_message_over_at_once(
    workers: Workers,
) -> None:
    provider = TurnLog()
    a, b = workers(provider, FakeClock())
    await a.start()
    await b.start()
    ws = await _hello(a.port)
    await ws.send(json.dumps({"type": "message", "id": "m1", "text": "plan my week"}))
    await provider.entered.wait()
    # SIGTERM with a drain deadline the turn does not meet: a tells the person, cuts it off and
    # lets go of it. No clock moves: b takes it up at a's word, not at the end of its lease.
    await a.stop()
    with contextlib.suppress(Exception):
        await ws.close()
    provider.gate.set()
    async with asyncio.timeout(20):
        assert await provider.ended.get() == "plan my week"
        await b.service.router.quiet.wait()
    row = b.db.fetchone("SELECT state, owner FROM intake WHERE message_id = 'm1'")
    assert row == {"state": "answered", "owner": "worker-b"}
    ws = await _hello(b.port)
    reply = await next_frame(ws, "reply")
    assert (reply["id"], reply["text"]) == ("m1", "re: plan my week")
    await ws.close()


def test_two_sweeps_at_once_take_each_orphaned_message_once(postgres_url: str) -> None:
    clock = FakeClock()
    dbs = [PostgresDatabase.open(postgres_url) for _ in range(3)]
    try:
        dead, *sweepers = (
            PostgresCoordination(db, worker_id=f"w{n}", clock=clock, times=FAST)
            for n, db in enumerate(dbs)
        )
        inbound = PostgresInboundLog(dbs[0])
        for n in range(40):
            message = InboundMessage(
                channel="gateway",
                chat_id=f"c{n % 4}",
                sender_id="p",
                text=f"message {n}",
                message_id=f"m{n}",
                received_at=clock(),
            )
            assert (
                inbound.accept(
                    message, f"gateway:c{n % 4}", "user", keep_text=True, now=clock()
                ).state
                == "new"
            )
            dead.accepted(message.intake_key)
        # The dead worker's lease ran out; the other two sweep at the same moment.
        clock.advance(seconds=FAST.alive_seconds + 1)
        taken = at_once(*(partial(sweeper.claim_orphans, clock()) for sweeper in sweepers))
        claimed = [keys for keys in taken if isinstance(keys, frozenset)]
        assert len(claimed) == 2 and not claimed[0] & claimed[1]
        assert len(claimed[0] | claimed[1]) == 40
        # Taken: the owner is alive now, so nobody takes them again.
        assert sweepers[0].claim_orphans(clock()) == frozenset()
        assert sweepers[1].claim_orphans(clock()) == frozenset()
    finally:
        for db in dbs:
            db.close()
