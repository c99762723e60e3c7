"""Namespaced documents in PostgreSQL: ``Documents`` on the ``documents`` table, as
``flynn.memory.documents`` keeps them in SQLite (working memory is one of them)."""

from __future__ import annotations

from datetime import datetime

from flynn.credentials import redact
from flynn.errors import StoreError
from flynn.memory.namespaces import scope_params
from flynn.memory.store import Document
from flynn.postgres.database import PostgresDatabase, Row, aware, optional_utc, utc

_COLUMNS = "namespace, content, updated_at, expires_at"
# ``flynn.memory.namespaces.namespace_scope`` with psycopg's placeholders; bytewise because the
# column is ``COLLATE "C"``.
_SCOPE = "(namespace = %s OR (namespace >= %s AND namespace < %s))"

_READ = f"SELECT {_COLUMNS} FROM documents WHERE namespace = %s"
_REPLACE = f"""
INSERT INTO documents (namespace, content, updated_at, expires_at) VALUES (%s, %s, %s, %s)
ON CONFLICT (namespace) DO UPDATE SET
    content = excluded.content, updated_at = excluded.updated_at, expires_at = excluded.expires_at
RETURNING {_COLUMNS}
"""
# A new line only where one is missing, so appending never leaves blank lines or a leading one.
_APPEND = f"""
INSERT INTO documents AS d (namespace, content, updated_at) VALUES (%s, %s, %s)
ON CONFLICT (namespace) DO UPDATE SET
    content = CASE
        WHEN d.content = '' OR right(d.content, 1) = chr(10) THEN d.content || excluded.content
        ELSE d.content || chr(10) || excluded.content
    END,
    updated_at = excluded.updated_at
RETURNING {_COLUMNS}
"""
_DELETE = "DELETE FROM documents WHERE namespace = %s"
_LIST = f"SELECT {_COLUMNS} FROM documents WHERE {_SCOPE} ORDER BY namespace"
_FORGET = f"DELETE FROM documents WHERE {_SCOPE}"


class PostgresDocuments:
    """``Documents`` on the ``documents`` table. Expiry is stored, not enforced: readers decide."""

    def __init__(self, db: PostgresDatabase) -> None:
        self._db = db

    def read(self, namespace: str) -> Document | None:
        row = self._db.fetchone(_READ, (namespace,))
        return None if row is None else _document(row)

    def replace(
        self, namespace: str, content: str, *, now: datetime, expires_at: datetime | None = None
    ) -> Document:
        expires = None if expires_at is None else aware(expires_at)
        content = redact(content)[0]  # working memory and session notes never keep a credential
        return _returned(self._db.fetchone(_REPLACE, (namespace, content, aware(now), expires)))

    def append(self, namespace: str, content: str, *, now: datetime) -> Document:
        """Adds ``content`` on a new line after what is there (or creates the document)."""
        content = redact(content)[0]
        return _returned(self._db.fetchone(_APPEND, (namespace, content, aware(now))))

    def delete(self, namespace: str) -> bool:
        return self._db.execute(_DELETE, (namespace,)) > 0

    def list(self, prefix: str) -> list[Document]:
        """Documents whose namespace is ``prefix`` or starts with ``prefix/``, by namespace."""
        return [_document(row) for row in self._db.fetchall(_LIST, scope_params(prefix))]

    def forget(self, prefix: str) -> int:
        """Deletes the documents under ``prefix`` for real; returns how many."""
        return self._db.execute(_FORGET, scope_params(prefix))


def _returned(row: Row | None) -> Document:
    if row is None:
        raise StoreError("document write returned no row")
    return _document(row)


def _document(row: Row) -> Document:
    return Document(
        namespace=row["namespace"],
        content=row["content"],
        updated_at=utc(row["updated_at"]),
        expires_at=optional_utc(row["expires_at"]),
    )
