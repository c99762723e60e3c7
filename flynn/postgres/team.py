"""Team knowledge in PostgreSQL: ``team_documents`` and ``team_chunks`` as
``flynn.memory.team`` keeps them in SQLite, searched through the chunks' ``words`` (a GIN
index; ranking by ``ts_rank`` with the heading weighing half, where SQLite ranks by bm25)."""

from __future__ import annotations

from collections.abc import Sequence

from flynn.memory.team import SqlTeam, team_dialect
from flynn.postgres.database import PostgresDatabase, aware, psycopg_statement, utc

_MATCH = "words @@ plainto_tsquery('english', %s)"
_BEST_MATCHES = """
WITH q AS (SELECT websearch_to_tsquery('english', %s) AS query)
SELECT id FROM team_chunks, q WHERE words @@ q.query
ORDER BY ts_rank('{0.1, 0.2, 0.5, 1.0}', words, q.query) DESC, id LIMIT %s
"""
# Conflicts with itself and with every write, not with reads; ends with the transaction.
_SERIALISE = "LOCK TABLE team_documents IN SHARE ROW EXCLUSIVE MODE"


def _word(term: str) -> str:
    return term


def _any_word(terms: Sequence[str]) -> str:
    # ``search_terms`` gives words of letters and digits only, and never "or" (a stopword).
    return " or ".join(terms)


POSTGRES_TEAM = team_dialect(
    psycopg_statement,
    placeholder="%s",
    serialise=_SERIALISE,
    rows=f"SELECT id FROM team_chunks WHERE {_MATCH} ORDER BY id LIMIT %s",
    held_among=f"SELECT id FROM team_chunks WHERE {_MATCH} AND id IN ({{marks}})",
    best_matches=_BEST_MATCHES,
    word=_word,
    any_word=_any_word,
    time=aware,
    stored_time=utc,
)


class PostgresTeam(SqlTeam):
    """Team documents in PostgreSQL."""

    def __init__(self, db: PostgresDatabase) -> None:
        super().__init__(db, POSTGRES_TEAM)
