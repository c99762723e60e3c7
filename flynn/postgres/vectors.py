"""Message vectors in PostgreSQL: ``VectorSearch`` on the ``embeddings`` table as
``flynn.memory.vectors`` keeps it in SQLite (float16 ``bytea``, one per row and model, nearest
neighbours in Python over the namespace's int8 copy in memory), and how far embedding has come
(``embedding_progress``).

Without the ``vector`` extension (Debian does not package it): the rows are few per person and
already held in memory for search, so the database only stores and streams them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

from flynn.memory.embedding_progress import PersonProgress, people_of
from flynn.memory.namespaces import scope_params
from flynn.memory.vector_index import VectorIndex
from flynn.memory.vectors import Embedder, SqlVectors, Still, VectorsDialect, decode_vectors
from flynn.memory.windows import LONG_CHARS, passage_id, turn_of
from flynn.postgres.database import PostgresDatabase

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

_SCOPE = "(namespace = %s OR (namespace >= %s AND namespace < %s))"
_M_SCOPE = "(m.namespace = %s OR (m.namespace >= %s AND m.namespace < %s))"
_INSERT = """
INSERT INTO embeddings (kind, ref_id, namespace, model, vector) VALUES (%s, %s, %s, %s, %s)
ON CONFLICT (kind, ref_id, model) DO UPDATE
SET namespace = excluded.namespace, vector = excluded.vector
"""
_IDS = f"SELECT ref_id FROM embeddings WHERE {_SCOPE} AND kind = %s AND model = %s"
# A page of the namespace's rows after the last one read: each page is a range of the primary key
# per namespace, never a sort of the whole namespace.
_LOAD = f"""
SELECT ref_id, vector FROM embeddings
WHERE {_SCOPE} AND kind = %s AND model = %s AND ref_id > %s
ORDER BY ref_id LIMIT %s
"""
_PREVIOUS_CONTENT = """
(SELECT p.content FROM messages AS p WHERE p.namespace = m.namespace AND p.id = greatest(
    (SELECT max(id) FROM messages WHERE session = m.session AND NOT summarized AND id < m.id),
    (SELECT max(id) FROM messages WHERE session = m.session AND summarized AND id < m.id)))
"""
# No vector, or a long message without its later windows' (``flynn.memory.windows``).
_NO_VECTOR = f"""(NOT EXISTS (
    SELECT 1 FROM embeddings AS e WHERE e.kind = 'message' AND e.ref_id = m.id AND e.model = %s
) OR (length(m.content) > {LONG_CHARS} AND NOT EXISTS (
    SELECT 1 FROM embeddings AS e
    WHERE e.kind = 'passage' AND e.ref_id = {passage_id(0, 1)} + m.id * {passage_id(1, 0)}
    AND e.model = %s
)))"""
_UNEMBEDDED = f"""
SELECT m.id, m.namespace, m.content, {_PREVIOUS_CONTENT} AS previous FROM messages AS m
WHERE m.id > %s AND {_M_SCOPE} AND NOT m.offline AND {_NO_VECTOR}
ORDER BY m.id LIMIT %s
"""
_COUNT_UNEMBEDDED = (
    f"SELECT count(*) AS n FROM messages AS m WHERE {_M_SCOPE} AND NOT m.offline AND {_NO_VECTOR}"
)
_OTHER_MODELS = f"""
SELECT model, count(*) AS n FROM embeddings
WHERE {_SCOPE} AND model != %s GROUP BY model ORDER BY model
"""
_DROP_OTHER_MODELS = f"DELETE FROM embeddings WHERE {_SCOPE} AND model != %s"
# Locked until the commit: a forget or redaction of the message, by any worker, waits for the
# windows being stored, and its trigger then takes them with the message's vector.
_EMBEDDED = """
SELECT 1 AS n FROM embeddings WHERE kind = 'message' AND ref_id = %s AND model = %s FOR SHARE
"""
_WRITES = "SELECT version FROM embedding_writes WHERE id = 1"
_LOCK_WRITES = _WRITES + " FOR UPDATE"
_BY_NAMESPACE = f"""
SELECT m.namespace, count(*) AS messages, count(e.ref_id) AS embedded, max(m.id) AS newest
FROM messages AS m
LEFT JOIN embeddings AS e ON e.kind = 'message' AND e.ref_id = m.id AND e.model = %s
    AND (length(m.content) <= {LONG_CHARS} OR EXISTS (
        SELECT 1 FROM embeddings AS w WHERE w.kind = 'passage'
        AND w.ref_id = {passage_id(0, 1)} + m.id * {passage_id(1, 0)} AND w.model = e.model
    ))
WHERE NOT m.offline
GROUP BY m.namespace
"""
_LOAD_BATCH = 4096
_OWNERS = {"message": "messages", "fact": "facts", "chunk": "team_chunks"}
"""The table whose row each kind of vector embeds (deleting the row deletes the vector)."""
# Held until the commit: the rows cannot be deleted or rewritten (a forget, a redaction, by
# any worker) while their vectors are stored. Taken before the version row (``_LOCK_WRITES``),
# in the order a forget takes them (the rows it deletes, then that row, through the trigger).
_HOLD = "SELECT id FROM {table} WHERE id = ANY(%s) ORDER BY id FOR SHARE"
# A window's vector is held by its message's (``flynn.memory.windows``), taken as ``_HOLD``.
_HOLD_MESSAGE_VECTORS = """
SELECT ref_id FROM embeddings WHERE kind = 'message' AND ref_id = ANY(%s) AND model = %s
ORDER BY ref_id FOR SHARE
"""

POSTGRES_VECTORS = VectorsDialect(
    _INSERT, _IDS, _UNEMBEDDED, _COUNT_UNEMBEDDED, _OTHER_MODELS, _DROP_OTHER_MODELS, _EMBEDDED
)


def embedding_progress(db: PostgresDatabase, model: str) -> list[PersonProgress]:
    """``flynn.memory.embedding_progress.embedding_progress`` on PostgreSQL."""
    return people_of(db.fetchall(_BY_NAMESPACE, (model,)))


class PostgresVectors(SqlVectors):
    """``VectorSearch`` over PostgreSQL's ``embeddings`` table. What is kept in memory is
    dropped whenever any worker wrote a vector since it was read (``embedding_writes``), but
    for this instance's own writes, which join it."""

    def __init__(
        self, db: PostgresDatabase, embedder: Embedder, *, index: VectorIndex | None = None
    ) -> None:
        super().__init__(db, POSTGRES_VECTORS, embedder, index=index)
        self._pg = db
        self._seen = -1

    def store(
        self,
        kind: str,
        rows: Sequence[tuple[int, str, str]],
        vectors: Matrix,
        *,
        still: Still | None = None,
    ) -> int:
        """``SqlVectors.store``, safe under READ COMMITTED: the rows the vectors embed are
        locked first (``FOR SHARE``), then ``still`` is asked and only the rows that still
        exist get a vector. A row deleted or rewritten by another worker before the lock gets
        none; one deleted after waits for this commit, and its trigger takes the vector with
        it. A turn's windows (kind ``passage``) are held by the turn's own vector the same way.
        (SQLite needs none of this: its write lock is the whole database's.)"""
        if kind == "passage" and rows:
            with self._pg.transaction():
                turns = sorted({turn_of(ref_id) for ref_id, _, _ in rows})
                self._pg.fetchall(_HOLD_MESSAGE_VECTORS, (turns, self._embedder.model))
                return super().store(kind, rows, vectors, still=still)
        table = _OWNERS.get(kind)
        if table is None or not rows:
            return super().store(kind, rows, vectors, still=still)
        with self._pg.transaction():
            held = {
                int(row["id"])
                for row in self._pg.fetchall(
                    _HOLD.format(table=table), ([ref_id for ref_id, _, _ in rows],)
                )
            }

            def existing() -> Sequence[int]:
                chosen = range(len(rows)) if still is None else still()
                return [index for index in chosen if rows[index][0] in held]

            return super().store(kind, rows, vectors, still=existing)

    def _version(self) -> int:
        row = self._pg.fetchone(_WRITES)
        return -1 if row is None else int(row["version"])

    def _check_version(self) -> None:
        self._seen = self._version()
        self._index.check(self._seen)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        # The version row is locked first, until the commit: no other worker's write comes
        # between what this one reads here and its own.
        with self._pg.transaction():
            row = self._pg.fetchone(_LOCK_WRITES)
            before = -1 if row is None else int(row["version"])
            yield
            after = self._version()
        if before >= 0 and before == self._seen:
            # Only this store wrote since the rows in memory were read: they stay, and the
            # rows just stored join them.
            self._index.check(before)
            self._index.advance(before, after)
            self._seen = after
        else:
            self._check_version()

    def _read(self, prefix: str, kind: str) -> Iterator[tuple[list[int], Matrix]]:
        scope = scope_params(prefix)
        after = 0
        while True:
            rows = self._pg.fetchall(
                _LOAD, (*scope, kind, self._embedder.model, after, _LOAD_BATCH)
            )
            if not rows:
                return
            ids = [int(row["ref_id"]) for row in rows]
            yield ids, decode_vectors([bytes(row["vector"]) for row in rows])
            after = ids[-1]
