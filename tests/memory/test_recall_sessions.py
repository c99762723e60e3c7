"""A session's backing of its best turn, and a question over many occasions spread across them
(``flynn.recall.ranking``: ``_session_support``, ``_spread``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from flynn.identity import MemoryScope
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.store import MessageRole, StoredMessage
from flynn.memory.stores import SqliteMemory
from flynn.recall.items import RecallItem, message_item
from flynn.recall.query import analyse
from flynn.recall.ranking import HybridRanker, _Candidate, _session_support, _spread
from flynn.recall.recall import Recall
from flynn.recall.weights import Tuning

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

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


class _LoadingModel:
    """``VectorSearch`` whose model is still loading: nothing of it may be used."""

    model = "loading"
    ready = False

    def nearest(
        self,
        namespace_prefix: str,
        text: str,
        *,
        kind: str,
        limit: int,
        vector: Matrix | None = None,
    ) -> list[tuple[int, float]]:
        raise AssertionError("searched vectors of a model still loading")

    def embed(self, texts: Sequence[str]) -> Matrix:
        raise AssertionError("embedded with a model still loading")


def test_a_daemon_whose_model_is_loading_spreads_occasions_with_the_lexical_weight(
    memory: SqliteMemory,
) -> None:
    # t-review7: ``across_repeat`` differs by words (0) and with vectors (1.0); a daemon with
    # embeddings on whose model still loads ranks by words, so it must take the lexical one.
    _climbing(memory)
    question = "How many times have I been climbing?"
    assert analyse(question, now=NOW).asks_across
    loading = Recall(
        memory.facts, memory.history, threshold=0.3, graph=memory.graph, vectors=_LoadingModel()
    )
    by_words = Recall(memory.facts, memory.history, threshold=0.3, graph=memory.graph)
    assert not loading.reads_vectors
    assert Tuning().across_repeat != Tuning().across_repeat_semantic

    def ranked(recall: Recall) -> list[tuple[float, str | None, str]]:
        items = recall.rank("users/ana", question, now=NOW, limit=10)
        return [(item.score, item.session, item.text) for item in items]

    assert ranked(loading) == ranked(by_words) != []
    # Whatever the weight with vectors is.
    reference = HybridRanker(memory.facts, memory.history, graph=memory.graph)
    reference.tuning = Tuning(across_repeat_semantic=0.0)
    items = reference.rank("users/ana", analyse(question, now=NOW), now=NOW, limit=10)
    assert ranked(loading) == [(item.score, item.session, item.text) for item in items]
