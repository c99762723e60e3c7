"""Local embeddings: vectors stored per message, nearest neighbours per namespace, forgotten with
their rows; the shipped static model loads offline."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest
from fakes.embedder import HashingEmbedder, RecordingEmbedder
from memory.conftest import VectorsBackend

from flynn.identity import MemoryScope
from flynn.learning.embedding_queue import EmbeddingQueue
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.database import Database, Params
from flynn.memory.store import History, NewFact
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import CONTEXT_CHARS, SqliteVectors, SqlVectors, in_context
from flynn.recall.recall import Recall
from flynn.schedule.migrations import SCHEMA

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

np = pytest.importorskip("numpy")

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


def _add(history: History, vectors: SqlVectors, namespace: str, text: str) -> int:
    stored = history.append("s", namespace, "user", text, tokens=1, now=NOW)
    vectors.add("message", [(stored.id, namespace, text)])
    return stored.id


def test_nearest_within_the_namespace_only(vectors_backend: VectorsBackend) -> None:
    history = vectors_backend.history
    vectors = vectors_backend.vectors(HashingEmbedder())
    tea = _add(history, vectors, "users/ana", "green tea every morning")
    _add(history, vectors, "users/ana", "the garage door is red")
    _add(history, vectors, "users/anabel", "green tea every morning")

    nearest = vectors.nearest("users/ana", "morning tea", kind="message", limit=5)
    assert nearest[0][0] == tea and len(nearest) == 2
    assert vectors.nearest("users/bob", "morning tea", kind="message", limit=5) == []
    # Rows added after the namespace was cached are found too.
    later = _add(history, vectors, "users/ana", "tea with lemon")
    assert later in [
        ref for ref, _ in vectors.nearest("users/ana", "lemon tea", kind="message", limit=1)
    ]


def test_vectors_go_with_their_rows(vectors_backend: VectorsBackend) -> None:
    vectors = vectors_backend.vectors(HashingEmbedder())
    _add(vectors_backend.history, vectors, "users/ana", "green tea every morning")
    assert vectors_backend.count("SELECT * FROM embeddings") == 1
    vectors_backend.forget("users/ana")
    assert vectors_backend.count("SELECT * FROM embeddings") == 0


def test_the_shipped_model_loads_offline() -> None:
    pytest.importorskip("wordllama")
    from flynn.recall.embeddings import WordLlamaEmbedder

    embedder = WordLlamaEmbedder.installed()
    vectors = embedder.embed(["I adopted a puppy", "We got a new dog", "quarterly tax filing", ""])
    assert vectors.shape == (4, embedder.dimensions)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])
    assert float(np.linalg.norm(vectors[3])) == 0.0


async def test_the_daemon_caps_blas_at_one_thread_per_call(tmp_path: Path) -> None:
    # Its encoder runs in several threads at once; BLAS threads of its own would fight them.
    # An offline tool loading the model keeps BLAS's threads.
    pytest.importorskip("wordllama")
    from threadpoolctl import threadpool_info, threadpool_limits

    from flynn.app import App
    from flynn.recall.embeddings import load_embedder
    from flynn.settings import load_settings

    def blas_threads() -> set[int]:
        return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}

    with threadpool_limits(limits=2, user_api="blas"):
        if blas_threads() == {1}:
            pytest.skip("BLAS runs one thread on this machine anyway")
        load_embedder("wordllama")
        assert blas_threads() == {2}
        settings = load_settings(
            {
                "data_dir": str(tmp_path),
                "memory": {"embeddings": True, "embeddings_model": "wordllama"},
            }
        )
        app = App.open(settings, {})
        try:
            assert blas_threads() == {2}  # nothing loaded yet: the daemon loads in a thread
            assert app.load_embeddings()
            assert blas_threads() == {1}
        finally:
            await app.aclose()


def test_a_deleted_row_leaves_the_cached_matrix(vectors_backend: VectorsBackend) -> None:
    vectors = vectors_backend.vectors(HashingEmbedder())
    tea = _add(vectors_backend.history, vectors, "users/ana", "green tea every morning")
    assert vectors.nearest("users/ana", "green tea", kind="message", limit=1)[0][0] == tea
    vectors_backend.history.forget_session("s")  # in this process: no other connection wrote
    assert vectors.nearest("users/ana", "green tea", kind="message", limit=1) == []


def test_a_message_is_embedded_with_the_one_before_it() -> None:
    assert in_context(None, "A 1978 Westfalia.") == "A 1978 Westfalia."
    assert in_context("What  year\n is the van?", "A 1978 Westfalia.") == (
        "What year is the van?\nA 1978 Westfalia."
    )
    long = " ".join(f"word{index}" for index in range(400))
    context = in_context(long, "Yes.")
    before, _, after = context.rpartition("\n")
    assert after == "Yes." and len(before) <= CONTEXT_CHARS
    assert before.startswith("word") and long.endswith(before)  # the end, cut at a word


class RecordingVectors(SqliteVectors):
    """Keeps the ``(ref_id, namespace, text)`` rows it is asked to embed, and embeds nothing."""

    def __init__(self, memory: SqliteMemory) -> None:
        super().__init__(memory.db, HashingEmbedder())
        self.rows: list[tuple[int, str, str]] = []

    def add(self, kind: str, rows: Sequence[tuple[int, str, str]]) -> None:
        self.rows.extend(rows)


def _writer(memory: SqliteMemory, vectors: SqliteVectors | None = None) -> MemoryWriter:
    return MemoryWriter(
        memory.history, RuleExtractor(), RuleReconciler(memory.facts), vectors=vectors
    )


def test_the_writer_embeds_each_message_after_its_predecessor(memory: SqliteMemory) -> None:
    vectors = RecordingVectors(memory)
    recorded = vectors.rows
    writer = _writer(memory, vectors)
    scope = MemoryScope("users/ana", shared=True, user="ana")
    first = writer.message(scope, "s1", "assistant", "What year is the van?", now=NOW)
    writer.message(scope, "s2", "user", "Another conversation in between.", now=NOW)
    second = writer.message(scope, "s1", "user", "A 1978 Westfalia.", now=NOW)
    assert recorded[0] == (first.id, "users/ana", "What year is the van?")
    assert recorded[2] == (second.id, "users/ana", "What year is the van?\nA 1978 Westfalia.")
    assert memory.history.previous("s1", second.id) == first
    assert memory.history.previous("s1", first.id) is None


def test_backfill_embeds_what_was_stored_before_embeddings_were_on(
    vectors_backend: VectorsBackend,
) -> None:
    history = vectors_backend.history
    first = history.append(
        "s1", "users/ana", "assistant", "What year is the van?", tokens=1, now=NOW
    )
    history.append("s2", "users/bob", "user", "Bob's own words.", tokens=1, now=NOW)
    second = history.append("s1", "users/ana", "user", "A 1978 Westfalia.", tokens=1, now=NOW)
    history.append("s1", "users/ana", "assistant", "(offline)", tokens=1, now=NOW, offline=True)
    history.save_summary("s1", "about a van", through_id=first.id, now=NOW)

    embedder = RecordingEmbedder()
    vectors = vectors_backend.vectors(embedder)
    assert vectors.unembedded() == 3 and vectors.unembedded("users/ana") == 2
    assert list(vectors.backfill("users/ana", batch=1)) == [1, 1]
    # Each in its context, the predecessor found across the summarised boundary.
    assert embedder.texts == ["What year is the van?", "What year is the van?\nA 1978 Westfalia."]
    assert vectors.unembedded("users/ana") == 0 and vectors.unembedded() == 1
    assert vectors.nearest("users/ana", "a 1978", kind="message", limit=1)[0][0] == second.id
    assert sum(vectors.backfill()) == 1  # the rest; nothing twice
    assert list(vectors.backfill()) == [] and vectors.unembedded() == 0


def test_progress_counts_each_persons_messages_and_vectors_of_one_model(
    vectors_backend: VectorsBackend,
) -> None:
    history = vectors_backend.history
    ana = [
        history.append("s1", namespace, "user", text, tokens=1, now=NOW)
        for namespace, text in [
            ("users/ana", "tea"),
            ("users/ana/notes", "van"),
            ("users/ana", "x"),
        ]
    ]
    history.append("s1", "users/ana", "assistant", "(offline)", tokens=1, now=NOW, offline=True)
    bob = history.append("s2", "users/bob", "user", "hello", tokens=1, now=NOW)
    vectors = vectors_backend.vectors(HashingEmbedder())
    vectors.add("message", [(ana[0].id, "users/ana", "tea"), (ana[1].id, "users/ana/x", "van")])
    progress = vectors_backend.progress(vectors.model)
    assert [(p.root, p.messages, p.embedded, p.newest) for p in progress] == [
        ("users/bob", 1, 0, bob.id),
        ("users/ana", 3, 2, ana[2].id),
    ]
    assert [p.embedded for p in vectors_backend.progress("another model")] == [0, 0]
    assert vectors.other_models() == {} and vectors.unembedded("users/ana") == 1


class GatedEmbedder(RecordingEmbedder):
    """Blocks in ``embed`` (in the worker thread) until ``go`` is set; ``started`` is set once
    a call is blocked there."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()
        self.started = threading.Event()

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.started.set()
        assert self.go.wait(5)
        return super().embed(texts)

    async def wait_started(self) -> None:
        assert await asyncio.to_thread(self.started.wait, 5)


async def test_embed_later_runs_off_the_loop_and_a_forget_meanwhile_wins(
    memory: SqliteMemory,
) -> None:
    embedder = GatedEmbedder()
    vectors = SqliteVectors(memory.db, embedder)
    writer = _writer(memory, vectors)
    scope = MemoryScope("users/ana", shared=True, user="ana")
    assert writer.embeds
    kept = writer.message(scope, "s1", "user", "I adopted a greyhound.", now=NOW, embed=False)
    doomed = writer.message(scope, "s2", "user", "My PIN is 4471.", now=NOW, embed=False)
    assert vectors.unembedded() == 2  # nothing embedded on the way in
    tasks = [asyncio.create_task(writer.embed_later(m)) for m in (kept, doomed)]
    await embedder.wait_started()
    assert not any(task.done() for task in tasks)  # the loop runs while the model works
    memory.history.forget_session("s2")  # forgotten while its vector was being computed
    embedder.go.set()
    await asyncio.gather(*tasks)
    count = memory.db.fetchone("SELECT count(*) FROM embeddings")
    assert count is not None and count[0] == 1
    assert vectors.nearest("users/ana", "greyhound", kind="message", limit=5)[0][0] == kept.id
    await writer.aclose()


def test_another_namespace_never_shapes_a_vector(memory: SqliteMemory) -> None:
    vectors = RecordingVectors(memory)
    recorded = vectors.rows
    writer = _writer(memory, vectors)
    alice = MemoryScope("users/alice", shared=True, user="alice")
    bob = MemoryScope("users/bob", shared=True, user="bob")
    # One session, two people (the users: map changed between the two messages).
    writer.message(alice, "telegram:7", "user", "My diagnosis is type 1 diabetes.", now=NOW)
    said = writer.message(bob, "telegram:7", "user", "Hello there.", now=NOW)
    assert recorded[-1] == (said.id, "users/bob", "Hello there.")
    # The backfill agrees.
    embedder = RecordingEmbedder()
    list(SqliteVectors(memory.db, embedder).backfill())
    assert embedder.texts[-1] == "Hello there."


async def test_the_query_is_embedded_off_the_loop_once(memory: SqliteMemory) -> None:
    embedder = RecordingEmbedder()
    vectors = SqliteVectors(memory.db, embedder)
    writer = _writer(memory, vectors)
    scope = MemoryScope("users/ana", shared=True, user="ana")
    tea = writer.message(scope, "s1", "user", "green tea every morning", now=NOW)
    recall = Recall(memory.facts, memory.history, threshold=0.0, vectors=vectors)
    embedder.texts.clear()
    computed = await recall.query_vectors("morning tea?", now=NOW)
    assert computed is not None and computed.topic is None  # it names nobody
    assert embedder.texts == ["morning tea?"]
    items = recall.rank("users/ana", "morning tea?", now=NOW, query_vectors=computed)
    assert tea.id in {m for item in items for m in item.message_ids}
    assert embedder.texts == ["morning tea?"]  # ranking used the vector it was given
    # A question naming someone is embedded whole and by its topic alone, in one call.
    named = await recall.query_vectors("What tea does Ana drink?", now=NOW)
    assert named is not None and named.topic is not None
    assert embedder.texts[1:] == ["What tea does Ana drink?", "What tea does drink?"]
    recall.rank("users/ana", "What tea does Ana drink?", now=NOW, query_vectors=named)
    assert len(embedder.texts) == 3
    # Without embeddings in ranking there is nothing to compute.
    plain = Recall(memory.facts, memory.history, threshold=0.0)
    assert await plain.query_vectors("morning tea?", now=NOW) is None


async def test_a_backfill_in_a_running_daemon_lets_a_forget_win(memory: SqliteMemory) -> None:
    writer = _writer(memory)
    scope = MemoryScope("users/ana", shared=True, user="ana")
    kept = writer.message(scope, "s1", "user", "I adopted a greyhound.", now=NOW)
    writer.message(scope, "s2", "user", "My PIN is 4471.", now=NOW)
    embedder = GatedEmbedder()
    vectors = SqliteVectors(memory.db, embedder)
    queue = EmbeddingQueue(vectors, memory.history, lambda m: (m.id, m.namespace, m.content))
    task = asyncio.create_task(queue.catch_up("users/ana"))
    await embedder.wait_started()
    assert not task.done()
    memory.history.forget_session("s2")
    embedder.go.set()
    assert await task == 1
    await queue.aclose()
    nearest = vectors.nearest("users/ana", "a greyhound", kind="message", limit=5)
    assert [ref for ref, _ in nearest] == [kept.id]
    assert vectors.unembedded("users/ana") == 0


class ForgetDuringEmbed(HashingEmbedder):
    """The first call runs ``meanwhile`` before it returns: while ``flynn memory embed`` (or
    the one after a forget) embeds a batch, the daemon (another connection) says ``/forget``."""

    def __init__(self, meanwhile: Callable[[], object]) -> None:
        self._meanwhile: Callable[[], object] | None = meanwhile

    def embed(self, texts: Sequence[str]) -> Matrix:
        vectors = super().embed(texts)
        if self._meanwhile is not None:
            meanwhile, self._meanwhile = self._meanwhile, None
            meanwhile()
        return vectors


def test_a_backfill_stores_no_vector_of_what_was_forgotten_while_it_embedded(
    memory: SqliteMemory,
) -> None:
    memory.facts.add(NewFact("users/ana", "profile", "vegetarian", field="diet"), now=NOW)
    said = memory.history.append("s", "users/ana", "user", "I am vegetarian", tokens=3, now=NOW)
    memory.history.append("s2", "users/ana", "user", "green tea please", tokens=3, now=NOW)

    def daemon_forgets() -> None:
        with SqliteMemory.open(memory.db.path, SCHEMA) as daemon:
            daemon.forget_field("users/ana", "diet")  # redacts the first message
            daemon.history.forget_session("s2")

    vectors = SqliteVectors(memory.db, ForgetDuringEmbed(daemon_forgets))
    list(vectors.backfill("users/ana"))
    # Neither the redacted message nor the deleted one keeps a vector of what was said.
    assert memory.db.fetchall("SELECT ref_id FROM embeddings") == []
    (redacted,) = memory.history.messages([said.id])
    assert "vegetarian" not in redacted.content
    assert vectors.unembedded("users/ana") == 1  # the next backfill embeds what is left
    assert sum(vectors.backfill("users/ana")) == 1


class _RecordingDatabase:
    """The memory's database, recording the statements that read in batches (a load)."""

    def __init__(self, db: Database) -> None:
        self._db = db
        self.loads: list[str] = []

    def batches(self, sql: str, params: Params = (), *, size: int) -> Iterator[list[sqlite3.Row]]:
        self.loads.append(sql)
        return self._db.batches(sql, params, size=size)

    def __getattr__(self, name: str) -> object:
        return getattr(self._db, name)


def test_a_persons_vectors_load_through_the_namespace_index(memory: SqliteMemory) -> None:
    # Without statistics SQLite took the primary key's ``kind`` prefix and read every
    # message's vector to load one person's: 30 ms at 100,000 messages, 1 ms by namespace.
    recording = _RecordingDatabase(memory.db)
    vectors = SqliteVectors(cast(Database, recording), HashingEmbedder())
    for person in ("ana", "bob"):
        _add(memory.history, vectors, f"users/{person}", "green tea every morning")
    vectors.forget_cache()
    assert vectors.nearest("users/ana", "tea", kind="message", limit=1)
    # The turns' vectors, then their later windows' (kind ``passage``), by the same statement.
    load, windows = recording.loads
    assert load == windows
    params = ("users/ana", "users/ana/", "users/ana0", "message", "hashing-64")
    plan = " ".join(row[3] for row in memory.db.fetchall(f"EXPLAIN QUERY PLAN {load}", params))
    assert "USING INDEX embeddings_namespace" in plan and "PRIMARY KEY" not in plan
