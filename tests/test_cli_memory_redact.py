"""``flynn memory redact``, in a real process: what an older credential gate stored (written
here with the gate switched off) is counted by ``--dry-run`` and redacted by the command, on
SQLite (in the data dir, the daemon stopped) and on PostgreSQL."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml
from e2e_daemon import run_flynn
from test_cli import flynn

from flynn.credentials import REDACTION_VERSION
from flynn.memory.stores import SqliteMemory
from flynn.postgres.memory import PostgresMemory
from flynn.schedule.migrations import SCHEMA

NOW = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
SECRET = "GuestNet2024"
SAID = f"my wifi password is\n{SECRET}"


@contextlib.contextmanager
def older_gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    with monkeypatch.context() as patched:
        patched.setattr("flynn.memory.history.redact", lambda text: (text, 0))
        yield


def test_the_command_counts_then_redacts_what_an_older_version_stored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / ".flynn" / "flynn.db"
    with older_gate(monkeypatch), SqliteMemory.open(path, SCHEMA) as memory:
        kept = memory.history.append("cli:ana", "user", "user", "hello", tokens=1, now=NOW)
        leaked = memory.history.append("cli:ana", "user", "user", SAID, tokens=5, now=NOW)
        for ref in (kept.id, leaked.id):
            memory.db.execute(
                "INSERT INTO embeddings (kind, ref_id, namespace, model, vector) "
                "VALUES ('message', ?, 'user', 'm', x'0000803f')",
                (ref,),
            )
    (tmp_path / ".flynn" / "user").mkdir(mode=0o700)
    (tmp_path / ".flynn" / "user" / "USER.md").write_text(f"# Ana\n{SAID}\n")

    counted = flynn("memory", "redact", "--dry-run", home=tmp_path)
    assert counted.returncode == 0, counted.stderr
    assert (
        "messages: would redact 1" in counted.stdout and "files: would redact 1" in counted.stdout
    )
    assert SECRET not in counted.stdout + counted.stderr
    with SqliteMemory.open(path, SCHEMA) as memory:
        assert memory.db.fetchone("SELECT 1 FROM messages WHERE content = ?", (SAID,)) is not None

    done = flynn("memory", "redact", home=tmp_path)
    assert done.returncode == 0, done.stderr
    # Piped (a journal, a log file), no progress line rewritten in place piles up.
    assert "\r" not in done.stderr + counted.stderr
    assert "messages: redacted 1" in done.stdout and "deleted 1 vector(s)" in done.stdout
    with SqliteMemory.open(path, SCHEMA) as memory:
        assert memory.db.fetchone("SELECT 1 FROM messages WHERE content LIKE '%GuestNet%'") is None
        vectors = memory.db.fetchall("SELECT ref_id FROM embeddings ORDER BY ref_id")
        assert [int(row["ref_id"]) for row in vectors] == [kept.id]
        stamp = memory.db.fetchone("SELECT done FROM redaction_stamp")
        assert stamp is not None and stamp["done"] == REDACTION_VERSION
    assert SECRET not in (tmp_path / ".flynn" / "user" / "USER.md").read_text()

    again = flynn("memory", "redact", home=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "redacted 0 row(s) and file(s) in all" in again.stdout


async def test_the_command_redacts_the_shared_database(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "data_dir": str(tmp_path / "data"),
                "llm": {"provider": "offline"},
                "memory": {"user_namespace": "user", "embeddings": False},
            }
        )
    )
    with older_gate(monkeypatch), PostgresMemory.open(postgres_url) as memory:
        memory.history.append("cli:ana", "user", "user", SAID, tokens=5, now=NOW)
    env = {"FLYNN_STORAGE__URL": postgres_url, "USER": "ana", "LOGNAME": "ana"}

    done = await run_flynn("memory", "redact", "--config", str(config), home=tmp_path, env=env)

    assert done.code == 0, done.stderr
    assert "messages: redacted 1" in done.stdout
    with PostgresMemory.open(postgres_url) as memory:
        assert memory.db.fetchone("SELECT 1 FROM messages WHERE content LIKE '%GuestNet%'") is None
        assert memory.db.fetchone("SELECT 1 FROM message_terms WHERE term = 'guestnet2024'") is None
