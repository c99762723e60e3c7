"""The daemon in-process: start order, SIGTERM-style stop with a turn in flight, notify
datagrams, and the port-in-use exit."""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import subprocess
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest
import structlog
from fakes.gated_provider import GatedProvider
from websockets.asyncio.client import connect

from evals.scripted_provider import ScriptedProvider
from flynn.app import database_path
from flynn.daemon import Daemon, PortInUse
from flynn.errors import ConfigError, ConfigProblem, StoreError
from flynn.memory.health import StorageHealth
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import Embedder
from flynn.providers.base import TASKS, Provider, Task
from flynn.recall.embeddings import load_embedder
from flynn.schedule.migrations import SCHEMA
from flynn.settings import EmbeddingModel, load_settings
from flynn.systemd import SystemdNotifier

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


def _settings(tmp_path: Path, port: int = 0):  # type: ignore[no-untyped-def]
    return load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "channels": {"gateway": {"port": port, "token": "secret-token-for-tests"}},
        }
    )


async def test_stop_finishes_the_turn_in_flight_then_shuts_down_in_order(tmp_path: Path) -> None:
    provider = GatedProvider()
    providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)
    notify_path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as notify:
        notify.bind(str(notify_path))
        notify.setblocking(False)
        lines: list[str] = []
        daemon = Daemon(
            _settings(tmp_path),
            {},
            notifier=SystemdNotifier(str(notify_path)),
            providers=providers,
            announce=lines.append,
        )
        stop = asyncio.Event()
        with structlog.testing.capture_logs() as logs:
            running = asyncio.create_task(daemon.run(stop))
            await asyncio.wait_for(daemon.ready.wait(), 10)
            # What start-up allocated is out of the collector's sight while it serves.
            assert gc.get_freeze_count() > 0
            port = daemon.service.channels["gateway"].bound_port  # type: ignore[attr-defined]
            async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
                hello = {"type": "hello", "token": "secret-token-for-tests", "client_id": "t"}
                await ws.send(json.dumps(hello))
                assert json.loads(await ws.recv())["type"] == "ready"
                await ws.send(json.dumps({"type": "message", "id": "1", "text": "finish me"}))
                await asyncio.wait_for(provider.entered.wait(), 10)
                stop.set()  # what SIGTERM does
                await asyncio.sleep(0)
                provider.gate.set()
                frames = []
                async with asyncio.timeout(10):
                    while not frames or frames[-1]["type"] != "reply":
                        frames.append(json.loads(await ws.recv()))
                assert frames[-1] == {
                    "type": "reply",
                    "id": "1",
                    "text": "re: finish me",
                    "html": "<p>re: finish me</p>\n",
                }
            assert await asyncio.wait_for(running, 10) == 0
            assert gc.get_freeze_count() == 0
        datagrams = [notify.recv(64), notify.recv(64)]

    events = [entry["event"] for entry in logs if entry["event"].startswith("daemon.")]
    assert events == [
        "daemon.ready",
        "daemon.stopping",
        "daemon.drained",
        "daemon.channels_stopped",
        "daemon.stopped",
    ]
    assert datagrams == [b"READY=1", b"STOPPING=1"]
    assert daemon.app is not None
    with pytest.raises(StoreError):
        daemon.app.memory.history.recent("gateway:t")  # the database was closed last
    assert lines and "secret-token-for-tests" not in lines[0]  # configured tokens are not announced


async def test_a_taken_port_is_port_in_use(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        daemon = Daemon(_settings(tmp_path, port), {}, providers=None, announce=lambda _: None)
        with pytest.raises(PortInUse):
            await asyncio.wait_for(daemon.run(asyncio.Event()), 10)


def test_the_cli_exits_3_when_the_port_is_taken(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "-m", "flynn", "run"],
            env={
                "HOME": str(tmp_path),
                "PATH": "/usr/bin:/bin",
                "FLYNN_CHANNELS__GATEWAY__PORT": str(port),
            },
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert result.returncode == 3, result.stderr
    assert "in use" in result.stderr


async def _say(port: int, text: str) -> dict[str, object]:
    """One message over the gateway; its reply frame."""
    async with connect(f"ws://127.0.0.1:{port}/ws") as ws:
        hello = {"type": "hello", "token": "secret-token-for-tests", "client_id": "t"}
        await ws.send(json.dumps(hello))
        assert json.loads(await ws.recv())["type"] == "ready"
        await ws.send(json.dumps({"type": "message", "id": "1", "text": text}))
        async with asyncio.timeout(10):
            while (frame := json.loads(await ws.recv()))["type"] != "reply":
                pass
    return frame  # type: ignore[no-any-return]


async def test_replies_while_the_model_loads_then_embeds_what_was_stored(tmp_path: Path) -> None:
    # Embeddings are on by default. The model loads in a thread, after the daemon serves:
    # here it waits until the test lets it, and a message is answered meanwhile (by words).
    settings = _settings(tmp_path)
    settings.data_dir.mkdir(parents=True)
    with SqliteMemory.open(database_path(settings), SCHEMA) as memory:
        memory.history.append("gateway:q", "quiet", "user", "an old note", tokens=2, now=NOW)
        for index in range(2):
            memory.history.append("gateway:t", "user", "user", f"note {index}", tokens=2, now=NOW)
    loading, release = threading.Event(), threading.Event()

    def load(model: EmbeddingModel) -> Embedder:
        loading.set()
        release.wait(10)
        return load_embedder(model)

    providers: dict[Task, Provider] = dict.fromkeys(TASKS, ScriptedProvider(default="noted"))
    daemon = Daemon(settings, {}, providers=providers, announce=lambda _: None, embedder=load)
    stop = asyncio.Event()
    with structlog.testing.capture_logs() as logs:
        running = asyncio.create_task(daemon.run(stop))
        await asyncio.wait_for(daemon.ready.wait(), 10)
        assert await asyncio.to_thread(loading.wait, 10)
        assert daemon.service is not None
        port = daemon.service.channels["gateway"].bound_port  # type: ignore[attr-defined]
        assert (await _say(port, "the dentist moved to Friday"))["text"] == "noted"
        assert daemon.app is not None and daemon.app.embeddings is not None
        assert not daemon.app.embeddings.ready and not daemon.caught_up.is_set()
        release.set()
        await asyncio.wait_for(daemon.caught_up.wait(), 30)
        stop.set()
        assert await asyncio.wait_for(running, 10) == 0
    # The most recently active person first; the turn answered during the load is caught up.
    caught_up = [
        (e["person"], e["messages"]) for e in logs if e["event"] == "memory.embeddings_caught_up"
    ]
    assert caught_up == [("user", 4), ("quiet", 1)]
    with SqliteMemory.open(database_path(settings), SCHEMA) as memory:
        counts = memory.db.fetchone(
            "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM embeddings)"
        )
        assert counts is not None and tuple(counts) == (5, 5)


async def test_a_model_that_cannot_load_leaves_recall_by_words(tmp_path: Path) -> None:
    def damaged(model: EmbeddingModel) -> Embedder:
        raise ConfigError([ConfigProblem("memory.embeddings", "model.safetensors is damaged")])

    providers: dict[Task, Provider] = dict.fromkeys(TASKS, ScriptedProvider(default="noted"))
    daemon = Daemon(
        _settings(tmp_path), {}, providers=providers, announce=lambda _: None, embedder=damaged
    )
    stop = asyncio.Event()
    with structlog.testing.capture_logs() as logs:
        running = asyncio.create_task(daemon.run(stop))
        await asyncio.wait_for(daemon.ready.wait(), 10)
        await asyncio.wait_for(daemon.caught_up.wait(), 10)
        assert daemon.service is not None
        port = daemon.service.channels["gateway"].bound_port  # type: ignore[attr-defined]
        assert (await _say(port, "still there?"))["text"] == "noted"
        stop.set()
        assert await asyncio.wait_for(running, 10) == 0
    (warning,) = [e for e in logs if e["event"] == "memory.embeddings_unavailable"]
    assert warning["log_level"] == "warning" and "damaged" in warning["problem"]
    assert "memory.embeddings: off" in warning["fix"]
    assert daemon.app is not None
    with SqliteMemory.open(database_path(_settings(tmp_path)), SCHEMA) as memory:
        counts = memory.db.fetchone(
            "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM embeddings)"
        )
        assert counts is not None and tuple(counts) == (2, 0)


async def test_readyz_says_not_ready_when_the_database_takes_no_writes(tmp_path: Path) -> None:
    provider = GatedProvider()
    providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)
    daemon = Daemon(_settings(tmp_path), {}, providers=providers, announce=lambda _: None)
    stop = asyncio.Event()
    running = asyncio.create_task(daemon.run(stop))
    try:
        await asyncio.wait_for(daemon.ready.wait(), 10)
        assert daemon.service is not None
        switchboard = daemon.service.switchboard
        healthy = switchboard.readiness()
        assert healthy["ready"] is True
        assert healthy["storage"]["ok"] is True
        assert daemon.app is not None
        # What a read-only or failing disk does to every write (root ignores file modes).
        daemon.app.memory.db.execute("PRAGMA query_only = ON")
        switchboard._storage = StorageHealth(daemon.app.memory.db)  # no cached answer
        broken = switchboard.readiness()
        assert broken["ready"] is False
        assert broken["storage"]["ok"] is False
        assert "cannot be written" in broken["storage"]["detail"]
        daemon.app.memory.db.execute("PRAGMA query_only = OFF")
    finally:
        stop.set()
        provider.gate.set()
        assert await asyncio.wait_for(running, 10) == 0
