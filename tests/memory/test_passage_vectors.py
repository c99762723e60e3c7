"""Passage vectors: a long turn's later windows (``flynn.memory.windows``) get vectors of their own
under the turn, found as the turn by meaning, forgotten and redacted with it, within the person's
namespace, on both backends; and the real int8 model finds a paraphrase of what a long turn said
past the 256 tokens it reads."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from fakes.embedder import HashingEmbedder
from memory.conftest import VectorsBackend
from memory.test_recall_fusion import SMALL_TALK

from flynn.identity import MemoryScope
from flynn.learning.embedding_queue import EmbeddingQueue
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.store import History, StoredMessage
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import SqliteVectors, SqlVectors
from flynn.memory.windows import (
    LONG_CHARS,
    MAX_WINDOWS,
    WINDOW_CHARS,
    later_windows,
    passage_id,
    turn_of,
)
from flynn.recall import minilm_int8
from flynn.recall.query import analyse
from flynn.recall.ranking import HybridRanker

np = pytest.importorskip("numpy")

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
PASSAGES = "SELECT * FROM embeddings WHERE kind = 'passage'"

# About the office: 1,300 characters, so that what follows is past what the model reads.
BUDGET = (
    "I spent the whole evening going through the spreadsheet for the quarterly budget review, "
    "and honestly the numbers for the marketing team look far too optimistic again. They assumed "
    "the conference in Berlin would bring in forty leads, but last year it brought in twelve, and "
    "the travel costs alone were higher than the revenue we could trace back to it. I want to "
    "propose that we cut the booth, send two people instead of five, and move the rest of that "
    "money into the webinar series, which had a much better cost per lead. I also need to check "
    "whether the annual software licences renew in March or in April, because finance wants the "
    "exact dates before they sign off on anything, and the vendor portal is impossible to "
    "navigate. Then there is the question of the office lease, which the landlord wants to "
    "renegotiate with a five percent increase, and I am not sure we should accept that given how "
    "few people come in on Fridays. Anyway, I will draft the proposal tomorrow morning and send "
    "it round before the Thursday meeting so people have time to read it. "
)


def _long(tail: str) -> str:
    return BUDGET + tail


def _add(history: History, vectors: SqlVectors, namespace: str, text: str, session: str) -> int:
    stored = history.append(session, namespace, "user", text, tokens=1, now=NOW)
    vectors.add("message", [(stored.id, namespace, text)])
    return stored.id


def test_only_a_long_text_has_later_windows_and_they_reach_its_end() -> None:
    assert later_windows("short") == [] and later_windows("word " * (LONG_CHARS // 5)) == []
    text = " ".join(f"w{n}" for n in range(1200))  # 5,889 characters
    windows = later_windows(text)
    assert 1 < len(windows) <= MAX_WINDOWS
    assert windows[-1].endswith("w1199") and not windows[0].startswith("w0 ")
    assert all(len(window) <= WINDOW_CHARS + LONG_CHARS // 5 for window in windows)
    # Consecutive windows overlap: no word falls between two.
    words = [set(window.split()) for window in windows]
    assert all(a & b for a, b in itertools.pairwise(words))
    assert len(later_windows("x" * 10_000_000)) == MAX_WINDOWS
    assert turn_of(passage_id(1234, 5)) == 1234


def test_a_window_is_found_as_its_turn(vectors_backend: VectorsBackend) -> None:
    vectors = vectors_backend.vectors(HashingEmbedder())
    history = vectors_backend.history
    long = _add(history, vectors, "users/ana", _long("our beagle Biscuit chews slippers"), "s1")
    _add(history, vectors, "users/ana", "the garage door is red", "s2")
    assert vectors_backend.count(PASSAGES) == len(later_windows(_long("x")))
    nearest = vectors.nearest("users/ana", "beagle Biscuit slippers", kind="message", limit=5)
    assert nearest[0][0] == long  # the turn's id, not its window's
    assert len(nearest) == 2 and len({ref for ref, _ in nearest}) == 2


def test_forgetting_a_turn_drops_every_window(vectors_backend: VectorsBackend) -> None:
    vectors = vectors_backend.vectors(HashingEmbedder())
    history = vectors_backend.history
    text = _long("our beagle Biscuit chews slippers. " * 60)  # many windows
    _add(history, vectors, "users/ana", text, "s1")
    kept = _add(history, vectors, "users/ana", _long("a kitten called Mochi"), "s2")
    assert vectors_backend.count(PASSAGES) == len(later_windows(text)) + 1 > 3
    assert vectors.nearest("users/ana", "beagle", kind="message", limit=1)[0][0] != kept

    history.forget_session("s1")
    assert vectors_backend.count(PASSAGES) == 1  # Mochi's window stays
    nearest = vectors.nearest("users/ana", "beagle Biscuit", kind="message", limit=5)
    assert [ref for ref, _ in nearest] == [kept]
    vectors_backend.forget("users/ana")
    assert vectors_backend.count("SELECT * FROM embeddings") == 0


def test_another_persons_windows_never_come_back(vectors_backend: VectorsBackend) -> None:
    vectors = vectors_backend.vectors(HashingEmbedder())
    history = vectors_backend.history
    # "users/anabel" sorts right after "users/ana"; both said the same thing.
    theirs = _add(history, vectors, "users/anabel", _long("our beagle Biscuit"), "s1")
    mine = _add(history, vectors, "users/ana", "the garage door is red", "s2")
    nearest = vectors.nearest("users/ana", "beagle Biscuit", kind="message", limit=10)
    assert [ref for ref, _ in nearest] == [mine]
    assert theirs in {
        ref for ref, _ in vectors.nearest("users/anabel", "beagle", kind="message", limit=10)
    }


def test_a_turn_redacted_is_embedded_again_with_all_its_windows(
    vectors_backend: VectorsBackend,
) -> None:
    vectors = vectors_backend.vectors(HashingEmbedder())
    text = _long("our beagle Biscuit chews slippers. " * 30)
    ref = _add(vectors_backend.history, vectors, "users/ana", text, "s1")
    windows = len(later_windows(text))
    # Redaction drops the turn's vector (``SqlRedaction._drop_vectors``); its windows go with it.
    mark = "?" if vectors_backend.name == "sqlite" else "%s"
    db = vectors._db
    with db.transaction():
        db.execute(f"DELETE FROM embeddings WHERE kind = 'message' AND ref_id = {mark}", (ref,))
    assert vectors_backend.count(PASSAGES) == 0
    assert vectors.unembedded("users/ana") == 1
    assert sum(vectors.backfill("users/ana")) == 1
    assert vectors_backend.count(PASSAGES) == windows
    assert vectors.unembedded("users/ana") == 0


def test_the_catch_up_embeds_the_windows_of_old_long_turns(
    vectors_backend: VectorsBackend,
) -> None:
    vectors = vectors_backend.vectors(HashingEmbedder())
    history = vectors_backend.history
    text = _long("our beagle Biscuit chews slippers")
    stored = history.append("s1", "users/ana", "user", text, tokens=1, now=NOW)
    short = history.append("s1", "users/ana", "user", "the door is red", tokens=1, now=NOW)
    # As a turn stored before windows were: its own vector, none for its windows.
    embedded = HashingEmbedder().embed([text, "the door is red"])
    rows = [(stored.id, "users/ana", text), (short.id, "users/ana", "the door is red")]
    vectors.store("message", rows, embedded)
    assert vectors.unembedded("users/ana") == 1  # counted in messages
    # ``flynn memory embed`` and the daemon's catch-up go to whom this says is missing some.
    assert [(p.messages, p.missing) for p in vectors_backend.progress("hashing-64")] == [(2, 1)]
    assert [row[0] for row in vectors.pending("users/ana", after=0, limit=10)] == [stored.id]
    assert sum(vectors.backfill("users/ana")) == 1
    assert vectors_backend.count(PASSAGES) == len(later_windows(text))
    assert vectors.unembedded("users/ana") == 0
    assert vectors.pending("users/ana", after=0, limit=10) == []
    assert [p.missing for p in vectors_backend.progress("hashing-64")] == [0]


async def test_the_background_queue_embeds_new_and_old_long_turns_windows(
    memory: SqliteMemory,
) -> None:
    def row(stored: StoredMessage) -> tuple[int, str, str]:
        return (stored.id, stored.namespace, stored.content)

    vectors = SqliteVectors(memory.db, HashingEmbedder())
    queue = EmbeddingQueue(vectors, memory.history, row)
    new = _long("our beagle Biscuit chews slippers. " * 20)
    old = _long("a kitten called Mochi")
    before = memory.history.append("s1", "users/ana", "user", old, tokens=1, now=NOW)
    vectors.store("message", [row(before)], HashingEmbedder().embed([old]))  # no windows yet
    await queue.embed(memory.history.append("s2", "users/ana", "user", new, tokens=1, now=NOW))
    stored = lambda: len(memory.db.fetchall(PASSAGES))  # noqa: E731
    assert stored() == len(later_windows(new))
    assert await queue.catch_up("users/ana") == 1
    assert stored() == len(later_windows(new)) + len(later_windows(old))
    await queue.aclose()


# --- The real int8 model, through the ranker.

ANA = MemoryScope("users/ana", shared=True, user="ana")
PUPPY = (
    "Completely unrelated, but we finally adopted a puppy last weekend, a little beagle we "
    "named Biscuit, and she chews everything. She sleeps in a basket by the radiator and "
    "already knows how to sit for a treat. The vet says she is healthy but needs two more "
    "rounds of vaccinations before she can go to the park with the other puppies. The kids "
    "take her out in the garden every morning before school, and she howls when the postman "
    "comes. We bought her a harness, a lead, a bag of chew toys and a bed she refuses to use. "
    "Puppy training classes start next month at the village hall on Saturday mornings. "
    "Our neighbour's old spaniel has already decided she is his responsibility, and the two of "
    "them nap together in the sun by the fence. She has doubled in weight in three weeks and "
    "eats her food so fast we had to get a special bowl that slows her down."
)
OTHERS = [
    *SMALL_TALK,
    "My sister is visiting in May with her two kids.",
    "I keep forgetting to water the tomatoes on the balcony.",
    BUDGET + "I also promised to review the hiring plan for the support team this week.",
    BUDGET + "The printer on the third floor has been jammed for a week now, nobody fixes it.",
]


def _minilm_int8() -> minilm_int8.MiniLMInt8Encoder:
    if minilm_int8.model_file() is None or not minilm_int8.runtime_installed():
        pytest.skip(f"{minilm_int8.MINILM_INT8_PACKAGE} is not installed")
    return minilm_int8.MiniLMInt8Encoder.installed()


def _said(memory: SqliteMemory, vectors: SqliteVectors) -> StoredMessage:
    writer = MemoryWriter(
        memory.history, RuleExtractor(), RuleReconciler(memory.facts), vectors=vectors
    )
    start = NOW - timedelta(days=60)
    for day, text in enumerate(OTHERS, 1):
        writer.message(ANA, f"telegram:{day}", "user", text, now=start + timedelta(days=day))
    # Older than most of the rest: found by its meaning, not by being recent.
    return writer.message(ANA, "telegram:puppy", "user", BUDGET + PUPPY, now=start)


def _first(memory: SqliteMemory, vectors: SqliteVectors, question: str) -> list[int]:
    ranker = HybridRanker(memory.facts, memory.history, vectors=vectors)
    items = ranker.rank(ANA.root, analyse(question, now=NOW), now=NOW, limit=10)
    return [ref for item in items[:3] for ref in item.message_ids]


def test_a_paraphrase_finds_what_a_long_turn_said_past_the_models_reading(
    memory: SqliteMemory,
) -> None:
    vectors = SqliteVectors(memory.db, _minilm_int8())
    answer = _said(memory, vectors)
    question = "What pet do we have?"  # no word of the turn's, nor a related one
    assert _first(memory, vectors, question)[0] == answer.id
    assert vectors.nearest(ANA.root, question, kind="message", limit=1)[0][0] == answer.id
    # Without its windows the turn is its first 256 tokens: the office, not the dog.
    with memory.db.transaction():
        memory.db.execute("DELETE FROM embeddings WHERE kind = 'passage'")
    assert _first(memory, vectors, question)[0] != answer.id
    assert vectors.nearest(ANA.root, question, kind="message", limit=1)[0][0] != answer.id
