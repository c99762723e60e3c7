"""The knowledge graph in recall: what it says about the people, projects and places a message
names reaches the prompt, however low it ranks against past turns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from flynn.identity import MemoryScope
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.stores import SqliteMemory
from flynn.recall.recall import GRAPH_SHARE, Recall
from flynn.tokens import estimate_tokens

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")


def _chat_about_maya(memory: SqliteMemory) -> None:
    """Turns that name Maya and Lisbon, so they outrank anything the graph says."""
    writer = MemoryWriter(memory.history, RuleExtractor(), RuleReconciler(memory.facts))
    texts = [f"Small talk number {n}, nothing much." for n in range(12)] + [
        "Maya called about the quarterly report.",
        "Maya is flying to Lisbon on Tuesday.",
        "Lunch with Maya in Lisbon was lovely.",
    ]
    for index, text in enumerate(texts):
        moment = NOW - timedelta(days=3, minutes=-index)
        writer.message(ANA, "telegram:1", "user", text, now=moment)


def _graph(memory: SqliteMemory) -> None:
    """Maya works at Acme; Acme is located in Lisbon."""
    graph = memory.graph
    at = NOW - timedelta(days=3)
    maya = graph.upsert_entity("users/ana", "Maya", "person", confidence=0.9, now=at)
    acme = graph.upsert_entity("users/ana", "Acme", "organization", confidence=0.9, now=at)
    lisbon = graph.upsert_entity("users/ana", "Lisbon", "place", confidence=0.9, now=at)
    graph.relate("users/ana", maya.id, acme.id, "works_at", confidence=0.8, now=at)
    graph.relate("users/ana", acme.id, lisbon.id, "located_in", confidence=0.8, now=at)


def _recall(memory: SqliteMemory) -> Recall:
    return Recall(memory.facts, memory.history, threshold=0.3, graph=memory.graph)


def test_what_the_graph_knows_about_a_named_person_reaches_the_prompt(
    memory: SqliteMemory,
) -> None:
    _chat_about_maya(memory)
    _graph(memory)

    recalled = _recall(memory).recall(
        "users/ana", "Where does Maya work?", now=NOW, budget_tokens=1500
    )

    inferred = next(block for block in recalled.blocks if block.title == "Inferred")
    assert any("Maya works at Acme" in line for line in inferred.lines)
    # The turns naming Maya are recalled too, and rank above the graph.
    assert any("quarterly report" in line for line in recalled.lines)


def test_two_names_are_linked_by_the_chain_between_them(memory: SqliteMemory) -> None:
    _chat_about_maya(memory)
    _graph(memory)

    recalled = _recall(memory).recall(
        "users/ana", "What links Maya to Lisbon?", now=NOW, budget_tokens=1500
    )

    assert any("Maya works at Acme; Acme located in Lisbon" in line for line in recalled.lines)


def test_graph_lines_never_take_a_ranked_items_place_or_crowd_out_turns(
    memory: SqliteMemory,
) -> None:
    _chat_about_maya(memory)
    _graph(memory)
    recall = _recall(memory)

    items = recall.rank("users/ana", "What links Maya to Lisbon?", now=NOW, limit=1)
    assert [item.kind for item in items[:1]] == ["message"]
    assert {item.kind for item in items[1:]} == {"graph"}

    budget = 400
    recalled = recall.recall(
        "users/ana", "What links Maya to Lisbon?", now=NOW, budget_tokens=budget
    )
    inferred = [block for block in recalled.blocks if block.title == "Inferred"]
    assert (
        inferred
        and sum(estimate_tokens(line) for line in inferred[0].lines) <= budget // GRAPH_SHARE
    )
    assert any(block.title.startswith("Past conversations") for block in recalled.blocks)


def test_a_name_the_message_does_not_say_brings_no_graph_lines(memory: SqliteMemory) -> None:
    _chat_about_maya(memory)
    _graph(memory)

    recalled = _recall(memory).recall(
        "users/ana", "How was the quarterly report?", now=NOW, budget_tokens=1500
    )

    assert not any(block.title == "Inferred" for block in recalled.blocks)


def test_the_word_user_and_a_short_name_in_lower_case_bring_no_graph_lines(
    memory: SqliteMemory,
) -> None:
    graph = memory.graph
    at = NOW - timedelta(days=3)
    user = graph.upsert_entity("users/ana", "User", "person", confidence=0.9, now=at)
    lisbon = graph.upsert_entity("users/ana", "Lisbon", "place", confidence=0.9, now=at)
    may = graph.upsert_entity("users/ana", "May", "person", confidence=0.9, now=at)
    graph.relate("users/ana", user.id, lisbon.id, "lives_in", confidence=0.8, now=at)
    graph.relate("users/ana", may.id, lisbon.id, "lives_in", confidence=0.8, now=at)
    _chat_about_maya(memory)
    recall = _recall(memory)

    for question in ("how do i add a user to postgres?", "i may go hiking tomorrow"):
        recalled = recall.recall("users/ana", question, now=NOW, budget_tokens=1500)
        assert not any(block.title == "Inferred" for block in recalled.blocks), question
    # Capitalised, May is a name.
    recalled = recall.recall("users/ana", "Where does May live?", now=NOW, budget_tokens=1500)
    assert any("May lives in Lisbon" in line for line in recalled.lines)


def test_a_direct_relation_between_two_names_comes_first(memory: SqliteMemory) -> None:
    _chat_about_maya(memory)
    _graph(memory)
    graph = memory.graph
    maya = graph.find("users/ana", "Maya")
    assert maya is not None
    at = NOW - timedelta(days=3)
    for name in ("Oslo", "Bergen", "Tromso", "Bodo", "Narvik"):  # more confident relations
        place = graph.upsert_entity("users/ana", name, "place", confidence=0.9, now=at)
        graph.relate("users/ana", maya.id, place.id, "visited", confidence=0.95, now=at)

    items = _recall(memory).rank("users/ana", "Is Maya still with Acme?", now=NOW)

    assert next(item.text for item in items if item.kind == "graph") == "Maya works at Acme"
