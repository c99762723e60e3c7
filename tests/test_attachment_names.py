"""A file whose name is a credential (a key exported as ``<key>.txt``): the name is redacted
before it is kept on disk, told to the model or written to a row, like its content."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

from e2e_daemon import free_port
from gateway_daemon import TOKEN, offline_settings, serving_daemon
from websockets.asyncio.client import connect

from flynn.daemon import Daemon

KEY = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdEFGH"


async def test_a_files_name_that_is_a_credential_is_kept_nowhere(tmp_path: Path) -> None:
    """Before: the file was kept as ``data/user/files/<key>.txt``, and the memory page and the
    ``list_files`` tool named it."""
    port = free_port()
    settings = offline_settings(tmp_path / "data", port)
    notes = base64.b64encode(b"the boiler's service is due in May").decode()
    frames = []
    async with (
        serving_daemon(Daemon(settings, {}, announce=lambda _: None)),
        connect(f"ws://127.0.0.1:{port}/ws", max_size=None) as ws,
    ):
        await ws.send(json.dumps({"type": "hello", "token": TOKEN, "client_id": "tab"}))
        await ws.recv()
        for frame_id, name in (("first", f"{KEY}.txt"), ("second", f"notes-{KEY}")):
            attachment = {"name": name, "type": "text/plain", "data": notes}
            message = {"type": "message", "id": frame_id, "text": "my notes"}
            await ws.send(json.dumps({**message, "attachments": [attachment]}))
            while (frame := json.loads(await ws.recv()))["type"] not in ("reply", "error"):
                pass
            frames.append(frame)

    assert [frame["type"] for frame in frames] == ["reply", "reply"], frames
    kept = [p.name for p in (tmp_path / "data").rglob("*") if p.parent.name == "files"]
    assert len(kept) == 2, kept
    for path in (tmp_path / "data").rglob("*"):
        assert KEY not in path.name
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    with sqlite3.connect(tmp_path / "data" / "flynn.db") as db:
        dump = "\n".join(db.iterdump())
    assert KEY not in dump
    assert KEY not in json.dumps(frames)
