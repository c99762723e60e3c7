"""The rankers the hybrid one is compared against (``flynn bench recall --ranker``): ``baseline``,
a weighted relevance formula of keyword, recency and confidence, and ``bm25``, plain full-text
ranking of past turns, the floor any ranker must beat. People always get the hybrid ranker.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from flynn.memory.store import Facts, History
from flynn.memory.vectors import QueryVectors
from flynn.recall.items import RecallItem, fact_item, message_item
from flynn.recall.recall import RANK_LIMIT, DepthName, Recall
from flynn.recall.team import TeamRecall

RankerName = Literal["hybrid", "baseline", "bm25"]
RANKERS: tuple[RankerName, ...] = ("hybrid", "baseline", "bm25")
OtherRankerName = Literal["baseline", "bm25"]

_WORD = re.compile(r"\w+", re.UNICODE)
_RECENCY_DAYS = 30.0
_BASELINE_FACTS = 12
_BASELINE_MESSAGES = 8


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
    """``Recall`` ranking with ``baseline`` or ``bm25`` instead of the hybrid ranker; packing is
    the same. Neither uses the graph or embeddings, and every item ranked is injected (the
    baseline keeps only items scoring at least ``threshold``; bm25 keeps all)."""

    def __init__(
        self,
        facts: Facts,
        history: History,
        *,
        ranker: OtherRankerName,
        threshold: float,
        depth: DepthName = "adaptive",
        team: TeamRecall | None = None,
    ) -> None:
        super().__init__(facts, history, threshold=threshold, depth=depth, team=team)
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
        query_vectors: QueryVectors | None = None,
    ) -> list[RecallItem]:
        if limit <= 0 or not query.strip():
            return []
        if self.ranker == "baseline":
            return self._rank_baseline(root, query, now=now, limit=limit, exclude=exclude_session)
        matches = self._compared_history.match(
            root, query, limit=limit, exclude_session=exclude_session, wide=True
        )
        return [message_item(m.message, m.score) for m in matches]

    def relevant(self, items: Sequence[RecallItem]) -> list[RecallItem]:
        return list(items)

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
