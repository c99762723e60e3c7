"""A daemon in this process serving the gateway, with a scripted provider and an embedder the
test chooses, and a client that says one message and waits for the turn's end: for tests of
what a turn does to memory, without a process of its own (``e2e_daemon`` runs one)."""

from __future__ import annotations

import asyncio
import http.client
import itertools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from websockets.asyncio.client import connect

from evals.scripted_provider import ScriptedProvider
from flynn.daemon import Daemon
from flynn.memory.vectors import Embedder
from flynn.providers.base import TASKS, Provider, Task
from flynn.settings import EmbeddingModel, Settings, load_settings

TOKEN = "secret-token-for-tests"
_FRAME_IDS = itertools.count(1)


def gateway_settings(data_dir: Path) -> Settings:
    """Defaults (embeddings on) with the gateway on a free port."""
    return load_settings(
        {"data_dir": str(data_dir), "channels": {"gateway": {"port": 0, "token": TOKEN}}}
    )


def offline_settings(data_dir: Path, port: int) -> Settings:
    """The offline provider (it answers from memory, no model), the owner's memory without
    embeddings, and the gateway on ``port`` of 127.0.0.1."""
    return load_settings(
        {
            "data_dir": str(data_dir),
            "llm": {"provider": "offline"},
            "memory": {"user_namespace": "user", "embeddings": False},
            "channels": {"gateway": {"host": "127.0.0.1", "port": port, "token": TOKEN}},
        }
    )


@asynccontextmanager
async def serving(
    settings: Settings, provider: ScriptedProvider, embedder: Embedder
) -> AsyncIterator[int]:
    """Runs the daemon until the block ends, yielding the gateway's port once it is ready and
    the catch-up after start is over; it must stop cleanly (exit 0)."""
    providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)

    def load(model: EmbeddingModel) -> Embedder:
        return embedder

    daemon = Daemon(settings, {}, providers=providers, announce=lambda _: None, embedder=load)
    async with serving_daemon(daemon):
        await asyncio.wait_for(daemon.caught_up.wait(), 30)
        assert daemon.service is not None
        yield daemon.service.channels["gateway"].bound_port  # type: ignore[attr-defined]


@asynccontextmanager
async def serving_daemon(daemon: Daemon) -> AsyncIterator[Daemon]:
    """``daemon`` running in-process, ready, until the block exits (then stopped, and it must
    exit 0)."""
    stop = asyncio.Event()
    running = asyncio.create_task(daemon.run(stop))
    try:
        await asyncio.wait_for(daemon.ready.wait(), 10)
        yield daemon
    finally:
        stop.set()
        assert await asyncio.wait_for(running, 20) == 0


def readyz(port: int) -> tuple[int, dict[str, Any]]:
    """``GET /readyz`` on the gateway at ``port``: its status and its JSON body."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        connection.request("GET", "/readyz")
        response = connection.getresponse()
        body: dict[str, Any] = json.loads(response.read())
        return response.status, body
    finally:
        connection.close()


async def say(port: int, client: str, text: str, *, token: str = TOKEN) -> dict[str, Any]:
    """Sends ``text`` as ``client`` (a frame id of its own: a client may say several) and
    returns the frame that ends its turn (``reply`` or ``error``)."""
    async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "token": token, "client_id": client}))
        assert json.loads(await ws.recv())["type"] == "ready"
        frame_id = f"m{next(_FRAME_IDS)}"
        await ws.send(json.dumps({"type": "message", "id": frame_id, "text": text}))
        async with asyncio.timeout(30):
            while True:
                frame: dict[str, Any] = json.loads(await ws.recv())
                if frame["type"] in ("reply", "error") and frame.get("id") == frame_id:
                    return frame
