"""Recall from team documents: the chunks that answer a message, as items of
their own trust ("team"), each cut to the passage that holds the message's words.

A chunk is kept only when it holds most of what the message asks about: ``coverage`` is the
share of the message's searched words (weighted by how rare each is among the chunks; words no
chunk holds weigh the most) that the chunk holds, and must reach ``MIN_COVERAGE``. So a question
about the person's own dentist does not pull in a policy page that mentions "appointment".
"""

from __future__ import annotations

import math
from collections import defaultdict
from datetime import UTC, datetime

from flynn.memory.fts import search_terms
from flynn.memory.team import TEAM_NAMESPACE, SqlTeam, TeamChunk
from flynn.memory.vectors import QueryVectors, VectorSearch
from flynn.recall.items import RecallItem
from flynn.recall.passages import passage

MAX_CHUNKS = 3
"""Team passages recalled for one message at most."""
MIN_COVERAGE = 0.5
CANDIDATES = 50
"""Chunks looked at for words too common to list, when no rarer word found any."""
PASSAGE_TOKENS = 110
"""A chunk is cut to the passage of about this size that holds most of the message's words."""
MIN_SIMILARITY = 0.55
"""With embeddings, a chunk whose vector is this close to the message's counts as covering it
even without sharing its words."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class TeamRecall:
    """Finds team passages for a message; reads only."""

    def __init__(self, team: SqlTeam, *, vectors: VectorSearch | None = None) -> None:
        self._team = team
        self._vectors = vectors

    def items(
        self, query: str, *, query_vectors: QueryVectors | None = None, limit: int = MAX_CHUNKS
    ) -> list[RecallItem]:
        """The best team passages for ``query``, best first, at most ``limit``."""
        terms = search_terms(query)
        if not terms or limit <= 0:
            return []
        generation = self._team.generation()
        chunks = generation[1]
        if not chunks:
            return []
        rows = self._team.term_rows(terms, generation=generation)
        weights = {term: _idf(chunks, rows[term]) for term in terms}
        total = sum(weights.values())
        held: dict[int, float] = defaultdict(float)
        for term, ids in rows.items():
            for chunk_id in ids or ():
                held[chunk_id] += weights[term]
        common = [term for term in terms if rows[term] is None]
        if common:
            # Words in too many chunks to list: looked for among the chunks the rarer words
            # found, or, when every word is that common, among full-text ranking's best.
            candidates = list(held) or self._team.best_matches(common, limit=CANDIDATES)
            for term in common:
                for chunk_id in self._team.held_among(term, candidates):
                    held[chunk_id] += weights[term]
        scored = {chunk_id: weight / total for chunk_id, weight in held.items()}
        if self._vectors is not None and query_vectors is not None:
            for chunk_id, similarity in self._vectors.nearest(
                TEAM_NAMESPACE, query, kind="chunk", limit=limit * 4, vector=query_vectors.question
            ):
                if similarity >= MIN_SIMILARITY:
                    scored[chunk_id] = max(scored.get(chunk_id, 0.0), MIN_COVERAGE) + similarity
        best = sorted(
            (pair for pair in scored.items() if pair[1] >= MIN_COVERAGE),
            key=lambda pair: (-pair[1], pair[0]),
        )[:limit]
        found = self._team.chunks(chunk_id for chunk_id, _ in best)
        score = dict(best)
        words = {term for term in terms if rows[term] is not None}
        return [_item(chunk, score[chunk.id], words) for chunk in found]


def _idf(chunks: int, rows: tuple[int, ...] | None) -> float:
    """How much finding the word says: the rarer among the chunks, the more; a word no chunk
    holds weighs the most (the message asks about something the documents do not say)."""
    if rows is None:  # in more than COMMON chunks
        return math.log(2.0)
    if not rows:
        return math.log(2.0 + chunks)
    return math.log(1.0 + chunks / len(rows))


def _item(chunk: TeamChunk, score: float, words: set[str]) -> RecallItem:
    heading = chunk.heading if chunk.heading != chunk.title else ""
    where = chunk.title + (f" › {heading}" if heading else "")
    return RecallItem(
        kind="document",
        ref=chunk.id,
        text=f"{where}: {passage(chunk.content, words, max_tokens=PASSAGE_TOKENS)}",
        session=None,
        message_ids=(),
        time=_EPOCH,
        score=score,
        trust="team",
    )
