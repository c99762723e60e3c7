"""What version 3 of the credential gate removes (t-attack5): a code written in spaced digits
('my PIN is 4 8 2 1'; before, only its first digits were removed, and 'PIN 4 8 2 1' kept whole),
and Slack's and Discord's webhook URLs (kept whole before); rows an older gate stored are
redacted whole by the start's pass."""

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

SLACK = "https://hooks.slack.com/services/T0123ABCD/B0123ABCD/AbCdEfGhIjKlMnOpQrStUvWx"
DISCORD = "https://discord.com/api/webhooks/123456789012345678/AbCdEfGhIjKlMnOpQrStUvWxYz012345"
SAID = (
    "my PIN is 4 8 2 1",
    "the alarm code is 9 3 7 5",
    "PIN 6 0 2 8 for the bike lock",
    f"our alerts go to {SLACK}",
    f"the build bot posts to {DISCORD}",
)


async def test_no_digit_of_a_spaced_code_nor_a_webhook_url_is_stored(tmp_path: Path) -> None:
    """Before: stored as 'my PIN is [secret removed] 8 2 1' (three of its four digits), 'the
    alarm code is [secret removed] 3 7 5', 'PIN 6 0 2 8 for the bike lock' and both URLs."""
    port = free_port()
    settings = offline_settings(tmp_path / "data", port)
    async with serving_daemon(Daemon(settings, {}, announce=lambda _: None)):
        replies = [await say(port, "tab", text) for text in SAID]

    assert all("I don't keep passwords" in reply["text"] for reply in replies), replies
    with sqlite3.connect(database_path(settings)) as db:
        dump = "\n".join(db.iterdump())
    for kept in ("8 2 1", "3 7 5", "6 0 2 8", "AbCdEfGhIjKl"):
        assert kept not in dump


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
