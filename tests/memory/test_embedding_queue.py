"""The background embedding queue: stored messages embedded in batches by one thread of its own,
never ahead of the question a reply waits for; new messages before catch-up passes; bounded,
with nothing lost past the bound."""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest
import structlog
from fakes.embedder import HashingEmbedder

from flynn.errors import StoreError
from flynn.identity import MemoryScope
from flynn.learning.embedding_queue import BACKGROUND_NICENESS, EmbeddingQueue
from flynn.memory.store import StoredMessage
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import SqliteVectors, Still
from flynn.schedule.migrations import SCHEMA

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

pytest.importorskip("numpy")

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")
QUESTION = "tea?"


class SteppedEmbedder(HashingEmbedder):
    """Each call but the question's waits for one ``step()``; records each call's texts and
    thread. ``free()`` lets every call through."""

    def __init__(self) -> None:
        self.steps = threading.Semaphore(0)
        self.calls: list[tuple[list[str], str]] = []
        self.returned = 0
        self._progress = threading.Condition()

    def step(self, count: int = 1) -> None:
        self.steps.release(count)

    def free(self) -> None:
        self.steps.release(10_000)

    async def entered(self, count: int = 1) -> None:
        """Returns once ``count`` calls have begun (in the thread; a stepped one waits there)."""
        await asyncio.to_thread(self._wait, lambda: len(self.calls) >= count)

    async def finished(self, count: int = 1) -> None:
        """Returns once ``count`` calls have returned their vectors."""
        await asyncio.to_thread(self._wait, lambda: self.returned >= count)

    def _wait(self, done: Callable[[], bool]) -> None:
        with self._progress:
            assert self._progress.wait_for(done, timeout=5)

    def embed(self, texts: Sequence[str]) -> Matrix:
        with self._progress:
            self.calls.append((list(texts), threading.current_thread().name))
            self._progress.notify_all()
        if list(texts) != [QUESTION]:
            assert self.steps.acquire(timeout=5)
        try:
            return super().embed(texts)
        finally:
            with self._progress:
                self.returned += 1
                self._progress.notify_all()


def _stored(memory: SqliteMemory, count: int, session: str = "s1") -> list[StoredMessage]:
    return [
        memory.history.append(session, ANA.root, "user", f"note {i} about tea", tokens=4, now=NOW)
        for i in range(count)
    ]


def _row(message: StoredMessage) -> tuple[int, str, str]:
    return (message.id, message.namespace, message.content)


def _queue(memory: SqliteMemory, embedder: HashingEmbedder, **limits: int) -> EmbeddingQueue:
    return EmbeddingQueue(SqliteVectors(memory.db, embedder), memory.history, _row, **limits)


def _unembedded(memory: SqliteMemory, embedder: HashingEmbedder) -> int:
    return SqliteVectors(memory.db, embedder).unembedded()


async def test_stored_messages_are_embedded_in_batches_by_one_thread(
    memory: SqliteMemory,
) -> None:
    embedder = SteppedEmbedder()
    embedder.free()
    queue = _queue(memory, embedder, batch=4)
    await asyncio.gather(*(queue.embed(message) for message in _stored(memory, 10)))
    assert [len(texts) for texts, _ in embedder.calls] == [4, 4, 2]
    assert {thread for _, thread in embedder.calls} == {"flynn-embed_0"}
    assert _unembedded(memory, embedder) == 0
    await queue.aclose()


async def test_once_empty_and_quiet_it_hands_the_heap_back_in_its_thread(
    memory: SqliteMemory,
) -> None:
    embedder = SteppedEmbedder()
    loop = asyncio.get_running_loop()
    rested = asyncio.Event()
    seen: list[tuple[str, int]] = []  # (thread, embedding calls made by then)

    def at_rest() -> None:
        seen.append((threading.current_thread().name, len(embedder.calls)))
        loop.call_soon_threadsafe(rested.set)

    vectors = SqliteVectors(memory.db, embedder)
    queue = EmbeddingQueue(vectors, memory.history, _row, batch=1, at_rest=at_rest, quiet_seconds=0)
    waiting = [asyncio.create_task(queue.embed(message)) for message in _stored(memory, 3)]
    await embedder.entered()
    embedder.free()
    await asyncio.gather(*waiting)
    await asyncio.wait_for(rested.wait(), timeout=5)
    assert seen == [("flynn-embed_0", 3)]  # once the three batches were done, not between
    rested.clear()
    await queue.embed(_stored(memory, 1, session="s2")[0])
    await asyncio.wait_for(rested.wait(), timeout=5)
    assert seen[1:] == [("flynn-embed_0", 4)]  # and again after the next work
    await asyncio.wait_for(queue.rested(), timeout=5)
    await queue.aclose()


class NicenessEmbedder(HashingEmbedder):
    """Records the niceness of each thread it embeds in."""

    def __init__(self) -> None:
        self.niceness: list[int] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.niceness.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        return super().embed(texts)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="threads' own niceness: Linux")
async def test_stored_messages_are_embedded_at_a_lower_priority_than_turns(
    memory: SqliteMemory,
) -> None:
    ours = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    if ours + BACKGROUND_NICENESS > 19:
        pytest.skip("the tests run too nicely for the thread to be any nicer")
    embedder = NicenessEmbedder()
    queue = _queue(memory, embedder)
    await asyncio.gather(*(queue.embed(message) for message in _stored(memory, 3)))
    assert embedder.niceness == [ours + BACKGROUND_NICENESS]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == ours  # the loop's
    await queue.aclose()


async def test_the_question_never_waits_behind_stored_messages(memory: SqliteMemory) -> None:
    embedder = SteppedEmbedder()
    queue = _queue(memory, embedder, batch=1)
    waiting = [asyncio.create_task(queue.embed(message)) for message in _stored(memory, 5)]
    await embedder.entered()
    assert queue.waiting == 4  # one batch in the (blocked) thread, the rest behind it
    vectors = SqliteVectors(memory.db, embedder)
    question = await asyncio.wait_for(vectors.embed_in_thread([QUESTION]), timeout=5)
    assert question.shape[0] == 1 and not any(task.done() for task in waiting)
    embedder.free()
    await asyncio.gather(*waiting)
    assert _unembedded(memory, embedder) == 0
    await queue.aclose()


async def test_new_messages_go_before_the_rest_of_a_catch_up(memory: SqliteMemory) -> None:
    embedder = SteppedEmbedder()
    queue = _queue(memory, embedder, batch=2)
    _stored(memory, 6)  # stored before embeddings were on
    behind = asyncio.create_task(queue.catch_up(None))
    await embedder.entered()  # the pass's first batch is in the thread
    (new,) = _stored(memory, 1, session="s2")
    fresh = asyncio.create_task(queue.embed(new))
    embedder.step(2)  # the pass's first batch, then the new message (the pass waits)
    await asyncio.wait_for(fresh, timeout=5)
    assert not behind.done()
    assert [texts for texts, _ in embedder.calls][1] == [new.content]
    embedder.free()
    assert await behind == 6  # the new message already had its vector
    assert _unembedded(memory, embedder) == 0
    await queue.aclose()


async def test_a_catch_up_asked_for_during_a_pass_runs_a_pass_of_its_own(
    memory: SqliteMemory,
) -> None:
    # The running pass has read past a message that loses its vector meanwhile (a forget
    # redacted it); the pass asked for then must not join the running one.
    embedder = SteppedEmbedder()
    queue = _queue(memory, embedder, batch=2)
    first, *_ = _stored(memory, 6)
    running = asyncio.create_task(queue.catch_up(ANA.root))
    embedder.step()  # the first batch (the first two messages) is stored
    await embedder.entered(2)  # stored, as the next batch is taken only then
    memory.db.execute("DELETE FROM embeddings WHERE ref_id = ?", (first.id,))
    again = asyncio.create_task(queue.catch_up(ANA.root))
    embedder.free()
    assert await running == 6
    assert await again == 1
    assert _unembedded(memory, embedder) == 0
    await queue.aclose()


async def test_past_its_limit_a_message_waits_for_a_catch_up_and_none_is_lost(
    memory: SqliteMemory,
) -> None:
    embedder = SteppedEmbedder()
    queue = _queue(memory, embedder, batch=2, limit=2)
    messages = _stored(memory, 6)
    with structlog.testing.capture_logs() as logs:
        waiting = [asyncio.create_task(queue.embed(message)) for message in messages]
        await asyncio.wait(waiting[2:], timeout=5)
        await embedder.entered()
    # The first two are queued (and now in the thread); the other four return at once.
    assert [task.done() for task in waiting] == [False, False, True, True, True, True]
    assert [log["event"] for log in logs].count("memory.embedding_backlog") == 1
    embedder.free()
    await asyncio.gather(*waiting)
    await queue.catch_up(ANA.root)  # after the pass the overflow asked for (or joining it)
    assert _unembedded(memory, embedder) == 0
    assert sorted(len(texts) for texts, _ in embedder.calls) == [2, 2, 2]
    await queue.aclose()


async def test_a_forget_while_queued_wins(memory: SqliteMemory) -> None:
    embedder = SteppedEmbedder()
    queue = _queue(memory, embedder)
    (kept,) = _stored(memory, 1)
    (doomed,) = _stored(memory, 1, session="s2")
    waiting = [asyncio.create_task(queue.embed(message)) for message in (kept, doomed)]
    await embedder.entered()
    memory.history.forget_session("s2")  # while its vector is being computed
    embedder.free()
    await asyncio.gather(*waiting)
    rows = memory.db.fetchall("SELECT ref_id FROM embeddings")
    assert [row[0] for row in rows] == [kept.id]
    await queue.aclose()


async def test_closing_releases_whoever_waits_and_stores_nothing_more(
    memory: SqliteMemory,
) -> None:
    embedder = SteppedEmbedder()
    queue = _queue(memory, embedder, batch=1)
    waiting = [asyncio.create_task(queue.embed(message)) for message in _stored(memory, 3)]
    behind = asyncio.create_task(queue.catch_up(None))
    await embedder.entered()
    await asyncio.wait_for(queue.aclose(), timeout=5)
    await asyncio.wait_for(asyncio.gather(*waiting), timeout=5)
    assert await asyncio.wait_for(behind, timeout=5) == 0
    embedder.free()  # the thread finishes its batch; the result is dropped
    await embedder.finished()
    assert _unembedded(memory, embedder) == 3
    # Closed: later calls return at once.
    assert await queue.catch_up(None) == 0


async def test_under_steady_traffic_a_catch_up_still_moves(memory: SqliteMemory) -> None:
    embedder = SteppedEmbedder()
    queue = _queue(memory, embedder, batch=1)
    for index in range(4):
        memory.history.append("old", ANA.root, "user", f"old {index}", tokens=2, now=NOW)
    behind = asyncio.create_task(queue.catch_up(None))
    await embedder.entered()  # its first batch is in the thread
    fresh = [
        memory.history.append("new", ANA.root, "user", f"new {index}", tokens=2, now=NOW)
        for index in range(12)
    ]
    waiting = [asyncio.create_task(queue.embed(message)) for message in fresh]
    embedder.free()
    await asyncio.gather(behind, *waiting)
    order = [texts[0].splitlines()[-1] for texts, _ in embedder.calls]  # in its context
    # A pass batch after every four new ones, not only once the new ones are done.
    assert order.index("old 1") < order.index("new 11")
    assert order[:6] == ["old 0", "new 0", "new 1", "new 2", "new 3", "old 1"]
    await queue.aclose()


class FlakyVectors(SqliteVectors):
    """``pending`` fails ``failures`` times (a locked database, say), then works."""

    failures = 1

    def pending(
        self, namespace_prefix: str | None, *, after: int, limit: int
    ) -> list[tuple[int, str, str]]:
        if self.failures:
            self.failures -= 1
            raise RuntimeError("database is locked")
        return super().pending(namespace_prefix, after=after, limit=limit)


def _free() -> SteppedEmbedder:
    embedder = SteppedEmbedder()
    embedder.free()
    return embedder


async def _caught_up_after_a_failure(
    memory: SqliteMemory, vectors: SqliteVectors
) -> EmbeddingQueue:
    """A queue whose catch-up of three stored messages met one failure and embedded them all
    by trying again."""
    queue = EmbeddingQueue(vectors, memory.history, _row, batch=2)
    _stored(memory, 3)
    with structlog.testing.capture_logs() as logs:
        assert await queue.catch_up(None) == 3
    assert [e.get("gives_up") for e in logs if e["event"] == "memory.embedding_failed"] == [False]
    return queue


async def test_a_failed_batch_is_tried_again(
    memory: SqliteMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("flynn.learning.embedding_queue._RETRY_SECONDS", 0.0)
    vectors = FlakyVectors(memory.db, _free())
    queue = await _caught_up_after_a_failure(memory, vectors)
    # Three failures in a row, and the pass gives up (the next one starts afresh).
    vectors.failures = 3
    _stored(memory, 1, session="s2")
    assert await queue.catch_up(None) == 0
    assert await queue.catch_up(None) == 1
    await queue.aclose()


class FailingOnce(SteppedEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.free()
        self.failed = False

    def embed(self, texts: Sequence[str]) -> Matrix:
        if not self.failed:
            self.failed = True
            raise MemoryError("out of memory")
        return super().embed(texts)


async def test_messages_the_model_failed_on_get_a_catch_up(memory: SqliteMemory) -> None:
    embedder = FailingOnce()
    queue = _queue(memory, embedder)
    messages = _stored(memory, 2)
    with structlog.testing.capture_logs():
        await asyncio.gather(*(queue.embed(message) for message in messages))
    await queue.catch_up(ANA.root)  # after the pass the failure asked for
    assert _unembedded(memory, embedder) == 0
    await queue.aclose()


class BeforeStore(SqliteVectors):
    """Runs ``before()`` as each ``store`` begins, between a batch's vectors being computed
    and their transaction."""

    def before(self) -> None:
        pass

    def store(
        self,
        kind: str,
        rows: Sequence[tuple[int, str, str]],
        vectors: Matrix,
        *,
        still: Still | None = None,
    ) -> int:
        self.before()
        return super().store(kind, rows, vectors, still=still)


class ForgetBeforeStore(BeforeStore):
    """Another process (``flynn memory forget``, on a connection of its own) forgets Ana in
    the moment between the batch's vectors being computed and their ``store``."""

    def __init__(self, memory: SqliteMemory, embedder: HashingEmbedder) -> None:
        super().__init__(memory.db, embedder)
        self._path = memory.db.path
        self.forgot = False

    def before(self) -> None:
        if not self.forgot:
            self.forgot = True
            with SqliteMemory.open(self._path, SCHEMA) as other_process:
                other_process.forget_namespace(ANA.root)


@pytest.mark.parametrize("how", ["catch-up", "new message"])
async def test_a_forget_by_another_process_just_before_the_store_wins(
    memory: SqliteMemory, how: str
) -> None:
    embedder = SteppedEmbedder()
    embedder.free()
    vectors = ForgetBeforeStore(memory, embedder)
    queue = EmbeddingQueue(vectors, memory.history, _row)
    messages = _stored(memory, 3)
    if how == "catch-up":
        assert await queue.catch_up(ANA.root) == 0
    else:
        await asyncio.gather(*(queue.embed(message) for message in messages))
    assert vectors.forgot
    # No vector of a forgotten message is written back: none would ever be deleted.
    assert memory.db.fetchall("SELECT ref_id FROM embeddings") == []
    await queue.aclose()


class FullDiskOnce(BeforeStore):
    """The first ``store`` fails as a full disk makes it fail; later ones work."""

    full = True

    def before(self) -> None:
        if self.full:
            self.full = False
            raise StoreError("database statement failed: database or disk is full")


async def test_a_batch_whose_vectors_could_not_be_stored_is_tried_again(
    memory: SqliteMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("flynn.learning.embedding_queue._RETRY_SECONDS", 0.0)
    embedder = _free()
    queue = await _caught_up_after_a_failure(memory, FullDiskOnce(memory.db, embedder))
    assert _unembedded(memory, embedder) == 0
    await queue.aclose()
