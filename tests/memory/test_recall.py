"""Recall over a real SQLite memory: ranking, packing into the budget, trust blocks, isolation."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from evals.rankers import ComparedRecall, OtherRankerName, baseline_relevance
from flynn.identity import MemoryScope
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import ProposedFact, RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.store import MessageRole, NewFact
from flynn.memory.stores import SqliteMemory
from flynn.recall.items import exchanges
from flynn.recall.query import analyse
from flynn.recall.ranking import HybridRanker, _Candidate, _session_words
from flynn.recall.recall import (
    FRAME_TOKENS,
    Recall,
    RecalledMemory,
    RecallItem,
)
from flynn.recall.search_terms import QueryWords, searched_words
from flynn.recall.weights import Tuning
from flynn.sessions.prompt import render_recalled
from flynn.tokens import estimate_tokens

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")
BEN = MemoryScope("users/ben", shared=True, user="ben")


def _writer(memory: SqliteMemory) -> MemoryWriter:
    return MemoryWriter(memory.history, RuleExtractor(), RuleReconciler(memory.facts))


def _say(
    memory: SqliteMemory,
    scope: MemoryScope,
    texts: list[tuple[MessageRole, str]],
    *,
    at: datetime,
    session: str = "telegram:1",
    model: Sequence[ProposedFact] = (),
) -> None:
    """Live turns, with what the extraction model learns (``model``, as scripted) from the first."""
    writer = _writer(memory)
    for index, (role, text) in enumerate(texts):
        moment = at + timedelta(minutes=index)
        stored = writer.message(scope, session, role, text, now=moment)
        writer.learn(scope, stored, now=moment, channel="telegram")
        for fact in model if index == 0 else ():
            reconciler = RuleReconciler(memory.facts)
            reconciler.apply(scope.profile, fact, source="llm", now=moment, message_id=stored.id)


def _turns(items: Sequence[RecallItem]) -> list[str]:
    """The texts of the turns ``items`` show, an exchange's one by one."""
    return [part.text for item in items for part in (item.parts or (item,))]


def _after_small_talk(memory: SqliteMemory, turns: list[str]) -> None:
    """Twelve turns of small talk (so the words asked about are rare), then ``turns``."""
    _say(
        memory,
        ANA,
        [("user", f"Small talk number {day}, nothing much.") for day in range(12)]
        + [("user", text) for text in turns],
        at=NOW - timedelta(days=3),
    )


def _lexical_strength(memory: SqliteMemory, question: str) -> tuple[QueryWords, dict[str, float]]:
    """The words ``question`` is searched for, and each full-text hit's lexical strength."""
    ranker = HybridRanker(memory.facts, memory.history)
    query = analyse(question, now=NOW)
    words = searched_words(memory.history, "users/ana", query, ranker.tuning)
    found = ranker.lexical_candidates("users/ana", query, words, None, ranker.tuning)
    return words, {c.message.content: c.lexical for c in found.values()}


def _recall(memory: SqliteMemory, **kwargs: object) -> Recall:
    return Recall(memory.facts, memory.history, threshold=0.3, graph=memory.graph, **kwargs)  # type: ignore[arg-type]


def test_writer_keeps_the_source_message_of_a_fact(memory: SqliteMemory) -> None:
    writer = _writer(memory)
    stored = writer.message(
        ANA, "telegram:1", "user", "My name is Ana and my email is ana@example.com.", now=NOW
    )
    outcomes = writer.learn(ANA, stored, now=NOW, channel="telegram")

    assert {o.fact.field for o in outcomes if o.fact} == {"name", "email"}
    assert all(o.fact is not None and o.fact.message_id == stored.id for o in outcomes)
    (name,) = memory.facts.active(ANA.profile, field="name")
    assert memory.facts.get(name.id) == name and name.message_id == stored.id
    # The assistant's words teach nothing about the person.
    reply = writer.message(ANA, "telegram:1", "assistant", "My name is Flynn.", now=NOW)
    assert writer.learn(ANA, reply, now=NOW) == []


def test_ranks_the_turn_that_answers_and_its_neighbour(memory: SqliteMemory) -> None:
    _say(
        memory,
        ANA,
        [
            ("user", "The contractor starts tearing out the kitchen cabinets next week."),
            ("assistant", "Do you have a budget in mind?"),
            ("user", "We agreed on eighteen thousand euros at most."),
            ("user", "Also my sister visits in March."),
        ],
        at=NOW - timedelta(days=30),
    )
    items = _recall(memory).rank("users/ana", "How much is the kitchen renovation budget?", now=NOW)

    # The best exchange holds the assistant's question and the person's answer after it.
    best = items[0]
    assert best.kind == "message" and best.trust == "verbatim"
    assert [part.text for part in best.parts] == [
        "Do you have a budget in mind?",
        "We agreed on eighteen thousand euros at most.",
    ]
    assert best.message_ids == tuple(part.ref for part in best.parts)
    assert best.ref in best.message_ids
    assert len(_turns(items)) == len(set(_turns(items))) == 4  # each turn shown once


def test_a_query_never_returns_another_namespaces_rows(memory: SqliteMemory) -> None:
    for scope in (ANA, BEN, MemoryScope("users/anabel", shared=True)):
        _say(
            memory,
            scope,
            [("user", "I love pottery and my dog is called Biscuit."), ("assistant", "Lovely!")],
            at=NOW - timedelta(days=2),
            session=f"gateway:{scope.root}",
        )
    recall = _recall(memory)
    items = recall.rank("users/ana", "What is the dog called? pottery", now=NOW)

    assert items
    for item in items:
        rows = memory.history.messages(list(item.message_ids))
        assert all(row.namespace == "users/ana" for row in rows)
        if item.kind == "fact":
            fact = memory.facts.get(item.ref)
            assert fact is not None and fact.namespace.startswith("users/ana/")
    assert recall.rank("users/nobody", "dog pottery Biscuit", now=NOW) == []


def test_packing_respects_the_budget_including_the_frame(memory: SqliteMemory) -> None:
    _say(
        memory,
        ANA,
        [
            ("user", f"Garden note {index}: the tomatoes need water and the basil needs sun.")
            for index in range(60)
        ],
        at=NOW - timedelta(days=3),
    )
    recall = _recall(memory)
    for budget in (FRAME_TOKENS, 80, 200, 1500):
        packed = recall.recall("users/ana", "tomatoes basil garden", now=NOW, budget_tokens=budget)
        rendered = render_recalled(packed)
        assert estimate_tokens(rendered) <= budget
    assert recall.recall("users/ana", "tomatoes", now=NOW, budget_tokens=0) == RecalledMemory()


def test_packing_drops_duplicates_and_a_fact_next_to_its_turn(memory: SqliteMemory) -> None:
    tea = [ProposedFact("profile", None, "prefers green tea in the morning", 0.9, "profile")]
    said = "I prefer green tea in the morning."
    _say(memory, ANA, [("user", said)], at=NOW - timedelta(days=9), model=tea)
    _say(
        memory,
        ANA,
        [("user", said), ("assistant", "Noted!")],
        at=NOW - timedelta(days=1),
        session="gateway:laptop",
        model=tea,
    )
    recall = _recall(memory)
    items = recall.rank("users/ana", "green tea morning", now=NOW)
    kinds = {item.kind for item in items}
    assert kinds == {"message", "fact"}

    packed = recall.pack(items, budget_tokens=1500)
    texts = [item.text.casefold() for item in packed.items]
    assert len(texts) == len(set(texts))
    covered = [m for item in packed.items for m in item.message_ids]
    assert len(covered) == len(set(covered))


def test_an_exchange_is_packed_a_line_a_turn_in_time_order(memory: SqliteMemory) -> None:
    _say(
        memory,
        ANA,
        [
            ("user", "The pool near me runs adult lessons."),
            ("assistant", "Which evening are the swimming lessons?"),
            ("user", "Tuesday evenings at seven."),
            ("assistant", "Good, that leaves your Thursdays free."),
            ("user", "Unrelated: the car needs new tyres."),
        ],
        at=NOW - timedelta(days=4),
    )
    recall = _recall(memory)
    items = recall.rank("users/ana", "When are the swimming lessons?", now=NOW)
    best = items[0]
    # An assistant's question comes with the person's answer after it.
    assert _turns([best]) == [
        "Which evening are the swimming lessons?",
        "Tuesday evenings at seven.",
    ]
    packed = recall.pack(items, budget_tokens=1500)
    (verbatim,) = packed.blocks
    said = [line.split(": ", 1)[1] for line in verbatim.lines]
    first = said.index("Which evening are the swimming lessons?")
    assert said[first:][:2] == _turns([best])
    assert len(said) == len(set(said))
    assert any(
        line.endswith(", you said: Which evening are the swimming lessons?")
        for line in verbatim.lines
    )
    # Every packed item is one turn, so what was injected can be traced turn by turn.
    assert all(len(item.message_ids) == 1 and not item.parts for item in packed.items)


def test_a_persons_turn_comes_without_the_reply_after_it(memory: SqliteMemory) -> None:
    """Once the person's own turns rank first for what they ask about themselves, a reply
    shown with each took the place of other hits (issue 15 round 3)."""
    _say(
        memory,
        ANA,
        [
            ("user", "Swimming lessons are on Tuesday evenings at seven."),
            ("assistant", "Good, that leaves your Thursdays free."),
        ],
        at=NOW - timedelta(days=4),
    )
    items = _recall(memory).rank("users/ana", "When are my swimming lessons?", now=NOW)
    assert _turns(items[:1]) == ["Swimming lessons are on Tuesday evenings at seven."]


def test_an_exchange_too_big_for_the_budget_keeps_the_turn_that_ranked(
    memory: SqliteMemory,
) -> None:
    filler = "and then we talked about many unrelated things for a long while " * 6
    _say(
        memory,
        ANA,
        [
            ("assistant", "Shall I note the locker code for the pool?"),
            ("user", f"Yes please, 4471, {filler}"),
        ],
        at=NOW - timedelta(days=4),
    )
    recall = _recall(memory)
    items = recall.rank("users/ana", "What was the locker code at the pool?", now=NOW)
    assert len(items[0].parts) == 2  # an assistant's question with the answer after it
    whole = estimate_tokens(render_recalled(recall.pack(items, budget_tokens=1500)))
    packed = recall.pack(items, budget_tokens=whole - 20)
    assert [item.text for item in packed.items] == ["Shall I note the locker code for the pool?"]


def test_blocks_are_labelled_and_ordered_by_trust(memory: SqliteMemory) -> None:
    facts = memory.facts
    facts.add(NewFact("users/ana/profile", "profile", "Porto", field="location"), now=NOW)
    facts.add(
        NewFact("users/ana/facts", "observation", "plans a trip to Porto", source="llm"), now=NOW
    )
    facts.add(
        NewFact("users/ana/facts", "observation", "may move to Porto", source="inferred"), now=NOW
    )
    _say(memory, ANA, [("user", "Porto was lovely in May.")], at=NOW - timedelta(days=20))

    packed = _recall(memory).recall("users/ana", "Porto", now=NOW, budget_tokens=1500)
    titles = [block.title for block in packed.blocks]
    assert titles == [
        "Facts they told you",
        "Past conversations, verbatim",
        "Facts extracted from past conversations",
        "Inferred",
    ]
    assert all(block.trust for block in packed.blocks)
    rendered = render_recalled(packed)
    assert "trust the current message" in rendered
    assert "they said: Porto was lovely in May." in rendered


def test_skip_lines_keep_what_the_session_context_already_says(memory: SqliteMemory) -> None:
    memory.facts.add(NewFact("users/ana/profile", "profile", "Porto", field="location"), now=NOW)
    recall = _recall(memory)
    assert recall.recall("users/ana", "Porto", now=NOW, budget_tokens=500).lines
    assert recall.recall(
        "users/ana", "Porto", now=NOW, budget_tokens=500, skip_lines=["- location: Porto"]
    ).is_empty


def test_time_words_favour_turns_from_that_time(memory: SqliteMemory) -> None:
    _say(memory, ANA, [("user", "Dinner was pasta with friends.")], at=NOW - timedelta(days=40))
    _say(
        memory,
        ANA,
        [("user", "Dinner was soup at home.")],
        at=NOW - timedelta(days=1),
        session="gateway:2",
    )
    _say(
        memory,
        ANA,
        [("user", "Dinner was sushi downtown.")],
        at=NOW - timedelta(days=10),
        session="gateway:3",
    )
    recall = _recall(memory)
    assert recall.rank("users/ana", "What did I have for dinner yesterday?", now=NOW)[0].text == (
        "Dinner was soup at home."
    )
    top = recall.rank("users/ana", "What was dinner last month?", now=NOW)[0]
    assert top.text == "Dinner was pasta with friends."
    # A time word alone still finds that day's turns.
    assert [i.text for i in recall.rank("users/ana", "what about yesterday?", now=NOW)] == [
        "Dinner was soup at home."
    ]


def test_when_questions_favour_turns_that_place_things_in_time(memory: SqliteMemory) -> None:
    _say(
        memory,
        ANA,
        [
            ("user", "The marathon was so hard, my legs hurt."),
            ("assistant", "Well done!"),
            ("user", "I ran the marathon last Sunday with my brother."),
        ],
        at=NOW - timedelta(days=5),
    )
    top = _recall(memory).rank("users/ana", "When did I run the marathon?", now=NOW)[0]
    ranked = next((part for part in top.parts if part.ref == top.ref), top)
    assert ranked.text == "I ran the marathon last Sunday with my brother."


def test_query_analysis() -> None:
    query = analyse(
        "When did Caroline's sister go to the LGBTQ support group in May 2023?", now=NOW
    )
    assert query.asks_when
    assert query.terms == ("caroline", "sister", "lgbtq", "support", "group")
    assert query.names == ("caroline", "lgbtq")
    assert query.topic_terms == ("sister", "support", "group")
    assert query.window is not None
    assert (query.window.start, query.window.end) == (
        datetime(2023, 5, 1, tzinfo=UTC),
        datetime(2023, 6, 1, tzinfo=UTC),
    )
    # "may" as a verb is not a month; a capital at the start of a sentence is not a name.
    verb = analyse("Painting may help, Tom said. Lovely.", now=NOW)
    assert verb.window is None and verb.names == ("tom",)
    last_week = analyse("what did we do last week", now=NOW).window
    assert last_week is not None and last_week.end - last_week.start == timedelta(days=7)
    assert last_week.closeness(last_week.start) == 1.0
    assert last_week.closeness(last_week.end + timedelta(days=30)) == 0.0


def _kitchen(memory: SqliteMemory) -> None:
    _say(
        memory,
        ANA,
        [
            ("user", "The contractor starts tearing out the kitchen cabinets soon."),
            ("assistant", "Sounds like a big job."),
        ],
        at=NOW - timedelta(days=3),
    )


def test_a_plain_statement_gets_a_light_recall(memory: SqliteMemory) -> None:
    _kitchen(memory)
    neighbour = "Sounds like a big job."
    adaptive = _recall(memory)
    # No neighbour expansion for a statement; a question (or depth "full") expands.
    statement = adaptive.rank("users/ana", "kitchen cabinets are heavy", now=NOW)
    assert _turns(statement) == ["The contractor starts tearing out the kitchen cabinets soon."]
    assert not statement[0].parts
    question = adaptive.rank("users/ana", "what about the kitchen cabinets", now=NOW)
    assert neighbour in _turns(question)
    full = _recall(memory, depth="full").rank("users/ana", "kitchen cabinets are heavy", now=NOW)
    assert neighbour in _turns(full)


def test_a_statement_naming_what_the_graph_knows_gets_a_full_recall(
    memory: SqliteMemory,
) -> None:
    _kitchen(memory)
    memory.graph.upsert_entity("users/ana", "Marisol", "person", confidence=0.8, now=NOW)
    items = _recall(memory).rank("users/ana", "marisol likes the kitchen cabinets", now=NOW)
    assert "Sounds like a big job." in _turns(items)


@pytest.mark.parametrize("ranker", ["baseline", "bm25"])
def test_comparison_rankers_still_rank(memory: SqliteMemory, ranker: OtherRankerName) -> None:
    _say(memory, ANA, [("user", "Pottery class on Tuesday was fun.")], at=NOW - timedelta(days=1))
    recall = ComparedRecall(memory.facts, memory.history, ranker=ranker, threshold=0.3)
    assert recall.ranker == ranker
    assert [i.text for i in recall.rank("users/ana", "pottery class", now=NOW)] == [
        "Pottery class on Tuesday was fun."
    ]
    assert baseline_relevance(1.0, 1.0, 1.0) == pytest.approx(1.0)


def _studio_days(memory: SqliteMemory, days: int) -> None:
    """A conversation a day about the pottery wheel, three turns each."""
    for day in range(days):
        _say(
            memory,
            ANA,
            [
                ("user", f"Day {day} at the studio."),
                ("assistant", f"Did the pottery wheel spin nicely on day {day}?"),
                ("user", "It did."),
            ],
            at=NOW - timedelta(days=40 - day),
            session=f"gateway:{day}",
        )


def test_only_the_best_turns_come_as_exchanges(memory: SqliteMemory) -> None:
    _studio_days(memory, 30)
    items = _recall(memory, depth="full").rank("users/ana", "pottery wheel", now=NOW)
    shapes = [bool(item.parts) for item in items if item.kind == "message"]
    assert len(shapes) > Tuning().exchanges
    assert all(shapes[: Tuning().exchanges]) and not any(shapes[Tuning().exchanges :])


def test_exchanges_stop_at_the_limit_with_the_items_they_would_have_begun_with(
    memory: SqliteMemory,
) -> None:
    _studio_days(memory, 12)
    turns = [m for day in range(12) for m in memory.history.recent(f"gateway:{day}")]
    best = [(message, 1.0 / (1 + rank)) for rank, message in enumerate(reversed(turns))]
    whole = exchanges(memory.history, "users/ana", best, Tuning())
    assert len(whole) > 6
    for limit in (0, 1, 5, len(whole), len(whole) + 3):
        assert exchanges(memory.history, "users/ana", best, Tuning(), limit=limit) == whole[:limit]


def test_lexical_strength_is_measured_against_a_turn_with_every_word(
    memory: SqliteMemory,
) -> None:
    # Each turn holds one of the two rare words asked about. The name alone is a partial
    # match even when it is the best hit, weaker than a turn holding both would be, so other
    # signals (meaning, time) can still outrank it; the topic word is all the question asks
    # besides the name, and the topic-only list counts it in full.
    _after_small_talk(memory, ["Marisol called this morning.", "A zeppelin flew over the house."])
    _, strength = _lexical_strength(memory, "Did Marisol see the zeppelin?")
    assert 0.3 < strength["Marisol called this morning."] < 0.7
    assert strength["A zeppelin flew over the house."] > 0.9
    # Both words in one turn: full strength.
    _say(memory, ANA, [("user", "Marisol saw the zeppelin too.")], at=NOW - timedelta(days=1))
    _, both = _lexical_strength(memory, "Did Marisol see the zeppelin?")
    assert both["Marisol saw the zeppelin too."] > 0.9


def test_an_exchange_saying_the_same_thing_twice_is_packed_once(memory: SqliteMemory) -> None:
    _say(
        memory,
        ANA,
        [
            ("user", "Thanks!"),
            ("assistant", "So the locksmith comes on Thursday at nine?"),
            ("user", "Thanks!"),
        ],
        at=NOW - timedelta(days=2),
    )
    recall = _recall(memory)
    items = recall.rank("users/ana", "When does the locksmith come?", now=NOW)
    assert _turns(items[:1]) == ["So the locksmith comes on Thursday at nine?", "Thanks!"]
    assert _turns(items) == [*_turns(items[:1]), "Thanks!"]  # the other "Thanks!" alone
    lines = recall.pack(items, budget_tokens=1500).lines
    assert len(lines) == len(set(lines)) == 2


class ScriptedVectors:
    """``VectorSearch`` answering each text with the turns a test names for it."""

    model = "scripted"
    ready = True

    def __init__(self, nearest: dict[str, list[int]]) -> None:
        self.asked: list[str] = []
        self._nearest = nearest

    def nearest(
        self, namespace_prefix: str, text: str, *, kind: str, limit: int, vector: object = None
    ) -> list[tuple[int, float]]:
        self.asked.append(text)
        return [(ref, 0.5) for ref in self._nearest.get(text, [])][:limit]

    async def embed_in_thread(self, texts: Sequence[str]) -> object:
        raise AssertionError("not used")


def test_a_question_naming_someone_is_also_searched_by_meaning_for_its_topic(
    memory: SqliteMemory,
) -> None:
    # In a conversation with Caroline her name is everywhere; the question's vector leans
    # towards her, and the turn about the topic can only be found by the topic's own vector.
    writer = _writer(memory)
    chatter = [
        writer.message(ANA, "telegram:1", "user", f"Caroline said hello {i}", now=NOW).id
        for i in range(3)
    ]
    agencies = writer.message(ANA, "telegram:2", "user", "I looked into agencies", now=NOW)
    question = "What did Caroline research?"
    assert analyse(question, now=NOW).topic_text == "What did research?"
    vectors = ScriptedVectors({question: chatter, "What did research?": [agencies.id]})

    def ranked(weight: float) -> list[int]:
        ranker = HybridRanker(
            memory.facts, memory.history, vectors=vectors, tuning=Tuning(semantic_topic=weight)
        )
        items = ranker.rank(ANA.root, analyse(question, now=NOW), now=NOW, limit=10)
        return [ref for item in items for ref in item.message_ids]

    assert agencies.id not in ranked(0.0)
    assert agencies.id in ranked(1.0)
    assert vectors.asked[-2:] == [question, "What did research?"]
    # A question naming nobody has no separate topic.
    assert analyse("What did I research?", now=NOW).topic_text == ""
    assert analyse("Caroline?", now=NOW).topic_text == ""


def test_related_words_find_a_turn_that_shares_no_word_with_the_question(
    memory: SqliteMemory,
) -> None:
    _say(
        memory,
        ANA,
        [
            ("user", "Biscuit chewed my slipper again, bad dog."),
            ("user", "The train to Lyon was late by an hour."),
            ("user", "I repainted the hallway a pale green."),
        ],
        at=NOW - timedelta(days=30),
    )
    question = "Which pets does Ana have?"
    expanded = HybridRanker(memory.facts, memory.history).rank(
        "users/ana", analyse(question, now=NOW), now=NOW, limit=5
    )
    assert _turns(expanded)[0] == "Biscuit chewed my slipper again, bad dog."
    # Without related words, nothing in the question is in that turn.
    literal = HybridRanker(memory.facts, memory.history, tuning=Tuning(related=0)).rank(
        "users/ana", analyse(question, now=NOW), now=NOW, limit=5
    )
    assert "Biscuit chewed my slipper again, bad dog." not in _turns(literal)


def test_the_asked_word_outranks_a_related_one(
    memory: SqliteMemory,
) -> None:
    _say(
        memory,
        ANA,
        [
            ("user", "My dog hates the vacuum cleaner."),
            ("user", "We can't have pets in this flat, the landlord says."),
            ("user", "No pets, no dog, no cat: the landlord is strict."),
            ("user", "The boiler broke on Sunday."),
        ],
        at=NOW - timedelta(days=30),
    )
    alone = Tuning(neighbours_of=0, exchange_before=0, exchange_after=0)  # turns, no exchanges
    ranker = HybridRanker(memory.facts, memory.history, tuning=alone)
    items = ranker.rank("users/ana", analyse("Are pets allowed?", now=NOW), now=NOW, limit=5)
    turns = [item.text for item in items if item.kind == "message"]
    # "pets" beats "dog", which is only found because it is related.
    assert set(turns[:2]) == {
        "We can't have pets in this flat, the landlord says.",
        "No pets, no dog, no cat: the landlord is strict.",
    }
    assert turns[2] == "My dog hates the vacuum cleaner."


def test_a_plain_statement_searches_no_related_words(memory: SqliteMemory) -> None:
    _say(memory, ANA, [("user", "Biscuit chewed my slipper again, bad dog.")], at=NOW)
    ranker = HybridRanker(memory.facts, memory.history)
    statement = analyse("our pets seem fine", now=NOW)
    assert statement.depth == "light" and statement.related
    assert ranker.rank("users/ana", statement, now=NOW, limit=5) == []


def test_a_turn_holding_only_a_related_word_is_weighed_as_such(memory: SqliteMemory) -> None:
    _after_small_talk(memory, ["Biscuit chewed my slipper, bad dog.", "The pets are asleep."])
    for question in ("Which pets does she have?", "Which pets and toys?"):
        words, strength = _lexical_strength(memory, question)
        assert (
            strength["The pets are asleep."] > 2 * strength["Biscuit chewed my slipper, bad dog."]
        )
        # Coverage: a related word and its asked word cover one asked word.
        assert words.asked_found(["dogs", "pets"]) == 1
    # When the asked word occurs nowhere, a related word is still only a partial match.
    _, strength = _lexical_strength(memory, "Does she like canine company?")
    assert 0 < strength["Biscuit chewed my slipper, bad dog."] < 0.7


def test_a_session_that_keeps_to_the_subject_is_more_about_it(memory: SqliteMemory) -> None:
    _say(
        memory,
        ANA,
        [
            ("user", "Marisol and I sanded the canoe hull."),
            ("user", "Then Marisol varnished the canoe."),
            ("user", "The canoe needs a third coat, Marisol says."),
        ],
        at=NOW - timedelta(days=9),
        session="gateway:build",
    )
    _say(
        memory,
        ANA,
        [("user", "Marisol mentioned a canoe trip once."), ("user", "Lunch was good.")],
        at=NOW - timedelta(days=5),
        session="gateway:passing",
    )
    _say(
        memory,
        ANA,
        [("user", "Marisol got a new phone.")],
        at=NOW - timedelta(days=2),
        session="gateway:phone",
    )
    query = analyse("How is Marisol's canoe coming along?", now=NOW)
    words = searched_words(memory.history, "users/ana", query, Tuning())
    pool = [
        _Candidate(message)
        for session in ("gateway:build", "gateway:passing", "gateway:phone")
        for message in memory.history.recent(session)
    ]

    about = _session_words(pool, words)

    assert about["gateway:build"] == 1.0
    assert 0.2 < about["gateway:passing"] < 0.8
    # Marisol is named in every session in play: her name says little.
    assert about["gateway:phone"] < 0.2
