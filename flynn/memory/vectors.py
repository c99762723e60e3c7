"""Local embeddings (``memory.embeddings``, on by default): one vector per stored message in the
``embeddings`` table (float16, 768 bytes with MiniLM), and one per later window of a long one
(kind ``passage``: ``flynn.memory.windows``), and cosine search over a
namespace with numpy: row by row in a small one, in the lists nearest the question in a large
one (``flynn.memory.vector_lists``).

numpy is imported only when vectors are used: with embeddings off it is never loaded. A
namespace's vectors are kept in memory once searched (``flynn.memory.vector_index``: int8, shared
by every thread's ``SqliteVectors`` built on the same index); rows this process adds join them,
and a deleted row (a forget here, or any write by another process) drops them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import structlog

from flynn.memory.database import Database
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.sql import TransactionalSql
from flynn.memory.vector_index import Snapshot, VectorIndex
from flynn.memory.windows import LONG_CHARS, later_windows, passage_id, turn_of

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors, locally."""

    @property
    def model(self) -> str:
        """Names the model; vectors of different models are never compared."""
        ...

    @property
    def ready(self) -> bool:
        """Whether ``embed`` can be called: false while the model loads in the background
        (``flynn.recall.embeddings.LoadingEmbedder``), and for good when it cannot load."""
        ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One row per text, each of unit length (or zero for a text with no known words)."""
        ...


@dataclass(frozen=True, slots=True)
class QueryVectors:
    """A question's embeddings, computed before ranking (off the event loop): the whole
    question, and its topic without the names it mentions (``QueryAnalysis.topic_text``)."""

    question: Matrix
    topic: Matrix | None = None


@dataclass(frozen=True, slots=True)
class QueryVectorsLater:
    """A question's embeddings still being computed in other threads (``RecallWorker``): the
    question's and its topic's each in its own, while ranking's word search runs; ranking waits
    for them when it needs them. Each future holds one row."""

    question: Future[Matrix]
    topic: Future[Matrix] | None = None

    def result(self) -> QueryVectors:
        """Waits for both; raises what computing either raised."""
        topic = self.topic.result()[0] if self.topic is not None else None
        return QueryVectors(self.question.result()[0], topic)


def awaited(vectors: QueryVectors | QueryVectorsLater | None) -> QueryVectors | None:
    """``vectors``, waiting for them when they are still being computed; raises what computing
    them raised."""
    return vectors.result() if isinstance(vectors, QueryVectorsLater) else vectors


Still = Callable[[], Sequence[int]]
"""The indexes of the rows being stored that still get their vectors, asked inside the store's
transaction (``SqliteVectors.store``)."""


class VectorStore(Protocol):
    def store(
        self,
        kind: str,
        rows: Sequence[tuple[int, str, str]],
        vectors: Matrix,
        *,
        still: Still | None = None,
    ) -> int:
        """Stores ``(ref_id, namespace, text)`` rows with their ``vectors`` (those ``still``
        names, when given); returns how many."""
        ...


class VectorSearch(Protocol):
    @property
    def model(self) -> str:
        """The embedding model the vectors come from."""
        ...

    @property
    def ready(self) -> bool:
        """Whether the model is loaded; until then recall is by words (``Embedder.ready``)."""
        ...

    def nearest(
        self,
        namespace_prefix: str,
        text: str,
        *,
        kind: str,
        limit: int,
        vector: Matrix | None = None,
    ) -> list[tuple[int, float]]:
        """Up to ``limit`` ``(ref_id, cosine similarity)`` pairs under ``namespace_prefix``,
        most similar first; ``vector`` is ``text``'s, when already computed."""
        ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """The texts' vectors (it blocks for as long as the model takes)."""
        ...


log = structlog.get_logger(__name__)

CONTEXT_CHARS = 200
"""How much of the message before it a message is embedded with (its end, nearest the reply)."""


def in_context(previous: str | None, text: str) -> str:
    """What a stored message is embedded as: the end of the message before it in the same
    conversation, then the message itself. A reply means what it answers ("A 1978 Westfalia,
    orange and white" answers "what year is the van?"), and on our evaluation sets turns embedded
    with their predecessor are found for about a tenth more questions than turns alone. The
    query is embedded alone."""
    previous = " ".join((previous or "").split())
    if not previous or not text.strip():  # a blank message says nothing, whatever came before
        return text
    if len(previous) > CONTEXT_CHARS:
        cut = previous[-CONTEXT_CHARS:]
        previous = cut[cut.find(" ") + 1 :] if " " in cut else cut
    return f"{previous}\n{text}"


_INSERT = """
INSERT OR REPLACE INTO embeddings (kind, ref_id, namespace, model, vector) VALUES (?, ?, ?, ?, ?)
"""
# ``+kind``: without statistics SQLite prefers the primary key's ``kind`` prefix to the
# namespace index, and so read every message's vector (80 MB at 100,000 messages: 30 ms of CPU)
# to load one person's few hundred (1 ms through the index). The unary plus rules the primary
# key out; a namespace that is most of the table loads about as fast either way.
_LOAD = f"""
SELECT ref_id, vector FROM embeddings
WHERE {namespace_scope("namespace")} AND +kind = ? AND model = ?
"""
_IDS = f"""
SELECT ref_id FROM embeddings
WHERE {namespace_scope("namespace")} AND +kind = ? AND model = ?
"""
# Messages with no vector of the model yet, or long ones without their later windows' (stored
# before windows were, or left by a failure), each with the message before it in its session
# (two probes of the (session, summarized, id) index, as ``History.previous`` does).
_PREVIOUS_CONTENT = """
(SELECT p.content FROM messages AS p WHERE p.namespace = m.namespace AND p.id = max(
    coalesce((SELECT max(id) FROM messages
              WHERE session = m.session AND summarized = 0 AND id < m.id), 0),
    coalesce((SELECT max(id) FROM messages
              WHERE session = m.session AND summarized = 1 AND id < m.id), 0)))
"""
_NO_VECTOR = f"""(NOT EXISTS (
    SELECT 1 FROM embeddings AS e WHERE e.kind = 'message' AND e.ref_id = m.id AND e.model = ?
) OR (length(m.content) > {LONG_CHARS} AND NOT EXISTS (
    SELECT 1 FROM embeddings AS e
    WHERE e.kind = 'passage' AND e.ref_id = {passage_id(0, 1)} + m.id * {passage_id(1, 0)}
    AND e.model = ?
)))"""
_UNEMBEDDED = f"""
SELECT m.id, m.namespace, m.content, {_PREVIOUS_CONTENT} AS previous FROM messages AS m
WHERE m.id > ? AND {namespace_scope("m.namespace")} AND m.offline = 0 AND {_NO_VECTOR}
ORDER BY m.id LIMIT ?
"""
_COUNT_UNEMBEDDED = f"""
SELECT count(*) AS n FROM messages AS m WHERE {namespace_scope("m.namespace")} AND m.offline = 0
AND {_NO_VECTOR}
"""
# Whether a message has its vector (``store_passages``: a window goes with its message's).
_EMBEDDED = "SELECT 1 AS n FROM embeddings WHERE kind = 'message' AND ref_id = ? AND model = ?"
_OTHER_MODELS = f"""
SELECT model, count(*) AS n FROM embeddings
WHERE {namespace_scope("namespace")} AND model != ? GROUP BY model ORDER BY model
"""
_DROP_OTHER_MODELS = f"""
DELETE FROM embeddings WHERE {namespace_scope("namespace")} AND model != ?
"""
PASSAGE_MARGIN = 0.1
"""Taken from a window's cosine before it counts for its turn: a long turn has several windows,
and the best of several cosines is higher than one by chance alone."""
PASSAGE_WEIGHT = 0.5
"""How much of what a window (less the margin) is nearer than its turn's own vector the turn
gains. Chosen on the dev sets (``docs/recall-performance.md``, "Passage vectors for long turns"):
the best of the two with no margin (0, 1) put long replies ahead of the turns that answer
(``assistant_next`` -.012 at 25 turns, session@5 -.010; ``assistant_small`` -.016, -.012);
(0.1, 0.5) is at or above today on every set, budget and session@5, and (0.15, 1) about the same.
"""
_EVERYWHERE = ("", "", "\U0010ffff")
"""``scope_params`` for every namespace: ``namespace >= ''`` and below the last code point."""
_LOAD_BATCH = 4096
"""Rows read and quantized at a time when a namespace is loaded."""


VectorsDatabase = TransactionalSql
"""What ``SqlVectors`` needs of a database: ``Sql`` with transactions."""


@dataclass(frozen=True, slots=True)
class VectorsDialect:
    """One backend's statements for ``SqlVectors``, with ``?`` or ``%s`` placeholders; each
    takes its parameters in the order ``SQLITE_VECTORS``' do."""

    insert: str
    """(kind, ref_id, namespace, model, vector): a vector replaces one of the same model."""
    ids: str
    unembedded: str
    """(after, *scope, model, model, limit): the model twice, for the message's vector and its
    windows'."""
    count_unembedded: str
    """(*scope, model, model)."""
    other_models: str
    drop_other_models: str
    embedded: str
    """(ref_id, model): a row when the message has its vector, which stays until the commit."""


SQLITE_VECTORS = VectorsDialect(
    _INSERT, _IDS, _UNEMBEDDED, _COUNT_UNEMBEDDED, _OTHER_MODELS, _DROP_OTHER_MODELS, _EMBEDDED
)


Row = tuple[int, str, str]
"""``(ref_id, namespace, text as embedded)``."""


def passages(rows: Sequence[Row]) -> list[Row]:
    """The later windows (``later_windows``) of the long message ``rows``, as rows of their
    own: ``(passage_id, namespace, window)``."""
    return [
        (passage_id(ref_id, number), namespace, window)
        for ref_id, namespace, text in rows
        for number, window in enumerate(later_windows(text), 1)
    ]


def embed_each(
    embed: Callable[[list[str]], Matrix], rows: Sequence[Row]
) -> tuple[list[Row], Matrix]:
    """``rows``' vectors (``embed`` of their texts), with the rows they are for: when ``embed``
    raises on the batch, each row alone, leaving out (and logging, by id) those it raises on:
    one text the model refuses must not keep every row after it from its vector. Raises what
    ``embed`` raised when it fails on every row (a model failing on everything is not one bad
    text)."""
    try:
        return list(rows), embed([text for _, _, text in rows])
    except Exception:  # the model's errors, of no common type (``EmbeddingFailed`` in a daemon)
        if len(rows) == 1:
            raise
    kept: list[Row] = []
    parts: list[Matrix] = []
    failure: Exception | None = None
    for row in rows:
        try:
            parts.append(embed([row[2]]))
        except Exception as exc:  # noqa: BLE001 - one text's failure: logged, the rest go on
            failure = exc
            # Its id and the error's type, not its text: what a person said stays out of the
            # log (an error's message may quote its input).
            # A line a message, not a warning: a daemon's model tells its failures once for
            # each kind (``ModelFailures``).
            log.info("memory.embedding_skipped", message=row[0], error=type(exc).__name__)
        else:
            kept.append(row)
    if not kept:
        assert failure is not None
        raise failure
    import numpy as np

    return kept, np.concatenate(parts)


def encode_vector(vector: Matrix) -> bytes:
    """A vector as both backends store it: float16 bytes."""
    import numpy as np

    return vector.astype(np.float16).tobytes()


def decode_vectors(blobs: Sequence[bytes]) -> Matrix:
    """Stored vectors (``encode_vector``), one row each, as float32."""
    import numpy as np

    blob = b"".join(blobs)
    return np.frombuffer(blob, dtype=np.float16).reshape(len(blobs), -1).astype(np.float32)


class SqlVectors:
    """``VectorSearch`` over the ``embeddings`` table of any SQL database, filled by ``add``;
    a backend says how its rows are read in batches and what version they are at.

    Use it from the thread that opened ``db``. Instances over one database share what is in
    memory by sharing ``index``."""

    def __init__(
        self,
        db: VectorsDatabase,
        dialect: VectorsDialect,
        embedder: Embedder,
        *,
        index: VectorIndex | None = None,
    ) -> None:
        self._db = db
        self._sql = dialect
        self._embedder = embedder
        self._index = VectorIndex() if index is None else index

    @property
    def index(self) -> VectorIndex:
        """What is kept in memory: hand it to the ``SqliteVectors`` of another thread."""
        return self._index

    @property
    def model(self) -> str:
        return self._embedder.model

    @property
    def ready(self) -> bool:
        return self._embedder.ready

    def add(self, kind: str, rows: Sequence[tuple[int, str, str]]) -> None:
        """Embeds and stores ``(ref_id, namespace, text)`` rows, in one transaction; a row the
        model fails on is left without a vector (``embed_each``: found by its words), unless it
        fails on every row. Long messages' later windows follow, in a transaction of their
        own (``add_passages``)."""
        if rows:
            self.store(kind, *embed_each(self._embedder.embed, rows))
            if kind == "message":
                self.add_passages(rows)

    def add_passages(self, rows: Sequence[Row]) -> int:
        """Embeds and stores the later windows of the long ``(id, namespace, text as
        embedded)`` message rows (``passages``, ``store_passages``); returns how many."""
        windows = passages(rows)
        if not windows:
            return 0
        return self.store_passages(*embed_each(self._embedder.embed, windows))

    def store_passages(self, rows: Sequence[Row], vectors: Matrix) -> int:
        """Stores windows' vectors (``passages``' rows), those of messages that have their
        own vector of this model, asked inside the store's transaction: a window goes with its
        message's vector, deleted with it (a forget, a redaction: the ``embeddings`` trigger
        of migration 23), so a window of a message changed since it was read is never kept.
        Returns how many."""
        model = self._embedder.model

        def still() -> list[int]:
            present: dict[int, bool] = {}
            for ref_id, _, _ in rows:
                turn = turn_of(ref_id)
                if turn not in present:
                    present[turn] = self._db.fetchone(self._sql.embedded, (turn, model)) is not None
            return [index for index, (ref_id, _, _) in enumerate(rows) if present[turn_of(ref_id)]]

        return self.store("passage", rows, vectors, still=still)

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self._embedder.embed(list(texts))

    async def embed_in_thread(
        self, texts: Sequence[str], *, executor: Executor | None = None
    ) -> Matrix:
        """The texts' vectors, computed in a worker thread (of ``executor``, else the loop's
        default pool) so the event loop keeps running: a sentence encoder takes milliseconds
        per message, and numpy releases the GIL. Stores nothing: the caller checks its rows
        are still current, then ``store``s."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(executor, self._embedder.embed, list(texts))

    def store(
        self,
        kind: str,
        rows: Sequence[tuple[int, str, str]],
        vectors: Matrix,
        *,
        still: Still | None = None,
    ) -> int:
        """Stores ``(ref_id, namespace, text)`` rows with their ``vectors``, in one
        transaction; returns how many. With ``still``, only the rows at the indexes it returns:
        it is called inside that transaction, which holds the write lock, so what it reads
        cannot change before the vectors land (a row forgotten, here or by another process,
        after its vector was computed gets none: nothing would ever delete it)."""
        if not rows:
            return 0
        if len(vectors) != len(rows):
            raise ValueError(f"{len(vectors)} vectors for {len(rows)} rows")
        model = self._embedder.model
        with self._writing():
            kept = range(len(rows)) if still is None else still()
            for index in kept:
                ref_id, namespace, _ = rows[index]
                self._db.execute(
                    self._sql.insert,
                    (kind, ref_id, namespace, model, encode_vector(vectors[index])),
                )
        self._index.add(kind, [(rows[index][0], rows[index][1], vectors[index]) for index in kept])
        return len(kept)

    def ids(self, namespace_prefix: str, kind: str) -> set[int]:
        """The ids of the ``kind`` rows under ``namespace_prefix`` that have a vector of this
        model."""
        self._check_version()
        cached = self._index.ids((namespace_prefix.rstrip("/"), kind))
        if cached is not None:
            return cached
        rows = self._db.fetchall(self._sql.ids, (*scope_params(namespace_prefix), kind, self.model))
        return {int(row["ref_id"]) for row in rows}

    def unembedded(self, namespace_prefix: str | None = None) -> int:
        """How many stored messages (under ``namespace_prefix``, or anywhere) have no vector of
        this model: those stored before embeddings were on, or under another model."""
        scope = _EVERYWHERE if namespace_prefix is None else scope_params(namespace_prefix)
        row = self._db.fetchone(self._sql.count_unembedded, (*scope, self.model, self.model))
        return 0 if row is None else int(row["n"])

    def other_models(self, namespace_prefix: str | None = None) -> dict[str, int]:
        """How many vectors (under ``namespace_prefix``, or anywhere) each other model left:
        recall ignores them, and they take as much room as this model's."""
        scope = _EVERYWHERE if namespace_prefix is None else scope_params(namespace_prefix)
        rows = self._db.fetchall(self._sql.other_models, (*scope, self.model))
        return {str(row["model"]): int(row["n"]) for row in rows}

    def drop_other_models(self, namespace_prefix: str | None = None) -> int:
        """Deletes the vectors of every other model (under ``namespace_prefix``, or anywhere);
        returns how many. This model's vectors, and the cache, are untouched."""
        scope = _EVERYWHERE if namespace_prefix is None else scope_params(namespace_prefix)
        with self._db.transaction():
            return self._db.execute(self._sql.drop_other_models, (*scope, self.model))

    def backfill(self, namespace_prefix: str | None = None, *, batch: int = 64) -> Iterator[int]:
        """Embeds every stored message (under ``namespace_prefix``, or anywhere) that has no
        vector of this model, oldest first, each in its context as ``MemoryWriter`` does; one
        transaction a batch, so an interrupted backfill keeps what it did. Yields how many
        each batch stored: a message forgotten or redacted while its batch was embedded (by
        another process too) gets no vector of what it said (``unchanged``), and one the model
        fails on alone gets none either (``embed_each``). A long message's later windows are
        embedded after its batch is stored (``add_passages``): also an old one's that has its
        vector but not theirs (its own vector is then computed again, the same). (A running
        daemon does this in ``flynn.learning.embedding_queue``.)"""
        after = 0
        while read := self.pending(namespace_prefix, after=after, limit=batch):
            rows, vectors = embed_each(self.embed, read)
            stored = self.store_pending(namespace_prefix, read, rows, vectors)
            self.add_passages(rows)
            yield stored
            after = read[-1][0]

    def store_pending(
        self,
        namespace_prefix: str | None,
        read: Sequence[Row],
        rows: Sequence[Row],
        vectors: Matrix,
    ) -> int:
        """Stores the ``vectors`` of ``rows`` (those of the batch ``read`` by ``pending`` that
        were embedded) still as they were read (``unchanged``, asked inside the store's
        transaction); returns how many."""

        def still() -> list[int]:
            now = {read[index] for index in self.unchanged(namespace_prefix, read)}
            return [index for index, row in enumerate(rows) if row in now]

        return self.store("message", rows, vectors, still=still)

    def pending(
        self, namespace_prefix: str | None, *, after: int, limit: int
    ) -> list[tuple[int, str, str]]:
        """Up to ``limit`` messages (under ``namespace_prefix``, or anywhere) after id ``after``
        with no vector of this model, oldest first, as ``(id, namespace, text in context)``
        rows."""
        scope = _EVERYWHERE if namespace_prefix is None else scope_params(namespace_prefix)
        return [
            (int(row["id"]), row["namespace"], in_context(row["previous"], row["content"]))
            for row in self._db.fetchall(
                self._sql.unembedded, (after, *scope, self.model, self.model, limit)
            )
        ]

    def unchanged(
        self, namespace_prefix: str | None, rows: Sequence[tuple[int, str, str]]
    ) -> list[int]:
        """The indexes of ``rows`` (read by ``pending``, in id order) still waiting for a
        vector as they were read: not forgotten, redacted or embedded since (a forget also
        changes the context of the message after one it deletes). Call it as ``store``'s
        ``still``, so that no other connection can change them before their vectors land."""
        if not rows:
            return []
        now = set(self.pending(namespace_prefix, after=rows[0][0] - 1, limit=len(rows)))
        return [index for index, row in enumerate(rows) if row in now]

    def nearest(
        self,
        namespace_prefix: str,
        text: str,
        *,
        kind: str,
        limit: int,
        vector: Matrix | None = None,
    ) -> list[tuple[int, float]]:
        """Of kind ``message``, a message's nearness is its own vector's, raised towards its
        nearest later window's (kind ``passage``, ``flynn.memory.windows``) by
        ``PASSAGE_WEIGHT`` of what that window, less ``PASSAGE_MARGIN``, is nearer: the
        ``limit`` nearest of each are taken, and the messages nearest either way kept (a
        message found by a window alone counts its window's, less the margin)."""
        if limit <= 0 or not text.strip():
            return []
        prefix = namespace_prefix.rstrip("/")
        self._check_version()
        snapshot = self._snapshot((prefix, kind))
        windows = self._snapshot((prefix, "passage")) if kind == "message" else None
        if not len(snapshot) and not windows:
            return []
        query = self._embedder.embed([text])[0] if vector is None else vector
        nearest = snapshot.nearest(query, limit)
        if not windows:
            return nearest
        own = dict(nearest)
        best = dict(nearest)
        for ref_id, similarity in windows.nearest(query, limit):
            turn = turn_of(ref_id)
            lifted = similarity - PASSAGE_MARGIN
            base = own.get(turn, lifted)
            merged = base + PASSAGE_WEIGHT * max(0.0, lifted - base)
            if merged > best.get(turn, -2.0):
                best[turn] = merged
        return sorted(best.items(), key=lambda pair: -pair[1])[:limit]

    def _snapshot(self, key: tuple[str, str]) -> Snapshot:
        """``key``'s rows in memory, read first when they are not."""
        snapshot = self._index.snapshot(key)
        if snapshot is None:
            loading = self._index.begin_load(key)
            snapshot = self._index.finish_load(loading, self._read(*key))
        if snapshot.needs_lists:
            snapshot = self._index.organised(key, snapshot)
            self._index.hand_back()  # the rows' copies before they were sorted into lists
        return snapshot

    def rest(self) -> None:
        """What the process does at rest (``VectorIndex.rest``). Never raises."""
        self._index.rest()

    def forget_cache(self) -> None:
        """Drops what is kept in memory (done by itself when rows are deleted)."""
        self._index.clear()

    def _check_version(self) -> None:
        """Drops what is kept in memory when the stored vectors changed since it was read."""
        raise NotImplementedError

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """``store``'s transaction; what is kept in memory is then current but for the rows
        ``store`` adds to it next."""
        with self._db.transaction():
            yield
        self._check_version()

    def _read(self, prefix: str, kind: str) -> Iterator[tuple[list[int], Matrix]]:
        """The namespace's vectors of this model, a batch at a time."""
        raise NotImplementedError


class SqliteVectors(SqlVectors):
    """``VectorSearch`` over SQLite's ``embeddings`` table. Instances over the writer and over
    readers of one database (``Database.open_reader``) share what is in memory by sharing
    ``index``."""

    def __init__(
        self, db: Database, embedder: Embedder, *, index: VectorIndex | None = None
    ) -> None:
        super().__init__(db, SQLITE_VECTORS, embedder, index=index)
        self._sqlite = db
        # Deleting a row here (a forget, in this process or another) drops what is cached.
        db.watch_rewrites("embeddings")

    def _check_version(self) -> None:
        self._index.check(self._sqlite.rewrites("embeddings"))

    def _read(self, prefix: str, kind: str) -> Iterator[tuple[list[int], Matrix]]:
        params = (*scope_params(prefix), kind, self._embedder.model)
        for rows in self._sqlite.batches(_LOAD, params, size=_LOAD_BATCH):
            yield [int(row[0]) for row in rows], decode_vectors([row[1] for row in rows])
