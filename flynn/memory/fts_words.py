"""Words as FTS5 indexes them (``porter unicode61``: Unicode word characters, case and diacritics
folded, Porter's stemmer), cut by SQLite's own tokenizer in an in-memory table: a backend without
FTS5 (PostgreSQL) is fed exactly the terms ``messages_fts`` holds, for the same postings, counts
and lengths, and so the same ranking."""

from __future__ import annotations

import sqlite3
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from flynn.errors import StoreError

_TOKENIZER = "porter unicode61"
"""``messages_fts``'s (``flynn.memory.migrations``): change both together, or neither."""
_MAX_PHRASES = 1 << 14
_SNIPPET = "SELECT snippet(t, 0, '[', ']', '…', ?) FROM t WHERE t MATCH ?"


@dataclass(frozen=True, slots=True)
class IndexedText:
    """A text as the index holds it: each term with how often it occurs, and the number of
    tokens (what bm25 calls the row's length)."""

    terms: Counter[str]
    length: int


class FtsWords:
    """SQLite's FTS5 tokenizer, run on texts: safe to share between threads (one at a time)."""

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._db.execute(f"CREATE VIRTUAL TABLE t USING fts5(content, tokenize='{_TOKENIZER}')")
        self._db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
        self._lock = threading.Lock()
        self._phrases: dict[str, tuple[str, ...]] = {}

    def index(self, texts: Sequence[str]) -> list[IndexedText]:
        """Each text's terms and length, in order."""
        if not texts:
            return []
        found: list[Counter[str]] = [Counter() for _ in texts]
        with self._lock:
            try:
                self._db.execute("BEGIN")
                self._db.executemany(
                    "INSERT INTO t (rowid, content) VALUES (?, ?)", enumerate(texts, start=1)
                )
                for doc, term in self._db.execute("SELECT doc, term FROM v"):
                    found[doc - 1][term] += 1
            except sqlite3.Error as exc:
                raise StoreError(f"cannot cut words: {exc}") from exc
            finally:
                self._db.execute("ROLLBACK")
        return [IndexedText(terms, sum(terms.values())) for terms in found]

    def tokens(self, text: str) -> list[str]:
        """The terms of ``text`` in the order they occur."""
        with self._lock:
            try:
                self._db.execute("BEGIN")
                self._db.execute("INSERT INTO t (rowid, content) VALUES (1, ?)", (text,))
                rows = self._db.execute("SELECT term, offset FROM v").fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"cannot cut words: {exc}") from exc
            finally:
                self._db.execute("ROLLBACK")
        return [term for term, _ in sorted(rows, key=lambda row: row[1])]

    def snippet(self, text: str, expression: str, tokens: int) -> str:
        """FTS5's ``snippet()`` of ``text`` for the FTS5 query ``expression``: about ``tokens``
        terms around the best matches, each match in ``[`` ``]``, ``…`` where text was left out.
        It depends on the text and the query alone, so it is the excerpt SQLite's search gives;
        the text itself when the query matches nothing in it."""
        with self._lock:
            try:
                self._db.execute("BEGIN")
                self._db.execute("INSERT INTO t (rowid, content) VALUES (1, ?)", (text,))
                row = self._db.execute(_SNIPPET, (tokens, expression)).fetchone()
            except sqlite3.Error as exc:
                raise StoreError(f"cannot cut words: {exc}") from exc
            finally:
                self._db.execute("ROLLBACK")
        return text if row is None else str(row[0])

    def phrase(self, word: str) -> tuple[str, ...]:
        """What a quoted query word (``fts.quoted``) matches: its terms in a row, as FTS5 reads
        ``"word"`` (a phrase when the tokenizer cuts it in several; none when in none).
        Remembered: the same words are searched again and again."""
        known = self._phrases.get(word)
        if known is None:
            if len(self._phrases) >= _MAX_PHRASES:
                self._phrases.clear()
            known = self._phrases[word] = tuple(self.tokens(word))
        return known
