"""Namespaced documents in SQLite: profile, patterns, working memory, persona memory tiers."""

from __future__ import annotations

import sqlite3
from datetime import datetime

from flynn.credentials import redact
from flynn.errors import StoreError
from flynn.memory.database import Database, decode_optional_time, decode_time, encode_time
from flynn.memory.namespaces import namespace_scope, scope_params
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
_DELETE = "DELETE FROM documents WHERE namespace = ?"
_LIST = f"SELECT {_COLUMNS} FROM documents WHERE {namespace_scope('namespace')} ORDER BY namespace"
_FORGET = f"DELETE FROM documents WHERE {namespace_scope('namespace')}"


class SqliteDocuments:
    """``Documents`` on the ``documents`` table. Expiry is stored, not enforced: readers decide."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def read(self, namespace: str) -> Document | None:
        row = self._db.fetchone(_READ, (namespace,))
        return None if row is None else _document(row)

    def replace(
        self, namespace: str, content: str, *, now: datetime, expires_at: datetime | None = None
    ) -> Document:
        expires = None if expires_at is None else encode_time(expires_at)
        content = redact(content)[0]  # working memory and session notes never keep a credential
        return _returned(
            self._db.fetchone(_REPLACE, (namespace, content, encode_time(now), expires))
        )

    def append(self, namespace: str, content: str, *, now: datetime) -> Document:
        """Adds ``content`` on a new line after what is there (or creates the document)."""
        content = redact(content)[0]
        return _returned(self._db.fetchone(_APPEND, (namespace, content, encode_time(now))))

    def delete(self, namespace: str) -> bool:
        return self._db.execute(_DELETE, (namespace,)) > 0

    def list(self, prefix: str) -> list[Document]:
        """Documents whose namespace is ``prefix`` or starts with ``prefix/``, by namespace."""
        return [_document(row) for row in self._db.fetchall(_LIST, scope_params(prefix))]

    def forget(self, prefix: str) -> int:
        """Deletes the documents under ``prefix`` for real; returns how many."""
        return self._db.execute(_FORGET, scope_params(prefix))


def _returned(row: sqlite3.Row | None) -> Document:
    if row is None:
        raise StoreError("document write returned no row")
    return _document(row)


def _document(row: sqlite3.Row) -> Document:
    return Document(
        namespace=row["namespace"],
        content=row["content"],
        updated_at=decode_time(row["updated_at"]),
        expires_at=decode_optional_time(row["expires_at"]),
    )
