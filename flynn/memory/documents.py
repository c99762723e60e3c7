"""Namespaced documents (profile, patterns, working memory, persona memory tiers): the logic
once, on any SQL database (``SqlDocuments``), and SQLite's statements (``SqliteDocuments``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from flynn.credentials import redact
from flynn.errors import StoreError
from flynn.memory.database import Database, decode_time, encode_time
from flynn.memory.namespaces import namespace_scope, scope_params
from flynn.memory.sql import NamedRow, Sql, storable
from flynn.memory.store import Document

_COLUMNS = "namespace, content, updated_at, expires_at"

_READ = f"SELECT {_COLUMNS} FROM documents WHERE namespace = ?"
_REPLACE = f"""
INSERT INTO documents (namespace, content, updated_at, expires_at) VALUES (?, ?, ?, ?)
ON CONFLICT (namespace) DO UPDATE SET
    content = excluded.content, updated_at = excluded.updated_at, expires_at = excluded.expires_at
RETURNING {_COLUMNS}
"""
# A new line only where one is missing, so appending never leaves blank lines or a leading one.
_APPEND = f"""
INSERT INTO documents (namespace, content, updated_at) VALUES (?, ?, ?)
ON CONFLICT (namespace) DO UPDATE SET
    content = CASE
        WHEN documents.content = '' OR substr(documents.content, -1) = char(10)
            THEN documents.content || excluded.content
        ELSE documents.content || char(10) || excluded.content
    END,
    updated_at = excluded.updated_at
RETURNING {_COLUMNS}
"""
# A write over an expected text, in one statement so no other writer comes between the
# compare and the write: over a text, an update of the row holding it; over '' (no document
# or an empty one), an insert that updates only an empty row.
_REPLACE_IF = f"""
UPDATE documents SET content = ?, updated_at = ?, expires_at = NULL
WHERE namespace = ? AND content = ?
RETURNING {_COLUMNS}
"""
_CREATE_IF_EMPTY = f"""
INSERT INTO documents (namespace, content, updated_at) VALUES (?, ?, ?)
ON CONFLICT (namespace) DO UPDATE SET
    content = excluded.content, updated_at = excluded.updated_at, expires_at = NULL
WHERE documents.content = ''
RETURNING {_COLUMNS}
"""
_DELETE = "DELETE FROM documents WHERE namespace = ?"
_LIST = f"SELECT {_COLUMNS} FROM documents WHERE {namespace_scope('namespace')} ORDER BY namespace"
_FORGET = f"DELETE FROM documents WHERE {namespace_scope('namespace')}"


@dataclass(frozen=True, slots=True)
class DocumentsDialect:
    """One backend's statements for ``SqlDocuments``, with ``?`` or ``%s`` placeholders in the
    order the methods pass them, and how it writes and reads times."""

    read: str
    replace: str
    append: str
    delete: str
    list: str
    forget: str
    replace_if: str
    create_if_empty: str
    time: Callable[[datetime], object]
    """Raises ``ValueError`` for a naive time."""
    stored_time: Callable[[Any], datetime]
    """A stored time, back as an aware ``UTC`` datetime."""


SQLITE_DOCUMENTS = DocumentsDialect(
    _READ,
    _REPLACE,
    _APPEND,
    _DELETE,
    _LIST,
    _FORGET,
    _REPLACE_IF,
    _CREATE_IF_EMPTY,
    encode_time,
    decode_time,
)


class SqlDocuments:
    """``Documents`` on a ``documents`` table. Expiry is stored, not enforced: readers decide."""

    def __init__(self, db: Sql, dialect: DocumentsDialect) -> None:
        self._db = db
        self._sql = dialect

    def read(self, namespace: str) -> Document | None:
        row = self._db.fetchone(self._sql.read, (namespace,))
        return None if row is None else self._document(row)

    def replace(
        self, namespace: str, content: str, *, now: datetime, expires_at: datetime | None = None
    ) -> Document:
        expires = None if expires_at is None else self._sql.time(expires_at)
        # Working memory and session notes never keep a credential.
        content = storable(redact(content)[0])
        row = self._db.fetchone(
            self._sql.replace, (namespace, content, self._sql.time(now), expires)
        )
        return self._returned(row)

    def replace_if(
        self, namespace: str, content: str, expected: str, *, now: datetime
    ) -> Document | None:
        """Replaces the document with ``content`` (no expiry) only if it still holds
        ``expected`` ('' for none or an empty one), in one statement; ``None``, writing
        nothing, when it holds anything else."""
        content = storable(redact(content)[0])
        if expected:
            row = self._db.fetchone(
                self._sql.replace_if, (content, self._sql.time(now), namespace, expected)
            )
        else:
            row = self._db.fetchone(
                self._sql.create_if_empty, (namespace, content, self._sql.time(now))
            )
        return None if row is None else self._document(row)

    def append(self, namespace: str, content: str, *, now: datetime) -> Document:
        """Adds ``content`` on a new line after what is there (or creates the document)."""
        content = storable(redact(content)[0])
        row = self._db.fetchone(self._sql.append, (namespace, content, self._sql.time(now)))
        return self._returned(row)

    def delete(self, namespace: str) -> bool:
        return self._db.execute(self._sql.delete, (namespace,)) > 0

    def list(self, prefix: str) -> list[Document]:
        """Documents whose namespace is ``prefix`` or starts with ``prefix/``, by namespace."""
        return [
            self._document(row) for row in self._db.fetchall(self._sql.list, scope_params(prefix))
        ]

    def forget(self, prefix: str) -> int:
        """Deletes the documents under ``prefix`` for real; returns how many."""
        return self._db.execute(self._sql.forget, scope_params(prefix))

    def _returned(self, row: NamedRow | None) -> Document:
        if row is None:
            raise StoreError("document write returned no row")
        return self._document(row)

    def _document(self, row: NamedRow) -> Document:
        expires_at = row["expires_at"]
        return Document(
            namespace=row["namespace"],
            content=row["content"],
            updated_at=self._sql.stored_time(row["updated_at"]),
            expires_at=None if expires_at is None else self._sql.stored_time(expires_at),
        )


class SqliteDocuments(SqlDocuments):
    """``Documents`` on SQLite's ``documents`` table."""

    def __init__(self, db: Database) -> None:
        super().__init__(db, SQLITE_DOCUMENTS)
