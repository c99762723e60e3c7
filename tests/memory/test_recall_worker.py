"""Recall in ``RecallWorker``'s threads, over their own read connections, finds what recall on
the event loop's connection finds, sees what the loop wrote and forgot since, and closes."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from fakes.embedder import HashingEmbedder, HeldEmbedder

from flynn.errors import StorageUnusable, StoreError
from flynn.identity import MemoryScope
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.database import Database
from flynn.memory.facts import SqliteFacts
from flynn.memory.graph import SqliteGraph
from flynn.memory.history import SqliteHistory
from flynn.memory.store import NewFact, StoredMessage
from flynn.memory.stores import SqliteMemory
from flynn.memory.team import SqliteTeam
from flynn.memory.vectors import SqliteVectors
from flynn.recall.recall import Recall
from flynn.recall.team import TeamRecall
from flynn.recall.worker import RecallWorker

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

pytest.importorskip("numpy")

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")
SAID = (
    "We adopted a greyhound called Pixel last spring.",
    "The kiln at the studio fires on Thursdays.",
    "My sister Lena moved to Porto for a job in robotics.",
    "Pixel hates the rain, so walks are short in November.",
    "I am learning to throw porcelain, which cracks if it dries too fast.",
    "Lena says the robotics lab has a view of the river.",
)


def _recall(db: Database, vectors: SqliteVectors) -> Recall:
    return Recall(
        SqliteFacts(db),
        SqliteHistory(db),
        threshold=0.3,
        graph=SqliteGraph(db),
        vectors=vectors,
        team=TeamRecall(SqliteTeam(db), vectors=vectors),
    )


def _fill(memory: SqliteMemory, vectors: SqliteVectors) -> None:
    writer = MemoryWriter(
        memory.history,
        RuleExtractor(),
        RuleReconciler(memory.facts, timezone=UTC),
        vectors=vectors,
    )
    for index, text in enumerate(SAID):
        at = NOW - timedelta(days=30 - index)
        writer.message(ANA, f"s{index // 2}", "user", text, now=at)
        writer.message(ANA, f"s{index // 2}", "assistant", f"Noted: {text.lower()}", now=at)
    memory.facts.add(NewFact("users/ana/profile", "profile", "has a greyhound, Pixel"), now=NOW)


async def test_the_worker_recalls_what_the_loop_would(memory: SqliteMemory) -> None:
    embedder = HashingEmbedder()
    vectors = SqliteVectors(memory.db, embedder)
    _fill(memory, vectors)
    on_loop = _recall(memory.db, vectors)
    threads: set[str] = set()

    def reading(db: Database) -> Recall:
        threads.add(threading.current_thread().name)
        return _recall(db, SqliteVectors(db, embedder, index=vectors.index))

    worker = RecallWorker(memory.db, reading)
    try:
        for question in ("how is the dog?", "where does Lena work", "porcelain cracks", "kiln"):
            expected = on_loop.recall(
                "users/ana",
                question,
                now=NOW,
                budget_tokens=600,
                exclude_session="s9",
                query_vectors=on_loop.embed_query(question, now=NOW),
            )
            got = await worker.recall(
                "users/ana", question, now=NOW, budget_tokens=600, exclude_session="s9"
            )
            assert got == expected and not got.is_empty
        assert threads and all(name.startswith("flynn-recall") for name in threads)

        # What the loop forgets is gone from the worker's next recall, vectors and all.
        before = await worker.recall("users/ana", "Lena robotics", now=NOW, budget_tokens=600)
        assert any("Lena" in line for line in before.lines)
        memory.history.forget_session("s2")
        after = await worker.recall("users/ana", "Lena robotics", now=NOW, budget_tokens=600)
        assert not any("robotics lab" in line for line in after.lines)
    finally:
        worker.close()
    worker.close()  # idempotent
    with pytest.raises(RuntimeError, match="closed"):
        await worker.recall("users/ana", "kiln", now=NOW, budget_tokens=600)


class _WatchedHistory(SqliteHistory):
    """Sets ``searched`` when ranking reads the turns its word search found."""

    def __init__(self, db: Database, searched: threading.Event) -> None:
        super().__init__(db)
        self._searched = searched

    def messages_under(
        self, namespace_prefix: str, ids: Sequence[int], *, exclude_session: str | None = None
    ) -> list[StoredMessage]:
        self._searched.set()
        return super().messages_under(namespace_prefix, ids, exclude_session=exclude_session)


class _BesideEmbedder(HeldEmbedder):
    """``HeldEmbedder`` that also sets ``beside`` once a text other than the held one was
    embedded (after ``beside`` was cleared), and records those texts."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.beside = threading.Event()
        self.embedded_beside: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        vectors = super().embed(texts)
        if self.text not in texts:
            self.embedded_beside.extend(texts)
            self.beside.set()
        return vectors


async def test_the_question_is_embedded_while_the_words_are_searched(
    memory: SqliteMemory,
) -> None:
    """And its topic (the question without the name it mentions) beside it, at once."""
    question = "where does Lena work"
    embedder = _BesideEmbedder(question)
    embedder.release.set()  # filling embeds the stored turns, never the question
    vectors = SqliteVectors(memory.db, embedder)
    _fill(memory, vectors)
    on_loop = _recall(memory.db, vectors)
    expected = on_loop.recall(
        "users/ana",
        question,
        now=NOW,
        budget_tokens=600,
        query_vectors=on_loop.embed_query(question, now=NOW),
    )
    searched = threading.Event()

    def reading(db: Database) -> Recall:
        threaded = SqliteVectors(db, embedder, index=vectors.index)
        return Recall(
            SqliteFacts(db),
            _WatchedHistory(db, searched),
            threshold=0.3,
            graph=SqliteGraph(db),
            vectors=threaded,
            team=TeamRecall(SqliteTeam(db), vectors=threaded),
        )

    worker = RecallWorker(memory.db, reading)
    try:
        embedder.release.clear()
        embedder.holding.clear()
        embedder.held_in.clear()
        embedder.beside.clear()
        embedder.embedded_beside.clear()
        recalling = asyncio.create_task(
            worker.recall("users/ana", question, now=NOW, budget_tokens=600)
        )
        # The question's embedding is held in its thread; the recall thread searches by
        # words meanwhile (one after the other, this would wait for the release forever).
        assert await asyncio.to_thread(embedder.holding.wait, 10)
        assert await asyncio.to_thread(searched.wait, 10), "the word search waited"
        assert await asyncio.to_thread(embedder.beside.wait, 10), "the topic waited"
        assert embedder.embedded_beside == ["where does work"]
        assert not recalling.done()
        embedder.release.set()
        got = await recalling
        assert got == expected and not got.is_empty
        assert [name[: len("flynn-query")] for name in embedder.held_in] == ["flynn-query"]
    finally:
        embedder.release.set()
        worker.close()


def _open_files(path: Path) -> int:
    """This process's descriptors open on the database file (Linux's /proc)."""
    fds = Path("/proc/self/fd")
    if not fds.is_dir():
        pytest.skip("needs /proc")
    count = 0
    for fd in fds.iterdir():
        with contextlib.suppress(OSError):
            count += fd.readlink() == path
    return count


async def test_a_thread_whose_recall_cannot_be_built_keeps_no_connection(
    memory: SqliteMemory,
) -> None:
    failures = 3

    def failing(db: Database) -> Recall:
        nonlocal failures
        if failures:
            failures -= 1
            raise StoreError("cannot read the related words")
        return _recall(db, SqliteVectors(db, HashingEmbedder()))

    before = _open_files(memory.db.path)
    worker = RecallWorker(memory.db, failing)
    try:
        for _ in range(3):
            with pytest.raises(StoreError, match="related words"):
                await worker.recall("users/ana", "kiln", now=NOW, budget_tokens=600)
        # SQLite keeps one closed connection's descriptor for the next to reuse (the writer
        # holds a lock on the file): one at most, not one a failure.
        assert _open_files(memory.db.path) <= before + 1
        assert (await worker.recall("users/ana", "kiln", now=NOW, budget_tokens=600)).is_empty
    finally:
        worker.close()
    assert _open_files(memory.db.path) <= before + 1


async def test_a_reader_never_makes_a_database_where_none_is(memory: SqliteMemory) -> None:
    # The database moved away (or deleted) while the daemon runs: the first recall of a
    # thread says so, and leaves no empty database in its place for the next start to find.
    path = memory.db.path
    worker = RecallWorker(memory.db, lambda db: _recall(db, SqliteVectors(db, HashingEmbedder())))
    path.rename(path.with_name("moved.db"))
    try:
        with pytest.raises(StorageUnusable, match=r"cannot open database .* for reading"):
            await worker.recall("users/ana", "kiln", now=NOW, budget_tokens=600)
    finally:
        worker.close()
    assert not path.exists()
