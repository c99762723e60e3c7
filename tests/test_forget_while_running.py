"""A person forgotten by another process (``flynn memory forget``) while the daemon runs: the
daemon's next recall, in its worker threads over their own connections and the vectors they
share, holds nothing of what was forgotten. A regression guard for recall off the event loop
(it passed before the fault-injection fixes too: the race it guards against is too narrow to
hit on demand, and ``tests/memory/test_vector_index.py`` proves that one step by step)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from fakes.embedder import HashingEmbedder
from websockets.asyncio.client import connect

from evals.scripted_provider import ScriptedProvider
from flynn.app import database_path
from flynn.daemon import Daemon
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import Embedder
from flynn.providers.base import TASKS, Provider, Task
from flynn.schedule.migrations import SCHEMA
from flynn.settings import EmbeddingModel, load_settings

TOKEN = "secret-token-for-tests"


async def _say(port: int, client: str, text: str) -> None:
    async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "token": TOKEN, "client_id": client}))
        assert json.loads(await ws.recv())["type"] == "ready"
        await ws.send(json.dumps({"type": "message", "id": "1", "text": text}))
        async with asyncio.timeout(10):
            while json.loads(await ws.recv())["type"] != "reply":
                pass


def _hashing(model: EmbeddingModel) -> Embedder:
    return HashingEmbedder()


async def test_what_another_process_forgot_is_not_recalled_by_the_running_daemon(
    tmp_path: Path,
) -> None:
    settings = load_settings(
        {"data_dir": str(tmp_path / "data"), "channels": {"gateway": {"port": 0, "token": TOKEN}}}
    )
    provider = ScriptedProvider(default="noted")
    providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)
    daemon = Daemon(settings, {}, providers=providers, announce=lambda _: None, embedder=_hashing)
    stop = asyncio.Event()
    running = asyncio.create_task(daemon.run(stop))
    try:
        await asyncio.wait_for(daemon.ready.wait(), 10)
        await asyncio.wait_for(daemon.caught_up.wait(), 30)
        assert daemon.service is not None
        port = daemon.service.channels["gateway"].bound_port  # type: ignore[attr-defined]
        await _say(port, "first", "My sister Lena moved to Porto for a robotics job.")
        await _say(port, "second", "Where did my sister Lena move to?")
        assert "Porto" in repr(provider.requests[-1])  # recalled from the first conversation

        with SqliteMemory.open(database_path(settings), SCHEMA) as other_process:
            assert other_process.forget_namespace("user")["messages"] > 0
        for client in ("third", "fourth"):  # each of the two recall threads, likely
            await _say(port, client, "Where did my sister Lena move to?")
            assert "Porto" not in repr(provider.requests[-1])
    finally:
        stop.set()
        assert await asyncio.wait_for(running, 10) == 0
