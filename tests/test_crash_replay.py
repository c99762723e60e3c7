"""Fault injection: ``kill -9`` of a real daemon while 20 gateway clients wait for replies from a
slow model, several times over. After the last restart every message is stored once and answered
once: turns that were running or queued are replayed, replies wait for their client's hello, and
a client resending an id it got no reply for joins the pending turn or gets the stored reply."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port
from fakes import FakeOpenAI, Reply
from fakes.http_server import RecordedRequest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

CLIENTS = 20
MESSAGES = 3
KILLS = int(os.environ.get("CRASH_KILLS", "2"))
"""kill -9s before the last start; the closing measurement ran with CRASH_KILLS=5."""


class Client:
    def __init__(self, port: int, name: str) -> None:
        self.port = port
        self.name = name
        self.replies: dict[str, list[str]] = {}
        self.ws: ClientConnection | None = None
        self.reader: asyncio.Task[None] | None = None
        self.changed = asyncio.Event()
        self.texts: dict[str, str] = {}
        self.retries: list[asyncio.TimerHandle] = []
        self.sending: set[asyncio.Future[None]] = set()

    async def connect(self) -> None:
        self.ws = await connect(f"ws://127.0.0.1:{self.port}/ws")
        await self.ws.send(
            json.dumps({"type": "hello", "token": GATEWAY_TOKEN, "client_id": self.name})
        )
        assert json.loads(await self.ws.recv())["type"] == "ready"
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.ws is not None
        async for raw in self.ws:
            frame: dict[str, Any] = json.loads(raw)
            if frame["type"] == "reply":
                self.replies.setdefault(frame["id"], []).append(frame["text"])
                self.changed.set()
            elif frame["type"] == "error" and frame.get("code") == "rate_limited":
                # "busy": not accepted; a client tries again a little later, as people do.
                self.retries.append(
                    asyncio.get_running_loop().call_later(0.2, self._retry, frame["id"])
                )

    def _retry(self, frame_id: str) -> None:
        if self.ws is not None and frame_id not in self.replies:
            task = asyncio.ensure_future(self.say(frame_id, self.texts[frame_id]))
            self.sending.add(task)
            task.add_done_callback(self.sending.discard)

    async def until(self, done: Callable[[], bool]) -> None:
        while not done():
            self.changed.clear()
            await self.changed.wait()

    async def say(self, frame_id: str, text: str) -> None:
        assert self.ws is not None
        self.texts[frame_id] = text
        with contextlib.suppress(ConnectionClosed):
            await self.ws.send(json.dumps({"type": "message", "id": frame_id, "text": text}))

    async def drop(self) -> None:
        for retry in self.retries:
            retry.cancel()
        if self.reader is not None:
            self.reader.cancel()
        if self.ws is not None:
            await self.ws.close()


async def test_kill_9_under_load_loses_no_accepted_message(tmp_path: Path) -> None:
    port = free_port()
    gate = asyncio.Event()
    async with FakeOpenAI() as model:

        def answer(request: RecordedRequest) -> Reply:
            if not request.json.get("tools"):  # extraction, compaction
                return Reply('{"profile": [], "actions": [], "observations": []}')
            said = model.last_user_text(request)
            return Reply(f"answer to {said}", hold=gate)

        model.responder = answer
        config = tmp_path / "config.yaml"
        config.write_text(
            yaml.safe_dump(
                {
                    "data_dir": str(tmp_path / "data"),
                    "llm": {
                        "provider": "openai",
                        "base_url": model.base_url,
                        "model": "slow-model",
                        "api_key": "sk-test",
                        "max_retries": 0,
                        "stream": True,
                        # The held streams wait on the test, not on a slow model.
                        "stream_idle_seconds": 600,
                    },
                    "memory": {"user_namespace": "user", "auto_extract": False},
                    "channels": {"gateway": {"port": port, "token": GATEWAY_TOKEN}},
                    "logging": {"level": "info", "format": "json"},
                }
            )
        )
        daemon = Daemon(config, tmp_path)
        clients = [Client(port, f"client-{n}") for n in range(CLIENTS)]
        sent: list[tuple[Client, str]] = []
        try:
            for kill in range(KILLS):
                gate.clear()
                asked = len(model.requests)
                await daemon.start()
                for client in clients:
                    await client.connect()
                for client in clients:
                    for number in range(MESSAGES):
                        frame_id = f"k{kill}-m{number}"
                        await client.say(frame_id, f"{client.name} {frame_id}")
                        sent.append((client, frame_id))
                # Every session's first turn is at the model, held; the rest are queued.
                await model.wait_for_requests(asked + CLIENTS)
                await daemon.kill()
                for client in clients:
                    await client.drop()

            gate.set()  # the model answers at once from now on
            await daemon.start()
            for client in clients:
                await client.connect()
                # A client cannot know what was accepted before the crash (protocol v1 has no
                # acknowledgement): it sends again what it got no reply for, with the same ids.
                for owner, frame_id in sent:
                    if owner is client and frame_id not in client.replies:
                        await client.say(frame_id, f"{client.name} {frame_id}")
            async with asyncio.timeout(60):
                for client in clients:
                    ids = [frame_id for owner, frame_id in sent if owner is client]
                    await client.until(lambda c=client, ids=ids: all(i in c.replies for i in ids))
            assert await daemon.stop() == 0
        finally:
            for client in clients:
                await client.drop()
            await daemon.kill()

    assert len(sent) == CLIENTS * MESSAGES * KILLS
    for client, frame_id in sent:
        assert client.replies[frame_id][0] == f"answer to {client.name} {frame_id}"
    # Each message was stored once and answered once, whatever was replayed or resent.
    db = sqlite3.connect(tmp_path / "data" / "flynn.db")
    for client in clients:
        rows = db.execute(
            "SELECT role, content FROM messages WHERE session = ? ORDER BY id",
            (f"gateway:{client.name}",),
        ).fetchall()
        asked = [content for role, content in rows if role == "user"]
        assert sorted(asked) == sorted(f"{client.name} {i}" for c, i in sent if c is client)
        answers = [content for role, content in rows if role == "assistant"]
        assert sorted(answers) == sorted(f"answer to {text}" for text in asked)
    accepted, answered = db.execute(
        "SELECT count(*), sum(state = 'delivered') FROM intake"
    ).fetchone()
    print(
        f"crash-replay: {KILLS} kills, {len(sent)} sent, {accepted} accepted, {answered} answered"
    )
    db.close()
