"""Top-k returns k items whenever the person's memory holds them (issue 15): ranking does not
apply the relevance floor (``Recall.relevant`` does, for what is injected), exchanges do not
leave the list short, and another person's rows never come in to fill it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from flynn.identity import MemoryScope
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.store import MessageRole
from flynn.memory.stores import SqliteMemory
from flynn.recall.recall import Recall
from flynn.recall.weights import Tuning, lighter

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")
BEN = MemoryScope("users/ben", shared=True, user="ben")
CAL = MemoryScope("users/cal", shared=True, user="cal")
DEE = MemoryScope("users/dee", shared=True, user="dee")


def _store(memory: SqliteMemory) -> None:
    writer = MemoryWriter(memory.history, RuleExtractor(), RuleReconciler(memory.facts))

    def say(scope: MemoryScope, session: str, texts: list[str], at: datetime) -> None:
        for index, text in enumerate(texts):
            role: MessageRole = "user" if index % 2 == 0 else "assistant"
            writer.message(scope, session, role, text, now=at + timedelta(minutes=index))

    # One session all about the river trip, then many that mention kayaks in passing.
    say(
        ANA,
        "gateway:trip",
        ["We booked the kayak river trip for the gorge.", "The gorge trip sounds great."],
        NOW - timedelta(days=60),
    )
    for day in range(30):
        say(
            ANA,
            f"gateway:{day}",
            [f"Day {day} was long: groceries, laundry, a kayak video.", "Sounds like a day."],
            NOW - timedelta(days=50 - day),
        )
    # Others say the same words, more often: Ana's rows are a minority of the store, so her
    # words are planned and weighed on her own rows (``FtsQueryPlanner.plan(own_root=True)``).
    for scope in (BEN, CAL, DEE):
        for day in range(40):
            say(scope, f"gateway:{scope.root}{day}", [f"A kayak river gorge trip, day {day}."], NOW)


def test_rank_returns_the_items_asked_for_and_the_floor_decides_injection(
    memory: SqliteMemory,
) -> None:
    _store(memory)
    recall = Recall(memory.facts, memory.history, threshold=0.3)
    items = recall.rank("users/ana", "Which gorge did we take the kayak river trip to?", now=NOW)

    # Every session of Ana's mentions a kayak: 31 sessions, more than 25 items' worth.
    assert len(items) >= 25
    assert "gorge" in items[0].text
    for item in items:
        rows = memory.history.messages(list(item.message_ids))
        assert rows and all(row.namespace == "users/ana" for row in rows)
    assert len(recall.rank("users/ana", "kayak gorge", now=NOW, limit=10)) == 10

    # The floor is what keeps weak matches out of the prompt.
    relevant = recall.relevant(items)
    assert relevant[0] == items[0] and len(relevant) < len(items)
    floor = items[0].score * 0.3
    assert all(item.score >= floor for item in relevant)
    recalled = recall.recall(
        "users/ana", "Which gorge did we take the kayak river trip to?", now=NOW, budget_tokens=4000
    )
    assert {item.ref for item in recalled.items} <= {
        part.ref for item in relevant for part in (item.parts or (item,))
    }


def test_a_question_over_many_occasions_gets_each_occasion_not_their_replies(
    memory: SqliteMemory,
) -> None:
    """Each visit was said in passing in its own conversation, with a long reply after it. A
    question about all of them wants each visit's turn, not the first visits' replies, even
    with a person's turns otherwise shown with their replies (``Tuning.exchange_reply``)."""
    writer = MemoryWriter(memory.history, RuleExtractor(), RuleReconciler(memory.facts))
    cities = ["Lisbon", "Porto", "Seville", "Granada", "Valencia", "Bilbao", "Girona", "Cadiz"]
    reply = "Here is a long and careful answer about something else entirely. " * 12
    for day, city in enumerate(cities):
        at = NOW - timedelta(days=80 - 9 * day)
        session = f"gateway:visit{day}"
        writer.message(ANA, session, "user", f"We visited {city} on our trip.", now=at)
        writer.message(ANA, session, "assistant", reply, now=at + timedelta(minutes=1))
    recall = Recall(memory.facts, memory.history, threshold=0.0)
    recall._hybrid.tuning = replace(Tuning(), exchange_reply=True)  # a test's reach

    items = recall.rank("users/ana", "Which cities have we visited on trips?", now=NOW, limit=8)

    shown = " ".join(item.text for item in items)
    assert all(city in shown for city in cities)
    assert all(len(item.message_ids) == 1 for item in items if item.kind == "message")


def test_a_question_about_the_person_is_answered_by_what_they_said(
    memory: SqliteMemory,
) -> None:
    """The person said they are learning the cello in passing; the assistant's long answers
    hold more of the question's words. "Which instrument am I learning?" asks about the
    person, so their own turn comes ahead of those answers (seventh, after all six, if
    ranked on words alone)."""
    writer = MemoryWriter(memory.history, RuleExtractor(), RuleReconciler(memory.facts))
    answer = (
        "Learning an instrument as an adult works best with short daily practice: "
        "a practice diary, a teacher once a fortnight, and pieces you like. "
    ) * 3
    for day in range(6):
        at = NOW - timedelta(days=60 - 9 * day)
        session = f"gateway:music{day}"
        request = (
            "I'm learning the cello this year. Any tips for a beginner?"
            if day == 2
            else "How do people get better at something new?"
        )
        writer.message(ANA, session, "user", request, now=at)
        writer.message(ANA, session, "assistant", answer, now=at + timedelta(minutes=1))
    recall = Recall(memory.facts, memory.history, threshold=0.0)

    items = recall.rank("users/ana", "Which instrument am I learning?", now=NOW, limit=3)

    assert any("cello" in item.text for item in items[:2])


def test_a_line_of_a_long_answer_is_not_weighed_down_by_the_rest_of_it(
    memory: SqliteMemory,
) -> None:
    """ "When did you say to book the ferry?" asks about one line of a long plan. Earlier,
    shorter answers say "book a ferry" in passing; on words alone they would outrank the plan
    for being shorter. Weighed as a passage, the plan holds the same words in as few, and the
    latest answer comes first."""
    writer = MemoryWriter(memory.history, RuleExtractor(), RuleReconciler(memory.facts))
    aside = "Trains are slow there, so book a ferry or a bus between the towns. " * 6
    filler = "Pack light layers and walk the old town early before the crowds arrive. " * 25
    plan = f"{filler}Book the ferry two days ahead in summer. {filler}"
    for day, answer in enumerate([aside, aside, plan]):
        at = NOW - timedelta(days=30 - day)
        session = f"gateway:trip{day}"
        writer.message(ANA, session, "user", "Plan me a week on the coast.", now=at)
        writer.message(ANA, session, "assistant", answer, now=at + timedelta(minutes=1))
    recall = Recall(memory.facts, memory.history, threshold=0.0)

    items = recall.rank("users/ana", "When did you say to book the ferry?", now=NOW, limit=3)

    assert "two days ahead" in items[0].text


def test_a_plain_statement_gets_no_lean_to_the_persons_turns() -> None:
    """A light recall is for what asks nothing ("I'm off to bed"): in the first person, but not
    a question about the person."""
    assert lighter(Tuning()).speaker == 0.0
    assert Tuning().speaker > 0.0
