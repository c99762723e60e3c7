"""Team knowledge: documents everyone Flynn knows may recall, kept apart from any
person's memory. A document is stored with its chunks (about 1,000 characters each, cut on
paragraph boundaries by ``flynn.learning.documents``), indexed for full-text search; re-adding a
changed file replaces its chunks whole.

Nothing a person says is ever written here: only ``flynn docs add`` writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from flynn.credentials import redact
from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.fts import quoted
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
_ROWS = "SELECT rowid FROM team_chunks_fts WHERE team_chunks_fts MATCH ? LIMIT ?"
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


class SqliteTeam:
    """The ``team_documents`` and ``team_chunks`` tables, and full-text search over chunks."""

    def __init__(self, db: Database) -> None:
        self._db = db
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
        stamp = encode_time(now)
        title = redact(title)[0]
        with self._db.transaction():
            row = self._db.fetchone("SELECT id FROM team_documents WHERE path = ?", (path,))
            replaced = row is not None
            if row is None:
                created = self._db.fetchone(
                    "INSERT INTO team_documents (path, title, digest, chars, created_at, "
                    "updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
                    (path, title, digest, chars, stamp, stamp),
                )
                assert created is not None
                document_id = int(created[0])
            else:
                document_id = int(row[0])
                self._db.execute(
                    "UPDATE team_documents SET title = ?, digest = ?, chars = ?, updated_at = ? "
                    "WHERE id = ?",
                    (title, digest, chars, stamp, document_id),
                )
                self._db.execute("DELETE FROM team_chunks WHERE document_id = ?", (document_id,))
                # The names only the old version mentioned go; the new one names its own.
                self._db.execute(_ORPHANED_ENTITIES, (document_id, document_id))
                self._db.execute(
                    "DELETE FROM team_document_entities WHERE document_id = ?", (document_id,)
                )
            self._db.executemany(
                "INSERT INTO team_chunks (document_id, position, heading, content) "
                "VALUES (?, ?, ?, ?)",
                (
                    (document_id, position, redact(chunk.heading)[0], redact(chunk.content)[0])
                    for position, chunk in enumerate(chunks)
                ),
            )
        document = self.document(document_id)
        assert document is not None
        return document, replaced

    def document(self, document_id: int) -> TeamDocument | None:
        row = self._db.fetchone(_DOCUMENTS + " WHERE d.id = ?", (document_id,))
        return None if row is None else _document(row)

    def by_path(self, path: str) -> TeamDocument | None:
        row = self._db.fetchone(_DOCUMENTS + " WHERE d.path = ?", (path,))
        return None if row is None else _document(row)

    def documents(self) -> list[TeamDocument]:
        """Every document, oldest first."""
        return [_document(row) for row in self._db.fetchall(_DOCUMENTS + " ORDER BY d.id")]

    def chunk_ids(self, document_id: int) -> list[int]:
        rows = self._db.fetchall(
            "SELECT id FROM team_chunks WHERE document_id = ? ORDER BY position", (document_id,)
        )
        return [int(row[0]) for row in rows]

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
            sql = _CHUNKS.format(marks=",".join("?" * len(part)))
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
        self._db.execute("UPDATE team_documents SET digest = ? WHERE id = ?", (digest, document_id))

    def unembedded(self, document_id: int, model: str) -> int:
        """How many of the document's chunks have no vector of ``model``."""
        row = self._db.fetchone(
            "SELECT count(*) FROM team_chunks c WHERE c.document_id = ? AND NOT EXISTS "
            "(SELECT 1 FROM embeddings e WHERE e.kind = 'chunk' AND e.ref_id = c.id "
            "AND e.model = ?)",
            (document_id, model),
        )
        return 0 if row is None else int(row[0])

    def held_among(self, term: str, ids: Iterable[int]) -> set[int]:
        """Which of the chunks ``ids`` hold ``term`` (a word too common to list whole)."""
        wanted = list(ids)
        found: set[int] = set()
        for start in range(0, len(wanted), 500):
            part = wanted[start : start + 500]
            rows = self._db.fetchall(
                "SELECT rowid FROM team_chunks_fts WHERE team_chunks_fts MATCH ? "
                f"AND rowid IN ({','.join('?' * len(part))})",
                (quoted(term), *part),
            )
            found.update(int(row[0]) for row in rows)
        return found

    def best_matches(self, terms: Sequence[str], *, limit: int) -> list[int]:
        """The chunks full-text ranking puts first for any of ``terms`` (bm25)."""
        if not terms:
            return []
        rows = self._db.fetchall(
            "SELECT rowid FROM team_chunks_fts WHERE team_chunks_fts MATCH ? ORDER BY rank LIMIT ?",
            (" OR ".join(quoted(term) for term in terms), limit),
        )
        return [int(row[0]) for row in rows]

    def link_entities(self, document_id: int, entity_ids: Iterable[int]) -> None:
        """Records which team graph entities ``document_id`` put there."""
        self._db.executemany(
            "INSERT OR IGNORE INTO team_document_entities (document_id, entity_id) VALUES (?, ?)",
            ((document_id, entity_id) for entity_id in entity_ids),
        )

    def remove(self, document_id: int) -> TeamDocument | None:
        """Deletes the document, its chunks (and their index rows and vectors), and the graph
        entities no other document named; ``None`` when there is no such document."""
        document = self.document(document_id)
        if document is None:
            return None
        with self._db.transaction():
            self._db.execute(_ORPHANED_ENTITIES, (document_id, document_id))
            self._db.execute("DELETE FROM team_documents WHERE id = ?", (document_id,))
        return document

    def generation(self) -> tuple[int, int]:
        """Differs once chunks were added or removed (by any connection)."""
        row = self._db.fetchone("SELECT coalesce(max(id), 0), count(*) FROM team_chunks")
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

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
                listed = self._db.fetchall(_ROWS, (quoted(term), COMMON + 1))
                ids = tuple(int(row[0]) for row in listed)
                rows[term] = None if len(ids) > COMMON else ids
            found[term] = rows[term]
        return found

    def count(self) -> int:
        row = self._db.fetchone("SELECT count(*) FROM team_chunks")
        return 0 if row is None else int(row[0])


def safe_passage(text: str) -> str:
    """``text`` without credentials and without the lines that give an assistant orders."""
    text = redact(text)[0]
    return "\n".join(line for line in text.split("\n") if not is_injection(line))


def _document(row: sqlite3.Row) -> TeamDocument:
    return TeamDocument(
        id=int(row["id"]),
        path=row["path"],
        title=row["title"],
        digest=row["digest"],
        chars=int(row["chars"]),
        chunks=int(row["chunks"]),
        created_at=decode_time(row["created_at"]),
        updated_at=decode_time(row["updated_at"]),
    )
