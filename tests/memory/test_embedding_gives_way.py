"""The stored turns' background embedding gives way to recall work in flight (a question's
embedding, a recall: ``RecallsInFlight``) between texts, and still ends when recalls keep
coming."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest
from fakes.embedder import HashingEmbedder, HeldEmbedder

from flynn.identity import MemoryScope
from flynn.learning.embedding_queue import EmbeddingQueue
from flynn.memory.database import Database
from flynn.memory.facts import SqliteFacts
from flynn.memory.history import SqliteHistory
from flynn.memory.store import StoredMessage
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import SqliteVectors
from flynn.recall.in_flight import RecallsInFlight
from flynn.recall.recall import Recall
from flynn.recall.worker import RecallWorker

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

pytest.importorskip("numpy")

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")
NEVER = 60.0
"""``most_seconds`` in these tests: a wait that only ends by its bound fails them."""


class _Recalling:
    """Recall work in flight in a thread of its own, from ``__init__`` until ``end``."""

    def __init__(self, in_flight: RecallsInFlight) -> None:
        self._in_flight = in_flight
        self._entered = threading.Event()
        self._release = threading.Event()
        self._thread = threading.Thread(target=self._run)
        self._thread.start()
        assert self._entered.wait(5)

    def _run(self) -> None:
        with self._in_flight.running():
            self._entered.set()
            assert self._release.wait(10), "the test never ended this recall"

    def end(self) -> None:
        self._release.set()
        self._thread.join(5)


class _WatchingEmbedder(HashingEmbedder):
    """Records each call's texts and whether recall work was in flight as it began; with
    ``on_first``, runs it in the first call."""

    def __init__(self, in_flight: RecallsInFlight) -> None:
        self.in_flight = in_flight
        self.calls: list[tuple[list[str], bool]] = []
        self.on_first: list[object] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.calls.append((list(texts), self.in_flight.busy))
        if len(self.calls) == 1 and self.on_first:
            callback = self.on_first.pop()
            assert callable(callback)
            callback()
        return super().embed(texts)


class _Gate:
    """``in_flight.give_way`` that counts its calls and says when it was reached."""

    def __init__(self, in_flight: RecallsInFlight) -> None:
        self.in_flight = in_flight
        self.calls = 0
        self._reached = threading.Condition()

    def give_way(self) -> None:
        with self._reached:
            self.calls += 1
            self._reached.notify_all()
        self.in_flight.give_way()

    async def reached(self, count: int) -> None:
        def wait() -> None:
            with self._reached:
                assert self._reached.wait_for(lambda: self.calls >= count, timeout=5)

        await asyncio.to_thread(wait)


def _stored(memory: SqliteMemory, count: int) -> list[StoredMessage]:
    return [
        memory.history.append("s1", ANA.root, "user", f"note {i} about tea", tokens=4, now=NOW)
        for i in range(count)
    ]


def _watched(
    memory: SqliteMemory,
) -> tuple[RecallsInFlight, _WatchingEmbedder, _Gate, EmbeddingQueue]:
    """Recall work in flight, and a queue that gives way to it through a watched gate."""
    in_flight = RecallsInFlight(most_seconds=NEVER)
    embedder = _WatchingEmbedder(in_flight)
    gate = _Gate(in_flight)
    queue = EmbeddingQueue(
        SqliteVectors(memory.db, embedder),
        memory.history,
        lambda m: (m.id, m.namespace, m.content),
        give_way=gate.give_way,
    )
    return in_flight, embedder, gate, queue


async def test_stored_messages_wait_between_texts_for_the_recall_in_flight(
    memory: SqliteMemory,
) -> None:
    in_flight, embedder, gate, queue = _watched(memory)
    first = _Recalling(in_flight)
    embedding = asyncio.gather(*(queue.embed(message) for message in _stored(memory, 2)))
    await gate.reached(1)  # before the first text, behind the recall
    later: list[_Recalling] = []
    # A recall that begins while the first text is embedded holds up the second.
    embedder.on_first.append(lambda: later.append(_Recalling(in_flight)))
    first.end()
    await gate.reached(2)
    assert len(embedder.calls) == 1
    later[0].end()
    await asyncio.wait_for(embedding, timeout=5)
    # A text at a time (the batch held two), and never while recall work ran.
    assert embedder.calls == [(["note 0 about tea"], False), (["note 1 about tea"], False)]
    assert SqliteVectors(memory.db, embedder).unembedded() == 0
    await queue.aclose()


async def test_recalls_that_keep_coming_do_not_starve_the_background_embedding(
    memory: SqliteMemory,
) -> None:
    in_flight, embedder, gate, queue = _watched(memory)
    recalls = [_Recalling(in_flight)]
    embedding = asyncio.gather(*(queue.embed(message) for message in _stored(memory, 3)))
    try:
        for text in range(3):
            await gate.reached(text + 1)
            # Always one recall in flight: the next begins before the last ends. The text
            # waits for the recall that was running when it began to wait, not for this one.
            recalls.append(_Recalling(in_flight))
            recalls.pop(0).end()
        await asyncio.wait_for(embedding, timeout=5)
        assert in_flight.busy
        assert [texts for texts, _ in embedder.calls] == [[f"note {i} about tea"] for i in range(3)]
    finally:
        for recalling in recalls:
            recalling.end()
    await queue.aclose()


async def test_a_question_s_embedding_and_its_recall_are_recall_work_in_flight(
    memory: SqliteMemory,
) -> None:
    question = "where does Lena work"
    embedder = HeldEmbedder(question)

    def reading(db: Database) -> Recall:
        return Recall(
            SqliteFacts(db), SqliteHistory(db), threshold=0.3, vectors=SqliteVectors(db, embedder)
        )

    worker = RecallWorker(memory.db, reading)
    on_loop = reading(memory.db)
    try:
        assert not worker.in_flight.busy
        early = worker.embed_question(on_loop, question, now=NOW)
        assert early is not None
        assert await asyncio.to_thread(embedder.holding.wait, 10)
        assert worker.in_flight.busy  # the question's embedding, started before any recall
        recalling = asyncio.create_task(
            worker.recall("users/ana", question, now=NOW, budget_tokens=600, query_vectors=early)
        )
        embedder.release.set()
        await recalling
        assert embedder.held_in and len(embedder.held_in) == 1  # embedded once, early
        assert not worker.in_flight.busy
    finally:
        embedder.release.set()
        worker.close()
