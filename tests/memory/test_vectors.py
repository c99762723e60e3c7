"""Local embeddings: vectors stored per message, nearest neighbours per namespace, forgotten with
their rows; the shipped static model loads offline."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest

from flynn.memory.sqlite import SqliteMemory
from flynn.memory.vectors import SqliteVectors

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

np = pytest.importorskip("numpy")

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


class HashingEmbedder:
    """Bag of hashed words: texts sharing words are close. Deterministic, no model."""

    model = "hashing-64"

    def embed(self, texts: Sequence[str]) -> Matrix:
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, zlib.crc32(word.encode()) % 64] += 1.0
            norm = np.linalg.norm(out[row])
            if norm:
                out[row] /= norm
        result: Matrix = out
        return result


def _add(memory: SqliteMemory, vectors: SqliteVectors, namespace: str, text: str) -> int:
    stored = memory.history.append("s", namespace, "user", text, tokens=1, now=NOW)
    vectors.add("message", [(stored.id, namespace, text)])
    return stored.id


def test_nearest_within_the_namespace_only(memory: SqliteMemory) -> None:
    vectors = SqliteVectors(memory.db, HashingEmbedder())
    tea = _add(memory, vectors, "users/ana", "green tea every morning")
    _add(memory, vectors, "users/ana", "the garage door is red")
    _add(memory, vectors, "users/anabel", "green tea every morning")

    nearest = vectors.nearest("users/ana", "morning tea", kind="message", limit=5)
    assert nearest[0][0] == tea and len(nearest) == 2
    assert vectors.nearest("users/bob", "morning tea", kind="message", limit=5) == []
    # Rows added after the namespace was cached are found too.
    later = _add(memory, vectors, "users/ana", "tea with lemon")
    assert later in [
        ref for ref, _ in vectors.nearest("users/ana", "lemon tea", kind="message", limit=1)
    ]


def test_vectors_go_with_their_rows(memory: SqliteMemory) -> None:
    vectors = SqliteVectors(memory.db, HashingEmbedder())
    _add(memory, vectors, "users/ana", "green tea every morning")
    count = "SELECT count(*) FROM embeddings"
    assert memory.db.fetchone(count)[0] == 1  # type: ignore[index]
    memory.forget_namespace("users/ana")
    assert memory.db.fetchone(count)[0] == 0  # type: ignore[index]


def test_the_shipped_model_loads_offline() -> None:
    pytest.importorskip("wordllama")
    from flynn.memory.embeddings import WordLlamaEmbedder

    embedder = WordLlamaEmbedder.installed()
    vectors = embedder.embed(["I adopted a puppy", "We got a new dog", "quarterly tax filing", ""])
    assert vectors.shape == (4, embedder.dimensions)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2])
    assert float(np.linalg.norm(vectors[3])) == 0.0


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        return super().embed(texts)


def test_a_stored_message_is_not_embedded_again_as_the_query(memory: SqliteMemory) -> None:
    embedder = CountingEmbedder()
    vectors = SqliteVectors(memory.db, embedder)
    tea = _add(memory, vectors, "users/ana", "green tea every morning")
    assert (
        vectors.nearest("users/ana", "green tea every morning", kind="message", limit=1)[0][0]
        == tea
    )
    assert embedder.texts == ["green tea every morning"]
    vectors.nearest("users/ana", "coffee", kind="message", limit=1)
    vectors.nearest("users/ana", "coffee", kind="message", limit=1)
    assert embedder.texts == ["green tea every morning", "coffee"]
    # After a forget, nothing of the old texts stays in memory, and the vector is gone.
    memory.history.forget_session("s")
    assert vectors.nearest("users/ana", "green tea every morning", kind="message", limit=1) == []
    _add(memory, vectors, "users/ana", "black coffee")
    assert tea not in [
        ref
        for ref, _ in vectors.nearest(
            "users/ana", "green tea every morning", kind="message", limit=5
        )
    ]
    assert embedder.texts[-2:] == ["black coffee", "green tea every morning"]
