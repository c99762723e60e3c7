"""The daemon in-process: start order, SIGTERM-style stop with a turn in flight, notify
datagrams, and the port-in-use exit."""

from __future__ import annotations

import asyncio
import gc
import json
import socket
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
import structlog
from fakes.gated_provider import GatedProvider
from websockets.asyncio.client import connect

from flynn.app import database_path
from flynn.daemon import Daemon, PortInUse
from flynn.errors import StoreError
from flynn.memory.health import StorageHealth
from flynn.memory.stores import SqliteMemory
from flynn.providers.base import TASKS, Provider, Task
from flynn.schedule.migrations import SCHEMA
from flynn.settings import load_settings
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


async def test_messages_stored_without_vectors_are_embedded_after_start(tmp_path: Path) -> None:
    pytest.importorskip("wordllama")
    plain = _settings(tmp_path)
    plain.data_dir.mkdir(parents=True)
    with SqliteMemory.open(database_path(plain), SCHEMA) as memory:
        for index in range(3):
            memory.history.append("gateway:t", "user", "user", f"note {index}", tokens=2, now=NOW)
    embedding = load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "channels": {"gateway": {"port": 0, "token": "secret-token-for-tests"}},
            "memory": {"embeddings": True, "embeddings_model": "wordllama"},
        }
    )
    daemon = Daemon(embedding, {}, providers=None, announce=lambda _: None)
    stop = asyncio.Event()
    with structlog.testing.capture_logs() as logs:
        running = asyncio.create_task(daemon.run(stop))
        await asyncio.wait_for(daemon.ready.wait(), 10)
        assert daemon.app is not None
        # Joins the catch-up the daemon began at start (or finds nothing left to do).
        await asyncio.wait_for(daemon.app.services.learning.writer.embed_missing(None), 10)
        stop.set()
        assert await asyncio.wait_for(running, 10) == 0
    assert [e["messages"] for e in logs if e["event"] == "memory.embeddings_caught_up"] == [3]
    with SqliteMemory.open(database_path(plain), SCHEMA) as memory:
        count = memory.db.fetchone("SELECT count(*) FROM embeddings")
        assert count is not None and count[0] == 3


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
