"""Acknowledged delivery (gateway protocol 2), as people hit it: a phone that sleeps with the
page open stops reading, reminders fire into its dead socket, the connection is dropped with a
reset, and the page comes back; a reply made while the client was gone survives a restart.
A real ``flynn run`` process, a real websockets client, the database checked afterwards."""

from __future__ import annotations

import json
import socket
import sqlite3
import struct
from pathlib import Path

import yaml
from e2e_daemon import GATEWAY_TOKEN, Daemon, free_port, next_frame
from websockets.asyncio.client import ClientConnection, connect

REMINDERS = 5


def _config(tmp_path: Path) -> tuple[Path, int]:
    port = free_port()
    config = {
        "data_dir": str(tmp_path / "data"),
        "llm": {"provider": "offline"},
        "memory": {"user_namespace": "user"},
        "channels": {"gateway": {"host": "127.0.0.1", "port": port, "token": GATEWAY_TOKEN}},
        "logging": {"level": "info", "format": "json"},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, port


async def _hello(port: int, client_id: str = "phone") -> ClientConnection:
    ws = await connect(f"ws://127.0.0.1:{port}/ws", close_timeout=0)
    hello = {"type": "hello", "token": GATEWAY_TOKEN, "client_id": client_id, "protocol": 2}
    await ws.send(json.dumps(hello))
    ready = json.loads(await ws.recv())
    assert (ready["type"], ready["protocol"]) == ("ready", 2)
    return ws


def _reset(ws: ClientConnection) -> None:
    """Drops the connection as a phone losing its network does: a TCP reset, no close frame."""
    sock = ws.transport.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    ws.transport.abort()


def _database(tmp_path: Path) -> sqlite3.Connection:
    return sqlite3.connect(tmp_path / "data" / "flynn.db")


async def test_pushes_into_a_socket_that_stopped_reading_come_again_after_the_reset(
    tmp_path: Path,
) -> None:
    config, port = _config(tmp_path)
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        ws = await _hello(port)
        for number in range(REMINDERS):
            await ws.send(
                json.dumps(
                    {
                        "type": "message",
                        "id": f"m{number}",
                        "text": f"remind me in 2 seconds to stretch {number}",
                    }
                )
            )
            reply = await next_frame(ws, "reply")
            await ws.send(json.dumps({"type": "ack", "id": reply["id"]}))
        # The phone sleeps: nothing it is sent is read (or acknowledged) from now on.
        ws.transport.pause_reading()
        # Each fires and is written into the socket, awaiting an acknowledgement that never
        # comes (a push is offered again on later rounds: count each one once).
        written: set[str] = set()
        while len(written) < REMINDERS:
            sent = await daemon.wait_for("gateway.push_deferred")
            if sent["awaiting_ack"]:
                written.add(sent["push_id"])
        _reset(ws)

        ws = await _hello(port)  # the page comes back: everything, in order, same ids
        pushes = [await next_frame(ws, "push") for _ in range(REMINDERS)]
        assert [p["text"] for p in pushes] == [f"stretch {n}" for n in range(REMINDERS)]
        for push in pushes:
            await ws.send(json.dumps({"type": "ack", "id": push["id"]}))
        for _ in range(REMINDERS):
            await daemon.wait_for("schedule.push_acknowledged")
        await ws.close()

        ws = await _hello(port)  # acknowledged: never again
        await ws.send(json.dumps({"type": "command", "id": "c1", "name": "status"}))
        assert (await next_frame(ws, "reply"))["id"] == "c1"
        await ws.close()
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()
    with _database(tmp_path) as db:
        delivered, pending = db.execute(
            "SELECT count(delivered_at), count(*) - count(delivered_at) FROM pushes"
        ).fetchone()
    assert (delivered, pending) == (REMINDERS, 0)


async def test_a_reply_made_while_the_client_was_gone_survives_a_restart(tmp_path: Path) -> None:
    config, port = _config(tmp_path)
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        ws = await _hello(port)
        ws.transport.pause_reading()  # asleep as soon as it has asked
        await ws.send(json.dumps({"type": "message", "id": "q:1/ü", "text": "what is my name?"}))
        await daemon.wait_for("turn.completed")
        _reset(ws)
        assert await daemon.stop() == 0  # the reply was never acknowledged: kept in the database

        await daemon.start()
        ws = await _hello(port)
        reply = await next_frame(ws, "reply")
        assert reply["id"] == "q:1/ü"
        await ws.send(json.dumps({"type": "ack", "id": reply["id"]}))
        await daemon.wait_for("router.reply_acknowledged")
        await ws.close()
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()
    with _database(tmp_path) as db:
        states = db.execute("SELECT message_id, state FROM intake").fetchall()
    assert states == [("q:1/ü", "delivered")]


async def test_two_clients_whose_ids_join_alike_each_get_their_own_reply(tmp_path: Path) -> None:
    """``alice-laptop`` + ``x:1`` and ``alice-laptop:x`` + ``1`` used to be one intake key: one
    client got the other's reply, and the other message was never stored."""
    config, port = _config(tmp_path)
    daemon = Daemon(config, tmp_path)
    try:
        await daemon.start()
        first = await _hello(port, "alice-laptop")
        second = await _hello(port, "alice-laptop:x")
        await first.send(json.dumps({"type": "message", "id": "x:1", "text": "/status"}))
        await second.send(json.dumps({"type": "message", "id": "1", "text": "/help"}))
        one, two = await next_frame(first, "reply"), await next_frame(second, "reply")
        assert (one["id"], two["id"]) == ("x:1", "1")
        assert one["text"] != two["text"]  # each its own command's answer
        await first.close()
        await second.close()
        assert await daemon.stop() == 0
    finally:
        await daemon.kill()
    with _database(tmp_path) as db:
        rows = db.execute("SELECT chat_id, message_id FROM intake ORDER BY id").fetchall()
    assert rows == [("alice-laptop", "x:1"), ("alice-laptop:x", "1")]
