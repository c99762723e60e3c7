"""Vector search at scale: ``python -m evals.vector_search --turns 1000000 --people 10``.

Fills a temporary database's ``embeddings`` table with random unit vectors (MiniLM's 384
dimensions; a brute-force search costs the same whatever they hold) spread over ``--people``
namespaces, then times ``SqliteVectors.nearest`` for one person: the first search (which loads
the namespace), then ``--searches`` more, and the process's resident memory after. The query
vectors are given, so the model is not measured here (``flynn bench recall`` does that). Runs
against whatever ``flynn`` is on the path, so one script compares two checkouts.
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from evals.turn import percentile
from flynn.memory.database import Database
from flynn.memory.vectors import SqliteVectors
from flynn.recall.embeddings import one_blas_thread
from flynn.schedule.migrations import SCHEMA

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

WIDTH = 384


class RandomEmbedder:
    """Stands in for the model: the benchmark gives every vector itself."""

    model = "all-MiniLM-L6-v2"

    ready = True

    def embed(self, texts: Sequence[str]) -> Matrix:
        raise AssertionError("the benchmark embeds nothing")


def _unit(rng: np.random.Generator, rows: int) -> Matrix:
    matrix = rng.standard_normal((rows, WIDTH)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def bench(*, turns: int, people: int, searches: int, limit: int, seed: int) -> dict[str, object]:
    one_blas_thread()  # as the daemon runs it
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="flynn-bench-vectors-") as tmp:
        db = Database.open(Path(tmp) / "flynn.db", SCHEMA)
        vectors = SqliteVectors(db, RandomEmbedder())
        started = time.perf_counter()
        batch = 10_000
        for first in range(0, turns, batch):
            count = min(batch, turns - first)
            rows = [(first + i + 1, f"users/p{(first + i) % people}", "") for i in range(count)]
            vectors.store("message", rows, _unit(rng, count))
        filled = time.perf_counter() - started
        rss_filled = _rss_mb()
        queries = _unit(rng, searches + 1)
        started = time.perf_counter()
        first_hits = vectors.nearest(
            "users/p0", "q", kind="message", limit=limit, vector=queries[0]
        )
        load_ms = (time.perf_counter() - started) * 1000
        samples = []
        for query in queries[1:]:
            started = time.perf_counter()
            hits = vectors.nearest("users/p0", "q", kind="message", limit=limit, vector=query)
            samples.append((time.perf_counter() - started) * 1000)
        assert len(hits) == len(first_hits) == min(limit, -(-turns // people))
        db.close()
    return {
        "bench": "vector_search",
        "turns": turns,
        "people": people,
        "person_turns": -(-turns // people),
        "limit": limit,
        "fill_s": round(filled, 1),
        "first_search_ms": round(load_ms, 1),
        "p50_ms": round(percentile(samples, 0.50), 2),
        "p99_ms": round(percentile(samples, 0.99), 2),
        "rss_mb_filled": rss_filled,
        "rss_mb_after_search": _rss_mb(),
        "max_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m evals.vector_search")
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--people", type=int, default=1)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--limit", type=int, default=300, help="Tuning.semantic_candidates")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    result = bench(
        turns=args.turns,
        people=args.people,
        searches=args.searches,
        limit=args.limit,
        seed=args.seed,
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
