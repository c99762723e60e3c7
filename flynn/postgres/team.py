"""Team knowledge in PostgreSQL: ``team_documents`` and ``team_chunks`` as
``flynn.memory.team`` keeps them in SQLite, searched through FTS5's own terms of each chunk's
heading and content (``team_chunk_terms``, ``flynn.postgres.postings``) and ranked by FTS5's
bm25 with the heading weighing half, as ``team_chunks_fts`` ranks them: the same chunks in the
same order."""

from __future__ import annotations

from collections.abc import Sequence

from flynn.memory.fts_words import FtsWords
from flynn.memory.team import NewChunk, SqlTeam, team_dialect
from flynn.postgres.database import PostgresDatabase, aware, psycopg_statement, utc
from flynn.postgres.postings import PostgresTermIndex, PostingsTable, TermRows, fts5_bm25, merged

# Conflicts with itself and with every write, not with reads; ends with the transaction.
_SERIALISE = "LOCK TABLE team_documents IN SHARE ROW EXCLUSIVE MODE"
_CHUNKS_OF = "SELECT id FROM team_chunks WHERE document_id = %s ORDER BY position"
_UNINDEXED = "SELECT id, heading, content FROM team_chunks WHERE terms IS NULL ORDER BY id LIMIT %s"
_SET_LENGTHS = """
UPDATE team_chunks SET terms = c.terms FROM unnest(%s::bigint[], %s::integer[]) AS c (id, terms)
WHERE team_chunks.id = c.id
"""
_TOTALS = "SELECT count(*) AS n, coalesce(sum(terms), 0) AS t FROM team_chunks"
_LENGTHS = "SELECT id, terms FROM team_chunks WHERE id = ANY(%s)"
_BACKFILL_PAGE = 500
_WEIGHTS = (0.5, 1.0)
"""``team_chunks_fts``'s ``bm25(0.5, 1.0)``: heading, content."""
# Team documents are nobody's: every chunk's root is ''.
CHUNK_POSTINGS = PostingsTable(
    "team_chunk_terms", "chunk_id", "team_chunks", ("heading", "content")
)

POSTGRES_TEAM = team_dialect(
    psycopg_statement,
    placeholder="%s",
    serialise=_SERIALISE,
    time=aware,
    stored_time=utc,
)


class PostingsChunkIndex:
    """``ChunkIndex`` on ``team_chunk_terms``: a chunk is indexed in the transaction that
    stores it."""

    def __init__(self, db: PostgresDatabase, words: FtsWords) -> None:
        self._db = db
        self._words = words
        self._terms = PostgresTermIndex(db, words, CHUNK_POSTINGS)

    def added(self, document_id: int, chunks: Sequence[NewChunk]) -> None:
        ids = [int(row["id"]) for row in self._db.fetchall(_CHUNKS_OF, (document_id,))]
        self._index(ids, chunks)

    def index_missing(self) -> int:
        """Indexes the chunks stored before ``team_chunk_terms`` existed; returns how many."""
        done = 0
        while rows := self._db.fetchall(_UNINDEXED, (_BACKFILL_PAGE,)):
            with self._db.transaction():
                self._index(
                    [int(row["id"]) for row in rows],
                    [NewChunk(row["heading"], row["content"]) for row in rows],
                )
            done += len(rows)
        return done

    def rows(self, term: str, limit: int) -> tuple[int, ...]:
        return self._terms.rows(term, "", 0)[:limit]

    def held_among(self, term: str, ids: Sequence[int]) -> set[int]:
        return self._terms.among(term, ids)

    def best_matches(self, terms: Sequence[str], limit: int) -> list[int]:
        words = list(dict.fromkeys(terms))
        matched = sorted(set().union(*self._terms.rows_each(tuple(words), "", 0).values()))
        if not matched:
            return []
        totals = self._db.fetchone(_TOTALS)
        rows = 0 if totals is None else int(totals["n"])
        tokens = 0 if totals is None else int(totals["t"])
        score = fts5_bm25(rows, tokens, self._terms.holding(words), words)
        lengths = {
            int(row["id"]): int(row["terms"]) for row in self._db.fetchall(_LENGTHS, (matched,))
        }
        columns = self._terms.column_occurrences(words, matched)
        scored = []
        for chunk_id, counts in columns.items():
            # FTS5 adds a column's weight for each occurrence: heading first, then content.
            freqs = {
                word: sum(
                    weight * column[word] for weight, column in zip(_WEIGHTS, counts, strict=True)
                )
                for word in words
            }
            scored.append((-score(lengths[chunk_id], freqs), chunk_id))
        scored.sort()
        return [chunk_id for _, chunk_id in scored[:limit]]

    def _index(self, ids: list[int], chunks: Sequence[NewChunk]) -> None:
        texts = [merged(self._words.index([chunk.heading, chunk.content])) for chunk in chunks]
        self._terms.insert(
            TermRows.of(
                (chunk_id, "", text.terms) for chunk_id, text in zip(ids, texts, strict=True)
            )
        )
        self._db.execute(_SET_LENGTHS, (ids, [text.length for text in texts]))


class PostgresTeam(SqlTeam):
    """Team documents in PostgreSQL."""

    def __init__(self, db: PostgresDatabase, *, words: FtsWords | None = None) -> None:
        self.index = PostingsChunkIndex(db, FtsWords() if words is None else words)
        super().__init__(db, POSTGRES_TEAM, self.index)
