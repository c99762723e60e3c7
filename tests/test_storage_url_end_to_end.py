"""Flynn on PostgreSQL as a team runs it: real ``flynn run`` processes with ``FLYNN_STORAGE__URL``
(the config file holds no password), a real websockets client, the ``flynn`` command beside
them. What one is told is remembered after a restart, a reminder fires and is delivered,
``/readyz`` is ready, the commands read the same memory, nothing lands in ``data_dir``; two
workers on one database and one data dir both start, and share one gateway token."""

from __future__ import annotations

import asyncio
import json
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import psycopg
import yaml
from e2e_daemon import Daemon, free_port, run_flynn
from websockets.asyncio.client import ClientConnection, connect

from flynn.gateway_token import token_digest


def _config(tmp_path: Path) -> Path:
    config = {
        "data_dir": str(tmp_path / "data"),
        "llm": {"provider": "offline"},
        "memory": {"user_namespace": "user", "embeddings": False},
        "logging": {"level": "info", "format": "json"},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _env(url: str, port: int) -> dict[str, str]:
    return {"FLYNN_STORAGE__URL": url, "FLYNN_CHANNELS__GATEWAY__PORT": str(port)}


async def _hello(port: int, token: str, client_id: str = "laptop") -> ClientConnection:
    ws = await connect(f"ws://127.0.0.1:{port}/ws", close_timeout=0)
    hello = {"type": "hello", "token": token, "client_id": client_id, "protocol": 2}
    await ws.send(json.dumps(hello))
    answer = json.loads(await ws.recv())
    assert answer["type"] == "ready", answer
    return ws


async def _refused(port: int, token: str) -> bool:
    async with connect(f"ws://127.0.0.1:{port}/ws", close_timeout=0) as ws:
        await ws.send(json.dumps({"type": "hello", "token": token, "client_id": "stranger"}))
        answer = json.loads(await ws.recv())
        return answer["type"] == "error" and answer["code"] == "unauthorized"


async def _until(ws: ClientConnection, kind: str, frame_id: str | None = None) -> dict[str, Any]:
    async with asyncio.timeout(20):
        while True:
            frame: dict[str, Any] = json.loads(await ws.recv())
            if frame["type"] == kind and (frame_id is None or frame.get("id") == frame_id):
                return frame
            assert frame["type"] != "error", frame


async def _say(ws: ClientConnection, text: str) -> str:
    frame_id = uuid.uuid4().hex
    await ws.send(json.dumps({"type": "message", "id": frame_id, "text": text}))
    reply: str = (await _until(ws, "reply", frame_id))["text"]
    return reply


def _readyz(port: int) -> dict[str, Any]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=10) as response:
        status: dict[str, Any] = json.loads(response.read())
        return status


async def _rotated(tmp_path: Path, config: Path, url: str) -> str:
    done = await run_flynn(
        "gateway", "token", "--rotate", "--config", str(config), home=tmp_path, env=_env(url, 0)
    )
    assert done.code == 0, done.stderr
    return done.stdout.strip()


async def test_a_worker_on_postgresql_remembers_reminds_and_is_read_by_the_commands(
    tmp_path: Path, postgres_url: str
) -> None:
    config, port = _config(tmp_path), free_port()
    daemon = Daemon(config, tmp_path, _env(postgres_url, port))
    try:
        await daemon.start()
        # The first start generated the token and kept its digest only: a new one, shown once.
        assert len(daemon.seen("gateway.token_generated")) == 1
        token = await _rotated(tmp_path, config, postgres_url)
        ws = await _hello(port, token)
        assert "Noted" in await _say(ws, "My name is Ana.")
        assert "Reminder set" in await _say(ws, "remind me in 1 second to stretch")
        push = await _until(ws, "push")
        assert (push["kind"], push["text"]) == ("reminder", "stretch")
        await ws.send(json.dumps({"type": "ack", "id": push["id"]}))
        status = await asyncio.to_thread(_readyz, port)
        assert status["ready"] is True and status["storage"]["ok"] is True
        await ws.close()
        assert await daemon.stop() == 0

        await daemon.start()  # a new process: what it knows comes from the database
        assert len(daemon.seen("gateway.token_generated")) == 1  # the kept one, not a new one
        ws = await _hello(port, token)
        assert "Ana" in await _say(ws, "what is my name?")
        await ws.send(json.dumps({"type": "memory", "id": "page-1", "op": "overview"}))
        page = json.dumps(await _until(ws, "memory"))
        assert "Ana" in page
        await ws.close()
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()

    env = _env(postgres_url, 0)
    shown = await run_flynn(
        "memory", "show", "--json", "--config", str(config), home=tmp_path, env=env
    )
    assert shown.code == 0, shown.stderr
    assert "Ana" in shown.stdout
    reminders = await run_flynn("reminders", "--config", str(config), home=tmp_path, env=env)
    assert reminders.code == 0, reminders.stderr
    assert "(distill) short" in reminders.stdout  # the daemon's jobs, read from the database
    assert "stretch" not in reminders.stdout  # the one-off reminder fired and is done
    assert not (tmp_path / "data" / "flynn.db").exists()
    assert not (tmp_path / "data" / "gateway-token").exists()
    with psycopg.connect(postgres_url) as connection:
        delivered = connection.execute("SELECT count(*) FROM pushes WHERE delivered_at IS NOT NULL")
        assert delivered.fetchone() == (1,)
        kept = connection.execute("SELECT digest FROM gateway_token").fetchall()
    assert kept == [(token_digest(token),)]


async def test_two_workers_on_one_database_and_one_data_dir_share_one_gateway_token(
    tmp_path: Path, postgres_url: str
) -> None:
    config = _config(tmp_path)
    ports = free_port(), free_port()
    workers = [Daemon(config, tmp_path, _env(postgres_url, port)) for port in ports]
    try:
        # Together, on one data dir: the data-dir lock would stop the second on SQLite.
        await asyncio.gather(*(worker.start() for worker in workers))
        generated = [len(worker.seen("gateway.token_generated")) for worker in workers]
        assert sorted(generated) == [0, 1]
        with psycopg.connect(postgres_url) as connection:
            (first,) = connection.execute("SELECT digest FROM gateway_token").fetchall()
        token = await _rotated(tmp_path, config, postgres_url)
        with psycopg.connect(postgres_url) as connection:
            (kept,) = connection.execute("SELECT digest FROM gateway_token").fetchall()
        assert kept != first and kept == (token_digest(token),)  # a digest, never the token
        for port in ports:  # each worker checks the kept digest at every hello
            ws = await _hello(port, token)
            await ws.close()
            assert await _refused(port, "not-the-token-at-all-" + "x" * 20)
        ws = await _hello(ports[0], token)
        assert "Noted" in await _say(ws, "I live in Lisbon.")
        await ws.close()
        ws = await _hello(ports[1], token, client_id="phone")
        assert "Lisbon" in await _say(ws, "where do I live?")
        await ws.close()
        codes = await asyncio.gather(*(worker.stop() for worker in workers))
        assert codes == [0, 0]
    finally:
        for worker in workers:
            await worker.kill()
