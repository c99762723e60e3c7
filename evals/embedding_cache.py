"""An on-disk cache of text embeddings for the benchmarks (a dev tool): embedding a recall set with
MiniLM in numpy takes minutes (``assistant``'s 34,120 turns about half an hour on 2 cores), and
every run with ``--embeddings`` embeds the same texts again. ``CachedEmbedder`` wraps the
configured embedder and keeps each vector under the model's name and a hash of the text, so a
second run embeds nothing it has seen; the vectors are the model's own (float32, as computed).

``flynn bench recall --embeddings`` uses it for the stored turns when ``FLYNN_BENCH_CACHE`` names
a directory (or with ``--embeddings-cache DIR``); its questions are embedded by the model, so
their latency is real. ``python -m evals.ablation --embeddings`` uses it for both.
``python -m evals.embedding_cache SET...`` fills it for the sets' turns and questions ahead of a
run, in length-sorted batches (several times faster than the bench's turn by turn). Never used
by the daemon.
"""

from __future__ import annotations

import argparse
import hashlib
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from flynn.memory.vectors import in_context
from flynn.recall.embeddings import EMBEDDING_MODELS

if TYPE_CHECKING:
    from flynn.memory.vectors import Embedder, Matrix
    from flynn.settings import EmbeddingModel

CACHE_ENV = "FLYNN_BENCH_CACHE"
"""Names the cache directory for ``flynn bench recall --embeddings``."""
_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB NOT NULL)"
_BATCH = 32


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


class CachedEmbedder:
    """``Embedder`` that looks each text up in ``directory/<model>.sqlite`` first, and embeds
    and stores only the texts not found."""

    def __init__(self, embedder: Embedder, directory: Path) -> None:
        self._embedder = embedder
        directory.mkdir(parents=True, exist_ok=True)
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in embedder.model)
        self._db = sqlite3.connect(directory / f"{name}.sqlite", check_same_thread=False)
        self._db.execute(_SCHEMA)
        self.hits = 0
        self.misses = 0

    @property
    def model(self) -> str:
        return self._embedder.model

    @property
    def ready(self) -> bool:
        return self._embedder.ready

    def embed(self, texts: Sequence[str]) -> Matrix:
        import numpy as np

        keys = [_key(text) for text in texts]
        found: dict[bytes, Matrix] = {}
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for key, blob in self._db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk
            ):
                found[bytes(key)] = np.frombuffer(blob, dtype=np.float32)
        missing = [i for i, key in enumerate(keys) if key not in found]
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            vectors = self._embedder.embed([texts[i] for i in missing])
            with self._db:
                for i, vector in zip(missing, vectors, strict=True):
                    row = np.asarray(vector, dtype=np.float32)
                    found[keys[i]] = row
                    self._db.execute(
                        "INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
                        (keys[i], row.tobytes()),
                    )
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.vstack([found[key] for key in keys]).astype(np.float32)

    def close(self) -> None:
        self._db.close()


def set_texts(name: str) -> list[list[str]]:
    """What the bench embeds for set ``name``, a list per conversation: each turn as stored
    (``Speaker: text``) after the one before it in its session (``in_context``), and each
    question."""
    from evals.recall import load_dataset

    dataset = load_dataset(name)
    texts: dict[str, list[str]] = {}
    for conversation in dataset.conversations:
        own = texts[conversation.id] = []
        for session in conversation.sessions:
            previous: str | None = None
            for turn in session.turns:
                stored = f"{turn.speaker}: {turn.text}"
                own.append(in_context(previous, stored))
                previous = stored
    for question in dataset.questions:
        texts[question.conversation].append(question.question)
    return list(texts.values())


def fill(names: Sequence[str], directory: Path, model: EmbeddingModel = "auto") -> None:
    """Embeds every text of the sets ``names`` not yet in the cache with ``model``, a
    conversation after another (so a set's first people are ready first), each in
    length-sorted batches. Each model has a file of its own (``CachedEmbedder``)."""
    from flynn.recall.embeddings import load_embedder

    cache = CachedEmbedder(load_embedder(model), directory)
    for name in names:
        began = time.perf_counter()
        for conversation in set_texts(name):
            texts = sorted(set(conversation), key=len)
            for start in range(0, len(texts), _BATCH * 8):
                cache.embed(texts[start : start + _BATCH * 8])
        print(
            f"{name}: {len(texts)} texts, {cache.misses} embedded, "
            f"{time.perf_counter() - began:.0f} s",
            flush=True,
        )
        cache.hits = cache.misses = 0
    cache.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.embedding_cache")
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--dir", type=Path, default=None)
    parser.add_argument("--embeddings-model", choices=EMBEDDING_MODELS, default="auto")
    args = parser.parse_args(argv)
    directory = args.dir or default_directory()
    if directory is None:
        print(f"no cache directory: pass --dir or set {CACHE_ENV}", file=sys.stderr)
        return 2
    fill(args.sets, directory, args.embeddings_model)
    return 0


def default_directory() -> Path | None:
    import os

    value = os.environ.get(CACHE_ENV, "")
    return Path(value).expanduser() if value else None


if __name__ == "__main__":
    raise SystemExit(main())
