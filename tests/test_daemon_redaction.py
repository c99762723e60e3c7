"""The daemon redacts again, once, what an older credential gate stored: started on a store
whose stamp is older, it redacts in the background and stamps it; started again, it does
nothing."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
import structlog
from fakes.embedder import RecordingEmbedder

from evals.scripted_provider import ScriptedProvider
from flynn.app import database_path
from flynn.credentials import REDACTION_VERSION
from flynn.daemon import Daemon
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import Embedder
from flynn.providers.base import TASKS, Provider, Task
from flynn.schedule.migrations import SCHEMA
from flynn.settings import EmbeddingModel, Settings, load_settings

NOW = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
SAID = "my wifi password is\nGuestNet2024"


def _settings(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "memory": {"embeddings": False},
            "channels": {"gateway": {"port": 0, "token": "secret-token-for-tests"}},
        }
    )


def _with_embeddings(tmp_path: Path) -> Settings:
    return load_settings(
        {
            "data_dir": str(tmp_path / "data"),
            "channels": {"gateway": {"port": 0, "token": "secret-token-for-tests"}},
        }
    )


def _embedding_daemon(settings: Settings) -> tuple[Daemon, RecordingEmbedder]:
    """A daemon whose embedding model records what it embeds."""
    recording = RecordingEmbedder()

    def load(model: EmbeddingModel) -> Embedder:
        return recording

    providers: dict[Task, Provider] = dict.fromkeys(TASKS, ScriptedProvider(default="noted"))
    daemon = Daemon(settings, {}, providers=providers, announce=lambda _: None, embedder=load)
    return daemon, recording


async def _start_and_stop(tmp_path: Path) -> list[dict[str, object]]:
    providers: dict[Task, Provider] = dict.fromkeys(TASKS, ScriptedProvider(default="noted"))
    daemon = Daemon(_settings(tmp_path), {}, providers=providers, announce=lambda _: None)
    stop = asyncio.Event()
    with structlog.testing.capture_logs() as logs:
        running = asyncio.create_task(daemon.run(stop))
        await asyncio.wait_for(daemon.ready.wait(), 10)
        await asyncio.wait_for(daemon.redacted.wait(), 30)
        stop.set()
        assert await asyncio.wait_for(running, 10) == 0
    return logs


async def test_a_start_redacts_what_an_older_version_stored_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = database_path(_settings(tmp_path))
    with monkeypatch.context() as older, SqliteMemory.open(path, SCHEMA) as memory:
        older.setattr("flynn.memory.history.redact", lambda text: (text, 0))
        memory.history.append("cli:ana", "user", "user", SAID, tokens=5, now=NOW)

    logs = await _start_and_stop(tmp_path)

    (finished,) = [e for e in logs if e["event"] == "redaction.finished"]
    assert finished["changed"] == {"messages": 1} and "GuestNet2024" not in str(logs)
    with SqliteMemory.open(path, SCHEMA) as memory:
        assert memory.db.fetchone("SELECT 1 FROM messages WHERE content LIKE '%GuestNet%'") is None
        stamp = memory.db.fetchone("SELECT done FROM redaction_stamp")
        assert stamp is not None and stamp["done"] == REDACTION_VERSION

    again = await _start_and_stop(tmp_path)

    assert not [e for e in again if str(e["event"]).startswith("redaction.")]


async def test_the_catch_up_embeds_only_what_the_redaction_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = _with_embeddings(tmp_path)
    path = database_path(settings)
    with monkeypatch.context() as older, SqliteMemory.open(path, SCHEMA) as memory:
        older.setattr("flynn.memory.history.redact", lambda text: (text, 0))
        for text in ("hello", SAID, "noted, I will keep it safe"):
            memory.history.append("cli:ana", "user", "user", text, tokens=5, now=NOW)
    daemon, recording = _embedding_daemon(settings)
    stop = asyncio.Event()
    running = asyncio.create_task(daemon.run(stop))
    await asyncio.wait_for(daemon.caught_up.wait(), 60)
    stop.set()
    assert await asyncio.wait_for(running, 10) == 0

    assert recording.texts
    assert not [text for text in recording.texts if "GuestNet2024" in text]
    with SqliteMemory.open(path, SCHEMA) as memory:
        counts = memory.db.fetchone(
            "SELECT (SELECT count(*) FROM messages), (SELECT count(*) FROM embeddings)"
        )
        assert counts is not None and tuple(counts) == (3, 3)


async def test_a_start_on_a_new_store_stamps_it_without_a_pass(tmp_path: Path) -> None:
    logs = await _start_and_stop(tmp_path)

    # The store was created stamped: everything in it is written through today's gate.
    assert not [e for e in logs if str(e["event"]).startswith("redaction.")]
    with SqliteMemory.open(database_path(_settings(tmp_path)), SCHEMA) as memory:
        stamp = memory.db.fetchone("SELECT done FROM redaction_stamp")
        assert stamp is not None and stamp["done"] == REDACTION_VERSION


async def test_a_pass_that_fails_leaves_the_catch_up_and_the_turns_going(tmp_path: Path) -> None:
    settings = _with_embeddings(tmp_path)
    with SqliteMemory.open(database_path(settings), SCHEMA) as memory:
        memory.history.append("cli:ana", "user", "user", "hello", tokens=5, now=NOW)
        memory.db.execute("DROP TABLE redaction_stamp")  # every read of the stamp fails
    daemon, recording = _embedding_daemon(settings)
    stop = asyncio.Event()
    with structlog.testing.capture_logs() as logs:
        running = asyncio.create_task(daemon.run(stop))
        # Within 60 s instead of never: the catch-up does not wait for a pass that failed.
        await asyncio.wait_for(daemon.caught_up.wait(), 60)
        assert daemon.service is not None and not running.done()
        stop.set()
        assert await asyncio.wait_for(running, 10) == 0

    assert [e["event"] for e in logs if str(e["event"]).startswith("redaction.")] == [
        "redaction.failed"
    ]
    assert recording.texts == ["hello"]
