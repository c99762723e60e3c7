"""Vector search at scale: ``python -m evals.vector_search --turns 1000000 --people 10``.

Fills a temporary database's ``embeddings`` table with random unit vectors (MiniLM's 384
dimensions; a brute-force search costs the same whatever they hold) spread over ``--people``
namespaces, then times ``SqliteVectors.nearest`` for one person: the first search (which loads
the namespace), then ``--searches`` more, and the process's resident memory after. The query
vectors are given, so the model is not measured here (``flynn bench recall`` does that). Runs
against whatever ``flynn`` is on the path, so one script compares two checkouts.

``--real SET`` measures the search on real vectors instead: every vector of the bench's embedding
cache (``evals.embedding_cache``: a set's turns, its questions, the filler of ``flynn bench recall
--scale``) in one namespace, searched with the set's questions as the daemon embeds them; it
reports how much of the exact nearest (every row read) the search finds (``recall_at``), and
the latency of each way.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from evals.embedding_cache import default_directory
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


def bench_real(*, dataset: str, cache: Path, limit: int) -> dict[str, object]:
    """The index over every vector in ``cache`` (one namespace), searched with ``dataset``'s
    questions embedded by the model: the share of the exact ``limit`` nearest found (and of the
    exact 10), and the time a search takes, exact and as the daemon searches."""
    import sqlite3

    from evals.recall import load_dataset
    from flynn.memory.vector_index import VectorIndex
    from flynn.memory.vector_lists import PROBE_SHARE
    from flynn.recall.embeddings import load_embedder

    one_blas_thread()
    embedder = load_embedder("minilm-int8")
    with contextlib.closing(sqlite3.connect(cache / f"{embedder.model}.sqlite")) as db:
        blobs = [bytes(row[0]) for row in db.execute("SELECT vector FROM vectors")]
    rows = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), -1)
    index = VectorIndex(max_bytes=1 << 40)
    key = ("users/all", "message")
    started = time.perf_counter()
    loading = index.begin_load(key)
    snapshot = index.finish_load(loading, [(list(range(len(rows))), rows)])
    snapshot = index.organised(key, snapshot)
    built = time.perf_counter() - started
    del rows, blobs
    questions = [question.question for question in load_dataset(dataset).questions]
    found: dict[int, list[float]] = {limit: [], 10: []}
    exact_ms: list[float] = []
    near_ms: list[float] = []
    for query in embedder.embed(questions):
        began = time.perf_counter()
        exact = snapshot.nearest(query, limit, exact=True)
        exact_ms.append((time.perf_counter() - began) * 1000)
        began = time.perf_counter()
        near = snapshot.nearest(query, limit)
        near_ms.append((time.perf_counter() - began) * 1000)
        for k in found:
            wanted = {ref for ref, _ in exact[:k]}
            found[k].append(len(wanted & {ref for ref, _ in near}) / max(1, len(wanted)))
    lists = snapshot.lists
    return {
        "bench": "vector_search_real",
        "dataset": dataset,
        "rows": len(snapshot),
        "lists": 0 if lists is None else int(lists.centroids.shape[0]),
        "probe_share": PROBE_SHARE,
        "questions": len(questions),
        "limit": limit,
        "build_s": round(built, 2),
        "recall_at": {str(k): round(float(np.mean(v)), 4) for k, v in found.items()},
        "recall_min": {str(k): round(float(np.min(v)), 4) for k, v in found.items()},
        "exact_p50_ms": round(percentile(exact_ms, 0.50), 2),
        "exact_p99_ms": round(percentile(exact_ms, 0.99), 2),
        "p50_ms": round(percentile(near_ms, 0.50), 2),
        "p99_ms": round(percentile(near_ms, 0.99), 2),
        "rss_mb": _rss_mb(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m evals.vector_search")
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--people", type=int, default=1)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--limit", type=int, default=300, help="Tuning.semantic_candidates")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--real", metavar="SET", help="real vectors: the cache's, SET's questions")
    parser.add_argument("--cache", type=Path, default=None, help="default: $FLYNN_BENCH_CACHE")
    args = parser.parse_args()
    if args.real:
        cache = args.cache or default_directory()
        if cache is None:
            parser.error("--real needs --cache or FLYNN_BENCH_CACHE")
        print(json.dumps(bench_real(dataset=args.real, cache=cache, limit=args.limit)))
        return
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
