"""Facts found by meaning, for reconciliation when vectors are on (``memory.embeddings``): "is
vegetarian" and "doesn't eat meat" share no word, yet one may repeat or contradict the other. A
fact's vector (kind ``fact`` in the ``embeddings`` table) is made the first time its namespace is
searched and goes with the fact when it is forgotten (a trigger)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from flynn.memory.store import Fact, Facts
from flynn.memory.vectors import VectorSearch, VectorStore

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

MEANING_SIMILARITY = 0.3
"""Cosine from which a stored fact is shown to the model as a candidate. Measured on pairs of
facts: "is vegetarian" / "doesn't eat meat" 0.60 with MiniLM, 0.30 with WordLlama; "is vegetarian"
/ "likes grilled steak" (a contradiction worth weighing) 0.32 with MiniLM; unrelated facts
("prefers short answers", "lives in Porto", "plays the bassoon") 0.15 and below with both.
A candidate found this way only reaches the model's judgement: it never decides by itself."""
MEANING_CANDIDATES = 2
"""At most this many facts found by meaning alone join those found by field and words."""


class FactVectors(VectorSearch, VectorStore, Protocol):
    """What finding facts by meaning needs of the vectors (``SqliteVectors`` is one)."""

    async def embed_in_thread(self, texts: Sequence[str]) -> Matrix: ...

    def ids(self, namespace_prefix: str, kind: str) -> set[int]: ...


def meaning_text(field: str | None, value: str) -> str:
    """What a fact is embedded as: its field and value ("diet vegetarian"), or its text."""
    return f"{field.replace('_', ' ')} {value}" if field else value


class FactMeaning:
    """Finds the active facts of a namespace nearest in meaning to a text. The database is read
    and written on the caller's thread (SQLite's rule); the model runs in a worker thread."""

    def __init__(self, facts: Facts, vectors: FactVectors) -> None:
        self._facts = facts
        self._vectors = vectors

    async def similar(
        self, namespace: str, text: str, *, limit: int = MEANING_CANDIDATES
    ) -> list[Fact]:
        """Up to ``limit`` active facts of exactly ``namespace`` at least ``MEANING_SIMILARITY``
        alike in meaning to ``text``, most alike first. Facts with no vector yet are embedded
        and stored first."""
        if not self._vectors.ready:  # the model is still loading: by field and words only
            return []
        active = {fact.id: fact for fact in self._facts.active(namespace)}
        if not active or limit <= 0 or not text.strip():
            return []
        embedded = self._vectors.ids(namespace, "fact")
        missing = [fact for key, fact in active.items() if key not in embedded]
        texts = [meaning_text(fact.field, fact.value) for fact in missing]
        vectors = await self._vectors.embed_in_thread([*texts, text])
        if missing:
            rows = [
                (fact.id, fact.namespace, line) for fact, line in zip(missing, texts, strict=True)
            ]

            def still() -> list[int]:
                # In the store's transaction: a fact forgotten or replaced while the model ran
                # gets no vector (nothing would ever delete it).
                now = {fact.id: fact.value for fact in self._facts.active(namespace)}
                return [i for i, fact in enumerate(missing) if now.get(fact.id) == fact.value]

            self._vectors.store("fact", rows, vectors[: len(missing)], still=still)
        # Superseded facts keep their vectors (forgetting removes them): look past those.
        nearest = self._vectors.nearest(
            namespace, text, kind="fact", limit=len(active) + len(embedded), vector=vectors[-1]
        )
        found = [
            active[key]
            for key, similarity in nearest
            if key in active and similarity >= MEANING_SIMILARITY
        ]
        return found[:limit]
