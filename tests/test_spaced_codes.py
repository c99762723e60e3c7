"""A code written in spaced digits ('my PIN is 4 8 2 1'): before version 3 of the credential
gate only its first digits were removed, and 'PIN 4 8 2 1' kept whole; now none of it is kept,
and rows an older gate stored are redacted whole by the start's pass."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from e2e_daemon import free_port
from gateway_daemon import offline_settings, say, serving_daemon
from test_daemon_redaction import NOW, _start_and_stop

from flynn.app import database_path
from flynn.daemon import Daemon
from flynn.memory.stores import SqliteMemory
from flynn.schedule.migrations import SCHEMA
from flynn.settings import load_settings

SAID = ("my PIN is 4 8 2 1", "the alarm code is 9 3 7 5", "PIN 6 0 2 8 for the bike lock")


async def test_no_digit_of_a_spaced_code_is_stored(tmp_path: Path) -> None:
    """Before: stored as 'my PIN is [secret removed] 8 2 1' (three of its four digits), 'the
    alarm code is [secret removed] 3 7 5' and 'PIN 6 0 2 8 for the bike lock'."""
    port = free_port()
    settings = offline_settings(tmp_path / "data", port)
    async with serving_daemon(Daemon(settings, {}, announce=lambda _: None)):
        replies = [await say(port, "tab", text) for text in SAID]

    assert all("I don't keep passwords" in reply["text"] for reply in replies), replies
    with sqlite3.connect(database_path(settings)) as db:
        dump = "\n".join(db.iterdump())
    for digits in ("8 2 1", "3 7 5", "6 0 2 8"):
        assert digits not in dump


async def test_a_row_an_older_gate_cut_short_is_redacted_whole_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = database_path(load_settings({"data_dir": str(tmp_path / "data")}))
    with monkeypatch.context() as older, SqliteMemory.open(path, SCHEMA) as memory:
        older.setattr("flynn.memory.history.redact", lambda text: (text, 0))
        for text in ("my PIN is [secret removed] 8 2 1", "PIN 6 0 2 8 for the bike lock"):
            memory.history.append("cli:ana", "user", "user", text, tokens=5, now=NOW)

    logs = await _start_and_stop(tmp_path)

    (finished,) = [e for e in logs if e["event"] == "redaction.finished"]
    assert finished["changed"] == {"messages": 2}
    with SqliteMemory.open(path, SCHEMA) as memory:
        rows = memory.db.fetchall("SELECT content FROM messages ORDER BY id")
    assert [row["content"] for row in rows] == [
        "my PIN is [secret removed]",
        "PIN [secret removed] for the bike lock",
    ]
