"""The hybrid recall ranker: full-text candidates from several query variants, fused, then shaped
by what a question implies: names it mentions, the time it points at, whether it asks *when*,
the turns around a strong hit, and which past conversations hold most of the evidence.

Everything is bounded: each full-text search ranks a bounded number of rows (the FTS query
planner's budget), and the Python work is linear in a few hundred candidates.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from flynn.memory.fts import STOPWORDS
from flynn.memory.query import QUESTION_WORDS, TIME_MENTION, QueryAnalysis
from flynn.memory.store import Fact, Facts, Graph, History, MessageRole, StoredMessage
from flynn.memory.vectors import VectorSearch

ItemKind = Literal["message", "fact", "summary", "graph"]
Trust = Literal["stated", "verbatim", "extracted", "inferred", "summary"]


@dataclass(frozen=True, slots=True)
class RecallItem:
    """One ranked piece of memory.

    ``ref`` is the row it came from (message or fact id, entity id for graph context, and the
    session's newest summarised message id for a summary); ``message_ids`` are the stored turns
    it derives from (a past turn: itself; a fact: the turn it was extracted from)."""

    kind: ItemKind
    ref: int
    text: str
    session: str | None
    message_ids: tuple[int, ...]
    time: datetime
    score: float
    trust: Trust
    role: MessageRole | None = None


def message_item(message: StoredMessage, score: float) -> RecallItem:
    return RecallItem(
        kind="message",
        ref=message.id,
        text=message.content,
        session=message.session,
        message_ids=(message.id,),
        time=message.created_at,
        score=score,
        trust="verbatim",
        role=message.role,
    )


def fact_trust(fact: Fact) -> Trust:
    if fact.source == "llm":
        return "extracted"
    if fact.source == "inferred":
        return "inferred"
    return "stated"


@dataclass(frozen=True, slots=True)
class Tuning:
    """Weights of the hybrid score; the defaults were tuned on ``bench/datasets``."""

    candidates: int = 120
    rrf_k: float = 20.0
    lexical: float = 1.0
    fused: float = 0.6
    semantic: float = 0.8
    coverage: float = 0.5
    name: float = 0.25
    time_window: float = 0.6
    when: float = 0.25
    graph: float = 0.15
    recency: float = 0.05
    recency_days: float = 180.0
    neighbours_of: int = 20
    feedback: float = 0.0
    feedback_docs: int = 5
    feedback_terms: int = 6
    neighbour: float = 0.4
    neighbour_radius: int = 2
    neighbour_decay: float = 0.7
    neighbour_additive: bool = True
    session: float = 0.2
    session_top: int = 3
    facts: int = 20
    fact: float = 0.9
    summaries: int = 50
    summary: float = 0.6
    window_candidates: int = 150


@dataclass(slots=True)
class _Candidate:
    message: StoredMessage
    lexical: float = 0.0
    fused: float = 0.0
    semantic: float = 0.0
    inherited: float = 0.0
    score: float = 0.0
    stems: frozenset[str] = frozenset()


_TOKEN = re.compile(r"[a-z0-9]+")


def stem(word: str) -> str:
    """A crude suffix-stripper, enough to see that "painting" and "painted" share "paint";
    only compared with itself (full-text search uses SQLite's Porter stemmer)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
        word = word[:-1]
    return word


def stems(text: str) -> frozenset[str]:
    return frozenset(stem(token) for token in _TOKEN.findall(text.lower()))


class HybridRanker:
    """Ranks a namespace's messages, facts, summaries and graph context for one analysed query.
    Reads only; every read is filtered to the namespace root."""

    def __init__(
        self,
        facts: Facts,
        history: History,
        *,
        graph: Graph | None = None,
        vectors: VectorSearch | None = None,
        tuning: Tuning | None = None,
    ) -> None:
        self._facts = facts
        self._history = history
        self._graph = graph
        self._vectors = vectors
        self.tuning = tuning or Tuning()

    def rank(
        self,
        root: str,
        query: QueryAnalysis,
        *,
        now: datetime,
        limit: int,
        exclude: str | None = None,
    ) -> list[RecallItem]:
        tuning = self.tuning
        candidates = self._lexical(root, query, exclude)
        self._semantic(root, query, candidates, exclude)
        if query.window is not None:
            for message in self._history.between(
                root,
                query.window.start,
                query.window.end,
                limit=tuning.window_candidates,
                exclude_session=exclude,
            ):
                candidates.setdefault(message.id, _Candidate(message))
        mentioned = self._mentioned(root, query)
        self._score(candidates.values(), query, now, mentioned)
        self._neighbours(root, candidates, query, now, mentioned)
        self._sessions(candidates.values())

        items = [message_item(c.message, c.score) for c in candidates.values() if c.score > 0]
        items.extend(self._fact_items(root, query))
        items.extend(self._summary_items(root, query, exclude))
        items.extend(self._graph_items(root, query))
        items.sort(key=lambda item: (item.score, item.time), reverse=True)
        return items[:limit]

    # -- candidates -------------------------------------------------------------------------

    def _lexical(
        self, root: str, query: QueryAnalysis, exclude: str | None
    ) -> dict[int, _Candidate]:
        """BM25 over past turns for the whole question; when it names someone, for its topic
        alone (a name is in half the turns of a conversation with that person); and for the
        question widened by words its best hits share (pseudo-relevance feedback, for answers
        worded differently from the question). Lists are fused by reciprocal rank."""
        tuning = self.tuning
        candidates: dict[int, _Candidate] = {}
        self._add_matches(root, query.terms, candidates, exclude, weight=1.0)
        if query.names and query.topic_terms:
            self._add_matches(root, query.topic_terms, candidates, exclude, weight=1.0)
        if tuning.feedback > 0 and candidates:
            extra = _feedback_terms(candidates.values(), query, tuning.feedback_docs)
            if extra:
                terms = (*query.terms, *extra[: tuning.feedback_terms])
                self._add_matches(root, terms, candidates, exclude, weight=tuning.feedback)
        return candidates

    def _add_matches(
        self,
        root: str,
        terms: Sequence[str],
        candidates: dict[int, _Candidate],
        exclude: str | None,
        *,
        weight: float,
    ) -> None:
        if not terms:
            return
        tuning = self.tuning
        matches = self._history.match(
            root, " ".join(terms), limit=tuning.candidates, exclude_session=exclude, wide=True
        )
        if not matches:
            return
        best = matches[0].score or 1.0
        for position, match in enumerate(matches):
            candidate = candidates.get(match.message.id)
            if candidate is None:
                candidate = candidates[match.message.id] = _Candidate(match.message)
            candidate.lexical = max(candidate.lexical, weight * match.score / best)
            candidate.fused += weight / (tuning.rrf_k + position + 1)

    def _semantic(
        self,
        root: str,
        query: QueryAnalysis,
        candidates: dict[int, _Candidate],
        exclude: str | None,
    ) -> None:
        if self._vectors is None:
            return
        tuning = self.tuning
        nearest = self._vectors.nearest(root, query.text, kind="message", limit=tuning.candidates)
        missing = [ref for ref, _ in nearest if ref not in candidates]
        for message in self._history.messages(missing):
            if message.session != exclude and _under(message.namespace, root):
                candidates[message.id] = _Candidate(message)
        for position, (ref, similarity) in enumerate(nearest):
            candidate = candidates.get(ref)
            if candidate is not None:
                candidate.semantic = max(0.0, similarity)
                candidate.fused += 1.0 / (tuning.rrf_k + position + 1)

    def _mentioned(self, root: str, query: QueryAnalysis) -> frozenset[int]:
        if self._graph is None:
            return frozenset()
        entities = self._graph.entities_in(root, query.text, limit=8)
        if not entities:
            return frozenset()
        return frozenset(
            self._graph.messages_mentioning([entity.id for entity in entities], limit=500)
        )

    # -- scoring ----------------------------------------------------------------------------

    def _score(
        self,
        candidates: Iterable[_Candidate],
        query: QueryAnalysis,
        now: datetime,
        mentioned: frozenset[int],
    ) -> None:
        tuning = self.tuning
        wanted = {stem(term) for term in query.terms}
        names = {stem(name) for name in query.names}
        pool = list(candidates)
        top_fused = max((c.fused for c in pool), default=0.0) or 1.0
        for candidate in pool:
            message = candidate.message
            candidate.stems = stems(message.content)
            score = tuning.lexical * candidate.lexical
            score += tuning.fused * candidate.fused / top_fused
            score += tuning.semantic * candidate.semantic
            if wanted:
                score += tuning.coverage * len(wanted & candidate.stems) / len(wanted)
            if names and names & candidate.stems:
                score += tuning.name
            if query.window is not None:
                score += tuning.time_window * query.window.closeness(message.created_at)
            if query.asks_when and TIME_MENTION.search(message.content):
                score += tuning.when
            if message.id in mentioned:
                score += tuning.graph
            age_days = max(0.0, (now - message.created_at).total_seconds() / 86_400)
            score += tuning.recency * math.exp(-age_days / tuning.recency_days)
            candidate.score = score

    def _neighbours(
        self,
        root: str,
        candidates: dict[int, _Candidate],
        query: QueryAnalysis,
        now: datetime,
        mentioned: frozenset[int],
    ) -> None:
        """The turn just before or after a strong hit often holds the answer (the question it
        answers, or the reply that completes it): it inherits part of the hit's score."""
        tuning = self.tuning
        strong = sorted(candidates.values(), key=lambda c: c.score, reverse=True)
        strong = strong[: tuning.neighbours_of]
        if not strong:
            return
        by_session: dict[str, list[_Candidate]] = defaultdict(list)
        for candidate in strong:
            by_session[candidate.message.session].append(candidate)
        found = self._history.around(
            root, [c.message.id for c in strong], radius=tuning.neighbour_radius
        )
        # Position within the session, to tell the next turn from the one after it.
        order = {
            message.id: index
            for index, message in enumerate(
                sorted([*found, *(c.message for c in strong)], key=lambda m: m.id)
            )
        }
        fresh: list[_Candidate] = []
        for message in found:
            for parent in by_session.get(message.session, ()):
                distance = abs(order[parent.message.id] - order[message.id])
                if not 0 < distance <= tuning.neighbour_radius:
                    continue
                share = tuning.neighbour * tuning.neighbour_decay ** (distance - 1)
                neighbour = candidates.get(message.id)
                if neighbour is None:
                    neighbour = candidates[message.id] = _Candidate(message)
                    fresh.append(neighbour)
                neighbour.inherited = max(neighbour.inherited, share * parent.score)
        self._score(fresh, query, now, mentioned)
        for each in candidates.values():
            if tuning.neighbour_additive:
                each.score += each.inherited
            else:
                each.score = max(each.score, each.inherited)

    def _sessions(self, candidates: Iterable[_Candidate]) -> None:
        """Evidence clusters in a few past conversations: a turn's score grows with the
        strength of its session (the sum of the session's best few turns)."""
        tuning = self.tuning
        pool = list(candidates)
        per_session: dict[str, list[float]] = defaultdict(list)
        for candidate in pool:
            per_session[candidate.message.session].append(candidate.score)
        strength = {
            session: sum(sorted(scores, reverse=True)[: tuning.session_top])
            for session, scores in per_session.items()
        }
        best = max(strength.values(), default=0.0) or 1.0
        for candidate in pool:
            candidate.score += tuning.session * strength[candidate.message.session] / best

    # -- other kinds ------------------------------------------------------------------------

    def _fact_items(self, root: str, query: QueryAnalysis) -> list[RecallItem]:
        if not query.terms:
            return []
        tuning = self.tuning
        wanted = {stem(term) for term in query.terms}
        items = []
        for fact in self._facts.search(root, " ".join(query.terms), limit=tuning.facts):
            text = f"{fact.field}: {fact.value}" if fact.field else fact.value
            overlap = len(wanted & stems(text.replace("_", " "))) / len(wanted)
            items.append(
                RecallItem(
                    kind="fact",
                    ref=fact.id,
                    text=text,
                    session=fact.session,
                    message_ids=(fact.message_id,) if fact.message_id is not None else (),
                    time=fact.updated_at,
                    score=tuning.fact * (overlap + fact.confidence * 0.5),
                    trust=fact_trust(fact),
                )
            )
        return items

    def _summary_items(
        self, root: str, query: QueryAnalysis, exclude: str | None
    ) -> list[RecallItem]:
        if not query.terms:
            return []
        tuning = self.tuning
        wanted = {stem(term) for term in query.terms}
        items = []
        for summary in self._history.summaries(root, limit=tuning.summaries):
            if summary.session == exclude:
                continue
            overlap = len(wanted & stems(summary.summary)) / len(wanted)
            if overlap <= 0:
                continue
            items.append(
                RecallItem(
                    kind="summary",
                    ref=summary.through_id,
                    text=summary.summary,
                    session=summary.session,
                    message_ids=(),
                    time=summary.updated_at,
                    score=tuning.summary * overlap,
                    trust="summary",
                )
            )
        return items

    def _graph_items(self, root: str, query: QueryAnalysis) -> list[RecallItem]:
        if self._graph is None:
            return []
        items = []
        for entity in self._graph.entities_in(root, query.text, limit=4):
            for relation in self._graph.relations_of(entity.id, limit=4):
                items.append(
                    RecallItem(
                        kind="graph",
                        ref=relation.id,
                        text=(
                            f"{relation.source_name} {relation.type.replace('_', ' ')} "
                            f"{relation.target_name}"
                        ),
                        session=None,
                        message_ids=(),
                        time=relation.updated_at,
                        score=0.5 * relation.confidence,
                        trust="inferred",
                    )
                )
        return items


def _feedback_terms(
    candidates: Iterable[_Candidate], query: QueryAnalysis, documents: int
) -> list[str]:
    """Words that several of the best hits share and the question lacks, most shared first."""
    top = sorted(candidates, key=lambda c: c.lexical, reverse=True)[:documents]
    asked = {stem(term) for term in query.terms}
    counts: dict[str, int] = defaultdict(int)
    first: dict[str, str] = {}
    for candidate in top:
        seen: set[str] = set()
        for word in _TOKEN.findall(candidate.message.content.lower()):
            if len(word) < 3 or word in STOPWORDS or word in QUESTION_WORDS or word.isdigit():
                continue
            root_form = stem(word)
            if root_form in asked or root_form in seen:
                continue
            seen.add(root_form)
            counts[root_form] += 1
            first.setdefault(root_form, word)
    shared = [form for form, count in counts.items() if count >= 2]
    shared.sort(key=lambda form: counts[form], reverse=True)
    return [first[form] for form in shared]


def _under(namespace: str, root: str) -> bool:
    root = root.rstrip("/")
    return namespace == root or namespace.startswith(root + "/")
