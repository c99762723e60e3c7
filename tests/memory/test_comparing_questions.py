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
        ("Which first?  The dentist\nor the doctor.", ("The dentist", "the doctor")),
        ("Who did I meet first, Alice or Bob?", ("Alice", "Bob")),
        ("who did i meet first, alice or bob", ("alice", "bob")),
        ("Which was more recent, the flu or the sprain?", ("the flu", "the sprain")),
        (
            "Did I start the new job or move house first?",
            ("I start the new job", "move house"),
        ),
        ("Was the wedding earlier than the move?", ("the wedding", "the move")),
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
        "What's the time difference between London and Tokyo?",
        "What should I eat first tonight, pasta or pizza?",
        # Statements are never split.
        "I had a great time between the concert and dinner.",
        "The dentist came first, then the wedding or the move",
        "",
        "or " * 500,
        # Runs of spaces (seconds of backtracking before they were collapsed to one).
        "Which came first" + "\n" * 384,
        "which first" + " " * 389,
        "Was " + "\t" * 396,
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
    part = [_item(4, 10.0), _item(1, 9.5), _item(5, 5.0, 5, 2)]  # 5 shows turn 2 beside it
    merged = merge([whole, part], limit=10)
    assert [item.ref for item in merged] == [1, 4, 2, 3, 5]
    assert [item.score for item in merged] == [10.0, 10.0, 9.0, 8.0, 5.0]
    assert [item.ref for item in merge([whole, part], limit=2)] == [1, 4]
    assert merge([whole, part], limit=0) == []
    assert merge([[], []], limit=5) == []
    assert [item.ref for item in merge([[], part], limit=5)] == [4, 1, 5]


def test_a_part_weaker_than_the_whole_counts_for_less() -> None:
    """A part whose best scores a fifth of the whole's (a split where nothing is compared: its
    turns all weakly alike) comes after the whole's items, below the relevance floor."""
    whole = [_item(1, 10.0), _item(2, 2.0)]
    weak = [_item(7, 2.0), _item(8, 1.9), _item(9, 1.9)]
    merged = merge([whole, weak], limit=10)
    assert [item.ref for item in merged] == [1, 2, 7, 8, 9]
    assert [round(item.score, 2) for item in merged] == [10.0, 2.0, 2.0, 1.9, 1.9]
    floor = merged[0].score * 0.3
    assert [item.ref for item in merged if item.score >= floor] == [1]
    # Undamped, every weak turn would score as the whole's best.
    assert [item.score for item in merge([whole, weak], limit=3, damp=0.0)] == [10.0, 10.0, 9.5]


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


class _CountingVectors:
    """A vector search that records which texts it was asked to embed (``vector`` None)."""

    model = "counting"
    ready = True

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def nearest(
        self,
        namespace_prefix: str,
        text: str,
        *,
        kind: str,
        limit: int,
        vector: object = None,
    ) -> list[tuple[int, float]]:
        if vector is None:
            self.embedded.append(text)
        return []


def test_the_parts_are_ranked_by_words_only(memory: SqliteMemory) -> None:
    """With embeddings on, only the whole question is searched by meaning (its vectors are
    computed off the event loop, ``Recall.query_vectors``); the parts never run the model."""
    _store(memory)
    vectors = _CountingVectors()
    recall = Recall(memory.facts, memory.history, threshold=0.3, vectors=vectors)  # type: ignore[arg-type]
    question = "Which came first, buying my bicycle or hosting the reading group?"
    items = recall.rank("users/ana", question, now=NOW, limit=5)
    assert any("secondhand bicycle" in item.text for item in items)
    assert vectors.embedded == [question]
