"""Stored messages waiting for their vectors, embedded in the background by one task.

A sentence encoder takes milliseconds per message, and every turn stores two. Run each in a
thread of the default pool, and a burst of turns queues dozens of them ahead of the one
embedding a reply waits for (the question's, ``Recall.query_vectors``): on the gateway
benchmark with MiniLM, the median reply took 2.4 s. Here one task embeds stored messages in
batches (cheaper per message) in a thread of its own, so at most one core goes to them and the
question's embedding never waits in their queue. That thread runs at a lower priority
(``BACKGROUND_NICENESS``): when a turn's recall wants the core, the turn gets it. With
``give_way`` (the recall worker's ``RecallsInFlight.give_way``) it also embeds a text at a time
and waits, before each, for the recall work then in flight (a question's embedding, its search)
to end: a lower priority only counts on a core both threads want, and on two cores the stored
turn's embedding otherwise ran beside the question's, sharing the cache and the memory bus with
it, and took a core when anything else ran. It never waits for recall work that began after it
started waiting, so steady recalls do not starve it.

A long message's later windows (``flynn.memory.windows``) are embedded right after its batch is
stored, as that batch's work (a model call each: ``docs/embeddings.md``).

Two kinds of work share the task, a batch at a time:

- *new messages* (``embed``), first: a turn just stored, whose session waits for its vector
  before it counts as idle. The queue of them is bounded: past ``limit``, a message is not
  queued but left to a catch-up pass of its namespace. Nothing is lost: it is found by words a
  little longer.
- *catch-up passes* (``catch_up``), in the order asked: every message of a namespace that has
  no vector, read from the database in id order, a batch between new messages (and at least
  one batch in five, so a pass ends under steady traffic too). Messages stored before
  embeddings were on, those a forget redacted, those a burst left behind, those the model
  failed on. A pass asked for while another of the same namespace runs is a pass of its own
  (the running one may have read past what the new one is for); a pass retries a failed batch
  twice (a locked database, say), then gives up until the next one. A batch the model fails on
  is embedded a message at a time, and a message it fails on alone is left without a vector
  (``flynn.memory.vectors.embed_each``): one text the model refuses must not keep every later
  message of the person from theirs. A batch it fails on every message of is skipped at once,
  not retried after a pause, and read once more when the pass reaches its end (the failure
  may have been a moment's); three in a row, and the pass gives up.

Once the queue has been empty for ``QUIET_SECONDS`` it hands the process's freed heap back to
the system (``at_rest``, glibc's ``malloc_trim``), in its thread: the model's activations for a
long turn and the recall threads' search buffers stay resident once freed otherwise, and a
daemon at rest held 25 MiB more for them (``docs/embeddings.md``). So do the pages of the
people's vectors mapped from files (``VectorIndex.rest``: 40 MiB at 100,000 turns), which stay
in the page cache. Not while busy: what is handed back is faulted in again by the next batch.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

import structlog

from flynn.errors import EmbeddingFailed
from flynn.memory.store import History, StoredMessage
from flynn.memory.vectors import Row, VectorStore, embed_each, passages

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

log = structlog.get_logger(__name__)

T = TypeVar("T")

_FAIR_SHARE = 4
"""Batches of new messages in a row before a waiting catch-up pass gets one."""
_PASS_ATTEMPTS = 3
"""Failed batches after which a catch-up pass gives up (the next start tries again)."""
_RETRY_SECONDS = 1.0
QUIET_SECONDS = 5.0
"""How long the queue stays empty before the process's freed heap is handed back."""
BACKGROUND_NICENESS = 10
"""Added to the embedding thread's niceness (Linux schedules each thread on its own): beside a
busy thread of niceness 0 on one core it gets about a tenth of it (the kernel's weights 110
against 1,024), so a turn's recall and the question's embedding are not slowed by the stored
turns' embeddings, which still get every core nothing else wants."""


class VectorWriter(VectorStore, Protocol):
    """Stores embeddings of ``(ref_id, namespace, text)`` rows (``SqliteVectors`` is one)."""

    @property
    def ready(self) -> bool: ...

    def add(self, kind: str, rows: Sequence[Row]) -> None: ...

    async def embed_in_thread(
        self, texts: Sequence[str], *, executor: Executor | None = None
    ) -> Matrix: ...

    def embed(self, texts: Sequence[str]) -> Matrix: ...

    def pending(self, namespace_prefix: str | None, *, after: int, limit: int) -> list[Row]: ...

    def rest(self) -> None:
        """Hands back what the process need not hold at rest (``SqlVectors.rest``: the mapped
        rows, the free heap). Never raises."""

    def store_pending(
        self,
        namespace_prefix: str | None,
        read: Sequence[Row],
        rows: Sequence[Row],
        vectors: Matrix,
    ) -> int: ...

    def store_passages(self, rows: Sequence[Row], vectors: Matrix) -> int: ...

    def unembedded(self, namespace_prefix: str | None = None) -> int: ...


@dataclass(slots=True)
class _Pass:
    """A catch-up pass over one namespace prefix (``None``: every namespace)."""

    prefix: str | None
    waiters: list[asyncio.Future[int]] = field(default_factory=list)
    after: int = 0  # the last message id read
    embedded: int = 0
    started: bool = False
    failures: int = 0
    refused: int = 0  # batches in a row the model failed on every text of
    skipped_after: int | None = None  # where the first batch it refused began, not read again
    swept: bool = False  # whether the pass went back for what it skipped


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
        at_rest: Callable[[], None] | None = None,
        quiet_seconds: float = QUIET_SECONDS,
        give_way: Callable[[], None] | None = None,
    ) -> None:
        """``at_rest`` (``vectors.rest`` unless given) runs in the queue's thread once it has
        been empty for ``quiet_seconds`` after some work; it must not raise. ``give_way`` runs
        in the queue's thread before each text is embedded, and returns when the text may be
        (it must not raise, and must return in bounded time)."""
        self._vectors = vectors
        self._history = history
        self._row = row
        self._batch = max(1, batch)
        self._limit = max(1, limit)
        self._waiting: deque[tuple[StoredMessage, asyncio.Future[None]]] = deque()
        self._passes: deque[_Pass] = deque()
        self._worker: asyncio.Task[None] | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._closed = False
        self._at_rest = vectors.rest if at_rest is None else at_rest
        self._quiet = quiet_seconds
        self._resting: asyncio.TimerHandle | None = None
        self._rested = asyncio.Event()
        self._give_way = give_way

    @property
    def waiting(self) -> int:
        """New messages queued (not yet in the thread)."""
        return len(self._waiting)

    async def embed(self, stored: StoredMessage) -> None:
        """Returns once ``stored`` has its vector, or was left to a catch-up pass (the queue
        was full), or was forgotten meanwhile. Never raises but on cancellation."""
        if self._closed or stored.offline:
            return
        if len(self._waiting) >= self._limit:
            if not any(p.prefix == stored.namespace and not p.started for p in self._passes):
                log.warning(
                    "memory.embedding_backlog", waiting=len(self._waiting), limit=self._limit
                )
            self._ask(stored.namespace)
            return
        done = asyncio.get_running_loop().create_future()
        self._waiting.append((stored, done))
        self._start()
        await asyncio.shield(done)  # the waiter may be cancelled; the message stays queued

    def catch_up_later(self, namespace_prefix: str | None) -> None:
        """Asks for a catch-up pass under ``namespace_prefix`` (``None``: anywhere) and returns
        at once."""
        if not self._closed:
            self._ask(namespace_prefix)

    async def catch_up(self, namespace_prefix: str | None) -> int:
        """Embeds every message under ``namespace_prefix`` (``None``: anywhere) that has no
        vector, in a pass that starts after this call; returns how many it embedded. Never
        raises but on cancellation."""
        if self._closed:
            return 0
        done: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._ask(namespace_prefix).waiters.append(done)
        return await asyncio.shield(done)

    async def aclose(self) -> None:
        """Stops: what is still queued is left to the next catch-up (``flynn memory embed``,
        or the daemon's next start). A batch already in the thread finishes there, unused."""
        self._closed = True
        if self._resting is not None:
            self._resting.cancel()
            self._resting = None
        worker, self._worker = self._worker, None
        if worker is not None:
            worker.cancel()
            await asyncio.gather(worker, return_exceptions=True)
        while self._waiting:
            _, done = self._waiting.popleft()
            _resolve(done, None)
        while self._passes:
            for waiter in self._passes.popleft().waiters:
                _resolve(waiter, 0)
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None

    def _ask(self, prefix: str | None) -> _Pass:
        """A pass over ``prefix`` that has not started: one already asked for, or a new one."""
        for queued in self._passes:
            if queued.prefix == prefix and not queued.started:
                break
        else:
            queued = _Pass(prefix)
            self._passes.append(queued)
        self._start()
        return queued

    async def rested(self) -> None:
        """Returns once the queue, quiet since its last work, has run ``at_rest`` (at once
        when it has and nothing came since). For a measurement of the process at rest."""
        await self._rested.wait()

    def _start(self) -> None:
        self._rested.clear()
        if self._resting is not None:
            self._resting.cancel()
            self._resting = None
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._run(), name="embeddings")

    def _thread(self) -> ThreadPoolExecutor:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="flynn-embed", initializer=_in_background
            )
        return self._executor

    async def _run(self) -> None:
        in_a_row = 0  # batches of new messages since the last catch-up batch
        while self._waiting or self._passes:
            # New messages first, but a pass still gets one batch in ``_FAIR_SHARE``: under
            # steady traffic the start-up catch-up and a forget's pass must end one day.
            if self._waiting and not (self._passes and in_a_row >= _FAIR_SHARE):
                in_a_row += 1
                await self._new_batch()
            else:
                in_a_row = 0
                await self._pass_batch(self._passes[0])
        if not self._closed:
            loop = asyncio.get_running_loop()
            self._resting = loop.call_later(self._quiet, self._rest)

    def _rest(self) -> None:
        """Quiet for ``quiet_seconds``: ``at_rest`` in the thread (a batch asked for meanwhile
        would have cancelled this; one asked for now waits behind it)."""
        self._resting = None
        if not self._closed:
            done = asyncio.get_running_loop().run_in_executor(self._thread(), self._at_rest)
            done.add_done_callback(self._after_rest)

    def _after_rest(self, done: asyncio.Future[None]) -> None:
        if not done.cancelled() and done.exception() is not None:
            log.error("memory.heap_trim_failed", exc_info=done.exception())
        elif self._resting is None and self._worker is not None and self._worker.done():
            self._rested.set()  # unless work came meanwhile, which rests again after

    async def _new_batch(self) -> None:
        size = min(self._batch, len(self._waiting))
        batch = [self._waiting.popleft() for _ in range(size)]
        try:
            await self._embed_new([stored for stored, _ in batch])
        except Exception as exc:
            # A catch-up pass tries them again, a message at a time. The model's failure was
            # told once for its kind (``ModelFailures``): no traceback a batch for it.
            if isinstance(exc, EmbeddingFailed):
                log.debug("memory.embedding_failed", messages=len(batch))
            else:
                log.exception("memory.embedding_failed", messages=len(batch))
            for namespace in {stored.namespace for stored, _ in batch}:
                self._ask(namespace)
        finally:
            for _, done in batch:
                _resolve(done, None)

    async def _pass_batch(self, current: _Pass) -> None:
        current.started = True
        try:
            finished = await self._catch_up_batch(current)
        except Exception:
            # A locked database, say: try again a little later; a pass gives up after a few.
            current.failures += 1
            finished = current.failures >= _PASS_ATTEMPTS
            log.exception("memory.embedding_failed", namespace=current.prefix, gives_up=finished)
            if not finished:
                await asyncio.sleep(_RETRY_SECONDS * current.failures)
        if finished:
            self._passes.popleft()
            for waiter in current.waiters:
                _resolve(waiter, current.embedded)
            if current.embedded:
                log.info(
                    "memory.embedded_behind", namespace=current.prefix, messages=current.embedded
                )

    async def _embed_new(self, batch: list[StoredMessage]) -> None:
        """Embeds ``batch`` and stores the vectors of the messages still as they were, checked
        inside the store's transaction (a forget meanwhile wins, for the message or the one
        before it, made here or by another process)."""
        rows = [self._row(stored) for stored in batch]
        texts = [text for _, _, text in rows]
        if self._give_way is None:
            vectors = await self._vectors.embed_in_thread(texts, executor=self._thread())
        else:
            loop = asyncio.get_running_loop()
            vectors = await loop.run_in_executor(self._thread(), self._embed_giving_way, texts)

        def still() -> list[int]:
            ids = [row[0] for row in rows]
            current = {message.id: message for message in self._history.messages(ids)}
            return [
                index
                for index, row in enumerate(rows)
                if row[0] in current and self._row(current[row[0]]) == row
            ]

        self._vectors.store("message", rows, vectors, still=still)
        await self._embed_passages(rows)

    async def _catch_up_batch(self, current: _Pass) -> bool:
        """Embeds the next batch of ``current``'s pass; returns whether the pass is done. Only
        rows still as they were read, checked inside the store's transaction, are stored (a
        forget meanwhile wins, made here or by another process; it asks for a pass of its
        own)."""
        read = self._vectors.pending(current.prefix, after=current.after, limit=self._batch)
        if not read and current.skipped_after is not None and not current.swept:
            # A failure of a moment (out of memory once) must not leave the batches it met
            # without vectors until the next start: they are read once more at the end.
            current.after, current.swept = current.skipped_after, True
            read = self._vectors.pending(current.prefix, after=current.after, limit=self._batch)
        if not read:
            return True
        loop = asyncio.get_running_loop()
        try:
            embed = self._vectors.embed if self._give_way is None else self._embed_giving_way
            rows, vectors = await loop.run_in_executor(self._thread(), embed_each, embed, read)
        except EmbeddingFailed:
            # The model failed on each of these texts alone (``embed_each``): trying them again
            # a second later would not help and would hold up the queue (new turns too). They
            # are skipped, as one text it refuses is; after a few such batches in a row (a
            # model failing on everything) the pass gives up until the next one.
            if current.skipped_after is None:
                current.skipped_after = current.after
            current.after = read[-1][0]
            current.refused += 1
            if current.refused < _PASS_ATTEMPTS:
                return False
            log.info("memory.embedding_failed", namespace=current.prefix, gives_up=True)
            return True
        current.refused = 0
        current.embedded += self._vectors.store_pending(current.prefix, read, rows, vectors)
        try:
            await self._embed_passages(rows)
        except EmbeddingFailed:
            # Their message is found by its own vector meanwhile; the next pass reads it again.
            log.debug("memory.embedding_failed", passages_of=len(rows))
        # Only now: a batch whose vectors could not be stored (a full disk, a lock held too
        # long) is read again by the pass's next attempt, not skipped until the next start.
        current.after = read[-1][0]
        return False

    async def _embed_passages(self, rows: Sequence[Row]) -> None:
        """Embeds and stores the later windows of the long messages of ``rows`` (just stored;
        ``flynn.memory.windows``), those whose message still has its vector (a forget or a
        redaction meanwhile wins: ``store_passages``). Raises what ``embed_each`` raises."""
        windows = passages(rows)
        if not windows:
            return
        loop = asyncio.get_running_loop()
        embed = self._vectors.embed if self._give_way is None else self._embed_giving_way
        kept, vectors = await loop.run_in_executor(self._thread(), embed_each, embed, windows)
        self._vectors.store_passages(kept, vectors)

    def _embed_giving_way(self, texts: Sequence[str]) -> Matrix:
        """``texts``' vectors, a text at a time, each after ``give_way``: in the queue's
        thread. The default model embeds each text alone anyway (``minilm_int8``), so its
        vectors and its cost are a batch's."""
        import numpy as np

        assert self._give_way is not None
        if not texts:
            return self._vectors.embed([])
        parts = []
        for text in texts:
            self._give_way()
            parts.append(self._vectors.embed([text]))
        return np.concatenate(parts)


def _resolve(future: asyncio.Future[T], value: T) -> None:
    if not future.done():  # a waiter's own cancellation is not the queue's business
        future.set_result(value)


def _in_background() -> None:
    """Lowers the calling thread's priority by ``BACKGROUND_NICENESS`` where the system
    schedules threads apart (Linux: ``setpriority`` on its thread id); elsewhere, or when it is
    refused, the thread runs as it is."""
    if not hasattr(os, "setpriority") or not hasattr(threading, "get_native_id"):
        return
    thread = threading.get_native_id()
    try:
        current = os.getpriority(os.PRIO_PROCESS, thread)
        os.setpriority(os.PRIO_PROCESS, thread, min(19, current + BACKGROUND_NICENESS))
    except OSError:
        log.warning("memory.embeddings_priority_unchanged", exc_info=True)
