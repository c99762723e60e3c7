"""``SqlRedaction`` on PostgreSQL (``PostgresRedaction``): a redacted message is rewritten with
its search postings (``PostgresHistory.rewrite``), and a redacted fact's or team chunk's
postings are cut again from its redacted text, in the batch's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from flynn.memory.fts_words import FtsWords
from flynn.memory.redaction import SqlRedaction
from flynn.postgres.database import PostgresDatabase, psycopg_statement
from flynn.postgres.facts import PostingsFactIndex
from flynn.postgres.history import PostgresHistory
from flynn.postgres.team import PostingsChunkIndex

_COLUMNS = """
SELECT column_name FROM information_schema.columns
WHERE table_schema = current_schema() AND table_name = %s
"""
_UNINDEX_FACTS = (
    "DELETE FROM fact_terms WHERE fact_id = ANY(%(ids)s);"
    "UPDATE facts SET root = NULL WHERE id = ANY(%(ids)s)"
)
_UNINDEX_CHUNKS = (
    "DELETE FROM team_chunk_terms WHERE chunk_id = ANY(%(ids)s);"
    "UPDATE team_chunks SET terms = NULL WHERE id = ANY(%(ids)s)"
)


class PostgresRedaction(SqlRedaction):
    _LOCK = " FOR UPDATE"

    def __init__(self, db: PostgresDatabase, *, words: FtsWords | None = None) -> None:
        super().__init__(db, statement=psycopg_statement)
        self._pg = db
        words = FtsWords() if words is None else words
        self._history = PostgresHistory(db, words=words)
        self._facts = PostingsFactIndex(db, words)
        self._chunks = PostingsChunkIndex(db, words)

    def columns(self, table: str) -> set[str]:
        return {str(row["column_name"]) for row in self._pg.fetchall(_COLUMNS, (table,))}

    def rewrite_message(self, message_id: int, content: str) -> None:
        self._history.rewrite(message_id, content)

    def rewritten(self, table: str, keys: Sequence[Any]) -> None:
        if table == "facts":
            for statement in _UNINDEX_FACTS.split(";"):
                self._pg.execute(statement, {"ids": [int(key) for key in keys]})
            self._facts.index_missing()
        elif table == "team_chunks":
            for statement in _UNINDEX_CHUNKS.split(";"):
                self._pg.execute(statement, {"ids": [int(key) for key in keys]})
            self._chunks.index_missing()
