"""Ranking with the question's embedding still being computed in another thread
(``QueryVectorsLater``): what needs no vector is read before ranking waits for it."""

from __future__ import annotations

import threading
from concurrent.futures import Future
from datetime import UTC, datetime

import pytest
from fakes.embedder import HashingEmbedder

from flynn.identity import MemoryScope
from flynn.learning.reconcile import RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.learning.turns import MemoryWriter
from flynn.memory.store import Fact, NewFact
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import QueryVectorsLater, SqliteVectors
from flynn.recall.query import analyse
from flynn.recall.ranking import HybridRanker

np = pytest.importorskip("numpy")

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
ANA = MemoryScope("users/ana", shared=True, user="ana")
QUESTION = "Which kiln does the studio fire on Thursdays?"


class _FactsThatEmbed:
    """The person's facts; the first search of them lets the question's embedding arrive (as
    when the other thread finishes it while the facts are read)."""

    def __init__(self, memory: SqliteMemory, question: Future[np.ndarray]) -> None:
        self._facts = memory.facts
        self._question = question
        self.searched_before_embedding = threading.Event()

    def search(self, root: str, text: str, *, limit: int) -> list[Fact]:
        if not self._question.done():
            self.searched_before_embedding.set()
            self._question.set_result(_embedded())
        return self._facts.search(root, text, limit=limit)

    def __getattr__(self, name: str) -> object:
        return getattr(self._facts, name)


def test_facts_are_read_while_the_question_is_still_being_embedded(
    memory: SqliteMemory,
) -> None:
    vectors = SqliteVectors(memory.db, HashingEmbedder())
    writer = MemoryWriter(
        memory.history, RuleExtractor(), RuleReconciler(memory.facts), vectors=vectors
    )
    for text in ("The kiln at the studio fires on Thursdays.", "We adopted a greyhound."):
        writer.message(ANA, "telegram:1", "user", text, now=NOW)
    memory.facts.add(
        NewFact(
            "users/ana/facts", "observation", "fires the studio kiln on Thursdays", source="llm"
        ),
        now=NOW,
    )
    question: Future[np.ndarray] = Future()
    facts = _FactsThatEmbed(memory, question)
    ranker = HybridRanker(facts, memory.history, vectors=vectors)  # type: ignore[arg-type]
    # Were the facts read only after the embedding, ranking would wait for ever: this gives it
    # the embedding after 5 s instead, and the test fails.
    late = threading.Timer(5.0, lambda: question.done() or question.set_result(_embedded()))
    late.start()
    try:
        ranked = ranker.rank(
            ANA.root,
            analyse(QUESTION, now=NOW),
            now=NOW,
            limit=10,
            query_vectors=QueryVectorsLater(question),
        )
    finally:
        late.cancel()
    assert facts.searched_before_embedding.is_set()
    texts = " ".join(item.text for item in ranked)
    assert "The kiln at the studio fires on Thursdays." in texts
    assert "fires the studio kiln on Thursdays" in texts


def _embedded() -> np.ndarray:
    return HashingEmbedder().embed([QUESTION])
