"""The hybrid recall ranker: full-text candidates from several query variants, fused, then shaped
by what a question implies: names it mentions, the time it points at, whether it asks *when* (or
for a number, a place, a person), the turns around a strong hit, and which past conversations
hold most of the evidence.

Everything is bounded: the words searched for match a bounded number of rows (the FTS query
planner's budget), which are weighed from the index's posting lists (``flynn.memory.bm25``);
only the best ``Tuning.candidates`` of each list are read, and the Python work is linear in a
few hundred candidates. Which searched words a turn contains comes from the same lists, so no
turn's text is tokenised here.
"""

from __future__ import annotations

import functools
import heapq
import math
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Literal

from flynn.memory.bm25 import TermMatches, read_best
from flynn.memory.fts import STOPWORDS, search_terms
from flynn.memory.query import QUESTION_WORDS, QueryAnalysis, mentions
from flynn.memory.store import Entity, Fact, Facts, Graph, History, MessageRole, StoredMessage
from flynn.memory.vectors import VectorSearch

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix

ItemKind = Literal["message", "fact", "summary", "graph"]
Trust = Literal["stated", "verbatim", "extracted", "inferred", "summary"]


@dataclass(frozen=True, slots=True)
class RecallItem:
    """One ranked piece of memory.

    ``ref`` is the row it came from (message or fact id, entity id for graph context, and the
    session's newest summarised message id for a summary); ``message_ids`` are the stored turns
    it derives from (a past turn: itself; a fact: the turn it was extracted from).

    An *exchange* is a past turn ranked with the turns just around it in its conversation (the
    question it answers, the reply that completes it): ``ref`` is the turn that ranked, ``parts``
    the turns in order (each an item of its own, packed as one line each), ``message_ids`` all
    of them."""

    kind: ItemKind
    ref: int
    text: str
    session: str | None
    message_ids: tuple[int, ...]
    time: datetime
    score: float
    trust: Trust
    role: MessageRole | None = None
    parts: tuple[RecallItem, ...] = ()


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
    semantic_candidates: int = 300
    words: int = 0
    """Most words searched for, the rarest (0: as many as the search budget holds)."""
    rrf_k: float = 20.0
    lexical: float = 1.0
    fused: float = 0.6
    semantic: float = 1.6
    coverage: float = 0.5
    name: float = 0.25
    time_window: float = 0.6
    when: float = 0.25
    answer: float = 0.15
    graph: float = 0.15
    recency: float = 0.05
    recency_days: float = 180.0
    neighbours_of: int = 10
    feedback: float = 0.0
    feedback_docs: int = 5
    feedback_terms: int = 6
    neighbour: float = 0.4
    neighbour_radius: int = 2
    neighbour_decay: float = 0.7
    neighbour_additive: bool = True
    session: float = 0.2
    session_top: int = 3
    session_cover: float = 0.2
    facts: int = 10
    fact: float = 0.9
    summaries: int = 50
    summary: float = 0.6
    window_candidates: int = 150
    exchange_before: int = 1
    exchange_after: int = 1
    exchanges: int = 15
    """The best turns shown as exchanges; the rest are shown alone, to keep the budget."""


def lighter(tuning: Tuning) -> Tuning:
    """``tuning`` for a light recall: the three rarest words searched for, a third of the
    candidates, no neighbour expansion (turns ranked alone, not as exchanges) and half the
    facts; the weights stay as tuned."""
    return replace(
        tuning,
        words=3,
        candidates=max(1, tuning.candidates // 3),
        semantic_candidates=max(1, tuning.semantic_candidates // 3),
        neighbours_of=0,
        exchange_before=0,
        exchange_after=0,
        facts=max(1, tuning.facts // 2),
    )


@dataclass(slots=True)
class _Candidate:
    message: StoredMessage
    lexical: float = 0.0
    fused: float = 0.0
    semantic: float = 0.0
    inherited: float = 0.0
    score: float = 0.0


_TOKEN = re.compile(r"[a-z0-9]+")


@functools.lru_cache(maxsize=1 << 15)
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
    return frozenset(map(stem, _TOKEN.findall(text.lower())))


_PAGES = 4
"""Pages of a ranked list read at most, when the best turns are mostly out of scope."""


@dataclass(frozen=True, slots=True)
class _QueryWords:
    """The words a question was searched for: ``matches`` says which turns contain which
    (``None`` when none occurs), ``asked`` how many there were, ``names`` the names among them;
    ``unsearched_names`` finds in a text the names the search left out as too common;
    ``variants`` are other forms of asked words searched too ("bought" for "buy")."""

    matches: TermMatches | None
    asked: int
    names: frozenset[str]
    unsearched_names: re.Pattern[str] | None
    variants: frozenset[str] = frozenset()


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
        adaptive: bool = True,
    ) -> None:
        self._facts = facts
        self._history = history
        self._graph = graph
        self._vectors = vectors
        self.tuning = tuning or Tuning()
        # For plain statements (``flynn.memory.query.recall_depth``), unless always full.
        self.light = lighter(self.tuning) if adaptive else self.tuning

    def rank(
        self,
        root: str,
        query: QueryAnalysis,
        *,
        now: datetime,
        limit: int,
        exclude: str | None = None,
        query_vector: Matrix | None = None,
    ) -> list[RecallItem]:
        entities = self._entities(root, query)
        # A plain statement gets a light recall, unless it names something the graph knows.
        tuning = self.tuning if query.depth == "full" or entities else self.light
        words = self._words(root, query, tuning)
        candidates = self._lexical(root, query, words, exclude, tuning)
        self._semantic(root, query, candidates, exclude, tuning, query_vector)
        if query.window is not None:
            for message in self._history.between(
                root,
                query.window.start,
                query.window.end,
                limit=tuning.window_candidates,
                exclude_session=exclude,
            ):
                candidates.setdefault(message.id, _Candidate(message))
        mentioned = self._mentioned(entities)
        self._score(candidates.values(), query, words, now, mentioned, tuning)
        self._neighbours(root, candidates, query, words, now, mentioned, tuning)
        self._sessions(candidates.values(), words, tuning)

        # Only the turns that can make the cut become items.
        best = heapq.nlargest(
            limit,
            (c for c in candidates.values() if c.score > 0),
            key=lambda c: (c.score, c.message.created_at),
        )
        items = self._exchanges(root, best, tuning)
        items.extend(self._fact_items(root, query, tuning))
        items.extend(self._summary_items(root, query, exclude, tuning))
        items.extend(self._graph_items(entities))
        items.sort(key=lambda item: (item.score, item.time), reverse=True)
        return items[:limit]

    # -- candidates -------------------------------------------------------------------------

    def _words(self, root: str, query: QueryAnalysis, tuning: Tuning) -> _QueryWords:
        asked = search_terms(" ".join(query.terms))
        names = frozenset(search_terms(" ".join(query.names)))
        searched = " ".join((*asked, *query.variants))
        postings = (
            self._history.postings(
                searched, wide=True, max_terms=tuning.words, namespace_prefix=root
            )
            if asked
            else None
        )
        matches = None if postings is None else TermMatches(postings)
        # A name the search left out (it matches too many rows) is looked for in the text.
        unsearched = sorted(names - set(matches.weights if matches else ()))
        pattern = (
            re.compile(r"\b(?:" + "|".join(map(re.escape, unsearched)) + r")\b", re.IGNORECASE)
            if unsearched
            else None
        )
        # Forms searched besides the asked words (a word the question also asks is no variant).
        variants = frozenset(search_terms(" ".join(query.variants))) - set(asked)
        return _QueryWords(matches, len(asked), names, pattern, variants)

    def _lexical(
        self,
        root: str,
        query: QueryAnalysis,
        words: _QueryWords,
        exclude: str | None,
        tuning: Tuning,
    ) -> dict[int, _Candidate]:
        """BM25 over past turns for the whole question; when it names someone, for its topic
        alone (a name is in half the turns of a conversation with that person); and for the
        question widened by words its best hits share (pseudo-relevance feedback, for answers
        worded differently from the question). Lists are fused by reciprocal rank.

        Every turn matching a searched word is weighed from the posting lists; only the best of
        each list are read (their lengths complete the bm25 score)."""
        candidates: dict[int, _Candidate] = {}
        if words.matches is None:
            return candidates
        variants = words.variants
        self._add_ranked(
            root, words.matches, candidates, exclude, tuning, leave_out=(), variants=variants
        )
        if query.names and query.topic_terms:
            self._add_ranked(
                root,
                words.matches,
                candidates,
                exclude,
                tuning,
                leave_out=words.names,
                variants=variants,
            )
        if tuning.feedback > 0 and candidates:
            extra = _feedback_terms(candidates.values(), query, tuning.feedback_docs)
            terms = (*query.terms, *extra[: tuning.feedback_terms])
            postings = (
                self._history.postings(" ".join(terms), wide=True, namespace_prefix=root)
                if extra
                else None
            )
            if postings is not None:
                widened = TermMatches(postings)
                self._add_ranked(
                    root, widened, candidates, exclude, tuning, leave_out=(), weight=tuning.feedback
                )
        return candidates

    def _add_ranked(
        self,
        root: str,
        matches: TermMatches,
        candidates: dict[int, _Candidate],
        exclude: str | None,
        tuning: Tuning,
        *,
        leave_out: Collection[str],
        variants: Collection[str] | None = None,
        weight: float = 1.0,
    ) -> None:
        """Reads the best turns of one list under ``root`` (those not read yet) and adds them
        with their lexical scores; ``variants`` are searched forms of the asked words."""

        def read(ids: Sequence[int]) -> list[StoredMessage]:
            known = [candidates[key].message for key in ids if key in candidates]
            missing = [key for key in ids if key not in candidates]
            return known + self._history.messages_under(root, missing, exclude_session=exclude)

        scored = read_best(
            matches,
            read,
            _message_id,
            _message_text,
            limit=tuning.candidates,
            leave_out=leave_out,
            pages=_PAGES,
        )
        if not scored:
            return
        # Strength is measured against a turn holding every searched word once (at the average
        # length), not against the best hit: when the best hit matched only a common word (a
        # name found in half the turns), it stays weak, and so does its rank's share.
        # Another form of a word ("bought" for "buy") is an alternative, not one more word.
        ideal = sum(
            w
            for term, w in matches.weights.items()
            if term not in leave_out and (variants is None or term not in variants)
        )
        ideal = max(ideal, 1e-9)
        for position, (score, message) in enumerate(scored):
            candidate = candidates.get(message.id)
            if candidate is None:
                candidate = candidates[message.id] = _Candidate(message)
            strength = weight * min(1.0, score / ideal)
            candidate.lexical = max(candidate.lexical, strength)
            candidate.fused += strength / (tuning.rrf_k + position + 1)

    def _semantic(
        self,
        root: str,
        query: QueryAnalysis,
        candidates: dict[int, _Candidate],
        exclude: str | None,
        tuning: Tuning,
        vector: Matrix | None,
    ) -> None:
        if self._vectors is None:
            return
        nearest = self._vectors.nearest(
            root, query.text, kind="message", limit=tuning.semantic_candidates, vector=vector
        )
        missing = [ref for ref, _ in nearest if ref not in candidates]
        for message in self._history.messages(missing):
            if message.session != exclude and _under(message.namespace, root):
                candidates[message.id] = _Candidate(message)
        for position, (ref, similarity) in enumerate(nearest):
            candidate = candidates.get(ref)
            if candidate is not None:
                candidate.semantic = max(0.0, similarity)
                candidate.fused += 1.0 / (tuning.rrf_k + position + 1)

    def _entities(self, root: str, query: QueryAnalysis) -> list[Entity]:
        if self._graph is None:
            return []
        return self._graph.entities_in(root, query.text, limit=8)

    def _mentioned(self, entities: Sequence[Entity]) -> frozenset[int]:
        if self._graph is None or not entities:
            return frozenset()
        return frozenset(
            self._graph.messages_mentioning([entity.id for entity in entities], limit=500)
        )

    # -- scoring ----------------------------------------------------------------------------

    def _score(
        self,
        candidates: Iterable[_Candidate],
        query: QueryAnalysis,
        words: _QueryWords,
        now: datetime,
        mentioned: frozenset[int],
        tuning: Tuning,
    ) -> None:
        matches = words.matches
        expected = query.expects if tuning.answer else None
        pool = list(candidates)
        top_fused = max((c.fused for c in pool), default=0.0) or 1.0
        # Looked up once: this runs for every candidate (the sums keep their order).
        words_of = matches.words if matches is not None else None
        asked, names, unsearched = words.asked, words.names, words.unsearched_names
        window, asks_when = query.window, query.asks_when
        lexical, fused, semantic = tuning.lexical, tuning.fused, tuning.semantic
        coverage, name, recency, recency_days = (
            tuning.coverage,
            tuning.name,
            tuning.recency,
            tuning.recency_days,
        )
        exp = math.exp
        for candidate in pool:
            message = candidate.message
            found = words_of(message.id) if words_of is not None else ()
            score = lexical * candidate.lexical
            score += fused * candidate.fused / top_fused
            score += semantic * candidate.semantic
            if asked:
                score += coverage * min(1.0, len(found) / asked)
            if names and (
                not names.isdisjoint(found)
                or (unsearched is not None and unsearched.search(message.content))
            ):
                score += name
            if window is not None:
                score += tuning.time_window * window.closeness(message.created_at)
            if asks_when and mentions("time", message.content):
                score += tuning.when
            if expected is not None and mentions(expected, message.content):
                score += tuning.answer
            if message.id in mentioned:
                score += tuning.graph
            age_days = max(0.0, (now - message.created_at).total_seconds() / 86_400)
            score += recency * exp(-age_days / recency_days)
            candidate.score = score

    def _neighbours(
        self,
        root: str,
        candidates: dict[int, _Candidate],
        query: QueryAnalysis,
        words: _QueryWords,
        now: datetime,
        mentioned: frozenset[int],
        tuning: Tuning,
    ) -> None:
        """The turn just before or after a strong hit often holds the answer (the question it
        answers, or the reply that completes it): it inherits part of the hit's score."""
        strong = {
            c.message.id: c
            for c in heapq.nlargest(tuning.neighbours_of, candidates.values(), key=_score_of)
        }
        if not strong:
            return
        fresh: list[_Candidate] = []
        for near in self._history.around(root, list(strong), radius=tuning.neighbour_radius):
            if near.message.id in strong:
                continue
            share = tuning.neighbour * tuning.neighbour_decay ** (abs(near.offset) - 1)
            neighbour = candidates.get(near.message.id)
            if neighbour is None:
                neighbour = candidates[near.message.id] = _Candidate(near.message)
                fresh.append(neighbour)
            neighbour.inherited = max(neighbour.inherited, share * strong[near.anchor].score)
        self._score(fresh, query, words, now, mentioned, tuning)
        for each in candidates.values():
            if tuning.neighbour_additive:
                each.score += each.inherited
            else:
                each.score = max(each.score, each.inherited)

    def _sessions(
        self, candidates: Iterable[_Candidate], words: _QueryWords, tuning: Tuning
    ) -> None:
        """Evidence clusters in a few past conversations: a turn's score grows with the
        strength of its session (the sum of the session's best few turns)."""
        pool = list(candidates)
        per_session: dict[str, list[float]] = defaultdict(list)
        for candidate in pool:
            per_session[candidate.message.session].append(candidate.score)
        top = tuning.session_top
        strength = {
            session: scores[0]
            if len(scores) == 1 and top > 0
            else sum(sorted(scores, reverse=True)[:top])
            for session, scores in per_session.items()
        }
        best = max(strength.values(), default=0.0) or 1.0
        cover = self._session_cover(pool, words) if tuning.session_cover else {}
        for candidate in pool:
            session = candidate.message.session
            candidate.score += tuning.session * strength[session] / best
            candidate.score += tuning.session_cover * cover.get(session, 0.0)

    def _session_cover(self, pool: Sequence[_Candidate], words: _QueryWords) -> dict[str, float]:
        """How much of the question each session's turns say between them (the idf share of
        its searched words they contain): a question's words are often split over a question
        and its answer, or over several turns of one conversation."""
        matches = words.matches
        if matches is None:
            return {}
        total = sum(matches.weights.values()) or 1.0
        found: dict[str, set[str]] = defaultdict(set)
        for candidate in pool:
            words_of = matches.words(candidate.message.id)
            if words_of:
                found[candidate.message.session].update(words_of)
        weights = matches.weights
        return {
            session: sum(weights[term] for term in terms) / total
            for session, terms in found.items()
        }

    def _exchanges(self, root: str, best: Sequence[_Candidate], tuning: Tuning) -> list[RecallItem]:
        """Each of the ``best`` turns with the turns around it (``exchange_before`` and
        ``exchange_after``), best first; a turn already shown in a better exchange is not shown
        again, and a candidate inside one adds nothing new. Past the first ``exchanges``,
        turns come alone: a deep hit is there for its words, and context would crowd out
        other hits from the budget."""
        before, after = tuning.exchange_before, tuning.exchange_after
        radius = max(before, after)
        if radius <= 0:
            return [message_item(c.message, c.score) for c in best]
        near: dict[int, list[StoredMessage]] = defaultdict(list)
        read = 0  # neighbours are read a page of anchors at a time, only for those that need them

        def neighbours(position: int) -> list[StoredMessage]:
            nonlocal read
            if position >= read:
                page = [c.message.id for c in best[read : read + max(1, tuning.exchanges)]]
                for each in self._history.around(root, page, radius=radius):
                    if -before <= each.offset <= after:
                        near[each.anchor].append(each.message)
                read += len(page)
            return near.get(best[position].message.id, [])

        shown: set[int] = set()
        items: list[RecallItem] = []
        for position, candidate in enumerate(best):
            anchor = candidate.message
            if anchor.id in shown:
                continue
            around = neighbours(position) if len(items) < tuning.exchanges else ()
            turns = sorted(
                (anchor, *(m for m in around if m.id not in shown)),
                key=_message_id,
            )
            shown.update(m.id for m in turns)
            if len(turns) == 1:
                items.append(message_item(anchor, candidate.score))
                continue
            items.append(
                replace(
                    message_item(anchor, candidate.score),
                    text="\n".join(m.content for m in turns),
                    message_ids=tuple(m.id for m in turns),
                    parts=tuple(message_item(m, candidate.score) for m in turns),
                )
            )
        return items

    # -- other kinds ------------------------------------------------------------------------

    def _fact_items(self, root: str, query: QueryAnalysis, tuning: Tuning) -> list[RecallItem]:
        if not query.terms:
            return []
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
        self, root: str, query: QueryAnalysis, exclude: str | None, tuning: Tuning
    ) -> list[RecallItem]:
        if not query.terms:
            return []
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

    def _graph_items(self, entities: Sequence[Entity]) -> list[RecallItem]:
        if self._graph is None:
            return []
        items = []
        for entity in entities[:4]:
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


def _message_id(message: StoredMessage) -> int:
    return message.id


def _message_text(message: StoredMessage) -> str:
    return message.content


def _score_of(candidate: _Candidate) -> float:
    return candidate.score


def _under(namespace: str, root: str) -> bool:
    root = root.rstrip("/")
    return namespace == root or namespace.startswith(root + "/")
