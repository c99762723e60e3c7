"""Adaptive per-turn recall: the stored facts and past turns most relevant to one message, within a
token budget, as trust-labelled blocks.

Ranking is seed 003's relevance formula (0.6 keyword overlap + 0.2 recency + 0.2 confidence) over
FTS5 candidates; ``memory.retrieval_threshold`` drops weak matches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from flynn.memory.store import Fact, Facts, History
from flynn.tokens import estimate_tokens

_WORD = re.compile(r"\w+", re.UNICODE)
_RECENCY_DAYS = 30.0
_FACT_CANDIDATES = 12
_MESSAGE_CANDIDATES = 8


@dataclass(frozen=True, slots=True)
class RecallBlock:
    """One labelled block of recalled memory; ``trust`` is said to the model in words."""

    title: str
    trust: str
    lines: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RecalledMemory:
    blocks: tuple[RecallBlock, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.blocks

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(line for block in self.blocks for line in block.lines)


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
    """Seed 003's formula, kept as the named baseline."""
    return 0.6 * overlap + 0.2 * recent + 0.2 * confidence


def _terms(text: str) -> set[str]:
    return {word.casefold() for word in _WORD.findall(text) if len(word) > 2}


def _fact_line(fact: Fact) -> str:
    return f"- {fact.field}: {fact.value}" if fact.field else f"- {fact.value}"


class Recall:
    """Finds memory for a message under one namespace root. Reads only; never writes."""

    def __init__(self, facts: Facts, history: History, *, threshold: float) -> None:
        self._facts = facts
        self._history = history
        self._threshold = threshold

    def recall(
        self,
        root: str,
        query: str,
        *,
        now: datetime,
        budget_tokens: int,
        exclude_session: str | None = None,
        skip_lines: Iterable[str] = (),
    ) -> RecalledMemory:
        if budget_tokens <= 0 or not query.strip():
            return RecalledMemory()
        terms = _terms(query)
        skip = set(skip_lines)
        spent = 0

        stated: list[str] = []
        extracted: list[str] = []
        scored_facts = []
        for fact in self._facts.search(root, query, limit=_FACT_CANDIDATES):
            text = f"{fact.field or ''} {fact.value}"
            score = baseline_relevance(
                keyword_overlap(terms, text), recency(fact.updated_at, now), fact.confidence
            )
            if score >= self._threshold:
                scored_facts.append((score, fact))
        scored_facts.sort(key=lambda pair: pair[0], reverse=True)
        for _, fact in scored_facts:
            line = _fact_line(fact)
            cost = estimate_tokens(line)
            if line in skip or spent + cost > budget_tokens:
                continue
            spent += cost
            skip.add(line)
            (extracted if fact.source in ("llm", "inferred") else stated).append(line)

        excerpts: list[str] = []
        hits = self._history.search(
            root, query, limit=_MESSAGE_CANDIDATES, exclude_session=exclude_session
        )
        for hit in hits:
            message = hit.message
            score = baseline_relevance(
                keyword_overlap(terms, message.content), recency(message.created_at, now), 1.0
            )
            if score < self._threshold:
                continue
            when = message.created_at.strftime("%Y-%m-%d")
            who = "they said" if message.role == "user" else "you said"
            line = f"- {when}, {who}: {hit.excerpt}"
            cost = estimate_tokens(line)
            if line in skip or spent + cost > budget_tokens:
                continue
            spent += cost
            skip.add(line)
            excerpts.append(line)

        blocks = []
        if stated:
            blocks.append(
                RecallBlock("Facts the person told you", "high: stated by them", tuple(stated))
            )
        if extracted:
            blocks.append(
                RecallBlock(
                    "Facts inferred from past conversations",
                    "medium: extracted, may be imprecise",
                    tuple(extracted),
                )
            )
        if excerpts:
            blocks.append(
                RecallBlock(
                    "Excerpts from past conversations",
                    "high for what was said, but it may be out of date",
                    tuple(excerpts),
                )
            )
        return RecalledMemory(tuple(blocks))
