"""Several ``flynn run`` workers on one PostgreSQL, for end-to-end tests: each a real process
(``e2e_daemon.Daemon``) with a data dir, a gateway port and a Telegram webhook port of its own,
the database URL in ``FLYNN_STORAGE__URL`` as ``flynn@.service`` gives it; websockets clients
that speak protocol 2 to whichever worker they are pointed at; and the database read afterwards
with psycopg, to count what the workers did."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port
from fakes import FakeOpenAI, Reply
from fakes.http_server import RecordedRequest
from websockets.asyncio.client import ClientConnection, connect


@dataclass
class Worker:
    """One ``flynn run`` process and the ports it listens on."""

    name: str
    daemon: Daemon
    gateway_port: int
    webhook_port: int

    @property
    def pid(self) -> int:
        process = self.daemon.process
        assert process is not None, f"{self.name} is not running"
        return process.pid

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.gateway_port}/ws"

    async def wait_ready(self) -> dict[str, Any]:
        """``/readyz`` answered 200 (every channel connected, the database writable)."""

        def ask() -> tuple[int, dict[str, Any]]:
            url = f"http://127.0.0.1:{self.gateway_port}/readyz"
            try:
                with urllib.request.urlopen(url, timeout=10) as response:
                    return response.status, json.loads(response.read())
            except urllib.error.HTTPError as exc:
                return exc.code, json.loads(exc.read() or b"{}")

        status, body = await asyncio.to_thread(ask)
        assert status == 200, (self.name, body)
        return body

    def kill9(self) -> None:
        """SIGKILL: no drain, no goodbye to the database; its connections just drop."""
        os.kill(self.pid, signal.SIGKILL)


def worker_config(
    directory: Path,
    *,
    llm: Mapping[str, Any],
    telegram: Mapping[str, Any] | None = None,
    memory: Mapping[str, Any] | None = None,
) -> Path:
    """A worker's config file (no database URL in it: that comes from the environment)."""
    directory.mkdir(parents=True, exist_ok=True)
    config: dict[str, Any] = {
        "data_dir": str(directory / "data"),
        "llm": dict(llm),
        "memory": {"user_namespace": "user", "embeddings": False, **(memory or {})},
        "channels": {
            "gateway": {"host": "127.0.0.1", "token": GATEWAY_TOKEN},
            **({"telegram": dict(telegram)} if telegram is not None else {}),
        },
        "logging": {"level": "info", "format": "json"},
    }
    path = directory / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def make_worker(
    name: str, config: Path, home: Path, url: str, env: Mapping[str, str] | None = None
) -> Worker:
    gateway_port, webhook_port = free_port(), free_port()
    environment = {
        "FLYNN_STORAGE__URL": url,
        "FLYNN_CHANNELS__GATEWAY__PORT": str(gateway_port),
        # As flynn@.service sets it per worker; ignored unless Telegram is in webhook mode.
        "FLYNN_CHANNELS__TELEGRAM__WEBHOOK_LISTEN": f"127.0.0.1:{webhook_port}",
        **(env or {}),
    }
    return Worker(name, Daemon(config, home, environment), gateway_port, webhook_port)


async def start_all(workers: list[Worker], *, connected: tuple[str, ...] = ()) -> None:
    """Starts them together (migrations race, as under systemd) and checks each /readyz, once
    each has logged the ``connected`` events (a channel that connects after the daemon's
    ``daemon.ready``, as Telegram does: ``telegram.started``)."""
    await asyncio.gather(*(worker.daemon.start() for worker in workers))
    for worker in workers:
        for event in connected:
            await worker.daemon.wait_for(event)
    await asyncio.gather(*(worker.wait_ready() for worker in workers))


@dataclass
class Client:
    """One person's device: a client id that speaks protocol 2, acknowledging every final
    frame it reads, and remembering every frame it got (across reconnections)."""

    client_id: str
    frames: list[dict[str, Any]] = field(default_factory=list)
    ws: ClientConnection | None = None

    async def connect(self, worker: Worker) -> dict[str, Any]:
        self.ws = await connect(worker.ws_url, close_timeout=0, open_timeout=20)
        hello = {
            "type": "hello",
            "token": GATEWAY_TOKEN,
            "client_id": self.client_id,
            "protocol": 2,
        }
        await self.ws.send(json.dumps(hello))
        ready: dict[str, Any] = json.loads(await self.ws.recv())
        assert ready["type"] == "ready", ready
        return ready

    async def send(self, frame_id: str, text: str) -> None:
        assert self.ws is not None
        await self.ws.send(json.dumps({"type": "message", "id": frame_id, "text": text}))

    async def until(self, kind: str, frame_id: str | None = None) -> dict[str, Any]:
        """Reads (acknowledging finals) until a frame of ``kind`` (with ``frame_id``) comes."""
        assert self.ws is not None
        async with asyncio.timeout(60):
            while True:
                frame: dict[str, Any] = json.loads(await self.ws.recv())
                if frame["type"] == "delta":
                    continue
                self.frames.append(frame)
                if frame["type"] in ("reply", "push", "error") and "id" in frame:
                    await self.ws.send(json.dumps({"type": "ack", "id": frame["id"]}))
                if frame["type"] == kind and (frame_id is None or frame.get("id") == frame_id):
                    return frame
                assert frame["type"] != "error", frame

    async def say(self, frame_id: str, text: str) -> str:
        await self.send(frame_id, text)
        reply: str = (await self.until("reply", frame_id))["text"]
        return reply

    async def settle(self) -> None:
        """A ``history`` request and its answer: a worker handles a connection's frames one at
        a time, each acknowledgement recorded in the database before the next frame is read,
        so once the answer comes every ``ack`` this client sent before it is recorded. (A
        reply read is acknowledged, but the worker may not have recorded it yet when a test
        closes the connection and reads the database.)"""
        assert self.ws is not None
        frame_id = f"settle-{len(self.frames)}"
        await self.ws.send(json.dumps({"type": "history", "id": frame_id, "limit": 1}))
        await self.until("history", frame_id)

    def got(self, kind: str, frame_id: str | None = None) -> list[dict[str, Any]]:
        return [
            frame
            for frame in self.frames
            if frame["type"] == kind and (frame_id is None or frame.get("id") == frame_id)
        ]

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
            self.ws = None


def model_config(model: FakeOpenAI) -> dict[str, object]:
    """A worker's ``llm`` settings for the fake model server ``model`` (the real openai SDK,
    streaming, no retries)."""
    return {
        "provider": "openai",
        "base_url": model.base_url,
        "model": "fake-model",
        "api_key": "sk-test",
        "max_retries": 0,
        "stream": True,
    }


def background_reply(request: RecordedRequest) -> Reply:
    """Learning and compaction calls (not turns): the shapes their parsers accept."""
    messages = request.json.get("messages", [])
    system = str(messages[0]["content"]) if messages and messages[0]["role"] == "system" else ""
    if "extract" in system.lower() and "json" in system.lower():
        return Reply('{"profile": [], "actions": [], "observations": []}')
    return Reply("noted")


def rows(url: str, query: str, *params: object) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as connection:
        return connection.execute(query, params).fetchall()  # type: ignore[arg-type]
