"""The background embedding queue: stored messages embedded in batches by one thread of its own,
never ahead of the question a reply waits for; bounded, with nothing lost past the bound."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest
import structlog
from test_vectors import HashingEmbedder

from flynn.identity import MemoryScope
from flynn.memory.embedding_queue import EmbeddingQueue
from flynn.memory.sqlite import SqliteMemory
from flynn.memory.store import StoredMessage
from flynn.memory.vectors import SqliteVectors

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

pytest.importorskip("numpy")

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")


class BackgroundGate(HashingEmbedder):
    """Blocks the queue's thread (and only it) until ``go`` is set; records each call's batch
    size and thread."""

    def __init__(self) -> None:
        self.go = threading.Event()
        self.calls: list[tuple[int, str]] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        name = threading.current_thread().name
        self.calls.append((len(texts), name))
        if name.startswith("flynn-embed"):
            assert self.go.wait(5)
        return super().embed(texts)


def _stored(memory: SqliteMemory, count: int, session: str = "s1") -> list[StoredMessage]:
    return [
        memory.history.append(session, ANA.root, "user", f"note {i} about tea", tokens=4, now=NOW)
        for i in range(count)
    ]


def _row(message: StoredMessage) -> tuple[int, str, str]:
    return (message.id, message.namespace, message.content)


def _queue(memory: SqliteMemory, embedder: HashingEmbedder, **limits: int) -> EmbeddingQueue:
    return EmbeddingQueue(SqliteVectors(memory.db, embedder), memory.history, _row, **limits)


async def test_stored_messages_are_embedded_in_batches_by_one_thread(
    memory: SqliteMemory,
) -> None:
    embedder = BackgroundGate()
    embedder.go.set()
    queue = _queue(memory, embedder, batch=4)
    await asyncio.gather(*(queue.embed(message) for message in _stored(memory, 10)))
    assert [size for size, _ in embedder.calls] == [4, 4, 2]
    assert {thread for _, thread in embedder.calls} == {"flynn-embed_0"}
    assert SqliteVectors(memory.db, embedder).unembedded() == 0
    await queue.aclose()


async def test_the_question_never_waits_behind_stored_messages(memory: SqliteMemory) -> None:
    embedder = BackgroundGate()
    queue = _queue(memory, embedder, batch=1)
    waiting = [asyncio.create_task(queue.embed(message)) for message in _stored(memory, 5)]
    await asyncio.sleep(0.05)
    assert queue.waiting == 4  # one batch in the (blocked) thread, the rest behind it
    vectors = SqliteVectors(memory.db, embedder)
    question = await asyncio.wait_for(vectors.embed_in_thread(["tea?"]), timeout=5)
    assert question.shape[0] == 1 and not any(task.done() for task in waiting)
    embedder.go.set()
    await asyncio.gather(*waiting)
    assert vectors.unembedded() == 0
    await queue.aclose()


async def test_past_its_limit_a_message_waits_for_the_catch_up_and_none_is_lost(
    memory: SqliteMemory,
) -> None:
    embedder = BackgroundGate()
    queue = _queue(memory, embedder, batch=2, limit=2)
    messages = _stored(memory, 6)
    with structlog.testing.capture_logs() as logs:
        waiting = [asyncio.create_task(queue.embed(message)) for message in messages]
        await asyncio.sleep(0.05)
    # The first two are queued (and now in the thread); the other four return at once.
    assert [task.done() for task in waiting] == [False, False, True, True, True, True]
    assert [log["event"] for log in logs].count("memory.embedding_backlog") == 1
    embedder.go.set()
    await asyncio.gather(*waiting)
    # Returns once the catch-up the overflow began is done (joining it, or after it).
    await queue.catch_up(ANA.root)
    assert SqliteVectors(memory.db, embedder).unembedded() == 0
    assert sorted(size for size, _ in embedder.calls) == [2, 4]
    await queue.aclose()


async def test_a_forget_while_queued_wins(memory: SqliteMemory) -> None:
    embedder = BackgroundGate()
    queue = _queue(memory, embedder)
    (kept,) = _stored(memory, 1)
    (doomed,) = _stored(memory, 1, session="s2")
    waiting = [asyncio.create_task(queue.embed(message)) for message in (kept, doomed)]
    await asyncio.sleep(0.05)
    memory.history.forget_session("s2")  # while its vector is being computed
    embedder.go.set()
    await asyncio.gather(*waiting)
    rows = memory.db.fetchall("SELECT ref_id FROM embeddings")
    assert [row[0] for row in rows] == [kept.id]
    await queue.aclose()


async def test_closing_releases_whoever_waits_and_stores_nothing_more(
    memory: SqliteMemory,
) -> None:
    embedder = BackgroundGate()
    queue = _queue(memory, embedder, batch=1)
    waiting = [asyncio.create_task(queue.embed(message)) for message in _stored(memory, 3)]
    behind = asyncio.create_task(queue.catch_up(None))
    await asyncio.sleep(0.05)
    await asyncio.wait_for(queue.aclose(), timeout=5)
    await asyncio.wait_for(asyncio.gather(*waiting), timeout=5)
    assert await asyncio.wait_for(behind, timeout=5) == 0
    embedder.go.set()  # the thread finishes its batch; the result is dropped
    await asyncio.sleep(0.05)
    assert SqliteVectors(memory.db, embedder).unembedded() == 3
    # Closed: later calls return at once.
    assert await queue.catch_up(None) == 0
