"""Team knowledge: documents everyone Flynn knows may recall, kept apart from any
person's memory. A document is stored with its chunks (about 1,000 characters each, cut on
paragraph boundaries by ``flynn.learning.documents``), indexed for full-text search; re-adding a
changed file replaces its chunks whole. The logic once, on any SQL database (``SqlTeam``), and on
SQLite with its FTS5 index (``SqliteTeam``).

Nothing a person says is ever written here: only ``flynn docs add`` writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from flynn.credentials import redact
from flynn.memory.database import Database, Params, decode_time, encode_time
from flynn.memory.fts import quoted
from flynn.memory.sql import NamedRow, TransactionalSql, storable
from flynn.orders import is_injection

TEAM_NAMESPACE = "team"
"""The namespace of the team's graph entities and chunk embeddings; never a person's."""


@dataclass(frozen=True, slots=True)
class TeamDocument:
    id: int
    path: str
    title: str
    digest: str
    chars: int
    chunks: int
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class TeamChunk:
    id: int
    document_id: int
    title: str
    """The document's title."""
    heading: str
    """The nearest heading above the chunk ('' when none)."""
    content: str
    position: int


@dataclass(frozen=True, slots=True)
class NewChunk:
    heading: str
    content: str


COMMON = 2000
"""A word in more chunks than this is common: not listed, and weighs as little as a word can."""
_MAX_KEPT = 5000
_ORPHANED_ENTITIES = """
DELETE FROM entities WHERE id IN (
    SELECT entity_id FROM team_document_entities WHERE document_id = ?
) AND id NOT IN (SELECT entity_id FROM team_document_entities WHERE document_id != ?)
"""
_DOCUMENTS = """
SELECT d.*, (SELECT count(*) FROM team_chunks c WHERE c.document_id = d.id) AS chunks
FROM team_documents d
"""
_CHUNKS = """
SELECT c.id, c.document_id, c.position, c.heading, c.content, d.title
FROM team_chunks c JOIN team_documents d ON d.id = c.document_id
WHERE c.id IN ({marks})
"""
_DOCUMENT_AT = "SELECT id FROM team_documents WHERE path = ?"
_CREATE = """
INSERT INTO team_documents (path, title, digest, chars, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?) RETURNING id
"""
_UPDATE = """
UPDATE team_documents SET title = ?, digest = ?, chars = ?, updated_at = ? WHERE id = ?
"""
_DROP_CHUNKS = "DELETE FROM team_chunks WHERE document_id = ?"
_UNLINK = "DELETE FROM team_document_entities WHERE document_id = ?"
_ADD_CHUNK = """
INSERT INTO team_chunks (document_id, position, heading, content) VALUES (?, ?, ?, ?)
"""
_CHUNK_IDS = "SELECT id FROM team_chunks WHERE document_id = ? ORDER BY position"
_SET_DIGEST = "UPDATE team_documents SET digest = ? WHERE id = ?"
_UNEMBEDDED = """
SELECT count(*) AS missing FROM team_chunks c WHERE c.document_id = ? AND NOT EXISTS
    (SELECT 1 FROM embeddings e WHERE e.kind = 'chunk' AND e.ref_id = c.id AND e.model = ?)
"""
_LINK = """
INSERT INTO team_document_entities (document_id, entity_id) VALUES (?, ?) ON CONFLICT DO NOTHING
"""
_REMOVE = "DELETE FROM team_documents WHERE id = ?"
_GENERATION = "SELECT coalesce(max(id), 0) AS newest, count(*) AS chunks FROM team_chunks"
_COUNT = "SELECT count(*) AS chunks FROM team_chunks"


@dataclass(frozen=True, slots=True)
class TeamDialect:
    """One backend's statements for ``SqlTeam`` (``team_dialect``) and its times."""

    serialise: str | None
    """Runs first in ``put``'s transaction: what makes two processes adding one path queue."""
    placeholder: str
    document_at: str
    create: str
    update: str
    drop_chunks: str
    orphaned_entities: str
    unlink: str
    add_chunk: str
    documents: str
    chunks: str
    chunk_ids: str
    set_digest: str
    unembedded: str
    link: str
    remove: str
    generation: str
    count: str
    time: Callable[[datetime], object]
    stored_time: Callable[[Any], datetime]


def team_dialect(
    parameters: Callable[[str], str],
    *,
    placeholder: str,
    serialise: str | None,
    time: Callable[[datetime], object],
    stored_time: Callable[[Any], datetime],
) -> TeamDialect:
    """The statements above, written once with ``?`` (``parameters`` turns them into the
    backend's)."""
    return TeamDialect(
        serialise=serialise,
        placeholder=placeholder,
        document_at=parameters(_DOCUMENT_AT),
        create=parameters(_CREATE),
        update=parameters(_UPDATE),
        drop_chunks=parameters(_DROP_CHUNKS),
        orphaned_entities=parameters(_ORPHANED_ENTITIES),
        unlink=parameters(_UNLINK),
        add_chunk=parameters(_ADD_CHUNK),
        documents=parameters(_DOCUMENTS),
        chunks=_CHUNKS,
        chunk_ids=parameters(_CHUNK_IDS),
        set_digest=parameters(_SET_DIGEST),
        unembedded=parameters(_UNEMBEDDED),
        link=parameters(_LINK),
        remove=parameters(_REMOVE),
        generation=parameters(_GENERATION),
        count=parameters(_COUNT),
        time=time,
        stored_time=stored_time,
    )


SQLITE_TEAM = team_dialect(
    lambda statement: statement,
    placeholder="?",
    serialise=None,
    time=encode_time,
    stored_time=decode_time,
)


class ChunkIndex(Protocol):
    """A backend's full-text index of team chunks (heading and content, words matched as FTS5
    matches them: stemmed, any case)."""

    def added(self, document_id: int, chunks: Sequence[NewChunk]) -> None:
        """Indexes the document's chunks just stored (as stored, in position order), in the
        transaction that stored them (an index SQLite keeps by trigger has nothing to do)."""
        ...

    def rows(self, term: str, limit: int) -> tuple[int, ...]:
        """The chunks holding ``term``, lowest id first, at most ``limit``."""
        ...

    def held_among(self, term: str, ids: Sequence[int]) -> set[int]:
        """Which of the chunks ``ids`` hold ``term``."""
        ...

    def best_matches(self, terms: Sequence[str], limit: int) -> list[int]:
        """The chunks holding any of ``terms``, best first by FTS5's bm25 with the heading
        weighing half the content, at most ``limit``."""
        ...


_FTS_ROWS = "SELECT rowid AS id FROM team_chunks_fts WHERE team_chunks_fts MATCH ? LIMIT ?"
_FTS_HELD_AMONG = (
    "SELECT rowid AS id FROM team_chunks_fts WHERE team_chunks_fts MATCH ? AND rowid IN ({marks})"
)
_FTS_BEST_MATCHES = (
    "SELECT rowid AS id FROM team_chunks_fts WHERE team_chunks_fts MATCH ? ORDER BY rank LIMIT ?"
)


class Fts5ChunkIndex:
    """``ChunkIndex`` on SQLite's ``team_chunks_fts`` (FTS5, ranked by its ``bm25(0.5, 1.0)``)."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def added(self, document_id: int, chunks: Sequence[NewChunk]) -> None:
        """Nothing to do here: ``team_chunks_fts`` is kept by triggers."""

    def rows(self, term: str, limit: int) -> tuple[int, ...]:
        return tuple(int(row["id"]) for row in self._db.fetchall(_FTS_ROWS, (quoted(term), limit)))

    def held_among(self, term: str, ids: Sequence[int]) -> set[int]:
        found: set[int] = set()
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            sql = _FTS_HELD_AMONG.format(marks=",".join("?" * len(part)))
            found.update(int(row["id"]) for row in self._db.fetchall(sql, (quoted(term), *part)))
        return found

    def best_matches(self, terms: Sequence[str], limit: int) -> list[int]:
        expression = " OR ".join(quoted(term) for term in terms)
        return [int(row["id"]) for row in self._db.fetchall(_FTS_BEST_MATCHES, (expression, limit))]


class TeamSql(TransactionalSql, Protocol):
    """What ``SqlTeam`` needs of a database: ``TransactionalSql`` and ``executemany``."""

    def executemany(self, sql: str, rows: Iterable[Params]) -> int:
        """Runs one statement for each of ``rows``."""
        ...


def storable_title(title: str) -> str:
    """A document's title as it is stored: a credential in it redacted."""
    return storable(redact(title)[0])


class SqlTeam:
    """The ``team_documents`` and ``team_chunks`` tables, and full-text search over chunks."""

    def __init__(self, db: TeamSql, dialect: TeamDialect, index: ChunkIndex) -> None:
        self._db = db
        self._sql = dialect
        self._index = index
        self._kept: tuple[tuple[int, int], dict[str, tuple[int, ...] | None]] = ((-1, -1), {})
        self._counted: tuple[tuple[int, int], dict[str, int]] = ((-1, -1), {})

    def put(
        self,
        *,
        path: str,
        title: str,
        digest: str,
        chars: int,
        chunks: Sequence[NewChunk],
        now: datetime,
    ) -> tuple[TeamDocument, bool]:
        """Stores the document at ``path`` with its ``chunks``, replacing the chunks of an
        earlier version (one transaction); returns it, and whether it replaced one. A
        credential in the title or a chunk is redacted."""
        sql = self._sql
        stamp = sql.time(now)
        title = storable_title(title)
        with self._db.transaction():
            if sql.serialise is not None:
                self._db.execute(sql.serialise)
            row = self._db.fetchone(sql.document_at, (path,))
            replaced = row is not None
            if row is None:
                created = self._db.fetchone(sql.create, (path, title, digest, chars, stamp, stamp))
                assert created is not None
                document_id = int(created["id"])
            else:
                document_id = int(row["id"])
                self._db.execute(sql.update, (title, digest, chars, stamp, document_id))
                self._db.execute(sql.drop_chunks, (document_id,))
                # The names only the old version mentioned go; the new one names its own.
                self._db.execute(sql.orphaned_entities, (document_id, document_id))
                self._db.execute(sql.unlink, (document_id,))
            stored = [
                NewChunk(storable(redact(chunk.heading)[0]), storable(redact(chunk.content)[0]))
                for chunk in chunks
            ]
            self._db.executemany(
                sql.add_chunk,
                [
                    (document_id, position, chunk.heading, chunk.content)
                    for position, chunk in enumerate(stored)
                ],
            )
            self._index.added(document_id, stored)
        document = self.document(document_id)
        assert document is not None
        return document, replaced

    def document(self, document_id: int) -> TeamDocument | None:
        row = self._db.fetchone(
            self._sql.documents + " WHERE d.id = " + self._sql.placeholder, (document_id,)
        )
        return None if row is None else self._document(row)

    def by_path(self, path: str) -> TeamDocument | None:
        row = self._db.fetchone(
            self._sql.documents + " WHERE d.path = " + self._sql.placeholder, (path,)
        )
        return None if row is None else self._document(row)

    def documents(self) -> list[TeamDocument]:
        """Every document, oldest first."""
        rows = self._db.fetchall(self._sql.documents + " ORDER BY d.id")
        return [self._document(row) for row in rows]

    def chunk_ids(self, document_id: int) -> list[int]:
        rows = self._db.fetchall(self._sql.chunk_ids, (document_id,))
        return [int(row["id"]) for row in rows]

    def chunks(self, ids: Iterable[int]) -> list[TeamChunk]:
        """The chunks with these ids (those that still exist), in the order given; what
        reaches a prompt from here holds no credential and no order, even in a chunk stored
        before either was filtered at ingest."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:
            return []
        found: dict[int, TeamChunk] = {}
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            sql = self._sql.chunks.format(marks=",".join([self._sql.placeholder] * len(part)))
            for row in self._db.fetchall(sql, part):
                found[int(row["id"])] = TeamChunk(
                    id=int(row["id"]),
                    document_id=int(row["document_id"]),
                    title=redact(row["title"])[0],
                    heading=redact(row["heading"])[0],
                    content=safe_passage(row["content"]),
                    position=int(row["position"]),
                )
        return [found[chunk_id] for chunk_id in wanted if chunk_id in found]

    def set_digest(self, document_id: int, digest: str) -> None:
        """Marks the document complete (its names and vectors written too): until then its
        digest is '' and adding the file again redoes it."""
        self._db.execute(self._sql.set_digest, (digest, document_id))

    def unembedded(self, document_id: int, model: str) -> int:
        """How many of the document's chunks have no vector of ``model``."""
        row = self._db.fetchone(self._sql.unembedded, (document_id, model))
        return 0 if row is None else int(row["missing"])

    def held_among(self, term: str, ids: Iterable[int]) -> set[int]:
        """Which of the chunks ``ids`` hold ``term`` (a word too common to list whole)."""
        return self._index.held_among(term, list(ids))

    def best_matches(self, terms: Sequence[str], *, limit: int) -> list[int]:
        """The chunks full-text ranking puts first for any of ``terms``."""
        if not terms:
            return []
        return self._index.best_matches(terms, limit)

    def link_entities(self, document_id: int, entity_ids: Iterable[int]) -> None:
        """Records which team graph entities ``document_id`` put there."""
        self._db.executemany(self._sql.link, [(document_id, entity_id) for entity_id in entity_ids])

    def remove(self, document_id: int) -> TeamDocument | None:
        """Deletes the document, its chunks (and their index rows and vectors), and the graph
        entities no other document named; ``None`` when there is no such document."""
        document = self.document(document_id)
        if document is None:
            return None
        with self._db.transaction():
            self._db.execute(self._sql.orphaned_entities, (document_id, document_id))
            removed = self._db.execute(self._sql.remove, (document_id,))
        # Another process may have removed it since it was read: then this call removed nothing.
        return document if removed else None

    def generation(self) -> tuple[int, int]:
        """Differs once chunks were added or removed (by any connection)."""
        row = self._db.fetchone(self._sql.generation)
        return (0, 0) if row is None else (int(row["newest"]), int(row["chunks"]))

    def term_rows(
        self, terms: Iterable[str], *, generation: tuple[int, int]
    ) -> dict[str, tuple[int, ...] | None]:
        """For each of ``terms``, the chunks holding it (as the index matches words: stemmed,
        any case), or ``None`` for a word in more than ``COMMON`` chunks (it tells little, and
        listing it would cost); kept while ``generation`` stays the same."""
        kept_for, rows = self._kept
        if kept_for != generation or len(rows) > _MAX_KEPT:
            rows = {}
            self._kept = (generation, rows)
        found: dict[str, tuple[int, ...] | None] = {}
        for term in terms:
            if term not in rows:
                ids = self._index.rows(term, COMMON + 1)
                rows[term] = None if len(ids) > COMMON else ids
            found[term] = rows[term]
        return found

    def count(self) -> int:
        row = self._db.fetchone(self._sql.count)
        return 0 if row is None else int(row["chunks"])

    def _document(self, row: NamedRow) -> TeamDocument:
        return TeamDocument(
            id=int(row["id"]),
            path=row["path"],
            title=row["title"],
            digest=row["digest"],
            chars=int(row["chars"]),
            chunks=int(row["chunks"]),
            created_at=self._sql.stored_time(row["created_at"]),
            updated_at=self._sql.stored_time(row["updated_at"]),
        )


class SqliteTeam(SqlTeam):
    """Team documents in SQLite, searched through ``team_chunks_fts`` (FTS5, bm25)."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, SQLITE_TEAM, Fts5ChunkIndex(db))


def safe_passage(text: str) -> str:
    """``text`` without credentials and without the lines that give an assistant orders."""
    text = redact(text)[0]
    return "\n".join(line for line in text.split("\n") if not is_injection(line))
