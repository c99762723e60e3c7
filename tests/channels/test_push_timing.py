"""Through the whole daemon: a reminder that fired while Flynn was down reaches the web chat (a
real websockets client) saying when it was due, in the zone the reminder was set in (not the
configured one), as text and as the push frame's own fields."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from gateway_harness import TOKEN, running_daemon
from websockets.asyncio.client import connect

from flynn.dates import local_when
from flynn.memory.database import Database
from flynn.schedule.jobs import Target
from flynn.schedule.migrations import SCHEMA
from flynn.schedule.sqlite import SqliteSchedule
from flynn.settings import load_settings


async def test_a_late_reminder_says_when_it_was_due_in_its_own_zone(tmp_path: Path) -> None:
    settings = load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "persona": {"timezone": "Europe/Lisbon"},
            "channels": {"gateway": {"host": "127.0.0.1", "port": 0, "token": TOKEN}},
        },
        env={},
    )
    (tmp_path / "data").mkdir(mode=0o700)
    due = datetime.now(UTC).replace(second=0, microsecond=0) - timedelta(hours=2)
    with Database.open(tmp_path / "data" / "flynn.db", SCHEMA) as db:
        SqliteSchedule(db).add(
            namespace="user",
            kind="reminder",
            text="take the pills",
            at=due,
            repeat=None,
            timezone="Asia/Tokyo",
            target=Target("gateway", "laptop"),
            now=due - timedelta(days=1),
        )

    async with running_daemon(settings) as port, connect(f"ws://127.0.0.1:{port}/ws") as ws:
        await ws.send(json.dumps({"type": "hello", "token": TOKEN, "client_id": "laptop"}))
        async with asyncio.timeout(10):
            assert json.loads(await ws.recv())["type"] == "ready"
            frame = json.loads(await ws.recv())

    when = local_when(due, "Asia/Tokyo")
    assert when.endswith("(Asia/Tokyo)")
    assert frame["type"] == "push" and frame["kind"] == "reminder"
    assert frame["text"] == f"take the pills\n(late: it was due {when}, while I was offline)"
    assert (frame["timezone"], frame["late"], frame["occurrences"]) == ("Asia/Tokyo", True, 1)
    assert datetime.fromisoformat(frame["due_at"]) == due
