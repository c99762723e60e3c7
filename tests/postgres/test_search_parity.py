"""Facts and team documents stored alike on SQLite and on PostgreSQL are searched alike: the same
postings (FTS5's terms, in ``fact_terms`` and ``team_chunk_terms``), so every fact search returns
the same facts in the same order, and team search the same chunks (``term_rows``,
``held_among``, and ``best_matches`` ranked by FTS5's bm25 with the heading at half weight);
a database whose rows predate the postings is indexed when it is opened."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from postgres_server import PostgresServer
from test_history_parity import TRICKY, _corpus, _questions

from flynn.memory.fts import search_terms
from flynn.memory.store import NewFact
from flynn.memory.stores import SqliteMemory
from flynn.memory.team import NewChunk
from flynn.postgres.memory import PostgresMemory
from flynn.schedule.migrations import SCHEMA

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
NAMESPACES = ("users/ana", "users/ana/notes", "users/zoe", "team", "sessions/x:1")


@dataclass(slots=True)
class Both:
    sqlite: SqliteMemory
    pg: PostgresMemory
    url: str


def _facts() -> list[NewFact]:
    """Facts made of the corpus: field/value pairs and observations, over several roots, and a
    crowd of one person's facts sharing words (so the planner windows and scopes)."""
    facts = []
    for n, said in enumerate(_corpus()):
        namespace = NAMESPACES[n % len(NAMESPACES)]
        words = said.text.split()
        if n % 3 == 0 and words:
            field = "_".join(words[:2]).lower()[:40] or None
            facts.append(NewFact(namespace, "profile", " ".join(words[2:]) or "x", field=field))
        else:
            facts.append(NewFact(namespace, "pattern", said.text or "-"))
    for n in range(400):
        facts.append(NewFact("users/bob", "pattern", f"swims laps {n} in the lake at dawn"))
    return facts


def _chunks() -> list[tuple[str, list[NewChunk]]]:
    """Team documents made of the corpus: headings holding words the content holds too."""
    corpus = [said.text for said in _corpus()]
    documents = []
    for n in range(0, len(corpus), 6):
        part = corpus[n : n + 6]
        heading = " ".join(part[0].split()[:4]) if part else ""
        documents.append((f"docs/{n}.md", [NewChunk(heading, text) for text in part]))
    # Common words everywhere, so ``best_matches`` has rows to rank with lengths that differ.
    for n in range(30):
        documents.append(
            (
                f"docs/common-{n}.md",
                [NewChunk("Billing pages", "billing " * (n % 4 + 1) + "pages on tuesday " * n)],
            )
        )
    return documents


@pytest.fixture(scope="module")
def both(
    tmp_path_factory: pytest.TempPathFactory, postgres_server: PostgresServer
) -> Iterator[Both]:
    path: Path = tmp_path_factory.mktemp("search-parity") / "flynn.db"
    with (
        postgres_server.fresh_schema() as url,
        SqliteMemory.open(path, SCHEMA) as sqlite,
        PostgresMemory.open(url) as pg,
    ):
        for n, fact in enumerate(_facts()):
            for memory in (sqlite, pg):
                memory.facts.add(fact, now=T0 + timedelta(seconds=n))
        for n, (name, chunks) in enumerate(_chunks()):
            for memory in (sqlite, pg):
                memory.team.put(
                    path=name,
                    title=name,
                    digest="d",
                    chars=1,
                    chunks=chunks,
                    now=T0 + timedelta(seconds=n),
                )
        yield Both(sqlite, pg, url)


def _searches() -> list[str]:
    return [*_questions(), "swims", "swims lake dawn", "laps 17", "billing pages tuesday"]


def test_fact_searches_return_the_same_facts_in_the_same_order(both: Both) -> None:
    found = 0
    for question in _searches():
        for prefix in (*NAMESPACES, "users"):
            expected = both.sqlite.facts.search(prefix, question, limit=10)
            assert both.pg.facts.search(prefix, question, limit=10) == expected, (question, prefix)
            found += bool(expected)
    assert found > 200


def test_team_searches_return_the_same_chunks_in_the_same_order(both: Both) -> None:
    sqlite, pg = both.sqlite.team, both.pg.team
    assert pg.generation() == sqlite.generation()
    ranked = 0
    for question in [*_searches(), *TRICKY]:
        terms = search_terms(question)
        rows = sqlite.term_rows(terms, generation=sqlite.generation())
        assert pg.term_rows(terms, generation=pg.generation()) == rows, question
        listed = sorted({chunk for ids in rows.values() if ids for chunk in ids})
        for term in terms:
            assert pg.held_among(term, listed) == sqlite.held_among(term, listed), term
        expected = sqlite.best_matches(terms, limit=8)
        assert pg.best_matches(terms, limit=8) == expected, question
        ranked += len(expected) > 1
    assert ranked > 30


def test_rows_from_before_the_postings_are_indexed_when_the_memory_opens(both: Both) -> None:
    """As a database migrated from the version before: no postings, no roots, no lengths."""
    before = [both.pg.facts.search("users/bob", "swims lake", limit=5)]
    before.append(both.pg.team.best_matches(["billing", "pages"], limit=5))
    with PostgresMemory.open(both.url) as other:
        with other.db.transaction():
            other.db.execute("DELETE FROM fact_terms")
            other.db.execute("UPDATE facts SET root = NULL")
            other.db.execute("DELETE FROM team_chunk_terms")
            other.db.execute("UPDATE team_chunks SET terms = NULL")
        other.facts.index.forget_counts()
        assert other.facts.search("users/bob", "swims lake", limit=5) == []
    with PostgresMemory.open(both.url) as reopened:
        assert [
            reopened.facts.search("users/bob", "swims lake", limit=5),
            reopened.team.best_matches(["billing", "pages"], limit=5),
        ] == before
        unindexed = reopened.db.fetchone("SELECT count(*) AS n FROM facts WHERE root IS NULL")
        assert unindexed is not None and unindexed["n"] == 0
