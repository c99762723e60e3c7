"""Pushes across workers, probed where protocol 2's acknowledged delivery could break: a tab on
worker A that stopped reading (its socket full) while its reminder fires on worker B, and one
client's two tabs on two workers acknowledging one push. Real processes on a real PostgreSQL
(``tests/worker_pool.py``), real ``websockets`` clients."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
from pathlib import Path
from typing import Any

import pytest
from e2e_daemon import GATEWAY_TOKEN
from websockets.asyncio.client import connect
from worker_pool import Client, Worker, make_worker, rows, start_all, worker_config

pytestmark = pytest.mark.processes

OFFLINE = {"provider": "offline"}


async def _two(tmp_path: Path, url: str, pool: list[Worker]) -> tuple[Worker, Worker]:
    config = worker_config(tmp_path / "w", llm=OFFLINE)
    a = make_worker("A", config, tmp_path, url)
    b = make_worker("B", config, tmp_path / "b", url)
    pool += [a, b]
    await start_all([a, b])
    return a, b


async def _stalled_tab(worker: Worker, client_id: str) -> Any:
    """A protocol 2 connection whose reader takes one frame and then waits (``max_queue=1``
    stops websockets reading the socket) on a socket with a small receive buffer: what the
    server writes to it piles up in the server's buffer once the frames below stop it."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", worker.gateway_port))
    ws = await connect(worker.ws_url, sock=sock, max_queue=1, close_timeout=0, open_timeout=20)
    await ws.send(
        json.dumps({"type": "hello", "token": GATEWAY_TOKEN, "client_id": client_id, "protocol": 2})
    )
    ready = json.loads(await ws.recv())
    assert ready["type"] == "ready", ready
    return ws


def _pushes(url: str, chat: str) -> list[tuple[Any, ...]]:
    return rows(
        url,
        "SELECT id, delivered_at IS NOT NULL FROM pushes WHERE chat_id = %s OR recipient = %s",
        chat,
        chat,
    )


async def test_a_stalled_tab_on_one_worker_holds_up_nothing_when_its_reminder_fires_on_the_other(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    a, b = await _two(tmp_path, postgres_url, pool)
    # What will fill the stalled tab's socket (and the kernel's buffers, some MiB on loopback):
    # long messages in its history.
    writer = Client("slowpoke")
    await writer.connect(a)
    for n in range(10):
        text = f"Note {n} I wrote down: " + "lorem ipsum " * 5000
        assert "Noted" in await writer.say(f"m0-{n}", text)
    assert "Reminder set" in await writer.say("m1", "remind me in 6 seconds to stretch")
    await writer.close()

    stalled = await _stalled_tab(a, "slowpoke")
    for n in range(12):  # ~600 KB each, never read
        await stalled.send(json.dumps({"type": "history", "id": f"h{n}", "limit": 20}))
    other = Client("other")
    await other.connect(a)

    # A is paused until B has fired the reminder and found nobody of slowpoke's there: the push
    # must cross to A, where the only connection of slowpoke reads nothing.
    await asyncio.sleep(1)  # A writes the history frames meanwhile, until its buffer is full
    os.kill(a.pid, signal.SIGSTOP)
    try:
        await b.daemon.wait_for("schedule.push_deferred")
    finally:
        os.kill(a.pid, signal.SIGCONT)

    # A's loop serves everyone else meanwhile: the push waits on the stalled tab alone (up to
    # the gateway's 10 s for a send), not on A.
    assert other.ws is not None
    async with asyncio.timeout(5):
        await (await other.ws.ping())
    assert "Noted" in await other.say("o1", "I like tea.")
    assert not a.daemon.seen("gateway.slow_client_dropped")
    await a.daemon.wait_for("gateway.slow_client_dropped")
    await stalled.close()
    # Not acknowledged, so not delivered: it waits for slowpoke's next hello.
    assert [delivered for _, delivered in _pushes(postgres_url, "slowpoke")] == [False]
    await other.close()

    back = Client("slowpoke")
    await back.connect(b)
    push = await back.until("push")
    assert push["text"] == "stretch", push
    await back.say("m2", "thanks")  # a barrier: the ack was handled before this reply
    await back.close()
    assert [delivered for _, delivered in _pushes(postgres_url, "slowpoke")] == [True]
    again = Client("slowpoke")
    await again.connect(a)
    await again.say("m3", "anything else?")
    await again.close()
    assert again.got("push") == []
    with_ids = [frame["id"] for frame in back.got("push")]
    assert len(with_ids) == 1


async def test_two_tabs_on_two_workers_acknowledging_one_push_have_it_delivered_once(
    tmp_path: Path, postgres_url: str, pool: list[Worker]
) -> None:
    a, b = await _two(tmp_path, postgres_url, pool)
    left, right = Client("desk"), Client("desk")  # one client's two tabs, one on each worker
    await left.connect(a)
    await right.connect(b)
    assert "Reminder set" in await left.say("m1", "remind me in 3 seconds to stretch")

    # The worker that delivers it sends it to the tab it holds (the other tab gets it only if
    # its own worker offers it before the first acknowledgement: sometimes, not always);
    # that tab acknowledges.
    got = await asyncio.wait(
        [asyncio.ensure_future(tab.until("push")) for tab in (left, right)],
        timeout=30,
        return_when=asyncio.FIRST_COMPLETED,
    )
    done, waiting = got
    assert done, "no tab got the push"
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    pushes = [frame for tab in (left, right) for frame in tab.got("push")]
    push_id = pushes[0]["id"]
    # Barriers on both tabs: a turn each, answered after their ack (if any) was handled.
    for n, tab in enumerate((left, right)):
        if tab.ws is None or tab.ws.close_code is not None:
            await tab.connect(a if tab is left else b)
        await tab.say(f"b{n}", "ok")
    assert [delivered for _, delivered in _pushes(postgres_url, "desk")] == [True]

    # Both tabs reload: the push is not sent again to either, and both histories show it once.
    for n, (tab, worker) in enumerate(((left, b), (right, a))):
        await tab.close()
        await tab.connect(worker)
        await tab.say(f"after{n}", "and now?")
        assert tab.ws is not None
        await tab.ws.send(json.dumps({"type": "history", "id": "h", "limit": 50}))
        history = await tab.until("history", "h")
        shown = [entry for entry in history["messages"] if entry.get("role") == "push"]
        assert [entry["id"] for entry in shown] == [push_id], history
        await tab.close()
    every = [frame["id"] for tab in (left, right) for frame in tab.got("push")]
    # Once per tab at most: never twice to one tab, and never again after the acknowledgement.
    assert every.count(push_id) == len(every) and 1 <= len(every) <= 2, every
