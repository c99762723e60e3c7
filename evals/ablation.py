"""Ablations of the hybrid ranker (issue 15): each set is stored once, then ranked and packed with
every variant of ``Tuning`` (a signal turned off or to neutral), so a table of a dozen variants
costs one ingest. ``python -m evals.ablation SET [SET...] [--variants a,b] [--threshold T]``
prints one JSON line a set and variant, as ``flynn bench recall`` measures (k = 1, 5, 10, 25,
50, embeddings off): turn@k, session@k, turns shown, ``injected_turn_recall``, tokens, per
category, and how many items ranking returned for 50 asked (``items_mean``, ``short_of_50``)
in how long (``rank_ms``, ranking alone). ``bm25`` is plain full-text ranking of turns on the
same store; ``--threshold 0`` measures without the relevance floor.

``--embeddings`` stores the set with MiniLM's vectors (from the on-disk cache of
``evals.embedding_cache`` when ``FLYNN_BENCH_CACHE`` names one) and ranks each variant with them;
``lexical`` is then the hybrid ranker without embeddings and ``bm25_vector`` the plain BM25 +
vector baseline, on the same store.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from evals.embedding_cache import default_directory
from evals.recall import (
    _evaluate,
    _ingest,
    _other_ranker,
    cache_embeddings,
    lexical_recall,
    load_dataset,
)
from evals.recall_stores import BenchApp
from evals.scripted_provider import ScriptedProvider
from evals.turn import percentile
from flynn.app import App
from flynn.providers.base import TASKS, Provider, Task
from flynn.recall.ranking import HybridRanker
from flynn.recall.weights import Tuning, lighter
from flynn.settings import load_settings

VARIANTS: dict[str, dict[str, Any]] = {
    "hybrid": {},
    "no_parts": {"parts": False},
    "no_across": {"across": False},
    "no_speaker": {"speaker": 0.0},
    "reply": {"exchange_reply": True},
    "passage_40": {"passage_words": 40},
    "no_passage": {"passage_words": 0},
    "passage_160": {"passage_words": 160},
    "speaker_4": {"speaker": 0.4},
    "speaker_8": {"speaker": 0.8},
    "no_lexical": {"lexical": 0.0},
    "no_fused": {"fused": 0.0},
    "fused_3": {"fused": 0.3},
    "no_fused_cover": {"fused": 0.0, "session_cover": 0.0},
    "no_coverage": {"coverage": 0.0},
    "no_name": {"name": 0.0},
    "no_time_window": {"time_window": 0.0},
    "no_when": {"when": 0.0},
    "no_answer": {"answer": 0.0},
    "no_graph": {"graph": 0.0},
    "no_recency": {"recency": 0.0},
    "no_neighbours": {"neighbours_of": 0},
    "no_session": {"session": 0.0},
    "no_session_cover": {"session_cover": 0.0},
    "no_session_words": {"session_words": 0.0},
    "no_related": {"related": 0.0},
    "no_facts": {"facts": 0},
    "no_summaries": {"summaries": 0},
    "no_exchanges": {"exchange_before": 0, "exchange_after": 0},
    "round1": {
        "exchange_by_role": False,
        "exchanges": 15,
        "exchange_before": 1,
        "speaker": 0.0,
        "across": False,
    },
    "round2": {"speaker": 0.0, "across": False, "exchange_reply": True},
    "exchanges_5": {"exchange_by_role": False, "exchanges": 5, "exchange_before": 1},
    "candidates_60": {"candidates": 60},
    "candidates_300": {"candidates": 300},
    "window_0": {"window_candidates": 0},
    "words_4": {"words": 4},
    "words_6": {"words": 6},
    "words_8": {"words": 8},
    "lean": {"recency": 0.0, "graph": 0.0},
    "after_0": {
        "exchange_by_role": False,
        "exchanges": 15,
        "exchange_before": 1,
        "exchange_after": 0,
    },
    "exchanges_10": {"exchange_by_role": False, "exchanges": 10, "exchange_before": 1},
    "by_role_3": {"exchanges": 3},
    "by_role_10": {"exchanges": 10},
    "by_role_15": {"exchanges": 15},
    "role_after_0": {"exchange_before": 1, "exchange_after": 0},
    "role_before_1": {"exchange_before": 1},
    "no_sessions": {"session": 0.0, "session_cover": 0.0, "session_words": 0.0},
    "candidates_200": {"candidates": 200},
    "lean_cover": {"recency": 0.0, "graph": 0.0, "session_cover": 0.0},
    "lean_cover_words": {
        "recency": 0.0,
        "graph": 0.0,
        "session_cover": 0.0,
        "session_words": 0.0,
    },
    # Ranking with embeddings (issue 25; with --embeddings): the weights used with vectors.
    "neighbour_semantic_4": {"neighbour_semantic": 0.4},
    "neighbour_semantic_2": {"neighbour_semantic": 0.2},
    "neighbour_semantic_3": {"neighbour_semantic": 0.3},
    "semantic_12": {"semantic": 1.2},
    "semantic_20": {"semantic": 2.0},
    "fused_semantic_18": {"fused_semantic": 1.8},
    "semantic_candidates_200": {"semantic_candidates": 200},
    "no_vector_rrf": {"semantic_rrf": 0.0, "semantic_topic": 0.0, "fused_semantic": 0.6},
    "no_semantic": {"semantic": 0.0},
    # t-recall7 (with --embeddings): the word signals' weights when ranking with vectors.
    "semantic_24": {"semantic": 2.4},
    "fused_semantic_10": {"fused_semantic": 1.0},
    "session_4": {"session": 0.4},
    "session_words_4": {"session_words": 0.4},
    "rrf_k_10": {"rrf_k": 10.0},
    "neighbours_of_5": {"neighbours_of": 5},
    "lexical_semantic_5": {"lexical_semantic": 0.5},
    "lexical_semantic_7": {"lexical_semantic": 0.7},
    "lexical_semantic_8": {"lexical_semantic": 0.8},
    "lexical_semantic_10": {"lexical_semantic": 1.0},
    "coverage_semantic_0": {"coverage_semantic": 0.0},
    "coverage_semantic_2": {"coverage_semantic": 0.2},
    "coverage_semantic_3": {"coverage_semantic": 0.3},
    "coverage_semantic_5": {"coverage_semantic": 0.5},
    "lexical_7_coverage_3": {"lexical_semantic": 0.7, "coverage_semantic": 0.3},
    "lexical_8_coverage_3": {"lexical_semantic": 0.8, "coverage_semantic": 0.3},
    "lexical_10_coverage_5": {"lexical_semantic": 1.0, "coverage_semantic": 0.5},
    "lexical_7_semantic_20": {"lexical_semantic": 0.7, "semantic": 2.0},
    "coverage_3_fused_10": {"coverage_semantic": 0.3, "fused_semantic": 1.0},
    "coverage_3_neighbour_2": {"coverage_semantic": 0.3, "neighbour_semantic": 0.2},
    "absent_15": {"absent": 0.15, "absent_semantic": 0.15},
    "absent_25": {"absent": 0.25, "absent_semantic": 0.25},
    "absent_50": {"absent": 0.5, "absent_semantic": 0.5},
    # t-recall9: a session's backing of its best turn, and occasions spread for "how many"
    # (with --embeddings the ``_semantic`` weights apply; by words alone the others).
    "no_support": {"session_support_semantic": 0.0},
    "no_repeat": {"across_repeat_semantic": 0.0},
    "t_recall8": {"session_support_semantic": 0.0, "across_repeat_semantic": 0.0},
    "support_5": {"session_support_semantic": 0.05},
    "support_15": {"session_support_semantic": 0.15},
    "support_20": {"session_support_semantic": 0.2},
    "repeat_50": {"across_repeat_semantic": 0.5},
    "repeat_200": {"across_repeat_semantic": 2.0},
    "words_support_10": {"session_support": 0.1},
    "words_repeat_100": {"across_repeat": 1.0},
}
"""Name -> the ``Tuning`` fields it changes; ``floor_0`` (no relevance floor) is separate."""


def _ranker_with(app: BenchApp, tuning: Tuning) -> None:
    hybrid: HybridRanker = app.services.recall._hybrid  # an eval's reach
    hybrid.tuning = tuning
    hybrid.light = lighter(tuning)


_OTHERS = ("bm25", "bm25_vector", "lexical")
"""Variants that are other rankers on the same store, not ``Tuning`` changes."""


def run(
    name: str, variants: list[str], *, threshold: float | None, embeddings: bool = False
) -> list[dict[str, Any]]:
    dataset = load_dataset(name)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="flynn-ablation-") as tmp:
        memory: dict[str, Any] = {"embeddings": embeddings}
        if threshold is not None:
            memory["retrieval_threshold"] = threshold
        settings = load_settings(
            {"data_dir": str(Path(tmp)), "llm": {"provider": "offline"}, "memory": memory}
        )
        provider = ScriptedProvider(default="ok")
        providers: dict[Task, Provider] = dict.fromkeys(TASKS, provider)
        opened = App.open(settings, {}, providers=providers)
        opened.load_embeddings()  # as `flynn bench recall` does: vectors from the first question
        app = BenchApp.of(opened)
        try:
            cache = default_directory()
            if embeddings and cache is not None:
                cache_embeddings(app, cache)
            where, last = _ingest(app, dataset)
            base = Tuning()
            for variant in variants:
                if variant == "lexical":
                    recall = lexical_recall(app)
                elif variant in ("bm25", "bm25_vector"):
                    recall = _other_ranker(app, "bm25" if variant == "bm25" else "bm25_vector")
                else:
                    _ranker_with(app, replace(base, **VARIANTS[variant]))
                    recall = app.services.recall
                lengths: list[int] = []
                rank = recall.rank

                spent: list[float] = []

                def counted(
                    *args: Any,
                    _rank: Any = rank,
                    _lengths: list[int] = lengths,
                    _spent: list[float] = spent,
                    **kwargs: Any,
                ) -> Any:
                    began = time.perf_counter()
                    items = _rank(*args, **kwargs)
                    _spent.append((time.perf_counter() - began) * 1000)
                    _lengths.append(len(items))
                    return items

                recall.rank = counted  # type: ignore[method-assign]
                try:
                    figures, _ = _evaluate(
                        app, recall, dataset, where, last, ks=(1, 5, 10, 15, 20, 25, 50), warmup=0
                    )
                finally:
                    del recall.rank
                short = sum(1 for n in lengths if n < 50)
                row = {
                    "set": name,
                    "variant": variant,
                    "embeddings": embeddings,
                    **figures,
                    "items_mean": round(sum(lengths) / max(1, len(lengths)), 1),
                    "short_of_50": round(short / max(1, len(lengths)), 3),
                    "rank_ms": {
                        "p50": round(percentile(spent, 0.50), 3),
                        "p99": round(percentile(spent, 0.99), 3),
                    },
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
            _ranker_with(app, base)
        finally:
            import asyncio

            asyncio.run(opened.aclose())
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.ablation")
    parser.add_argument("sets", nargs="+")
    parser.add_argument("--variants", default=",".join(["bm25", *VARIANTS]))
    parser.add_argument("--threshold", type=float, default=None)
    parser.add_argument("--embeddings", action="store_true", help="rank with MiniLM's vectors")
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    unknown = [v for v in variants if v not in _OTHERS and v not in VARIANTS]
    if unknown:
        print(f"unknown variants: {', '.join(unknown)}", file=sys.stderr)
        return 2
    for name in args.sets:
        run(name, variants, threshold=args.threshold, embeddings=args.embeddings)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
