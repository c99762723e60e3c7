"""Attacks on the catch-up (the daemon's ``EmbeddingQueue``, ``flynn memory embed``'s
``backfill``): a message the model always fails on must cost that message its vector, not the
vectors of every message of the person after it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import structlog
from fakes.embedder import FailingEmbedder

from flynn.learning.embedding_queue import EmbeddingQueue
from flynn.memory.store import StoredMessage
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import Embedder, SqliteVectors
from flynn.recall.embeddings import LoadingEmbedder
from flynn.settings import EmbeddingModel

pytest.importorskip("numpy")

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ROOT = "users/ana"


def _row(message: StoredMessage) -> tuple[int, str, str]:
    return (message.id, message.namespace, message.content)


async def test_a_message_the_model_always_fails_on_costs_only_its_own_vector(
    memory: SqliteMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("flynn.learning.embedding_queue._RETRY_SECONDS", 0.0)

    def load(model: EmbeddingModel) -> Embedder:
        return FailingEmbedder("poison")

    model = LoadingEmbedder("auto", load)  # as the daemon wraps the model
    assert model.load()
    for i in range(40):
        text = "a poison pill" if i == 2 else f"note {i} about tea"
        memory.history.append("s1", ROOT, "user", text, tokens=4, now=NOW)
    vectors = SqliteVectors(memory.db, model)
    queue = EmbeddingQueue(vectors, memory.history, _row)
    with structlog.testing.capture_logs() as logs:
        embedded = await queue.catch_up(ROOT)
        again = await queue.catch_up(ROOT)  # as the next start does
    await queue.aclose()
    # The message after it is embedded with its end as context (``in_context``): the model
    # fails on that one too. The 38 others get their vectors, and the next pass has nothing
    # it can do (on main: the pass gave up on its first batch, and no message got one).
    assert (embedded, again) == (38, 0)
    assert vectors.unembedded(ROOT) == 2
    skipped = [e for e in logs if e["event"] == "memory.embedding_skipped"]
    assert skipped and "poison" not in repr(skipped)  # what the person said is not logged


def test_flynn_memory_embed_gets_past_a_message_the_model_always_fails_on(
    memory: SqliteMemory,
) -> None:
    # ``flynn memory embed`` and a forget's embedding anew run ``backfill`` with the model as
    # it loads (no ``LoadingEmbedder``): its own errors, of no common type. On main the
    # command stopped at that batch with a traceback, every time.
    for i in range(40):
        text = "a poison pill" if i == 2 else f"note {i} about tea"
        memory.history.append("s1", ROOT, "user", text, tokens=4, now=NOW)
    vectors = SqliteVectors(memory.db, FailingEmbedder("poison"))
    with structlog.testing.capture_logs() as logs:
        assert sum(vectors.backfill(ROOT, batch=16)) == 38
    assert vectors.unembedded(ROOT) == 2
    skipped = [e for e in logs if e["event"] == "memory.embedding_skipped"]
    assert len(skipped) == 2 and "poison" not in repr(skipped)
