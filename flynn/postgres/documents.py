"""Namespaced documents in PostgreSQL: ``Documents`` on the ``documents`` table, as
``flynn.memory.documents`` keeps them in SQLite (working memory is one of them)."""

from __future__ import annotations

from flynn.memory.documents import DocumentsDialect, SqlDocuments
from flynn.postgres.database import PostgresDatabase, aware, utc

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
# As ``flynn.memory.documents``'s: one statement each, so no other worker comes between the
# compare and the write (a concurrent update makes the ``WHERE`` look at its new row).
_REPLACE_IF = f"""
UPDATE documents SET content = %s, updated_at = %s, expires_at = NULL
WHERE namespace = %s AND content = %s
RETURNING {_COLUMNS}
"""
_CREATE_IF_EMPTY = f"""
INSERT INTO documents AS d (namespace, content, updated_at) VALUES (%s, %s, %s)
ON CONFLICT (namespace) DO UPDATE SET
    content = excluded.content, updated_at = excluded.updated_at, expires_at = NULL
WHERE d.content = ''
RETURNING {_COLUMNS}
"""
_DELETE = "DELETE FROM documents WHERE namespace = %s"
_LIST = f"SELECT {_COLUMNS} FROM documents WHERE {_SCOPE} ORDER BY namespace"
_FORGET = f"DELETE FROM documents WHERE {_SCOPE}"


POSTGRES_DOCUMENTS = DocumentsDialect(
    read=_READ,
    replace=_REPLACE,
    append=_APPEND,
    delete=_DELETE,
    list=_LIST,
    forget=_FORGET,
    replace_if=_REPLACE_IF,
    create_if_empty=_CREATE_IF_EMPTY,
    time=aware,
    stored_time=utc,
)


class PostgresDocuments(SqlDocuments):
    """``Documents`` on PostgreSQL's ``documents`` table."""

    def __init__(self, db: PostgresDatabase) -> None:
        super().__init__(db, POSTGRES_DOCUMENTS)
