"""Finding facts by meaning stores a vector only for a fact that still exists when it lands:
one forgotten while its vector was computed gets none."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING

import pytest
from fakes.embedder import HashingEmbedder

from flynn.learning.fact_meaning import FactMeaning
from flynn.memory.store import NewFact
from flynn.memory.stores import SqliteMemory
from flynn.memory.vectors import SqliteVectors

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from flynn.memory.vectors import Matrix

pytest.importorskip("numpy")

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
PROFILE = "users/ana/profile"


class ForgetWhileEmbedding(SqliteVectors):
    """Runs ``meanwhile`` on the loop while the vectors are computed: another conversation of
    the person says ``/forget diet``."""

    meanwhile: Callable[[], object] = staticmethod(lambda: None)

    async def embed_in_thread(
        self, texts: Sequence[str], *, executor: Executor | None = None
    ) -> Matrix:
        vectors = await super().embed_in_thread(texts, executor=executor)
        self.meanwhile()
        return vectors


async def test_a_fact_forgotten_while_its_vector_is_computed_gets_none(
    memory: SqliteMemory,
) -> None:
    memory.facts.add(NewFact(PROFILE, "profile", "vegetarian", field="diet"), now=NOW)
    memory.facts.add(NewFact(PROFILE, "profile", "Porto", field="city"), now=NOW)
    vectors = ForgetWhileEmbedding(memory.db, HashingEmbedder())
    vectors.meanwhile = lambda: memory.forget_field("users/ana", "diet")
    found = await FactMeaning(memory.facts, vectors).similar(PROFILE, "what do they eat")
    assert all(fact.field != "diet" for fact in found)
    rows = memory.db.fetchall("SELECT ref_id FROM embeddings WHERE kind = 'fact'")
    assert [row[0] for row in rows] == [fact.id for fact in memory.facts.active(PROFILE)]
