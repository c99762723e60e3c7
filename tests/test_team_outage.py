"""A PostgreSQL worker while its server is stopped and started again (``pg_ctl``, a cluster of
the test's own): the event loop keeps serving (``/healthz``, ``/readyz`` saying 503, pings), a
message sent meanwhile is refused with a clear error, a message accepted before the stop is
answered once after the start, and everything recovers without a restart of the worker. Real
processes (``tests/worker_pool.py``) and the real openai SDK against a fake model server."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from typing import Any

import pytest
from fakes import FakeOpenAI, Reply
from fakes.http_server import RecordedRequest
from postgres_server import PostgresServer
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

pytestmark = pytest.mark.processes

ANSWER_SECONDS = 5.0
"""How soon ``/readyz`` must say 503 after the server stopped, and any probe answer at all."""


def _get(worker: Worker, path: str) -> tuple[int, str]:
    """``GET path`` on the worker's gateway port: the status and body; -1 for no answer within
    ``ANSWER_SECONDS`` (or a refused or dropped connection)."""
    url = f"http://127.0.0.1:{worker.gateway_port}{path}"
    try:
        with urllib.request.urlopen(url, timeout=ANSWER_SECONDS) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except OSError as exc:
        return -1, repr(exc)


async def _until_status(worker: Worker, status: int, *, within: float) -> float:
    """Asks ``/readyz`` until it answers ``status``; how long that took. Every answer must come
    within ``ANSWER_SECONDS``."""
    started = time.monotonic()
    async with asyncio.timeout(within):
        while True:
            answer = await asyncio.to_thread(_get, worker, "/readyz")
            assert answer[0] != -1, answer
            if answer[0] == status:
                return time.monotonic() - started
            await asyncio.sleep(0.2)


async def _frames_until_replies(client: Client, *ids: str) -> list[dict[str, Any]]:
    """Reads (acknowledging what needs it) until a reply to each of ``ids`` came; every frame
    read but deltas."""
    assert client.ws is not None
    waiting, got = set(ids), []
    async with asyncio.timeout(90):
        while waiting:
            frame: dict[str, Any] = json.loads(await client.ws.recv())
            if frame["type"] in ("delta", "typing", "status"):
                continue
            got.append(frame)
            if frame["type"] in ("reply", "push", "error") and "id" in frame:
                await client.ws.send(json.dumps({"type": "ack", "id": frame["id"]}))
            if frame["type"] == "reply" and frame.get("code") is None:
                waiting.discard(frame.get("id", ""))
    return got


async def test_a_message_accepted_before_the_outage_is_answered_once_after_it(
    tmp_path: Any, own_server: PostgresServer, pool: list[Worker]
) -> None:
    server = own_server
    held, entered = asyncio.Event(), asyncio.Event()
    async with FakeOpenAI() as model:

        def respond(request: RecordedRequest) -> Reply:
            text = model.last_user_text(request)
            if text == "first question":
                entered.set()
                return Reply("first answer", hold=held)
            if text in ("second question", "after"):
                return Reply(f"re: {text}")
            return background_reply(request)

        model.responder = respond
        config = worker_config(tmp_path / "w", llm=model_config(model))
        worker = make_worker("1", config, tmp_path, server.url())
        pool.append(worker)
        await start_all([worker])
        desk, other = Client("desk"), Client("other")
        await desk.connect(worker)
        await other.connect(worker)

        await desk.send("m1", "first question")
        async with asyncio.timeout(60):
            await entered.wait()  # m1's turn is inside the model call
        await desk.send("m2", "second question")
        async with asyncio.timeout(30):  # m2 accepted: kept, queued behind m1
            while not rows(server.url(), "SELECT 1 FROM intake WHERE message_id = 'm2'"):  # noqa: ASYNC110
                await asyncio.sleep(0.1)

        server.stop()
        stopped = time.monotonic()
        held.set()  # m1's answer comes now, and cannot be stored
        # The loop serves: /healthz at once, /readyz 503 within seconds, pings, and a message
        # sent now is refused with a clear error (nothing of it kept), not met with silence.
        took = await _until_status(worker, 503, within=30)
        assert time.monotonic() - stopped < ANSWER_SECONDS, took
        assert (await asyncio.to_thread(_get, worker, "/healthz"))[0] == 200
        body = json.loads((await asyncio.to_thread(_get, worker, "/readyz"))[1])
        assert body["ready"] is False and body["storage"]["ok"] is False, body
        assert other.ws is not None
        async with asyncio.timeout(ANSWER_SECONDS):
            await (await other.ws.ping())
        await other.send("o1", "during")
        refused = await other.until("error", "o1")
        assert "database" in refused["message"], refused

        server.start()
        await _until_status(worker, 200, within=60)
        frames = await _frames_until_replies(desk, "m1", "m2")
        # The refused one, sent again now, is answered.
        await other.send("o1", "after")
        assert (await other.until("reply", "o1"))["text"] == "re: after"
        # The acknowledgements recorded before the states are read below.
        await asyncio.gather(desk.settle(), other.settle())
        await desk.close()
        await other.close()

    seen = [event.get("event") for event in worker.daemon.events]
    assert "router.turn_cut_off" in seen and "database.down" in seen, seen
    answers = [(f["id"], f["text"]) for f in frames if f["type"] == "reply" and not f.get("code")]
    assert answers == [("m1", "first answer"), ("m2", "re: second question")], frames
    said = rows(
        server.url(),
        "SELECT role, content FROM messages WHERE session = 'gateway:desk' ORDER BY id",
    )
    assert said == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
        ("assistant", "re: second question"),
    ]
    states = rows(
        server.url(),
        "SELECT message_id, state FROM intake WHERE chat_id IN ('desk', 'other') ORDER BY id",
    )
    assert states == [("m1", "delivered"), ("m2", "delivered"), ("o1", "delivered")]
