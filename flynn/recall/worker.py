"""Recall off the event loop (``RecallWorker``): a turn's query embedding, vector and word search
and ranking run in a few worker threads, each with its own read-only connection (SQLite) or on
a database every thread may share (PostgreSQL's pool), so that one person's recall never holds
up another person's stream. The question's embedding is computed in a thread of its own while
the recall thread searches by words (the model releases the GIL): the turn waits for the
longer of the two, not their sum. A turn may start that embedding sooner still
(``embed_question``), as soon as its message is final, so that it also runs beside the turn's
work before recall (storing the message, loading the session). Both count as recall work in
flight (``in_flight``), which the stored turns' background embedding gives way to.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from datetime import datetime
from typing import TypeVar

from flynn.memory.database import Database
from flynn.memory.vectors import QueryVectorsLater
from flynn.recall.in_flight import RecallsInFlight
from flynn.recall.recall import Recall, RecalledMemory

T = TypeVar("T")

OpenRecall = Callable[[Database], Recall]
"""Builds a ``Recall`` over a reader's connection (its own stores, sharing the writer's
``VectorIndex``); called once in each worker thread."""

THREADS = 2
"""Worker threads: recalls of two people at once on the two cores the daemon is sized for;
a third waits for one to finish (the event loop does not)."""


class RecallWorker:
    """Runs recall in ``threads`` threads, each reading through a connection it opened
    (``Database.open_reader``) and a ``Recall`` built over it by ``open_recall``.

    The writer (``writer``, the event loop's connection) stays the only one that writes; before
    each job it publishes what it changed (``Database.publish_rewrites``), so caches kept in a
    worker drop the rows the loop rewrote. Use it from the event loop's thread; ``close`` it
    (before the writer) to end the threads and their connections."""

    def __init__(self, writer: Database, open_recall: OpenRecall, *, threads: int = THREADS):
        self._start(
            writer.publish_rewrites,
            functools.partial(self._open_reader, writer, open_recall),
            threads,
        )

    @classmethod
    def sharing(cls, open_recall: Callable[[], Recall], *, threads: int = THREADS) -> RecallWorker:
        """Runs recall in ``threads`` threads over a database every thread may use at once
        (``PostgresDatabase``: each statement takes a connection of its pool): each thread's
        ``Recall`` comes from ``open_recall`` (its own stores and caches, over that one
        database), with no connection of its own to open or close, and nothing to publish
        before a job (a store sees what any worker changed through the database's own
        counters, ``Facts.generation`` and the vectors' version)."""
        worker = cls.__new__(cls)
        worker._start(_nothing, open_recall, threads)
        return worker

    def _start(
        self, publish: Callable[[], None], open_thread: Callable[[], Recall], threads: int
    ) -> None:
        self._publish = publish
        self._open_thread = open_thread
        self._local = threading.local()
        self._opened: list[Database] = []
        self._opened_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="flynn-recall")
        # Two embeddings a recall (a question and its topic), at once when the other recall
        # thread is idle: one embedding thread per recall thread.
        self._embedding = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="flynn-query")
        self._closed = False
        self.in_flight = RecallsInFlight()
        """The recalls and question embeddings running in this worker's threads."""

    async def call(self, work: Callable[[Recall], T]) -> T:
        """``work(recall)`` in a worker thread, with that thread's ``Recall``; the loop only
        awaits it. Raises what ``work`` raises (``StorageUnusable`` when the thread cannot
        open its connection). Cancelling the await leaves ``work`` to finish in its thread
        (it only reads), its result unused."""
        if self._closed:
            raise RuntimeError("the recall worker is closed")
        self._publish()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._run, work)

    def embed_question(
        self, recall: Recall, query: str, *, now: datetime
    ) -> QueryVectorsLater | None:
        """Starts ``query``'s embeddings (``Recall.embed_query_later``) in this worker's
        embedding threads and returns at once, for a ``recall`` of the same ``query`` and
        ``now`` to use; ``None`` when ranking uses no embeddings. ``recall`` only lends its
        model (every thread's ``Recall`` embeds with the same one). Only what may be embedded
        goes here: a message after the credential gate (``redact_secrets``), never before.
        A result nobody uses is computed all the same, and dropped."""
        if self._closed:
            raise RuntimeError("the recall worker is closed")
        return recall.embed_query_later(
            query, now=now, executor=_CountedIn(self._embedding, self.in_flight)
        )

    async def recall(
        self,
        root: str,
        query: str,
        *,
        now: datetime,
        budget_tokens: int,
        exclude_session: str | None = None,
        skip_lines: Sequence[str] = (),
        team: bool = False,
        query_vectors: QueryVectorsLater | None = None,
    ) -> RecalledMemory:
        """``Recall.recall`` in a worker thread, with the query's embeddings
        (``Recall.embed_query``) computed in another meanwhile, or those ``embed_question``
        started (``query_vectors``) for this ``query`` and ``now``."""
        return await self.call(
            functools.partial(
                _recall,
                embedding=_CountedIn(self._embedding, self.in_flight),
                query_vectors=query_vectors,
                root=root,
                query=query,
                now=now,
                budget_tokens=budget_tokens,
                exclude_session=exclude_session,
                skip_lines=tuple(skip_lines),
                team=team,
            )
        )

    def close(self) -> None:
        """Waits for the jobs running, drops those queued, then closes each thread's
        connection (its thread has ended, so closing it from here is safe). Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._executor.shutdown(wait=True, cancel_futures=True)
        self._embedding.shutdown(wait=True, cancel_futures=True)  # none left once recalls end
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for db in opened:
            db.close()

    def _run(self, work: Callable[[Recall], T]) -> T:
        recall: Recall | None = getattr(self._local, "recall", None)
        if recall is None:
            recall = self._open_thread()
            self._local.recall = recall
        with self.in_flight.running():
            return work(recall)

    def _open_reader(self, writer: Database, open_recall: OpenRecall) -> Recall:
        """This thread's read connection to ``writer``'s file and its ``Recall``."""
        db = Database.open_reader(writer)
        try:
            recall = open_recall(db)
        except BaseException:
            db.close()  # the next job opens another: one kept per failure would pile up
            raise
        with self._opened_lock:
            self._opened.append(db)
        return recall


def _recall(
    recall: Recall,
    *,
    embedding: Executor,
    query_vectors: QueryVectorsLater | None,
    root: str,
    query: str,
    now: datetime,
    budget_tokens: int,
    exclude_session: str | None,
    skip_lines: tuple[str, ...],
    team: bool,
) -> RecalledMemory:
    vectors = query_vectors
    if vectors is None and budget_tokens > 0:
        vectors = recall.embed_query_later(query, now=now, executor=embedding)
    return recall.recall(
        root,
        query,
        now=now,
        budget_tokens=budget_tokens,
        exclude_session=exclude_session,
        skip_lines=skip_lines,
        query_vectors=vectors,
        team=team,
    )


def _nothing() -> None:
    return None


class _CountedIn(Executor):
    """Submits to ``executor``, each call counted as recall work in flight while it runs."""

    def __init__(self, executor: Executor, in_flight: RecallsInFlight) -> None:
        self._executor = executor
        self._in_flight = in_flight

    def submit(self, fn: Callable[..., T], /, *args: object, **kwargs: object) -> Future[T]:
        return self._executor.submit(self._counted, fn, *args, **kwargs)

    def _counted(self, fn: Callable[..., T], /, *args: object, **kwargs: object) -> T:
        with self._in_flight.running():
            return fn(*args, **kwargs)
