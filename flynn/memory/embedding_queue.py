"""Stored messages waiting for their vectors, embedded in the background by one task.

A sentence encoder takes milliseconds per message, and every turn stores two. Run each in a
thread of the default pool, and a burst of turns queues dozens of them ahead of the one
embedding a reply waits for (the question's, ``Recall.query_vectors``): on the gateway
benchmark with MiniLM, the median reply took 2.4 s. Here one task embeds stored messages in
batches (cheaper per message) in a thread of its own, so at most one core goes to them and the
question's embedding never waits in their queue.

The queue is bounded. Past ``limit`` waiting messages, a new one is not queued; its namespace is
noted, and once the queue is empty the task embeds whatever that namespace still lacks (the
same catch-up that follows a forget). Nothing is lost: such a message is found by words a little
longer.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol

import structlog

from flynn.memory.store import History, StoredMessage

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

log = structlog.get_logger(__name__)

Row = tuple[int, str, str]
"""``(message id, namespace, text as embedded)``."""


class VectorWriter(Protocol):
    """Stores embeddings of ``(ref_id, namespace, text)`` rows (``SqliteVectors`` is one)."""

    def add(self, kind: str, rows: Sequence[Row]) -> None: ...

    async def embed_in_thread(
        self, texts: Sequence[str], *, executor: Executor | None = None
    ) -> Matrix: ...

    def store(self, kind: str, rows: Sequence[Row], vectors: Matrix) -> None: ...

    async def backfill_in_thread(
        self, namespace_prefix: str | None, *, executor: Executor | None = None
    ) -> int: ...


class EmbeddingQueue:
    """Embeds stored messages in the background; see the module's docstring. ``row`` says
    what a message is embedded as (it reads the message before it)."""

    def __init__(
        self,
        vectors: VectorWriter,
        history: History,
        row: Callable[[StoredMessage], Row],
        *,
        batch: int = 16,
        limit: int = 256,
    ) -> None:
        self._vectors = vectors
        self._history = history
        self._row = row
        self._batch = max(1, batch)
        self._limit = max(1, limit)
        self._waiting: deque[tuple[StoredMessage, asyncio.Future[None]]] = deque()
        # Namespace prefixes to catch up (``None``: every namespace), and who waits for each.
        self._behind: dict[str | None, list[asyncio.Future[int]]] = {}
        self._worker: asyncio.Task[None] | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    async def embed(self, stored: StoredMessage) -> None:
        """Returns once ``stored`` has its vector, or was left to the catch-up (the queue was
        full), or was forgotten meanwhile. Never raises but on cancellation."""
        if self._closed:
            return
        if len(self._waiting) >= self._limit:
            if stored.namespace not in self._behind:
                log.warning(
                    "memory.embedding_backlog", waiting=len(self._waiting), limit=self._limit
                )
                self._behind[stored.namespace] = []
            self._start()
            return
        done = asyncio.get_running_loop().create_future()
        self._waiting.append((stored, done))
        self._start()
        await asyncio.shield(done)  # the waiter may be cancelled; the message stays queued

    async def catch_up(self, namespace_prefix: str | None) -> int:
        """Embeds every message under ``namespace_prefix`` (``None``: anywhere) that has no
        vector, once the queue ahead is done; returns how many. Never raises but on
        cancellation."""
        if self._closed:
            return 0
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._behind.setdefault(namespace_prefix, []).append(done)
        self._start()
        return await asyncio.shield(done)

    async def aclose(self) -> None:
        """Stops: what is still queued is left to the next catch-up (``flynn memory embed``,
        or the daemon's next start)."""
        self._closed = True
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.cancel()
            await asyncio.gather(worker, return_exceptions=True)
        while self._waiting:
            _, done = self._waiting.popleft()
            if not done.done():
                done.set_result(None)
        for futures in self._behind.values():
            for future in futures:
                if not future.done():
                    future.set_result(0)
        self._behind.clear()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    def _start(self) -> None:
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._run(), name="embeddings")

    def _thread(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="flynn-embed")
        return self._executor

    async def _run(self) -> None:
        while self._waiting or self._behind:
            if self._waiting:
                batch = [
                    self._waiting.popleft() for _ in range(min(self._batch, len(self._waiting)))
                ]
                try:
                    await self._embed_batch([stored for stored, _ in batch])
                except Exception:
                    log.exception("memory.embedding_failed", messages=len(batch))
                finally:
                    for _, done in batch:
                        if not done.done():
                            done.set_result(None)
                continue
            prefix = next(iter(self._behind))
            count = 0
            try:
                count = await self._vectors.backfill_in_thread(prefix, executor=self._thread())
            except Exception:
                log.exception("memory.embedding_failed", namespace=prefix)
            finally:
                for future in self._behind.pop(prefix, []):
                    if not future.done():
                        future.set_result(count)
            if count:
                log.info("memory.embedded_behind", namespace=prefix, messages=count)

    async def _embed_batch(self, batch: list[StoredMessage]) -> None:
        """Embeds ``batch`` and stores the vectors of the messages still as they were (a
        forget meanwhile wins, for the message or the one before it)."""
        rows = [self._row(stored) for stored in batch]
        vectors = await self._vectors.embed_in_thread(
            [text for _, _, text in rows], executor=self._thread()
        )
        current = {message.id: message for message in self._history.messages([r[0] for r in rows])}
        kept = [
            index
            for index, row in enumerate(rows)
            if row[0] in current and self._row(current[row[0]]) == row
        ]
        if kept:
            self._vectors.store("message", [rows[index] for index in kept], vectors[kept])
