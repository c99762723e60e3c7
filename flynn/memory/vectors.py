"""Optional local embeddings (``memory.embeddings``): one vector per stored message in the
``embeddings`` table, and brute-force cosine search over a namespace with numpy.

numpy is imported only when vectors are used, so the default install needs none of it. A
namespace's matrix is cached in memory; rows this process adds join the cache, and a deleted
row (a forget here, or any write by another process) drops it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from flynn.memory.database import Database
from flynn.memory.scope import namespace_scope, scope_params

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit-length float32 vectors, locally."""

    @property
    def model(self) -> str:
        """Names the model; vectors of different models are never compared."""
        ...

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One row per text, each of unit length (or zero for a text with no known words)."""
        ...


class VectorSearch(Protocol):
    @property
    def model(self) -> str:
        """The embedding model the vectors come from."""
        ...

    def nearest(
        self, namespace_prefix: str, text: str, *, kind: str, limit: int
    ) -> list[tuple[int, float]]:
        """Up to ``limit`` ``(ref_id, cosine similarity)`` pairs under ``namespace_prefix``,
        most similar first."""
        ...


_INSERT = """
INSERT OR REPLACE INTO embeddings (kind, ref_id, namespace, model, vector) VALUES (?, ?, ?, ?, ?)
"""
_LOAD = f"""
SELECT ref_id, vector FROM embeddings
WHERE {namespace_scope("namespace")} AND kind = ? AND model = ?
"""
_MAX_CACHED = 16
_RECENT_TEXTS = 64
"""Texts whose vectors are remembered (the last few messages stored or searched for)."""
"""Namespaces whose matrices are kept (each is about 0.5 KiB per message)."""


@dataclass(slots=True)
class _Cached:
    ids: list[int]
    rows: list[Matrix]
    matrix: Matrix | None = None

    def stacked(self) -> Matrix:
        import numpy as np

        if self.matrix is None or self.matrix.shape[0] != len(self.ids):
            self.matrix = np.vstack(self.rows) if self.rows else np.zeros((0, 0), np.float32)
            self.rows = [self.matrix]
        return self.matrix


class SqliteVectors:
    """``VectorSearch`` over the ``embeddings`` table, filled by ``add``."""

    def __init__(self, db: Database, embedder: Embedder) -> None:
        self._db = db
        self._embedder = embedder
        self._cache: dict[tuple[str, str], _Cached] = {}
        # Deleting a row here (a forget, in this process or another) drops what is cached.
        db.watch_rewrites("embeddings")
        self._version = db.rewrites("embeddings")
        # A message is embedded when stored and again as the query it is recalled for:
        # the second time comes from here (a sentence encoder takes milliseconds a text).
        self._recent: dict[str, Matrix] = {}

    @property
    def model(self) -> str:
        return self._embedder.model

    def add(self, kind: str, rows: Sequence[tuple[int, str, str]]) -> None:
        """Embeds and stores ``(ref_id, namespace, text)`` rows, in one transaction."""
        if not rows:
            return
        import numpy as np

        vectors = self._embedder.embed([text for _, _, text in rows])
        for (_, _, text), vector in zip(rows, vectors, strict=True):
            self._remember(text, vector)
        model = self._embedder.model
        with self._db.transaction():
            for (ref_id, namespace, _), vector in zip(rows, vectors, strict=True):
                blob = vector.astype(np.float16).tobytes()
                self._db.execute(_INSERT, (kind, ref_id, namespace, model, blob))
        self._check_version()
        for (prefix, cached_kind), cached in self._cache.items():
            if cached_kind != kind:
                continue
            for (ref_id, namespace, _), vector in zip(rows, vectors, strict=True):
                if namespace == prefix or namespace.startswith(prefix + "/"):
                    cached.ids.append(ref_id)
                    cached.rows.append(vector.reshape(1, -1).astype(np.float32))

    def nearest(
        self, namespace_prefix: str, text: str, *, kind: str, limit: int
    ) -> list[tuple[int, float]]:
        import numpy as np

        if limit <= 0 or not text.strip():
            return []
        cached = self._load(namespace_prefix.rstrip("/"), kind)
        if not cached.ids:
            return []
        matrix = cached.stacked()
        query = self._recent.get(text)
        if query is None:
            query = self._embedder.embed([text])[0]
            self._remember(text, query)
        similarity = matrix @ query
        count = min(limit, similarity.shape[0])
        top = np.argpartition(-similarity, count - 1)[:count]
        top = top[np.argsort(-similarity[top])]
        return [(cached.ids[index], float(similarity[index])) for index in top]

    def _remember(self, text: str, vector: Matrix) -> None:
        if len(self._recent) >= _RECENT_TEXTS:
            del self._recent[next(iter(self._recent))]
        self._recent[text] = vector

    def _check_version(self) -> None:
        version = self._db.rewrites("embeddings")
        if version != self._version:
            self._version = version
            self.forget_cache()

    def _load(self, prefix: str, kind: str) -> _Cached:
        import numpy as np

        self._check_version()
        cached = self._cache.get((prefix, kind))
        if cached is not None:
            return cached
        rows = self._db.fetchall(_LOAD, (*scope_params(prefix), kind, self._embedder.model))
        ids = [int(row["ref_id"]) for row in rows]
        if rows:
            blob = b"".join(row["vector"] for row in rows)
            matrix = np.frombuffer(blob, dtype=np.float16).reshape(len(rows), -1)
            stacked: list[Matrix] = [matrix.astype(np.float32)]
        else:
            stacked = []
        if len(self._cache) >= _MAX_CACHED:
            self._cache.pop(next(iter(self._cache)))
        cached = self._cache[(prefix, kind)] = _Cached(ids, stacked)
        return cached

    def forget_cache(self) -> None:
        """Drops cached matrices and remembered texts (done by itself when rows are deleted)."""
        self._cache.clear()
        self._recent.clear()
