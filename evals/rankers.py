"""The rankers the hybrid one is compared against (``flynn bench recall --ranker``): ``baseline``,
a weighted relevance formula of keyword, recency and confidence; ``bm25``, plain full-text
ranking of past turns, the floor any ranker must beat; and ``bm25_vector``, the plain hybrid of
BM25 and embeddings that outside benchmarks pit long-memory systems against (0.3 x BM25 over its
best + 0.7 x cosine min-max scaled, over the person's turns, nothing else). People always get the
hybrid ranker.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from flynn.memory.store import Facts, History, StoredMessage, still_in_prompt
from flynn.memory.vectors import QueryVectors, QueryVectorsLater, VectorSearch, awaited
from flynn.recall.items import RecallItem, fact_item, message_item
from flynn.recall.recall import RANK_LIMIT, DepthName, Recall
from flynn.recall.team import TeamRecall

RankerName = Literal["hybrid", "baseline", "bm25", "bm25_vector"]
RANKERS: tuple[RankerName, ...] = ("hybrid", "baseline", "bm25", "bm25_vector")
OtherRankerName = Literal["baseline", "bm25", "bm25_vector"]

_WORD = re.compile(r"\w+", re.UNICODE)
_RECENCY_DAYS = 30.0
_BASELINE_FACTS = 12
_BASELINE_MESSAGES = 8
_BM25_WEIGHT = 0.3
"""``bm25_vector``: the share of BM25 (over the best match); the cosine has the rest."""
_BM25_CANDIDATES = 500
"""``bm25_vector``: turns read from full-text search (every match, for a person's history)."""
_ALL_TURNS = 1_000_000


def keyword_overlap(query_terms: set[str], text: str) -> float:
    """Fraction of the query's terms found in ``text`` (0..1)."""
    if not query_terms:
        return 0.0
    words = {word.casefold() for word in _WORD.findall(text)}
    return len(query_terms & words) / len(query_terms)


def recency(updated_at: datetime, now: datetime) -> float:
    """1.0 for now, falling linearly to 0.0 over thirty days."""
    age_days = max((now - updated_at).total_seconds(), 0.0) / 86_400
    return max(0.0, 1.0 - age_days / _RECENCY_DAYS)


def baseline_relevance(overlap: float, recent: float, confidence: float) -> float:
    """The first weighted formula Flynn ranked with, kept as the named baseline."""
    return 0.6 * overlap + 0.2 * recent + 0.2 * confidence


class ComparedRecall(Recall):
    """``Recall`` ranking with ``baseline``, ``bm25`` or ``bm25_vector`` instead of the hybrid
    ranker; packing is the same. None uses the graph; only ``bm25_vector`` uses ``vectors``
    (without them it is ``bm25``). Every item ranked is injected (the baseline keeps only
    items scoring at least ``threshold``; the others keep all)."""

    def __init__(
        self,
        facts: Facts,
        history: History,
        *,
        ranker: OtherRankerName,
        threshold: float,
        depth: DepthName = "adaptive",
        team: TeamRecall | None = None,
        vectors: VectorSearch | None = None,
    ) -> None:
        super().__init__(
            facts, history, threshold=threshold, depth=depth, team=team, vectors=vectors
        )
        self._compared_vectors = vectors
        self.ranker: OtherRankerName = ranker
        self._compared_facts = facts
        self._compared_history = history
        self._compared_threshold = threshold

    def rank(
        self,
        root: str,
        query: str,
        *,
        now: datetime,
        limit: int = RANK_LIMIT,
        exclude_session: str | None = None,
        query_vectors: QueryVectors | QueryVectorsLater | None = None,
    ) -> list[RecallItem]:
        if limit <= 0 or not query.strip():
            return []
        if self.ranker == "baseline":
            return self._rank_baseline(root, query, now=now, limit=limit, exclude=exclude_session)
        if self.ranker == "bm25_vector" and self._compared_vectors is not None:
            return self._rank_bm25_vector(
                root, query, limit, exclude_session, awaited(query_vectors)
            )
        matches = self._compared_history.match(
            root, query, limit=limit, exclude_session=exclude_session, wide=True
        )
        return [message_item(m.message, m.score) for m in matches]

    def relevant(self, items: Sequence[RecallItem]) -> list[RecallItem]:
        return list(items)

    def _rank_bm25_vector(
        self,
        root: str,
        query: str,
        limit: int,
        exclude: str | None,
        query_vectors: QueryVectors | None,
    ) -> list[RecallItem]:
        """0.3 x bm25 / best bm25 + 0.7 x (cosine - least) / (most - least), the cosine over
        every turn of the person with a vector, bm25 over the turns that match."""
        vectors = self._compared_vectors
        assert vectors is not None
        vector = query_vectors.question if query_vectors is not None else None
        nearest = vectors.nearest(root, query, kind="message", limit=_ALL_TURNS, vector=vector)
        matches = self._compared_history.match(
            root, query, limit=_BM25_CANDIDATES, exclude_session=exclude, wide=True
        )
        lexical = {m.message.id: m.score for m in matches if m.score > 0}
        best = max(lexical.values(), default=0.0) or 1.0
        cosine = dict(nearest)
        low = min(cosine.values(), default=0.0)
        span = (max(cosine.values(), default=0.0) - low) or 1.0
        scores = {
            ref: _BM25_WEIGHT * lexical.get(ref, 0.0) / best
            + (1 - _BM25_WEIGHT) * (cosine[ref] - low) / span
            for ref in cosine
        }
        for ref, score in lexical.items():
            scores.setdefault(ref, _BM25_WEIGHT * score / best)
        by_id = {m.message.id: m.message for m in matches}
        ranked = sorted(scores, key=lambda ref: scores[ref], reverse=True)
        items: list[RecallItem] = []
        for start in range(0, len(ranked), limit):
            page = [ref for ref in ranked[start : start + limit] if ref not in by_id]
            by_id.update({m.id: m for m in self._compared_history.messages(page)})
            for ref in ranked[start : start + limit]:
                message = by_id.get(ref)
                if message is not None and _kept(message, root, exclude):
                    items.append(message_item(message, scores[ref]))
            if len(items) >= limit:
                break
        return items[:limit]

    def _rank_baseline(
        self, root: str, query: str, *, now: datetime, limit: int, exclude: str | None
    ) -> list[RecallItem]:
        terms = {word.casefold() for word in _WORD.findall(query) if len(word) > 2}
        scored: list[RecallItem] = []
        for fact in self._compared_facts.search(root, query, limit=_BASELINE_FACTS):
            score = baseline_relevance(
                keyword_overlap(terms, f"{fact.field or ''} {fact.value}"),
                recency(fact.updated_at, now),
                fact.confidence,
            )
            scored.append(fact_item(fact, score))
        for match in self._compared_history.match(
            root, query, limit=max(_BASELINE_MESSAGES, limit), exclude_session=exclude
        ):
            message = match.message
            score = baseline_relevance(
                keyword_overlap(terms, message.content), recency(message.created_at, now), 1.0
            )
            scored.append(message_item(message, score))
        kept = [item for item in scored if item.score >= self._compared_threshold]
        kept.sort(key=lambda item: item.score, reverse=True)
        return kept[:limit]


def _kept(message: StoredMessage, root: str, exclude: str | None) -> bool:
    """Whether ``message`` is the person's (under ``root``) and not in the asking prompt."""
    root = root.rstrip("/")
    under = message.namespace == root or message.namespace.startswith(root + "/")
    return under and not still_in_prompt(message, exclude)
