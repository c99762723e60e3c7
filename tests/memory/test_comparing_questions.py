"""A question comparing two events ("Which came first, A or B?") is ranked by each of its parts
too, so the event whose words match less is still among the first items
(``flynn.recall.comparison``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from flynn.identity import MemoryScope
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.store import MessageRole
from flynn.memory.stores import SqliteMemory
from flynn.recall.comparison import merge, parts
from flynn.recall.items import RecallItem
from flynn.recall.query import analyse
from flynn.recall.recall import Recall
from flynn.recall.weights import Tuning

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        (
            "Which came first, buying my bicycle or hosting the reading group?",
            ("buying my bicycle", "hosting the reading group"),
        ),
        (
            "What did I do first: paint the fence or fix the gate?",
            ("paint the fence", "fix the gate"),
        ),
        ("The dentist or the wedding: which came first?", ("The dentist", "the wedding")),
        (
            "Did my promotion happen before or after the move to Leeds?",
            ("my promotion", "the move to Leeds"),
        ),
        (
            "How many days after I bought the plant did I repot it?",
            ("I bought the plant", "I repot it"),
        ),
        (
            "How much time passed between my flu and the dentist visit?",
            ("my flu", "the dentist visit"),
        ),
        ("Did I call Mum before I left for the airport?", ("I call Mum", "I left for the airport")),
    ],
)
def test_the_two_parts_of_a_comparing_question(question: str, expected: tuple[str, str]) -> None:
    assert parts(question) == expected
    assert analyse(question, now=NOW).parts == expected


@pytest.mark.parametrize(
    "question",
    [
        "What did I cook last week?",
        "Which restaurant did we go to first in Lisbon?",
        "Did I go to the gym before work?",
        "Which is better, tea or coffee?",
        "What is the difference between a stock and a bond?",
        "",
        "or " * 500,
    ],
)
def test_other_questions_have_no_parts(question: str) -> None:
    assert parts(question) is None
    assert analyse(question, now=NOW).parts == ()


def _item(ref: int, score: float, *turns: int) -> RecallItem:
    return RecallItem(
        kind="message",
        ref=ref,
        text=f"turn {ref}",
        session="s",
        message_ids=turns or (ref,),
        time=NOW,
        score=score,
        trust="verbatim",
    )


def test_merge_takes_the_best_of_each_ranking_in_turn_on_the_first_ones_scale() -> None:
    whole = [_item(1, 10.0), _item(2, 9.0), _item(3, 8.0)]
    first = [_item(1, 4.0), _item(4, 2.0)]
    second = [_item(5, 0.5), _item(6, 0.45, 6, 2)]  # 6 shows turn 2 again: not shown twice
    merged = merge([whole, first, second], limit=10)
    assert [item.ref for item in merged] == [1, 5, 2, 3, 4]
    assert [item.score for item in merged] == [10.0, 10.0, 9.0, 8.0, 5.0]
    assert [item.ref for item in merge([whole, first, second], limit=2)] == [1, 5]
    assert merge([[], []], limit=5) == []


def _store(memory: SqliteMemory) -> None:
    writer = MemoryWriter(memory.history, RuleExtractor(), RuleReconciler(memory.facts))

    def say(session: str, texts: list[str], at: datetime) -> None:
        for index, text in enumerate(texts):
            role: MessageRole = "user" if index % 2 == 0 else "assistant"
            writer.message(ANA, session, role, text, now=at + timedelta(minutes=index))

    say(
        "gateway:bike",
        ["Buying a secondhand bicycle today, finally.", "Enjoy the rides!"],
        NOW - timedelta(days=200),
    )
    # The reading group comes up again and again, in words the question shares; so do bicycles.
    for day in range(20):
        say(
            f"gateway:group{day}",
            [
                f"Hosting the reading group again on day {day}, my turn to pick the book.",
                "Hosting the reading group sounds lovely: which book is it this time?",
            ],
            NOW - timedelta(days=150 - day),
        )
        say(
            f"gateway:ride{day}",
            [f"Rode my bicycle to the office on day {day}.", "Good for you!"],
            NOW - timedelta(days=120 - day),
        )


def test_the_less_matching_event_of_a_comparing_question_is_still_found(
    memory: SqliteMemory,
) -> None:
    _store(memory)
    question = "Which came first, buying my bicycle or hosting the reading group?"
    recall = Recall(memory.facts, memory.history, threshold=0.3)

    def first(limit: int) -> list[str]:
        items = recall.rank("users/ana", question, now=NOW, limit=limit)
        return [item.text for item in items]

    def both(found: list[str]) -> bool:
        bought = any("secondhand bicycle" in text for text in found)
        return bought and any("reading group" in text for text in found)

    assert both(first(5))

    # Ranked whole only, one event's look-alikes fill the first items.
    hybrid = recall._hybrid  # a test's reach, to compare with the signal off
    hybrid.tuning = replace(Tuning(), parts=False)
    assert not both(first(5))
