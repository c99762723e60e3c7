"""Forgetting for real: after forgetting a field, a fact chain, a time range or a person, nothing of
it can be recalled (``Recall``) or found (``History.search``, ``Facts.search``), and nothing of
another person goes with it; on SQLite and on PostgreSQL, with the same counts."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from flynn.errors import StoreError
from flynn.identity import MemoryScope
from flynn.learning.fact_relations import FactRelations
from flynn.learning.graph_extraction import GraphProposal, ProposedRelation, RuleGraphExtractor
from flynn.learning.graph_ingest import GraphIngestor
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import ProposedFact, RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.forgetting import REDACTED
from flynn.memory.store import FactSource, NewFact, StoredMessage
from flynn.memory.stores import SqliteMemory
from flynn.memory.working import read_working_memory, write_working_memory
from flynn.postgres.database import psycopg_statement
from flynn.postgres.memory import PostgresMemory
from flynn.recall.recall import Recall
from flynn.schedule.migrations import SCHEMA

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)
DAY = timedelta(days=1)
Memory = SqliteMemory | PostgresMemory


@pytest.fixture(params=["sqlite", "postgresql"])
def memory(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Memory]:
    """As the daemon composes it: forgetting a fact retires the graph relations it stated."""
    if request.param == "sqlite":
        with SqliteMemory.open(db_path, SCHEMA, FactRelations) as sqlite:
            yield sqlite
        return
    url: str = request.getfixturevalue("postgres_url")
    with PostgresMemory.open(url, relations=FactRelations) as postgresql:
        yield postgresql


def _sql(memory: Memory, statement: str) -> str:
    """A test's own statement, written with ``?``, for the memory's backend."""
    return statement if isinstance(memory, SqliteMemory) else psycopg_statement(statement)


_EMBEDDING = (
    "INSERT INTO embeddings (kind, ref_id, namespace, model, vector) VALUES (?, ?, ?, ?, ?)"
)


def _profile(field: str | None, value: str) -> ProposedFact:
    return ProposedFact("profile", field, value, 0.9, "profile")


def say(
    memory: Memory,
    root: str,
    text: str,
    at: datetime,
    *,
    model: Sequence[ProposedFact] = (),
) -> StoredMessage:
    """What a live turn leaves behind: the message, its rule facts and what the extraction model
    learns from it (``model``, as scripted), with provenance, a vector and graph mentions for the
    names in it."""
    session = f"gateway:{root.rsplit('/', 1)[-1]}"
    message = memory.history.append(session, root, "user", text, tokens=10, now=at)
    reconciler = RuleReconciler(memory.facts)
    learnt: list[tuple[ProposedFact, FactSource]] = [
        (fact, "rule") for fact in RuleExtractor().extract(text)
    ]
    for fact, source in learnt + [(fact, "llm") for fact in model]:
        reconciler.apply(
            f"{root}/profile", fact, source=source, now=at, session=session, message_id=message.id
        )
    memory.db.execute(_sql(memory, _EMBEDDING), ("message", message.id, root, "test", b"\x00" * 8))
    for word in text.replace(".", " ").split():
        if word.istitle() and len(word) > 3:
            entity = memory.graph.upsert_entity(root, word, "thing", confidence=0.9, now=at)
            memory.graph.mention(entity.id, message.id)
    reply = memory.history.append(session, root, "assistant", "Noted.", tokens=2, now=at)
    # Embedded with the message before it, as ``MemoryWriter`` does.
    memory.db.execute(_sql(memory, _EMBEDDING), ("message", reply.id, root, "test", b"\x00" * 8))
    return message


def recalled(memory: Memory, root: str, query: str) -> str:
    recall = Recall(memory.facts, memory.history, threshold=0.0, graph=memory.graph)
    memory_text = recall.recall(root, query, now=T0 + DAY, budget_tokens=2000)
    return "\n".join(memory_text.lines)


def everything(memory: Memory, root: str, words: str) -> str:
    """All a later turn could reach for ``words``: recall, message and fact search, documents."""
    found = [recalled(memory, root, words)]
    found += [hit.excerpt for hit in memory.history.search(root, words, limit=20)]
    found += [f"{f.field}: {f.value}" for f in memory.facts.search(root, words, limit=20)]
    found += [document.content for document in memory.documents.list(root)]
    return "\n".join(found)


def fill(memory: Memory) -> None:
    for root in ("users/ana", "users/bob"):
        lisbon, porto = _profile("location", "Lisbon"), _profile("location", "Porto")
        tea = _profile(None, "prefers green tea in the morning")
        said = "My email is ana@example.com and I live in Lisbon."
        say(memory, root, said, T0 - 2 * DAY, model=[lisbon])
        said = "I moved, I live in Porto now. The dentist is Doctor Ferreira."
        say(memory, root, said, T0 - DAY, model=[porto])
        say(memory, root, "I prefer green tea in the morning.", T0, model=[tea])
        write_working_memory(
            memory.documents,
            f"{root}/working",
            "- Ana moved to Porto; email ana@example.com; sees Doctor Ferreira",
            ttl_days=14,
            max_tokens=1000,
            now=T0,
        )


def embeddings(memory: Memory, root: str) -> int:
    statement = "SELECT count(*) AS n FROM embeddings WHERE namespace = ?"
    row = memory.db.fetchone(_sql(memory, statement), (root,))
    assert row is not None
    return int(row["n"])


def test_the_setup_is_recallable(memory: Memory) -> None:
    fill(memory)
    for words in ("ana@example.com", "Porto", "Lisbon", "Ferreira", "green tea"):
        assert words.split("@")[0].lower() in everything(memory, "users/ana", words).lower()


def test_forget_a_field(memory: Memory) -> None:
    fill(memory)
    memory.facts.add(
        NewFact(
            namespace="users/ana/facts", kind="profile", field="email", value="ana@example.com"
        ),
        now=T0,
    )
    counts = memory.forget_field("users/ana", "email")
    assert counts["facts"] == 2
    assert counts["redacted_messages"] == 1 and counts["redacted_documents"] == 1
    # The redacted message's vector was made from the value, and so was the reply's after it.
    assert counts["embeddings"] == 2
    found = everything(memory, "users/ana", "ana@example.com email example")
    assert "example.com" not in found
    assert memory.facts.history("users/ana/profile", "email") == []
    working = read_working_memory(memory.documents, "users/ana/working", now=T0)
    assert working is not None and f"email {REDACTED}" in working.content
    # The rest of the conversation stays, and so does the other person's email.
    assert "Lisbon" in everything(memory, "users/ana", "Lisbon")
    assert "example.com" in everything(memory, "users/bob", "ana@example.com email")


def test_forget_a_fact_chain(memory: Memory) -> None:
    fill(memory)
    [porto] = memory.facts.active("users/ana/profile", field="location")
    assert porto.value == "Porto" and porto.supersedes is not None
    bobs = memory.facts.active("users/bob/profile", field="location")[0]
    assert memory.forget_chain("users/ana", bobs.id) is None  # not this person's
    counts = memory.forget_chain("users/ana", porto.id)
    assert counts is not None and counts["facts"] == 2
    assert counts["entities"] == 2  # Lisbon and Porto
    for place in ("Lisbon", "Porto"):
        assert place.lower() not in everything(memory, "users/ana", place).lower()
    assert memory.facts.history("users/ana/profile", "location") == []
    assert "Ferreira" in everything(memory, "users/ana", "Ferreira dentist")
    assert "Porto" in everything(memory, "users/bob", "Porto")


def test_forget_a_time_range(memory: Memory) -> None:
    fill(memory)
    summarised = memory.history.recent("gateway:ana")[:2]
    memory.history.save_summary(
        "gateway:ana", "Ana's email is ana@example.com", through_id=summarised[-1].id, now=T0
    )
    # A fact learnt later (compaction) from a message in the range goes too.
    middle = memory.history.recent("gateway:ana")[0]
    memory.facts.add(
        NewFact(
            namespace="users/ana/facts",
            kind="observation",
            value="sees Doctor Ferreira about a crown",
            message_id=middle.id,
        ),
        now=T0 + DAY,
    )
    counts = memory.forget_range("users/ana", since=T0 - DAY, until=T0 - DAY + timedelta(hours=1))
    assert counts["messages"] == 2
    assert counts["facts"] == 3  # Porto (with Lisbon, its chain) and the learnt observation
    assert counts["summaries"] == 0  # the summary covered only older messages
    assert counts["documents"] == 1  # working memory
    assert counts["entities"] == 3  # Porto, Doctor, Ferreira: first seen then, not since
    # Of six vectors: the forgotten pair's went, and so did the next message's, which was
    # embedded with the last forgotten one.
    assert embeddings(memory, "users/ana") == 3
    for words in ("Ferreira dentist", "Porto"):
        assert words.split()[0].lower() not in everything(memory, "users/ana", words).lower()
    # Lisbon was superseded in that span (the chain goes); the older message saying it stays.
    assert memory.facts.search("users/ana", "Lisbon", limit=5) == []
    assert len(memory.history.search("users/ana", "Lisbon", limit=5)) == 1
    assert read_working_memory(memory.documents, "users/ana/working", now=T0) is None
    # Outside the range: kept.
    assert "green tea" in everything(memory, "users/ana", "green tea")
    assert memory.history.summary("gateway:ana") == "Ana's email is ana@example.com"
    assert "Ferreira" in everything(memory, "users/bob", "Ferreira")


def test_a_range_covering_summarised_messages_drops_the_summary(memory: Memory) -> None:
    fill(memory)
    first = memory.history.recent("gateway:ana")[1]
    memory.history.save_summary("gateway:ana", "lives in Lisbon", through_id=first.id, now=T0)
    counts = memory.forget_range("users/ana", since=T0 - 3 * DAY, until=T0 - 2 * DAY + DAY / 2)
    assert counts["summaries"] == 1
    assert memory.history.summary("gateway:ana") is None
    assert "lisbon" not in everything(memory, "users/ana", "Lisbon").lower()


def test_forget_a_person(memory: Memory) -> None:
    fill(memory)
    counts = memory.forget_namespace("users/ana")
    assert counts["messages"] == 6 and counts["entities"] > 0
    for words in ("ana@example.com", "Porto", "Lisbon", "Ferreira", "green tea"):
        assert everything(memory, "users/ana", words).strip() == ""
    assert embeddings(memory, "users/ana") == 0
    assert memory.graph.find("users/ana", "Porto") is None
    assert memory.graph.find("users/bob", "Porto") is not None
    assert embeddings(memory, "users/bob") == 6
    if isinstance(memory, SqliteMemory):
        assert memory.db.integrity_check() == []


def _live(
    memory: Memory,
    text: str,
    facts: Sequence[ProposedFact] = (),
    relations: Sequence[ProposedRelation] = (),
    *,
    minute: int = 0,
) -> None:
    """A live turn, as ``MemoryWriter`` leaves it (facts, and graph rows from the rules), then
    what the extraction model learns from it (``facts`` and ``relations``, as scripted)."""
    reconciler = RuleReconciler(memory.facts, relations=FactRelations(memory.graph))
    ingestor = GraphIngestor(memory.graph, RuleGraphExtractor())
    writer = MemoryWriter(memory.history, RuleExtractor(), reconciler, graph=ingestor)
    scope = MemoryScope("users/ana", shared=True, user="ana")
    at = T0 + timedelta(minutes=minute)
    message = writer.message(scope, "telegram:1", "user", text, now=at)
    writer.learn(scope, message, now=at)
    for fact in facts:
        reconciler.apply(scope.profile, fact, source="llm", now=at, message_id=message.id)
    if relations:
        proposal = GraphProposal(relations=tuple(relations))
        ingestor.ingest_proposal(scope.root, proposal, message.id, now=at, confidence=0.7)


def _graph_rows(memory: Memory) -> tuple[int, int, int]:
    row = memory.db.fetchone(
        "SELECT (SELECT count(*) FROM entities WHERE name_key != 'user') AS e,"
        " (SELECT count(*) FROM relations) AS r, (SELECT count(*) FROM entity_mentions) AS m"
    )
    assert row is not None
    return int(row["e"]), int(row["r"]), int(row["m"])


def test_forgetting_a_fact_takes_the_graph_rows_learnt_from_it(memory: Memory) -> None:
    _live(
        memory,
        "my dog is called Pixel",
        [_profile("dog", "Pixel")],
        [ProposedRelation("User", "dog", "Pixel")],
    )
    assert _graph_rows(memory) == (1, 1, 1)
    [dog] = memory.facts.active("users/ana/profile", field="dog")
    counts = memory.forget_chain("users/ana", dog.id)
    assert counts is not None and counts["relations"] == 1 and counts["entities"] == 1
    assert memory.graph.find("users/ana", "Pixel") is None
    assert _graph_rows(memory) == (0, 0, 0)


def test_an_entity_still_mentioned_elsewhere_stays(memory: Memory) -> None:
    _live(memory, "Went to the park with Pixel and Maya.")
    memory.facts.add(
        NewFact(namespace="users/ana/profile", kind="profile", field="pet", value="called Pixel"),
        now=T0,
    )
    message = memory.history.append(
        "telegram:1", "users/ana", "user", "my pet is called Pixel", tokens=5, now=T0
    )
    pixel = memory.graph.find("users/ana", "Pixel")
    assert pixel is not None
    memory.graph.mention(pixel.id, message.id)
    [pet] = memory.facts.active("users/ana/profile", field="pet")
    counts = memory.forget_chain("users/ana", pet.id)
    assert counts is not None and counts["redacted_messages"] == 1
    # "my pet is (forgotten)" no longer names Pixel; the walk in the park still does.
    mentioning = memory.graph.messages_mentioning([pixel.id], limit=5)
    assert len(mentioning) == 1 and message.id not in mentioning
    assert memory.graph.find("users/ana", "Pixel") is not None
    assert memory.graph.find("users/ana", "Maya") is not None


def test_forgetting_a_field_takes_its_relations(memory: Memory) -> None:
    _live(
        memory,
        "I live in Lisbon.",
        [_profile("location", "Lisbon")],
        [ProposedRelation("User", "lives_in", "Lisbon")],
    )
    maya = [ProposedRelation("Maya", "lives_in", "Lisbon")]
    _live(memory, "Maya lives in Lisbon too.", relations=maya, minute=1)
    counts = memory.forget_field("users/ana", "location")
    assert counts["relations"] == 1
    # Lisbon is named after the value, so it goes, with Maya's relation to it.
    assert memory.graph.find("users/ana", "Lisbon") is None
    assert memory.graph.find("users/ana", "Maya") is not None


class _GoneGraph:
    """``DerivedRelations`` whose database went away mid-forget."""

    def transaction(self) -> AbstractContextManager[None]:
        return nullcontext()

    def retire(self, namespace: str, field: str | None, value: str, *, still: str = "") -> int:
        raise StoreError("the graph cannot be written")


@pytest.fixture(params=["sqlite", "postgresql"])
def failing_memory(request: pytest.FixtureRequest, db_path: Path) -> Iterator[Memory]:
    if request.param == "sqlite":
        with SqliteMemory.open(db_path, SCHEMA, lambda graph: _GoneGraph()) as sqlite:
            yield sqlite
        return
    url: str = request.getfixturevalue("postgres_url")
    with PostgresMemory.open(url, relations=lambda graph: _GoneGraph()) as postgresql:
        yield postgresql


def test_a_forget_that_fails_midway_forgets_nothing(failing_memory: Memory) -> None:
    memory = failing_memory
    fill(memory)
    before = everything(memory, "users/ana", "ana@example.com Lisbon Porto")
    with pytest.raises(StoreError):
        memory.forget_field("users/ana", "location")
    [porto] = memory.facts.active("users/ana/profile", field="location")
    with pytest.raises(StoreError):
        memory.forget_chain("users/ana", porto.id)
    assert len(memory.facts.history("users/ana/profile", "location")) == 2
    assert everything(memory, "users/ana", "ana@example.com Lisbon Porto") == before
