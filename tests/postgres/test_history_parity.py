"""The same messages on SQLite and on PostgreSQL index the same terms, counts and lengths, so a
search finds and ranks the same messages with the same scores: a handwritten evaluation set's
turns and its questions, and text made to catch a tokenizer out (accents composed and not,
apostrophes, numbers, CJK, emoji, code, URLs, characters FTS5 cuts a word at that Python's
``\\w`` does not)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from postgres_server import PostgresServer

from evals import datasets
from flynn.memory.history import SqliteHistory
from flynn.memory.namespaces import namespace_root
from flynn.memory.store import NewMessage
from flynn.memory.stores import SqliteMemory
from flynn.postgres.database import PostgresDatabase
from flynn.postgres.history import PostgresHistory
from flynn.schedule.migrations import SCHEMA

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

TRICKY = [
    "Café, CAFÉ and cafe\u0301 (a combining accent); naïve façade Ærøskøbing",
    "Don't, won't, O'Brien’s and the 90’s: apostrophes straight and curly",
    "Pi is 3.14159, a million is 1,000,000 and ½ + ² + ① are numbers too; ０１２ fullwidth",
    "東京タワーに行きました。北京烤鸭很好吃！ 서울에서 만나요",
    "Emoji 😀👍🏽 and a family 👨\u200d👩\u200d👧 and flags 🇫🇷 between words😀like this",
    "def parse_args(argv: list[str]) -> dict:  # snake_case CamelCase kebab-case",
    "See https://example.com/a_b/c-d?q=1&x=y#frag and mail bob.smith@example.org now",
    "Straße STRASSE İstanbul ıi ǅemal ﬁne ligature ß",
    "A long token: " + "supercalifragilistic" * 5 + " and running runs runner ran",
    "Tabs\tand\nnew lines\r\nand — dashes – and … ellipses «quotes» „more“",
    "Cuts inside a word: ab\u19b0cd and x\u1cf2y stay phrases to FTS5",
    "Not that phrase: cd before ab, y before x, ab cd ab",
    "Numbers next to words: 2nd 3rd 10km 5pm v1.2.3 IPv6 ::1 0xFF",
    "generalizations generalization generally general generate generative",
    "",
    "   ",
    "ok",
]
"""Made-up text; each line is also searched, word by word."""


@dataclass(frozen=True, slots=True)
class Said:
    session: str
    namespace: str
    text: str


def _corpus() -> list[Said]:
    built = datasets.build("handwritten")
    said: list[Said] = []
    for conversation in built["conversations"]:  # type: ignore[attr-defined]
        for session in conversation["sessions"]:
            for turn in session["turns"]:
                said.append(
                    Said(
                        f"{conversation['id']}/{session['id']}",
                        f"users/{conversation['id']}",
                        f"{turn['speaker']}: {turn['text']}",
                    )
                )
    # Spread over several roots, a sub-namespace and a one-level root.
    for n, text in enumerate(TRICKY):
        namespace = ("users/zoe", "users/zoe/notes", "team", "sessions/x:1")[n % 4]
        said.append(Said(f"tricky/{n % 3}", namespace, text))
    return said


def _questions() -> list[str]:
    built = datasets.build("handwritten")
    asked = [str(q["question"]) for q in built["questions"]]  # type: ignore[attr-defined]
    return asked + TRICKY + ["running general", "café naïve", "ab\u19b0cd x\u1cf2y"]


@dataclass(slots=True)
class Both:
    sqlite: SqliteMemory
    pg: PostgresDatabase
    history: PostgresHistory


@pytest.fixture(scope="module")
def both(
    tmp_path_factory: pytest.TempPathFactory, postgres_server: PostgresServer
) -> Iterator[Both]:
    """One corpus stored on both backends in the same order, for every test of the module."""
    corpus = _corpus()
    path: Path = tmp_path_factory.mktemp("parity") / "flynn.db"
    with (
        postgres_server.fresh_schema() as url,
        SqliteMemory.open(path, SCHEMA) as sqlite,
        PostgresDatabase.open(url) as pg,
    ):
        history = PostgresHistory(pg)
        for n, said in enumerate(corpus):
            now = T0 + timedelta(minutes=n)
            for store in (sqlite.history, history):
                store.append(said.session, said.namespace, "user", said.text, tokens=1, now=now)
        # An import too, which writes its terms in bulk.
        batch = [NewMessage("user", said.text, 1, T0) for said in corpus[:40]]
        for store in (sqlite.history, history):
            store.append_many("import:1", "users/imported", batch)
        yield Both(sqlite, pg, history)


def _sqlite_index(memory: SqliteMemory) -> tuple[Counter[tuple[str, int]], dict[int, int]]:
    """Each (term, message) FTS5 holds in ``content``, with its count; each message's length."""
    memory.db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab "
        "USING fts5vocab(main, messages_fts, instance)"
    )
    occurs: Counter[tuple[str, int]] = Counter()
    for row in memory.db.fetchall("SELECT term, doc FROM temp.vocab WHERE col = 'content'"):
        occurs[(row["term"], int(row["doc"]))] += 1
    lengths: Counter[int] = Counter()
    for (_, doc), count in occurs.items():
        lengths[doc] += count
    ids = [int(row["id"]) for row in memory.db.fetchall("SELECT id FROM messages")]
    return occurs, {message_id: lengths[message_id] for message_id in ids}


def test_every_term_count_and_length_is_the_same(both: Both) -> None:
    occurs = _same_index(both)
    assert len(occurs) > 2000  # the corpus is not trivially small
    # Non-ASCII terms are among them, and FTS5's phrases: nothing was folded away on one side.
    assert {"東京タワーに行きました", "cafe", "naiv", "ab", "cd"} <= {t for t, _ in occurs}


def _same_index(both: Both) -> Counter[tuple[str, int]]:
    """Asserts both backends index the same terms, counts and lengths; returns them."""
    sqlite_occurs, sqlite_lengths = _sqlite_index(both.sqlite)
    pg_occurs = Counter(
        {
            (row["term"], int(row["message_id"])): int(row["occurs"])
            for row in both.pg.fetchall("SELECT term, message_id, occurs FROM message_terms")
        }
    )
    pg_lengths = {
        int(row["id"]): int(row["terms"])
        for row in both.pg.fetchall("SELECT id, terms FROM messages")
    }
    assert pg_occurs == sqlite_occurs
    assert pg_lengths == sqlite_lengths
    return pg_occurs


def test_each_roots_counts_are_its_messages(both: Both) -> None:
    per_root: Counter[str] = Counter()
    terms: Counter[str] = Counter()
    _, lengths = _sqlite_index(both.sqlite)
    for row in both.sqlite.db.fetchall("SELECT id, namespace FROM messages"):
        root = namespace_root(row["namespace"])
        per_root[root] += 1
        terms[root] += lengths[int(row["id"])]
    stored = {
        row["root"]: (int(row["messages"]), int(row["terms"]))
        for row in both.pg.fetchall("SELECT root, messages, terms FROM message_roots")
    }
    assert stored == {root: (per_root[root], terms[root]) for root in per_root}


@pytest.mark.parametrize("prefix", [None, "users/ana", "team", "users"])
def test_postings_are_the_same_for_every_question(both: Both, prefix: str | None) -> None:
    sqlite = both.sqlite.history
    compared = absent = 0
    for question in _questions():
        for wide, max_terms in ((False, 0), (True, 0), (True, 3)):
            expected = sqlite.postings(
                question, wide=wide, max_terms=max_terms, namespace_prefix=prefix
            )
            found = both.history.postings(
                question, wide=wide, max_terms=max_terms, namespace_prefix=prefix
            )
            assert found == expected, (question, wide, max_terms)
            compared += expected is not None
            absent += expected is not None and bool(expected.absent)
    assert compared > 100
    assert absent > 10  # words found in no row are told apart alike (``Postings.absent``)


def test_searches_find_and_score_the_same_messages(both: Both) -> None:
    sqlite = both.sqlite.history
    assert isinstance(sqlite, SqliteHistory)
    ranked = 0
    for question in _questions():
        for prefix in ("users/ana", "users/zoe", "sessions/x:1"):
            expected = sqlite.match(prefix, question, limit=10, wide=True)
            found = both.history.match(prefix, question, limit=10, wide=True)
            assert [(m.message, m.score) for m in found] == [
                (m.message, m.score) for m in expected
            ], (question, prefix)
            hits = both.history.search(prefix, question, limit=5, exclude_session="ana/s1")
            expected_hits = sqlite.search(prefix, question, limit=5, exclude_session="ana/s1")
            assert [(h.message.id, h.score, h.excerpt) for h in hits] == [
                (h.message.id, h.score, h.excerpt) for h in expected_hits
            ]
            ranked += len(found)
    assert ranked > 300


def test_a_rewritten_message_is_indexed_anew_on_both(tmp_path: Path, postgres_url: str) -> None:
    """Forgetting a value rewrites the messages that said it: SQLite's index follows by
    trigger, PostgreSQL's by ``PostgresHistory.rewrite``; the two still agree."""
    with (
        SqliteMemory.open(tmp_path / "flynn.db", SCHEMA) as sqlite,
        PostgresDatabase.open(postgres_url) as pg,
    ):
        history = PostgresHistory(pg)
        for n, text in enumerate(TRICKY[:8]):
            for store in (sqlite.history, history):
                store.append("s", ("users/zoe", "team")[n % 2], "user", text, tokens=1, now=T0)
        redacted = "Don't, won't, REDACTED and the 90’s: apostrophes straight and curly"
        sqlite.db.execute("UPDATE messages SET content = ? WHERE id = ?", (redacted, 2))
        assert history.rewrite(2, redacted)
        assert not history.rewrite(999, "nothing")
        both = Both(sqlite, pg, history)
        _same_index(both)
        test_each_roots_counts_are_its_messages(both)
        for question in ("o'brien", "redacted apostrophes", "curly 90"):
            assert history.postings(question) == sqlite.history.postings(question)
