"""A session's backing of its best turn, and a question over many occasions spread across them
(``flynn.recall.ranking``: ``_session_support``, ``_spread``)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from flynn.identity import MemoryScope
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.store import MessageRole, StoredMessage
from flynn.memory.stores import SqliteMemory
from flynn.recall.items import RecallItem, message_item
from flynn.recall.query import analyse
from flynn.recall.ranking import HybridRanker, _Candidate, _session_support, _spread
from flynn.recall.weights import Tuning

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")


def _message(ref: int, session: str, text: str = "a turn") -> StoredMessage:
    return StoredMessage(
        id=ref,
        session=session,
        namespace="users/ana",
        role="user",
        content=text,
        tokens=3,
        created_at=NOW - timedelta(days=ref),
    )


def _candidate(ref: int, session: str, score: float, inherited: float = 0.0) -> _Candidate:
    return _Candidate(_message(ref, session), score=score, inherited=inherited)


def test_a_session_with_two_good_turns_is_backed_above_one_lucky_match() -> None:
    pool = [
        # One lucky match, the rest of the session far off.
        _candidate(1, "lucky", 3.0),
        _candidate(2, "lucky", 0.2),
        # Two good turns on the question.
        _candidate(3, "evidence", 2.5),
        _candidate(4, "evidence", 2.0),
        _candidate(5, "evidence", 0.1),
        # A strong hit whose neighbour is good only by what it inherited from it.
        _candidate(6, "echo", 3.2),
        _candidate(7, "echo", 1.3, inherited=1.2),
    ]

    backing = _session_support(pool, top=3)

    assert backing["evidence"] == 1.0
    assert backing["lucky"] < 0.25
    assert backing["echo"] < 0.25
    # A session of one turn backs it with nothing.
    assert _session_support([_candidate(8, "alone", 4.0)], top=3) == {"alone": 0.0}


def _item(ref: int, session: str | None, score: float, kind: str = "message") -> RecallItem:
    item = message_item(_message(ref, session or "none"), score)
    return replace(item, session=session, kind=kind)  # type: ignore[arg-type]


def test_spreading_puts_each_occasions_best_turn_before_a_second_of_one() -> None:
    items = [
        _item(1, "march", 3.0),
        _item(2, "march", 2.9),
        _item(3, "march", 2.8),
        _item(4, "may", 2.5),
        _item(5, None, 2.4, kind="fact"),
        _item(6, "june", 2.0),
        _item(7, "may", 1.9),
    ]

    spread = _spread(items, 1.0)

    assert [item.ref for item in spread] == [1, 4, 5, 6, 2, 7, 3]
    # The sessions come in the order of their best turns, as without spreading.
    assert [i.session for i in spread if i.kind == "message"][:3] == ["march", "may", "june"]
    assert _spread(items, 0.0) == items


def _say(
    memory: SqliteMemory, texts: list[tuple[MessageRole, str]], *, at: datetime, session: str
) -> None:
    writer = MemoryWriter(memory.history, RuleExtractor(), RuleReconciler(memory.facts))
    for index, (role, text) in enumerate(texts):
        moment = at + timedelta(minutes=index)
        stored = writer.message(ANA, session, role, text, now=moment)
        writer.learn(ANA, stored, now=moment, channel="telegram")


CLIMBING = {
    "gateway:gym": [
        "Went bouldering at the climbing gym with Theo today.",
        "The climbing gym's new overhang wall is brutal.",
        "Theo says the climbing gym will add a lead wall.",
        "My forearms are wrecked from the climbing gym.",
    ],
    "gateway:cliffs": ["Climbing trip to the sea cliffs at Dalkey, two routes done."],
    "gateway:mournes": ["Climbing in the Mournes this weekend, wet rock all day."],
}
"""Three climbing trips, one of them talked over at length."""


def _climbing(memory: SqliteMemory) -> None:
    """The climbing trips ten days apart, after a dozen conversations of small talk."""
    talk = {f"gateway:talk{day}": [f"Small talk number {day}, nothing much."] for day in range(12)}
    for days, (session, texts) in enumerate(reversed({**talk, **CLIMBING}.items())):
        turns: list[tuple[MessageRole, str]] = [("user", text) for text in texts]
        _say(memory, turns, at=NOW - timedelta(days=10 * (days + 1)), session=session)


def test_a_question_over_many_occasions_shows_each_before_a_second_turn_of_one(
    memory: SqliteMemory,
) -> None:
    _climbing(memory)
    question = "How many times have I been climbing?"
    assert analyse(question, now=NOW).asks_across
    ranker = HybridRanker(memory.facts, memory.history, graph=memory.graph)

    def first_sessions(tuning: Tuning, question: str = question) -> list[str | None]:
        ranker.tuning = tuning
        items = ranker.rank("users/ana", analyse(question, now=NOW), now=NOW, limit=10)
        return [item.session for item in items[:3]]

    # By score alone, the long talk about the gym takes more than one of the first places.
    assert len(set(first_sessions(Tuning(across_repeat=0.0)))) < 3
    assert set(first_sessions(Tuning(across_repeat=1.0))) == set(CLIMBING)
    # A question about one occasion keeps that occasion's turns together.
    one = "What did Theo say about the climbing gym?"
    assert not analyse(one, now=NOW).asks_across
    assert first_sessions(Tuning(across_repeat=1.0), one) == first_sessions(
        Tuning(across_repeat=0.0), one
    )
