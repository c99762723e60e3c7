from __future__ import annotations

from datetime import UTC, datetime, timedelta
from itertools import pairwise

import pytest
from memory.conftest import Stores

from flynn.errors import StoreError
from flynn.learning.graph_extraction import (
    GraphProposal,
    ProposedEntity,
    ProposedRelation,
    RuleGraphExtractor,
    parse_graph_extraction,
)
from flynn.learning.graph_ingest import GraphIngestor
from flynn.memory.graph import SqlGraph
from flynn.memory.graph_names import candidate_keys, name_key, spoken
from flynn.memory.graph_store import Entity
from flynn.memory.stores import SqliteMemory

T0 = datetime(2026, 2, 25, 11, 30, tzinfo=UTC)
NS = "user/graph"


def _entity(graph: SqlGraph, name: str, kind: str = "thing", **kw: object) -> Entity:
    confidence = kw.pop("confidence", 0.5)
    assert isinstance(confidence, float)
    description = kw.pop("description", None)
    assert description is None or isinstance(description, str)
    namespace = kw.pop("namespace", NS)
    assert isinstance(namespace, str)
    return graph.upsert_entity(
        namespace, name, kind, description=description, confidence=confidence, now=T0
    )


def _message(memory: SqliteMemory | Stores, text: str, session: str = "user:chat") -> int:
    return memory.history.append(session, "user", "user", text, tokens=4, now=T0).id


# --- entities ------------------------------------------------------------------------------------


def test_upsert_is_idempotent_and_counts_mentions(stores: Stores) -> None:
    first = _entity(stores.graph, "Maya", "person", confidence=0.6)
    again = stores.graph.upsert_entity(NS, "Maya", "person", confidence=0.6, now=T0 + timedelta(1))
    assert again.id == first.id
    assert (first.mentions, again.mentions) == (1, 2)
    assert again.updated_at == T0 + timedelta(1)
    row = stores.sql.fetchone("SELECT count(*) AS n FROM entities")
    assert row is not None and row["n"] == 1


def test_confidence_is_the_larger_of_old_and_new(graph: SqlGraph) -> None:
    _entity(graph, "Maya", confidence=0.6)
    assert _entity(graph, "Maya", confidence=0.9).confidence == 0.9
    assert _entity(graph, "Maya", confidence=0.2).confidence == 0.9


def test_identity_ignores_case_spacing_and_punctuation(graph: SqlGraph) -> None:
    ids = {
        _entity(graph, name).id for name in ("New York", "new york", " NEW   York ", "New York.")
    }
    assert len(ids) == 1
    found = graph.find(NS, "NEW YORK")
    assert found is not None and found.name == "New York" and found.mentions == 4


def test_a_capitalised_spelling_replaces_a_lower_case_name(graph: SqlGraph) -> None:
    _entity(graph, "maya")
    assert _entity(graph, "Maya").name == "Maya"
    assert _entity(graph, "MAYA").name == "Maya"


def test_type_is_upgraded_from_thing_but_not_downgraded(graph: SqlGraph) -> None:
    assert _entity(graph, "Flynn").type == "thing"
    assert _entity(graph, "Flynn", "Project").type == "project"
    assert _entity(graph, "Flynn", "thing", confidence=0.9).type == "project"
    # An equally (or less) confident different type does not override a specific one ...
    assert _entity(graph, "Flynn", "org", confidence=0.9).type == "project"
    # ... a more confident one does.
    assert _entity(graph, "Flynn", "tool", confidence=1.0).type == "tool"


def test_description_is_replaced_only_when_given(graph: SqlGraph) -> None:
    _entity(graph, "Flynn", description="An  assistant\n")
    assert _entity(graph, "Flynn").description == "An assistant"
    assert _entity(graph, "Flynn", description="A daemon").description == "A daemon"


def test_upsert_rejects_empty_names_and_bad_confidence(graph: SqlGraph) -> None:
    with pytest.raises(ValueError, match="not a name"):
        _entity(graph, " !? ")
    with pytest.raises(ValueError, match="outside"):
        _entity(graph, "Maya", confidence=1.5)


def test_find_is_per_exact_namespace(graph: SqlGraph) -> None:
    _entity(graph, "Maya", namespace="users/alice/graph")
    assert graph.find("users/alice/graph", "maya") is not None
    assert graph.find("users/bob/graph", "maya") is None


# --- relations -----------------------------------------------------------------------------------


def test_relate_upserts_on_source_target_and_type(graph: SqlGraph) -> None:
    flynn = _entity(graph, "Flynn", "project")
    go = _entity(graph, "Go", "language")
    first = graph.relate(NS, flynn.id, go.id, "uses", confidence=0.6, now=T0)
    again = graph.relate(NS, flynn.id, go.id, "Uses", confidence=0.8, now=T0)
    lower = graph.relate(NS, flynn.id, go.id, "uses", confidence=0.1, now=T0)
    other = graph.relate(NS, flynn.id, go.id, "written in", confidence=0.7, now=T0)
    assert first.id == again.id == lower.id != other.id
    assert lower.confidence == 0.8
    assert other.type == "written_in"
    assert (first.source_name, first.type, first.target_name) == ("Flynn", "uses", "Go")


def test_relate_refuses_self_links_other_namespaces_and_missing_ends(
    graph: SqlGraph,
) -> None:
    maya = _entity(graph, "Maya")
    bob = _entity(graph, "Bob", namespace="users/bob/graph")
    with pytest.raises(ValueError, match="itself"):
        graph.relate(NS, maya.id, maya.id, "knows", confidence=0.5, now=T0)
    with pytest.raises(ValueError, match="relation type"):
        graph.relate(NS, maya.id, bob.id, " - ", confidence=0.5, now=T0)
    with pytest.raises(StoreError, match="not both in"):
        graph.relate(NS, maya.id, bob.id, "knows", confidence=0.5, now=T0)
    with pytest.raises(StoreError, match="not both in"):
        graph.relate(NS, maya.id, 999, "knows", confidence=0.5, now=T0)
    assert graph.relations_of(maya.id, limit=5) == []


def test_relations_of_covers_both_directions_most_confident_first(graph: SqlGraph) -> None:
    user, maya, acme = (_entity(graph, name) for name in ("User", "Maya", "Acme"))
    graph.relate(NS, user.id, maya.id, "sister", confidence=0.6, now=T0)
    graph.relate(NS, maya.id, acme.id, "works_at", confidence=0.9, now=T0)
    relations = graph.relations_of(maya.id, limit=5)
    assert [(r.source_name, r.type, r.target_name) for r in relations] == [
        ("Maya", "works_at", "Acme"),
        ("User", "sister", "Maya"),
    ]
    assert len(graph.relations_of(maya.id, limit=1)) == 1
    assert graph.relations_of(maya.id, limit=0) == []


def _chain(graph: SqlGraph, names: str) -> list[Entity]:
    entities = [_entity(graph, name) for name in names.split()]
    for left, right in pairwise(entities):
        graph.relate(NS, left.id, right.id, "next", confidence=0.5, now=T0)
    return entities


def test_path_follows_relations_in_either_direction(graph: SqlGraph) -> None:
    a, b, c = _chain(graph, "A B C")
    d = _entity(graph, "D")
    graph.relate(NS, d.id, c.id, "points_at", confidence=0.5, now=T0)
    path = graph.path(NS, a.id, d.id)
    assert [(r.source_name, r.type, r.target_name) for r in path] == [
        ("A", "next", "B"),
        ("B", "next", "C"),
        ("D", "points_at", "C"),
    ]
    assert [r.target_name for r in graph.path(NS, d.id, b.id)] == ["C", "C"]


def test_path_is_the_shortest(graph: SqlGraph) -> None:
    a, _, _, d = _chain(graph, "A B C D")
    shortcut = graph.relate(NS, a.id, d.id, "knows", confidence=0.1, now=T0)
    assert graph.path(NS, a.id, d.id) == [shortcut]


def test_path_is_empty_when_unreachable_or_the_same_entity(graph: SqlGraph) -> None:
    a, _ = _chain(graph, "A B")
    island, _ = _chain(graph, "X Y")
    assert graph.path(NS, a.id, island.id) == []
    assert graph.path(NS, a.id, a.id) == []
    assert graph.path(NS, a.id, 12345) == []


def test_path_is_bounded_by_depth(graph: SqlGraph) -> None:
    chain = _chain(graph, "A B C D E F")
    assert graph.path(NS, chain[0].id, chain[5].id) == []
    assert len(graph.path(NS, chain[0].id, chain[5].id, max_depth=5)) == 5
    assert len(graph.path(NS, chain[0].id, chain[4].id)) == 4
    assert graph.path(NS, chain[0].id, chain[1].id, max_depth=0) == []


def test_path_stays_in_its_namespace(graph: SqlGraph) -> None:
    a, b = _chain(graph, "A B")
    assert graph.path("users/bob/graph", a.id, b.id) == []


# --- finding names in text -----------------------------------------------------------------------


def test_entities_in_matches_any_case_and_multi_word_names(graph: SqlGraph) -> None:
    for name in ("Maya", "New York", "Bank of America", "node.js", "maya@example.com", "C++"):
        _entity(graph, name)
    text = "MAYA moved to new york, works at BANK OF AMERICA with Node.js (maya@example.com), C++"
    found = graph.entities_in("user", text, limit=10)
    assert {e.name for e in found} == {
        "Maya",
        "New York",
        "Bank of America",
        "node.js",
        "maya@example.com",
        "C++",
    }


def test_entities_in_matches_whole_words_only(graph: SqlGraph) -> None:
    _entity(graph, "Maya")
    _entity(graph, "New York")
    assert graph.entities_in("user", "the Mayans of Newark", limit=5) == []
    assert graph.entities_in("user", "a new yorker", limit=5) == []
    assert [e.name for e in graph.entities_in("user", "Maya's car", limit=5)] == ["Maya"]


def test_entities_in_orders_by_confidence_then_mentions_and_limits(graph: SqlGraph) -> None:
    _entity(graph, "Ana", confidence=0.5)
    _entity(graph, "Bob", confidence=0.9)
    for _ in range(3):
        _entity(graph, "Cy", confidence=0.5)
    found = graph.entities_in("user", "ana bob cy", limit=5)
    assert [e.name for e in found] == ["Bob", "Cy", "Ana"]
    assert [e.name for e in graph.entities_in("user", "ana bob cy", limit=1)] == ["Bob"]
    assert graph.entities_in("user", "", limit=5) == []
    assert graph.entities_in("user", "ana", limit=0) == []


def test_entities_in_the_same_text_again_sees_every_change(stores: Stores) -> None:
    graph = stores.graph
    _entity(graph, "Maya")
    text = "maya and tomas went hiking"
    assert [e.name for e in graph.entities_in("user", text, limit=5)] == ["Maya"]
    _entity(graph, "Tomas", confidence=0.9)
    assert [e.name for e in graph.entities_in("user", text, limit=5)] == ["Tomas", "Maya"]
    _entity(graph, "Maya")  # a sighting: the count it answers with follows
    assert [e.mentions for e in graph.entities_in("user", text, limit=5)] == [1, 2]
    stores.sql.execute("DELETE FROM entities WHERE name = 'Tomas'")  # as forgetting does
    assert [e.name for e in graph.entities_in("user", text, limit=5)] == ["Maya"]
    assert graph.entities_in("user/other", text, limit=5) == []


def test_namespaces_are_isolated(graph: SqlGraph) -> None:
    _entity(graph, "Maya", namespace="users/alice/graph")
    _entity(graph, "Maya", namespace="users/bob/graph")
    _entity(graph, "Maya", namespace="users/alicea/graph")
    found = graph.entities_in("users/alice", "Maya", limit=10)
    assert [e.namespace for e in found] == ["users/alice/graph"]
    assert graph.entities_in("users/carol", "Maya", limit=10) == []


def test_candidate_keys_skip_runs_ending_in_common_words() -> None:
    keys = candidate_keys("Bank of America is in the US")
    assert "bank of america" in keys and "bank of" not in keys and "the" not in keys
    assert keys["bank of america"] is True and keys["is in the us"] is False
    assert name_key("  Maya's ") == "maya"


def test_spoken_needs_capitals_for_short_names_from_writers_who_use_them() -> None:
    go = Entity(1, NS, "Go", "language", None, 1.0, 1, T0)
    grep = Entity(2, NS, "grep", "tool", None, 1.0, 1, T0)
    flynn = Entity(3, NS, "Flynn", "project", None, 1.0, 1, T0)
    assert spoken("let's go home with flynn", [go, grep, flynn]) == [go, grep, flynn]
    assert spoken("Let's go and grep flynn", [go, grep, flynn]) == [grep, flynn]
    assert spoken("We wrote it in Go", [go]) == [go]


# --- mentions and forgetting ---------------------------------------------------------------------


def test_messages_mentioning_is_newest_first_without_repeats(stores: Stores) -> None:
    maya, bob, cy = (_entity(stores.graph, name) for name in ("Maya", "Bob", "Cy"))
    ids = [_message(stores, f"message {n}") for n in range(5)]
    for message_id in ids[:4]:
        stores.graph.mention(maya.id, message_id)
    stores.graph.mention(maya.id, ids[0])  # idempotent
    stores.graph.mention(bob.id, ids[1])
    stores.graph.mention(bob.id, ids[4])
    assert stores.graph.messages_mentioning([maya.id, bob.id], limit=10) == ids[::-1]
    assert stores.graph.messages_mentioning([maya.id, bob.id], limit=2) == [ids[4], ids[3]]
    assert stores.graph.messages_mentioning([cy.id], limit=5) == []
    assert stores.graph.messages_mentioning([], limit=5) == []
    with pytest.raises(StoreError):
        stores.graph.mention(maya.id, 999_999)


def test_deleting_messages_removes_their_mentions(stores: Stores) -> None:
    maya = _entity(stores.graph, "Maya")
    kept = _message(stores, "Maya called", session="user:other")
    gone = _message(stores, "Maya again")
    stores.graph.mention(maya.id, kept)
    stores.graph.mention(maya.id, gone)
    stores.history.forget_session("user:chat")
    assert stores.graph.messages_mentioning([maya.id], limit=5) == [kept]
    assert stores.graph.find(NS, "Maya") is not None


def test_forget_removes_entities_relations_and_mentions_under_the_prefix(
    stores: Stores,
) -> None:
    for namespace in ("users/alice/graph", "users/alicea/graph"):
        maya = _entity(stores.graph, "Maya", namespace=namespace)
        acme = _entity(stores.graph, "Acme", namespace=namespace)
        stores.graph.relate(namespace, maya.id, acme.id, "works_at", confidence=0.5, now=T0)
        stores.graph.mention(maya.id, _message(stores, "Maya", session=namespace))
    assert stores.graph.forget("users/alice") == 2
    for table, left in (("entities", 2), ("relations", 1), ("entity_mentions", 1)):
        row = stores.sql.fetchone(f"SELECT count(*) AS n FROM {table}")
        assert row is not None and row["n"] == left, table
    assert stores.graph.entities_in("users/alice", "Maya", limit=5) == []


# What the extraction model answers for "My sister Maya works at Acme Corp.": the rules find the
# names, the model says who they are and how they are related.
SISTER_AT_ACME = """{"entities": [{"name": "Maya", "type": "person"}, {"name": "Acme Corp",
 "type": "org"}], "relations": [{"source": "User", "target": "Maya", "type": "sister"},
 {"source": "Maya", "target": "Acme Corp", "type": "works_at"}]}"""


def _learn(memory: SqliteMemory, namespace: str, text: str, message: int | None) -> list[Entity]:
    """A message as both paths learn it: the rules on the reply path, then the model's graph
    extraction (scripted: ``SISTER_AT_ACME``) in the background."""
    ingestor = GraphIngestor(memory.graph, RuleGraphExtractor())
    touched = ingestor.ingest(namespace, text, message, now=T0)
    proposal = parse_graph_extraction(SISTER_AT_ACME)
    return touched + ingestor.ingest_proposal(namespace, proposal, message, now=T0, confidence=0.7)


def test_forget_namespace_includes_the_graph(memory: SqliteMemory) -> None:
    message = _message(memory, "my sister Maya works at Acme Corp.")
    _learn(memory, "user/graph", "my sister Maya works at Acme Corp.", message)
    _entity(memory.graph, "Maya", namespace="username/graph")
    counts = memory.forget_namespace("user")
    assert counts["entities"] == 3 and counts["messages"] == 1
    for table in ("relations", "entity_mentions"):
        row = memory.db.fetchone(f"SELECT count(*) FROM {table}")
        assert row is not None and row[0] == 0, table
    assert memory.graph.find("username/graph", "Maya") is not None
    assert memory.db.integrity_check() == []


def test_transaction_rolls_back_every_write(graph: SqlGraph) -> None:
    with pytest.raises(RuntimeError), graph.transaction():
        _entity(graph, "Maya")
        raise RuntimeError
    assert graph.find(NS, "Maya") is None


# --- ingestion -----------------------------------------------------------------------------------


def test_ingest_stores_entities_relations_and_mentions(memory: SqliteMemory) -> None:
    text = "My sister Maya works at Acme Corp."
    message = _message(memory, text)
    touched = _learn(memory, NS, text, message)
    assert {(e.name, e.type) for e in touched} >= {
        ("Maya", "person"),
        ("Acme Corp", "org"),
        ("User", "person"),
    }
    maya = memory.graph.find(NS, "maya")
    user = memory.graph.find(NS, "user")
    assert maya is not None and user is not None
    assert {
        (r.source_name, r.type, r.target_name) for r in memory.graph.relations_of(maya.id, limit=5)
    } == {
        ("User", "sister", "Maya"),
        ("Maya", "works_at", "Acme Corp"),
    }
    assert memory.graph.messages_mentioning([maya.id], limit=5) == [message]
    # The user is in every message; linking them would say nothing.
    assert memory.graph.messages_mentioning([user.id], limit=5) == []


def test_ingest_links_known_names_however_they_were_found(memory: SqliteMemory) -> None:
    ingestor = GraphIngestor(memory.graph, RuleGraphExtractor())
    first = _message(memory, "my sister Maya works at Acme Corp.")
    _learn(memory, NS, "my sister Maya works at Acme Corp.", first)
    second = _message(memory, "maya says acme corp is hiring")
    touched = ingestor.ingest(NS, "maya says acme corp is hiring", second, now=T0)
    assert {e.name for e in touched} == {"Maya", "Acme Corp"}
    maya = memory.graph.find(NS, "Maya")
    # Sighted three times: by the rules and the model in the first message, then by name.
    assert maya is not None and maya.mentions == 3 and maya.type == "person"
    assert memory.graph.messages_mentioning([maya.id], limit=5) == [second, first]
    # From a writer who capitalises, "go" is the verb, not the language.
    _entity(memory.graph, "Go", "language")
    third = _message(memory, "Shall we go? Maya can wait.")
    touched = ingestor.ingest(NS, "Shall we go? Maya can wait.", third, now=T0)
    assert [e.name for e in touched] == ["Maya"]
    assert memory.graph.messages_mentioning([maya.id], limit=5) == [third, second, first]


def test_ingest_without_a_message_records_no_mentions(memory: SqliteMemory) -> None:
    GraphIngestor(memory.graph, RuleGraphExtractor()).ingest(NS, "I live in Lisbon", None, now=T0)
    assert memory.graph.find(NS, "Lisbon") is not None
    row = memory.db.fetchone("SELECT count(*) FROM entity_mentions")
    assert row is not None and row[0] == 0


def test_ingest_leaves_names_only_supposed_asked_or_denied_out(memory: SqliteMemory) -> None:
    ingestor = GraphIngestor(memory.graph, RuleGraphExtractor())
    for text in ("if my name were Bob", "is my name Carl?", "my name is not Dave"):
        ingestor.ingest(NS, text, _message(memory, text), now=T0)
    row = memory.db.fetchone("SELECT count(*) FROM entities")
    assert row is not None and row[0] == 0


def test_ingest_is_one_transaction(memory: SqliteMemory) -> None:
    ingestor = GraphIngestor(memory.graph, RuleGraphExtractor())
    with pytest.raises(StoreError):
        ingestor.ingest(NS, "my sister Maya works at Acme", 424242, now=T0)
    row = memory.db.fetchone("SELECT count(*) FROM entities")
    assert row is not None and row[0] == 0


def test_ingest_proposal_uses_the_default_confidence_where_none_is_given(
    memory: SqliteMemory,
) -> None:
    proposal = GraphProposal(
        entities=(
            ProposedEntity("Flynn", "project", "Local-first AI assistant"),
            ProposedEntity("Go", "language", confidence=0.95),
        ),
        relations=(
            ProposedRelation("Flynn", "uses", "Go"),
            ProposedRelation("Flynn", "uses", "SQLite", confidence=0.9),
            ProposedRelation("flynn", "is", "Flynn"),
        ),
    )
    message = _message(memory, "about flynn")
    ingestor = GraphIngestor(memory.graph, RuleGraphExtractor())
    touched = ingestor.ingest_proposal(NS, proposal, message, now=T0, confidence=0.7)
    assert {(e.name, e.type, e.confidence) for e in touched} == {
        ("Flynn", "project", 0.7),
        ("Go", "language", 0.95),
        ("SQLite", "thing", 0.7),
    }
    flynn = memory.graph.find(NS, "flynn")
    assert flynn is not None and flynn.description == "Local-first AI assistant"
    assert sorted(
        (r.target_name, r.confidence) for r in memory.graph.relations_of(flynn.id, limit=9)
    ) == [
        ("Go", 0.7),
        ("SQLite", 0.9),
    ]
    assert memory.graph.messages_mentioning([flynn.id], limit=5) == [message]


def test_forget_removes_entities_and_relations_under_the_prefix_only(stores: Stores) -> None:
    graph = stores.graph
    for namespace in ("users/alice/graph", "users/alicea/graph", "users/alice"):
        maya = _entity(graph, "Maya", namespace=namespace)
        acme = _entity(graph, "Acme", namespace=namespace)
        graph.relate(namespace, maya.id, acme.id, "works_at", confidence=0.5, now=T0)
    assert graph.forget("users/alice") == 4
    for table, left in (("entities", 2), ("relations", 1)):
        row = stores.sql.fetchone(f"SELECT count(*) AS n FROM {table}")
        assert row is not None and row["n"] == left, table
    assert graph.entities_in("users/alice", "Maya", limit=5) == []
    assert [e.namespace for e in graph.entities_in("users", "Maya", limit=5)] == [
        "users/alicea/graph"
    ]
