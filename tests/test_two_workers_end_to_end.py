"""Two ``flynn run`` workers on one PostgreSQL, as a team runs them (issue 26): real processes,
real websockets clients spread across both, Telegram's webhook posts landing on either, one of
them killed with SIGKILL mid-turn; every check made from outside (the frames clients read, the
Bot API calls) and in the database (each accepted message answered and delivered once).

Each test starts processes (``pytest -m processes`` selects them, ``-m 'not processes'`` leaves
them out)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import httpx
import pytest
from fakes import FakeOpenAI, Reply
from fakes.fake_telegram import OWNER_ID, TOKEN, FakeTelegram
from fakes.http_server import RecordedRequest
from worker_pool import (
    Client,
    Worker,
    background_reply,
    make_worker,
    model_config,
    rows,
    start_all,
    worker_config,
)

from flynn.channels.telegram_webhook import SECRET_HEADER, webhook_secret
from flynn.settings import TelegramSettings

pytestmark = pytest.mark.processes

OFFLINE = {"provider": "offline"}
"""Flynn's own model without a network: it answers from memory and sets reminders itself."""
WEBHOOK_URL = "https://bot.example.com/telegram"


async def _two(
    tmp_path: Path, url: str, pool: list[Worker], telegram: dict[str, object] | None = None
) -> tuple[Worker, Worker]:
    """Two workers with Flynn's offline model, started and ready."""
    config = worker_config(tmp_path / "w", llm=OFFLINE, telegram=telegram)
    first = make_worker("A", config, tmp_path, url)
    second = make_worker("B", config, tmp_path / "b", url)
    pool += [first, second]
    await start_all([first, second], connected=("telegram.started",) if telegram else ())
    return first, second


async def test_a_fact_told_to_one_worker_is_recalled_through_the_other(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    a, b = await _two(tmp_path, postgres_url, pool)
    laptop, phone = Client("laptop"), Client("phone")
    await laptop.connect(a)
    await phone.connect(b)
    assert "Noted" in await laptop.say("m1", "I live in Lisbon.")
    assert "Lisbon" in await phone.say("m1", "where do I live?")
    assert "Lisbon" not in await phone.say("m2", "what is the capital of the moon?")
    # Each worker has recorded the acknowledgements it was sent before the database is read.
    await asyncio.gather(laptop.settle(), phone.settle())
    await laptop.close()
    await phone.close()

    # Each worker ran its own client's turns, and kept what it heard where the other reads it.
    told = rows(
        postgres_url,
        "SELECT session, role FROM messages WHERE content = 'I live in Lisbon.' ORDER BY id",
    )
    assert told == [("gateway:laptop", "user")]
    assert rows(postgres_url, "SELECT count(*) FROM intake WHERE state <> 'delivered'") == [(0,)]


async def test_a_reminder_set_on_one_worker_is_delivered_once_to_a_client_on_the_other(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    a, b = await _two(tmp_path, postgres_url, pool)
    desk = Client("desk")  # the browser tab that stays open, behind the balancer on B
    await desk.connect(b)
    tab = Client("desk")  # a second tab of the same client, which landed on A
    await tab.connect(a)
    assert "Reminder set" in await tab.say("m1", "remind me in 3 seconds to stretch")
    await tab.close()

    # B is paused until A has fired the reminder and found nobody of it connected there: the
    # push must cross from the worker that fired it to the one holding the connection.
    os.kill(b.pid, signal.SIGSTOP)
    try:
        await a.daemon.wait_for("schedule.push_deferred")
    finally:
        os.kill(b.pid, signal.SIGCONT)
    # B would find it by itself only at its scheduler's next look, 30 s after its start
    # (``SchedulerConfig.retry_seconds``): told by A, it sends it at once.
    async with asyncio.timeout(10):
        push = await desk.until("push")
    assert (push["kind"], push["text"]) == ("reminder", "stretch")
    # Barriers: a turn on B after the acknowledgement, and a new connection to A, which would
    # be sent anything still waiting for the desk before its first reply.
    await desk.say("m2", "thanks")
    await desk.close()
    await desk.connect(a)
    await desk.say("m3", "and one more thing")
    await desk.close()

    assert len(desk.got("push")) == 1
    pushes = rows(
        postgres_url,
        "SELECT id, chat_id, delivered_at IS NOT NULL FROM pushes WHERE kind = 'reminder'",
    )
    assert pushes == [(int(push["id"][1:]), "desk", True)]


# -- kill -9 mid-turn --------------------------------------------------------------------------

CLIENTS = 20


def _is_turn(request: RecordedRequest, model: FakeOpenAI) -> bool:
    return model.last_user_text(request).startswith("turn ")


async def test_kill_9_of_a_worker_mid_turn_under_20_clients_loses_and_doubles_nothing(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    held = asyncio.Event()  # never set: A's turns hang in its model until A dies
    entered = asyncio.Event()
    arrived: list[str] = []

    async with FakeOpenAI() as slow, FakeOpenAI() as quick:

        def hold(request: RecordedRequest) -> Reply:
            if not _is_turn(request, slow):
                return background_reply(request)
            arrived.append(slow.last_user_text(request))
            if len(arrived) == CLIENTS // 2:
                entered.set()
            return Reply("never finished", hold=held)

        def answer(request: RecordedRequest) -> Reply:
            if not _is_turn(request, quick):
                return background_reply(request)
            return Reply(f"re: {quick.last_user_text(request)}")

        slow.responder, quick.responder = hold, answer
        a = make_worker(
            "A", worker_config(tmp_path / "a", llm=model_config(slow)), tmp_path, postgres_url
        )
        b = make_worker(
            "B", worker_config(tmp_path / "b", llm=model_config(quick)), tmp_path, postgres_url
        )
        pool += [a, b]
        await start_all([a, b])

        clients = [Client(f"c{index}") for index in range(CLIENTS)]
        on_a, on_b = clients[0::2], clients[1::2]
        await asyncio.gather(*(c.connect(a) for c in on_a), *(c.connect(b) for c in on_b))
        for client in clients:
            await client.send("m1", f"turn 1 from {client.client_id}")
        answered_on_b = await asyncio.gather(*(c.until("reply", "m1") for c in on_b))
        assert [r["text"] for r in answered_on_b] == [
            f"re: turn 1 from {c.client_id}" for c in on_b
        ]
        async with asyncio.timeout(60):
            await entered.wait()  # every turn of A's clients is inside A's model call

        a.kill9()
        async with asyncio.timeout(20):
            assert a.daemon.process is not None
            await a.daemon.process.wait()
        # The dead worker's clients come back through the balancer, to B, and send again what
        # was not answered, as the web page does; B's own clients go on talking meanwhile.
        for client in on_a:
            client.ws = None
        await asyncio.gather(*(c.connect(b) for c in on_a))
        for client in on_a:
            await client.send("m1", f"turn 1 from {client.client_id}")
        for client in on_b:
            await client.send("m2", f"turn 2 from {client.client_id}")
        taken_over = await asyncio.gather(*(c.until("reply", "m1") for c in on_a))
        await asyncio.gather(*(c.until("reply", "m2") for c in on_b))
        # A barrier per client: a further turn, answered after anything still owed to it, and
        # its acknowledgement recorded (read at once after the last reply, the database could
        # still say ``answered`` for a reply the client had, and had acknowledged).
        await asyncio.gather(*(c.say("m3", f"turn 3 from {c.client_id}") for c in clients))
        await asyncio.gather(*(c.settle() for c in clients))
        await asyncio.gather(*(c.close() for c in clients))

    assert [r["text"] for r in taken_over] == [f"re: turn 1 from {c.client_id}" for c in on_a]
    for client in clients:
        replies = [frame["id"] for frame in client.got("reply")]
        assert sorted(replies) == (["m1", "m3"] if client in on_a else ["m1", "m2", "m3"])
    accepted = rows(
        postgres_url,
        "SELECT chat_id, message_id, state FROM intake WHERE channel = 'gateway' ORDER BY id",
    )
    expected = {(c.client_id, "m1") for c in clients} | {(c.client_id, "m3") for c in clients}
    expected |= {(c.client_id, "m2") for c in on_b}
    assert sorted((chat, message) for chat, message, _ in accepted) == sorted(expected)
    assert {state for _, _, state in accepted} == {"delivered"}
    # The conversations: each message once, each answer once, in order.
    said = rows(
        postgres_url,
        "SELECT session, role, content FROM messages WHERE session LIKE %s ORDER BY id",
        "gateway:c%",
    )
    for client in clients:
        turns = [1, 3] if client in on_a else [1, 2, 3]
        mine = [
            (role, text) for session, role, text in said if session == f"gateway:{client.client_id}"
        ]
        assert mine == [
            pair
            for turn in turns
            for pair in (
                ("user", f"turn {turn} from {client.client_id}"),
                ("assistant", f"re: turn {turn} from {client.client_id}"),
            )
        ], (client.client_id, mine)


# -- Telegram by webhook -----------------------------------------------------------------------

UPDATES = 8


async def test_telegram_webhook_updates_spread_across_both_workers_are_each_answered_once(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    async with FakeTelegram() as telegram:
        section = {
            "enabled": True,
            "token": TOKEN,
            "base_url": telegram.base_url,
            "allowed_users": [OWNER_ID],
            "webhook_url": WEBHOOK_URL,
        }
        a, b = await _two(tmp_path, postgres_url, pool, section)
        secret = webhook_secret(TelegramSettings(token=TOKEN))  # type: ignore[arg-type]
        posted: list[str] = []
        async with (
            httpx.AsyncClient(headers={SECRET_HEADER: secret}, timeout=30) as http,
        ):
            for index in range(UPDATES):
                text = f"note {index} by webhook"
                update = telegram.update_body(telegram.queue_private(text))
                first, other = (a, b) if index % 2 == 0 else (b, a)
                # Telegram's retry of the same update (it saw no answer in time) lands on the
                # other worker behind the balancer: both posts at once. The one that finds the
                # other in hand is told 503, and Telegram posts it again later: then 200.
                urls = [f"http://127.0.0.1:{w.webhook_port}/telegram" for w in (first, other)]
                answers = await asyncio.gather(*(http.post(url, json=update) for url in urls))
                assert sorted(answer.status_code for answer in answers) in ([200, 200], [200, 503])
                for url, answer in zip(urls, answers, strict=True):
                    if answer.status_code == 503:
                        assert (await http.post(url, json=update)).status_code == 200
                posted.append(text)
            await telegram.wait_for_sent(UPDATES)
        # A drain of both is the barrier: whatever either still had to send, it sent.
        assert await asyncio.gather(a.daemon.stop(), b.daemon.stop()) == [0, 0]

    answers = [message.text for message in telegram.sent]
    assert len(answers) == UPDATES, answers
    for text in posted:
        assert sum(text in answer for answer in answers) == 1, (text, answers)
    assert telegram.calls_to("getUpdates") == []
    handled = [len(worker.daemon.seen("turn.completed")) for worker in (a, b)]
    assert all(handled), handled  # both workers answered some
    intake = rows(
        postgres_url,
        "SELECT count(*), count(DISTINCT message_id) FROM intake WHERE channel = 'telegram'",
    )
    assert intake == [(UPDATES, UPDATES)]
    assert rows(
        postgres_url,
        "SELECT count(*) FROM intake WHERE channel = 'telegram' AND state <> 'delivered'",
    ) == [(0,)]
