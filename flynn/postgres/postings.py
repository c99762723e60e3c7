"""What an FTS5 index holds, kept in PostgreSQL tables: each term's postings with its count in
the row (``message_terms``, ``fact_terms``, ``team_chunk_terms``), read as a ``TermIndex`` by the
same ``FtsQueryPlanner`` SQLite's search uses, and FTS5's ``bm25()`` computed from the same
statistics: a search on PostgreSQL finds and ranks what it finds on SQLite.

Words are FTS5's (``flynn.memory.fts_words``): a word a person typed is searched as the terms
FTS5 cuts it into, a phrase when there are several (checked against each column's own terms, as
a phrase never spans two columns).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from flynn.memory.bm25 import K1, B
from flynn.memory.fts_words import FtsWords, IndexedText
from flynn.postgres.database import PostgresDatabase, Row

_IDF_FLOOR = 1e-6
"""FTS5's idf for a word in most rows (``bm25()`` in ``fts5_aux.c``)."""


@dataclass(frozen=True, slots=True)
class PostingsTable:
    """Where one index's postings live: ``terms`` (``term``, the owner's id ``owner``, ``root``
    and ``occurs`` columns, keyed by term and owner), the indexed table ``rows`` (``id``, and
    ``root`` where a namespace root's rows are counted), and ``texts``: its indexed columns,
    in order."""

    terms: str
    owner: str
    rows: str
    texts: tuple[str, ...]

    def statement(self, template: str) -> str:
        return template.format(
            terms=self.terms, owner=self.owner, rows=self.rows, texts=", ".join(self.texts)
        )


_ROWS = "SELECT {owner} AS id FROM {terms} WHERE term = %s AND {owner} >= %s"
_ROOT_ROWS = _ROWS + " AND root = %s"
_COUNT = """
SELECT count(*) AS n FROM (
    SELECT DISTINCT {owner} FROM {terms} WHERE term = ANY(%s) LIMIT %s
) AS found
"""
_ROOT_COUNT = """
SELECT count(*) AS n FROM (
    SELECT DISTINCT {owner} FROM {terms} WHERE term = ANY(%s) AND root = %s LIMIT %s
) AS found
"""
# Each term's rows counted up to the limit, all terms in one statement.
_COUNT_EACH = """
SELECT w.term, (
    SELECT count(*) FROM (SELECT 1 FROM {terms} AS t WHERE t.term = w.term LIMIT %s) AS c
) AS n
FROM unnest(%s::text[]) AS w (term)
"""
_ROOT_COUNT_EACH = """
SELECT w.term, (
    SELECT count(*) FROM (
        SELECT 1 FROM {terms} AS t WHERE t.root = %s AND t.term = w.term LIMIT %s
    ) AS c
) AS n
FROM unnest(%s::text[]) AS w (term)
"""
_ROWS_EACH = """
SELECT term, {owner} AS id FROM {terms} WHERE term = ANY(%s) AND {owner} >= %s
ORDER BY term, {owner}
"""
_ROOT_ROWS_EACH = """
SELECT term, {owner} AS id FROM {terms}
WHERE root = %s AND term = ANY(%s) AND {owner} >= %s
ORDER BY term, {owner}
"""
_ROOT_SIZE = "SELECT count(*) AS n FROM (SELECT 1 FROM {rows} WHERE root = %s LIMIT %s) AS r"
_WINDOW = """
SELECT min({owner}) AS low FROM (
    SELECT DISTINCT {owner} FROM {terms} WHERE term = ANY(%s)
    ORDER BY {owner} DESC LIMIT %s
) AS newest
"""
_ROOT_WINDOW = """
SELECT min({owner}) AS low FROM (
    SELECT DISTINCT {owner} FROM {terms} WHERE term = ANY(%s) AND root = %s
    ORDER BY {owner} DESC LIMIT %s
) AS newest
"""
_NEWEST = "SELECT coalesce(max(id), 0) AS newest FROM {rows}"
_CONTENTS = "SELECT id, {texts} FROM {rows} WHERE id = ANY(%s)"
_HOLDING = "SELECT term, count(*) AS n FROM {terms} WHERE term = ANY(%s) GROUP BY term"
_OCCURS = """
SELECT {owner} AS id, term, occurs FROM {terms} WHERE term = ANY(%s) AND {owner} = ANY(%s)
"""
_AMONG = "SELECT {owner} AS id FROM {terms} WHERE term = %s AND {owner} = ANY(%s)"
_INSERT = """
INSERT INTO {terms} (term, {owner}, root, occurs)
SELECT term, owner, root, occurs
FROM unnest(%s::text[], %s::bigint[], %s::text[], %s::integer[]) AS t (term, owner, root, occurs)
ON CONFLICT DO NOTHING
"""


@dataclass(frozen=True, slots=True)
class TermRows:
    """The rows of ``insert``: each (term, owner, root, occurs) of some indexed rows."""

    terms: list[str]
    owners: list[int]
    roots: list[str]
    occurs: list[int]

    @classmethod
    def of(cls, rows: Iterable[tuple[int, str, Counter[str]]]) -> TermRows:
        """From each row's id, root and terms with their counts."""
        postings = cls([], [], [], [])
        for owner, root, terms in rows:
            for term, count in terms.items():
                postings.terms.append(term)
                postings.owners.append(owner)
                postings.roots.append(root)
                postings.occurs.append(count)
        return postings


def merged(texts: Sequence[IndexedText]) -> IndexedText:
    """One row's columns as one: its terms counted over all of them, its length their sum."""
    terms: Counter[str] = Counter()
    for text in texts:
        terms.update(text.terms)
    return IndexedText(terms, sum(text.length for text in texts))


class PostgresTermIndex:
    """``TermIndex`` on a ``PostingsTable``: a word matches the rows holding each of its FTS5
    terms, in a row (in one column) when there are several; a word with none matches nothing."""

    def __init__(self, db: PostgresDatabase, words: FtsWords, table: PostingsTable) -> None:
        self._db = db
        self._words = words
        self.table = table
        sql = table.statement
        self._rows_sql, self._root_rows_sql = sql(_ROWS), sql(_ROOT_ROWS)
        self._count_sql, self._root_count_sql = sql(_COUNT), sql(_ROOT_COUNT)
        self._count_each_sql, self._root_count_each_sql = sql(_COUNT_EACH), sql(_ROOT_COUNT_EACH)
        self._rows_each_sql, self._root_rows_each_sql = sql(_ROWS_EACH), sql(_ROOT_ROWS_EACH)
        self._root_size_sql, self._newest_sql = sql(_ROOT_SIZE), sql(_NEWEST)
        self._window_sql, self._root_window_sql = sql(_WINDOW), sql(_ROOT_WINDOW)
        self._contents_sql, self._holding_sql = sql(_CONTENTS), sql(_HOLDING)
        self._among_sql, self._insert_sql = sql(_AMONG), sql(_INSERT)
        self._occurs_sql = sql(_OCCURS)

    def insert(self, postings: TermRows) -> None:
        """Writes ``postings`` (those already there are kept)."""
        if postings.terms:
            self._db.execute(
                self._insert_sql,
                (postings.terms, postings.owners, postings.roots, postings.occurs),
            )

    def count(self, terms: tuple[str, ...], root: str, limit: int) -> int:
        if not terms:
            row = self._db.fetchone(self._root_size_sql, (root, limit))
            return 0 if row is None else int(row["n"])
        single = self._single_terms(terms)
        if single is None:
            return min(limit, len(self._matching(terms, root, 0)))
        if not single:
            return 0
        if root:
            row = self._db.fetchone(self._root_count_sql, (single, root, limit))
        else:
            row = self._db.fetchone(self._count_sql, (single, limit))
        return 0 if row is None else int(row["n"])

    def window(self, terms: tuple[str, ...], root: str, limit: int) -> int:
        single = self._single_terms(terms)
        if single is None:
            newest = sorted(self._matching(terms, root, 0), reverse=True)[:limit]
            return min(newest) if newest else 0
        if not single:
            return 0
        if root:
            row = self._db.fetchone(self._root_window_sql, (single, root, limit))
        else:
            row = self._db.fetchone(self._window_sql, (single, limit))
        return 0 if row is None or row["low"] is None else int(row["low"])

    def rows(self, term: str, root: str, min_rowid: int) -> tuple[int, ...]:
        return tuple(sorted(self._matching((term,), root, min_rowid)))

    def count_each(self, terms: tuple[str, ...], root: str, limit: int) -> dict[str, int]:
        single = {word: self._words.phrase(word) for word in terms}
        counts = {word: 0 for word, phrase in single.items() if not phrase}
        wanted = sorted({phrase[0] for phrase in single.values() if len(phrase) == 1})
        if wanted:
            if root:
                rows = self._db.fetchall(self._root_count_each_sql, (root, limit, wanted))
            else:
                rows = self._db.fetchall(self._count_each_sql, (limit, wanted))
            found = {row["term"]: int(row["n"]) for row in rows}
            counts.update(
                {word: found[phrase[0]] for word, phrase in single.items() if len(phrase) == 1}
            )
        for word, phrase in single.items():
            if len(phrase) > 1:
                counts[word] = self.count((word,), root, limit)
        return counts

    def rows_each(
        self, terms: tuple[str, ...], root: str, min_rowid: int
    ) -> dict[str, tuple[int, ...]]:
        single = {word: self._words.phrase(word) for word in terms}
        wanted = sorted({phrase[0] for phrase in single.values() if len(phrase) == 1})
        lists: dict[str, list[int]] = {term: [] for term in wanted}
        if wanted:
            if root:
                rows = self._db.fetchall(self._root_rows_each_sql, (root, wanted, min_rowid))
            else:
                rows = self._db.fetchall(self._rows_each_sql, (wanted, min_rowid))
            for row in rows:
                lists[row["term"]].append(int(row["id"]))
        return {
            word: tuple(lists[phrase[0]]) if len(phrase) == 1 else self.rows(word, root, min_rowid)
            for word, phrase in single.items()
        }

    def documents(self) -> int:
        row = self._db.fetchone(self._newest_sql)
        return 0 if row is None else int(row["newest"])

    def among(self, word: str, ids: Sequence[int]) -> set[int]:
        """Which of the rows ``ids`` hold ``word``."""
        phrase = self._words.phrase(word)
        if not phrase or not ids:
            return set()
        if len(phrase) == 1:
            rows = self._db.fetchall(self._among_sql, (phrase[0], list(ids)))
            return {int(row["id"]) for row in rows}
        return self._matching((word,), "", 0) & set(ids)

    def holding(self, words: Iterable[str]) -> dict[str, int]:
        """How many rows of the whole index hold each word (FTS5's ``nHit``)."""
        phrases = {word: self._words.phrase(word) for word in words}
        single = sorted({phrase[0] for phrase in phrases.values() if len(phrase) == 1})
        counts: dict[str, int] = {}
        if single:
            counts = {
                row["term"]: int(row["n"])
                for row in self._db.fetchall(self._holding_sql, (single,))
            }
        return {
            word: counts.get(phrase[0], 0)
            if len(phrase) == 1
            else (len(self.rows(word, "", 0)) if phrase else 0)
            for word, phrase in phrases.items()
        }

    def occurrences(self, words: Iterable[str], ids: list[int]) -> dict[int, dict[str, int]]:
        """How often each of ``words`` occurs in each of the rows ``ids`` (a phrase: as a
        phrase, in any one column), from the postings; the rows' text is read only for a
        phrase."""
        phrases = {word: self._words.phrase(word) for word in words}
        found: dict[int, dict[str, int]] = {row: {} for row in ids}
        single = {word: phrase[0] for word, phrase in phrases.items() if len(phrase) == 1}
        if single:
            rows = self._db.fetchall(self._occurs_sql, (sorted(set(single.values())), ids))
            by_term = {(int(row["id"]), row["term"]): int(row["occurs"]) for row in rows}
            for row_id in ids:
                found[row_id].update(
                    {word: by_term.get((row_id, term), 0) for word, term in single.items()}
                )
        longer = {word: phrase for word, phrase in phrases.items() if len(phrase) > 1}
        if longer:
            for row_id, columns in self.column_occurrences(longer, ids).items():
                counts = found.setdefault(row_id, {})
                for word in longer:
                    counts[word] = sum(column.get(word, 0) for column in columns)
        return found

    def column_occurrences(
        self, words: Iterable[str], ids: list[int]
    ) -> dict[int, list[dict[str, int]]]:
        """How often each of ``words`` occurs in each column of each of the rows ``ids``, one
        count per column in ``PostingsTable.texts``' order, from the rows' own text."""
        phrases = {word: self._words.phrase(word) for word in words}
        found: dict[int, list[dict[str, int]]] = {}
        for row in self._db.fetchall(self._contents_sql, (ids,)):
            columns: list[dict[str, int]] = []
            for text in self._texts(row):
                tokens = self._words.tokens(text)
                columns.append(
                    {
                        word: phrase_count(tokens, phrase) if phrase else 0
                        for word, phrase in phrases.items()
                    }
                )
            found[int(row["id"])] = columns
        return found

    def _texts(self, row: Row) -> list[str]:
        return [row[column] or "" for column in self.table.texts]

    def _single_terms(self, words: tuple[str, ...]) -> list[str] | None:
        """The one term of each word (words with none left out), or ``None`` when a word is a
        phrase of several."""
        single: list[str] = []
        for word in words:
            phrase = self._words.phrase(word)
            if len(phrase) > 1:
                return None
            single.extend(phrase)
        return single

    def _matching(self, words: tuple[str, ...], root: str, min_rowid: int) -> set[int]:
        found: set[int] = set()
        for word in words:
            phrase = self._words.phrase(word)
            if not phrase:
                continue
            lists = [set(self._term_rows(term, root, min_rowid)) for term in dict.fromkeys(phrase)]
            holding = set.intersection(*lists)
            if len(phrase) > 1:
                holding = self._with_phrase(holding, phrase)
            found |= holding
        return found

    def _term_rows(self, term: str, root: str, min_rowid: int) -> list[int]:
        if root:
            rows = self._db.fetchall(self._root_rows_sql, (term, min_rowid, root))
        else:
            rows = self._db.fetchall(self._rows_sql, (term, min_rowid))
        return [int(row["id"]) for row in rows]

    def _with_phrase(self, ids: set[int], phrase: tuple[str, ...]) -> set[int]:
        """Of ``ids``, the rows one of whose columns holds ``phrase`` in a row."""
        if not ids:
            return ids
        rows = self._db.fetchall(self._contents_sql, (sorted(ids),))
        return {
            int(row["id"])
            for row in rows
            if any(phrase_count(self._words.tokens(text), phrase) for text in self._texts(row))
        }


def phrase_count(tokens: Sequence[str], phrase: Sequence[str]) -> int:
    """How often ``phrase`` occurs in ``tokens``, as consecutive terms."""
    width = len(phrase)
    return sum(
        1
        for start in range(len(tokens) - width + 1)
        if tuple(tokens[start : start + width]) == phrase
    )


def fts5_bm25(
    rows: int, tokens: int, holding: Mapping[str, int], words: Sequence[str]
) -> Callable[[int, Mapping[str, float]], float]:
    """FTS5's ``bm25()`` (``fts5_aux.c``) for an index of ``rows`` rows holding ``tokens``
    tokens in all, ``holding[word]`` of them holding each word: a function of a row's length in
    tokens and each word's (weighted) count in it, in FTS5's order of arithmetic, so scores are
    equal to the bit (higher is better: FTS5's ``rank`` is its negation)."""
    average = tokens / rows if rows else 1.0
    idf: dict[str, float] = {}
    for word in words:
        value = math.log((rows - holding[word] + 0.5) / (holding[word] + 0.5))
        idf[word] = value if value > 0.0 else _IDF_FLOOR

    def score(length: int, freqs: Mapping[str, float]) -> float:
        total = 0.0
        for word in words:
            freq = float(freqs.get(word, 0))
            total += idf[word] * (
                (freq * (K1 + 1.0)) / (freq + K1 * (1 - B + B * length / average))
            )
        return total

    return score
