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

import heapq
import math
from collections import defaultdict
from collections.abc import Collection, Hashable, Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from flynn.memory.bm25 import K1, read_best
from flynn.memory.graph_store import Entity, Graph
from flynn.memory.store import Facts, History, StoredMessage, still_in_prompt
from flynn.memory.vectors import VectorSearch, awaited
from flynn.recall.comparison import merge
from flynn.recall.items import (
    RecallItem,
    exchanges,
    fact_items,
    graph_items,
    summary_items,
)
from flynn.recall.query import AnswerKind, QueryAnalysis, analyse, mentions
from flynn.recall.search_terms import QueryWords, searched_words
from flynn.recall.weights import Tuning, lighter, with_vectors

if TYPE_CHECKING:
    from flynn.memory.vectors import Matrix, QueryVectors, QueryVectorsLater


@dataclass(slots=True)
class _Candidate:
    message: StoredMessage
    lexical: float = 0.0
    fused: float = 0.0
    inherited: float = 0.0
    score: float = 0.0


_TURNS_PER_ITEM = 3
"""Candidate turns offered for each item asked for (an exchange shows up to three turns)."""
_PAGES = 4
"""Pages of a ranked list read at most, when the best turns are mostly out of scope."""
_MENTIONS_KEPT = 1 << 14
"""Texts whose ``mentions`` are remembered, per kind, before they are forgotten all at once."""


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
        # For plain statements (``flynn.recall.query.recall_depth``), unless always full.
        self.light = lighter(self.tuning) if adaptive else self.tuning
        # What ``mentions`` said of each candidate's text: a person's turns are candidates
        # question after question. Plain dicts of strings and booleans, which a full garbage
        # collection walks as one object each (an ``lru_cache``'s entries are objects of their
        # own, and lengthened every collection by more than they saved).
        self._mentions: dict[AnswerKind, dict[str, bool]] = {}

    def rank(
        self,
        root: str,
        query: QueryAnalysis,
        *,
        now: datetime,
        limit: int,
        exclude: str | None = None,
        query_vectors: QueryVectors | QueryVectorsLater | None = None,
    ) -> list[RecallItem]:
        entities = self._entities(root, query)
        search = object()  # the question's searches share what they count and read
        items = self._ranked(root, query, entities, now, limit, exclude, search, query_vectors)
        if query.parts and self.tuning.parts:
            # Each event of a comparing question ranked on its own too (``comparison``).
            # A part is a few words: a light recall brings its event up, keeping related
            # words and the lean to the person's turns (the event is said in their words).
            # No embeddings: the model runs only for the whole question, off the event loop.
            light = replace(
                self.light,
                related=self.tuning.related,
                speaker=self.tuning.speaker,
                semantic_candidates=0,
            )
            each = [
                self._ranked(
                    root, analyse(part, now=now), (), now, limit, exclude, search, None, light
                )
                for part in query.parts
            ]
            items = merge([items, *each], limit)
        # What the graph says about the names in the message comes after the cut: a few short
        # lines, which never take a ranked item's place.
        return items + graph_items(self._graph, entities, query.text)

    def _ranked(
        self,
        root: str,
        query: QueryAnalysis,
        entities: Sequence[Entity],
        now: datetime,
        limit: int,
        exclude: str | None,
        search: Hashable,
        query_vectors: QueryVectors | QueryVectorsLater | None = None,
        tuning: Tuning | None = None,
    ) -> list[RecallItem]:
        # A plain statement gets a light recall, unless it names something the graph knows.
        if tuning is None:
            tuning = self.tuning if query.depth == "full" or entities else self.light
        if tuning.across and query.asks_across:
            tuning = replace(
                tuning,
                session=0.0,
                session_cover=0.0,
                session_words=0.0,
                session_support=0.0,
                session_support_semantic=0.0,
                exchanges=0,
            )
        if query.about != "assistant" and tuning.passage_words:
            tuning = replace(tuning, passage_words=0)  # only a line of an answer is asked for
        vectors = self._vectors is not None
        # The words' weights as the ranking will use them (``absent``'s value with vectors).
        words = searched_words(
            self._history, root, query, with_vectors(tuning) if vectors else tuning, search=search
        )
        # Facts and summaries before the turns: the question's embedding, still being computed
        # in another thread, is waited for among the turns (``_semantic``), and these need none.
        # Read while it is computed, they leave the turn's wait (0.8 ms of the 13 a turn takes
        # with vectors on, ``flynn bench turn`` at 100,000 messages).
        facts = fact_items(self._facts, root, query, tuning)
        summaries = summary_items(self._history, root, query, exclude, tuning)
        candidates = self._scored(
            root, query, entities, words, now, exclude, tuning, query_vectors, vectors=vectors
        )

        # Only the turns that can make the cut become items: an exchange takes in the
        # candidates around its turn, so more are offered than items asked for (limit items
        # come back whenever there are that many candidates).
        best = heapq.nlargest(
            limit * _TURNS_PER_ITEM,
            (c for c in candidates.values() if c.score > 0),
            key=lambda c: (c.score, c.message.created_at),
        )
        items = exchanges(
            self._history,
            root,
            [(c.message, c.score) for c in best],
            tuning,
            exclude=exclude,
            limit=limit,
        )
        items.extend(facts)
        items.extend(summaries)
        items.sort(key=lambda item: (item.score, item.time), reverse=True)
        repeat = tuning.across_repeat_semantic if vectors else tuning.across_repeat
        if repeat and tuning.across and query.asks_across:
            items = _spread(items, repeat)
        return items[:limit]

    def _scored(
        self,
        root: str,
        query: QueryAnalysis,
        entities: Sequence[Entity],
        words: QueryWords,
        now: datetime,
        exclude: str | None,
        tuning: Tuning,
        query_vectors: QueryVectors | QueryVectorsLater | None,
        *,
        vectors: bool,
    ) -> dict[int, _Candidate]:
        """Every candidate of the question with its score: found by words, by meaning (with
        ``vectors``), in the time it points at, or next to a strong hit."""
        candidates = self.lexical_candidates(root, query, words, exclude, tuning)
        similarity = (
            self._semantic(root, query, candidates, exclude, tuning, query_vectors)
            if vectors
            else {}
        )
        if query.window is not None:
            for message in self._history.between(
                root,
                query.window.start,
                query.window.end,
                limit=tuning.window_candidates,
                exclude_session=exclude,
            ):
                candidates.setdefault(message.id, _Candidate(message))
        mentioned = self._mentioned(entities) if tuning.graph else frozenset()
        if vectors:
            tuning = with_vectors(tuning)
        self._score(candidates.values(), query, words, now, mentioned, tuning, similarity)
        self._neighbours(
            root, candidates, query, words, now, mentioned, tuning, exclude, similarity
        )
        self._sessions(candidates.values(), words, tuning)
        return candidates

    # -- candidates -------------------------------------------------------------------------

    def lexical_candidates(
        self,
        root: str,
        query: QueryAnalysis,
        words: QueryWords,
        exclude: str | None,
        tuning: Tuning,
    ) -> dict[int, _Candidate]:
        """BM25 over past turns for the whole question, and when it names someone, for its
        topic alone (a name is in half the turns of a conversation with that person). Lists
        are fused by reciprocal rank.

        Every turn matching a searched word is weighed from the posting lists; only the best of
        each list are read (their lengths complete the bm25 score)."""
        candidates: dict[int, _Candidate] = {}
        if words.matches is None:
            return candidates
        self._add_ranked(root, words, candidates, exclude, tuning, leave_out=())
        if query.names and query.topic_terms:
            self._add_ranked(root, words, candidates, exclude, tuning, leave_out=words.names)
        return candidates

    def _add_ranked(
        self,
        root: str,
        words: QueryWords,
        candidates: dict[int, _Candidate],
        exclude: str | None,
        tuning: Tuning,
        *,
        leave_out: Collection[str],
    ) -> None:
        """Reads the best turns of one list under ``root`` (those not read yet), ranked by
        ``words`` but those in ``leave_out``, and adds them with their lexical scores."""
        matches = words.matches
        assert matches is not None

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
            max_length=tuning.passage_words,
        )
        if not scored:
            return
        # Strength is measured against a turn holding every searched word once (at the average
        # length), not against the best hit: when the best hit matched only a common word (a
        # name found in half the turns), it stays weak, and so does its rank's share.
        ideal = max(words.ideal(leave_out), 1e-9)
        for position, (score, message) in enumerate(scored):
            candidate = candidates.get(message.id)
            if candidate is None:
                candidate = candidates[message.id] = _Candidate(message)
            strength = min(1.0, score / ideal)
            candidate.lexical = max(candidate.lexical, strength)
            candidate.fused += strength / (tuning.rrf_k + position + 1)

    def _semantic(
        self,
        root: str,
        query: QueryAnalysis,
        candidates: dict[int, _Candidate],
        exclude: str | None,
        tuning: Tuning,
        pending: QueryVectors | QueryVectorsLater | None,
    ) -> dict[int, float]:
        """The turns nearest the question by meaning join the candidates; when it names
        someone, also those nearest its topic alone (as for words: in a conversation with
        Caroline, her name is in half the turns and pulls the question's vector towards all of
        them). Returns the cosine similarity to the question of the turns nearest it, for the
        score (a turn farther off has 0). Called after the word search: embeddings still being
        computed (``pending``) are waited for here."""
        if self._vectors is None or tuning.semantic_candidates <= 0:
            return {}
        vectors = awaited(pending)
        similarity = self._add_nearest(
            root,
            query.text,
            vectors.question if vectors is not None else None,
            candidates,
            exclude,
            tuning,
            share=tuning.semantic_rrf,
        )
        topic = query.topic_text if tuning.semantic_topic > 0 else ""
        if topic:
            self._add_nearest(
                root,
                topic,
                vectors.topic if vectors is not None else None,
                candidates,
                exclude,
                tuning,
                share=tuning.semantic_topic,
            )
        return similarity

    def _add_nearest(
        self,
        root: str,
        text: str,
        vector: Matrix | None,
        candidates: dict[int, _Candidate],
        exclude: str | None,
        tuning: Tuning,
        *,
        share: float,
    ) -> dict[int, float]:
        """Adds the ``semantic_candidates`` turns nearest ``text`` (``vector`` is its
        embedding, when computed), each with its reciprocal rank times ``share``; returns their
        cosine similarity to ``text``."""
        assert self._vectors is not None
        offered = self._vectors.nearest(
            root, text, kind="message", limit=tuning.semantic_candidates, vector=vector
        )
        missing = [ref for ref, _ in offered if ref not in candidates]
        for message in self._history.messages(missing):
            if not still_in_prompt(message, exclude) and _under(message.namespace, root):
                candidates[message.id] = _Candidate(message)
        for position, (ref, _) in enumerate(offered):
            candidate = candidates.get(ref)
            if candidate is not None:
                candidate.fused += share / (tuning.rrf_k + position + 1)
        return {ref: max(0.0, similarity) for ref, similarity in offered}

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
        words: QueryWords,
        now: datetime,
        mentioned: frozenset[int],
        tuning: Tuning,
        similarity: dict[int, float],
    ) -> None:
        matches = words.matches
        expected = query.expects if tuning.answer else None
        pool = list(candidates)
        top_fused = max((c.fused for c in pool), default=0.0) or 1.0
        # Looked up once: this runs for every candidate (the sums keep their order).
        words_of = matches.words if matches is not None else None
        asked, names, unsearched = words.asked, words.names, words.unsearched_names
        asked_found = words.asked_found
        window, asks_when = query.window, query.asks_when
        lexical, semantic = tuning.lexical, tuning.semantic
        fused = tuning.fused
        coverage, name, recency, recency_days = (
            tuning.coverage,
            tuning.name,
            tuning.recency,
            tuning.recency_days,
        )
        exp = math.exp
        # A question about the person is answered by what they said.
        own = tuning.speaker if query.about == "person" else 0.0
        for candidate in pool:
            message = candidate.message
            found = words_of(message.id) if words_of is not None else ()
            score = lexical * candidate.lexical
            score += fused * candidate.fused / top_fused
            if similarity:
                score += semantic * similarity.get(message.id, 0.0)
            if asked:
                score += coverage * min(1.0, asked_found(found) / asked)
            if names and (
                not names.isdisjoint(found)
                or (unsearched is not None and unsearched.search(message.content))
            ):
                score += name
            if window is not None:
                score += tuning.time_window * window.closeness(message.created_at)
            if asks_when and self._mentions_in("time", message.content):
                score += tuning.when
            if expected is not None and self._mentions_in(expected, message.content):
                score += tuning.answer
            if message.id in mentioned:
                score += tuning.graph
            if recency:
                age_days = max(0.0, (now - message.created_at).total_seconds() / 86_400)
                score += recency * exp(-age_days / recency_days)
            if own and message.role == "user":
                score += own  # a neighbour too: "Tuesday at seven" answers the question
            candidate.score = score

    def _mentions_in(self, kind: AnswerKind, text: str) -> bool:
        """``mentions(kind, text)``, remembered (at most ``_MENTIONS_KEPT`` texts a kind)."""
        known = self._mentions.get(kind)
        if known is None:
            known = self._mentions[kind] = {}
        found = known.get(text)
        if found is None:
            if len(known) >= _MENTIONS_KEPT:
                known.clear()
            found = known[text] = mentions(kind, text)
        return found

    def _neighbours(
        self,
        root: str,
        candidates: dict[int, _Candidate],
        query: QueryAnalysis,
        words: QueryWords,
        now: datetime,
        mentioned: frozenset[int],
        tuning: Tuning,
        exclude: str | None,
        similarity: dict[int, float],
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
            if near.message.id in strong or still_in_prompt(near.message, exclude):
                continue
            share = tuning.neighbour * tuning.neighbour_decay ** (abs(near.offset) - 1)
            neighbour = candidates.get(near.message.id)
            if neighbour is None:
                neighbour = candidates[near.message.id] = _Candidate(near.message)
                fresh.append(neighbour)
            neighbour.inherited = max(neighbour.inherited, share * strong[near.anchor].score)
        self._score(fresh, query, words, now, mentioned, tuning, similarity)
        for each in candidates.values():
            each.score += each.inherited

    def _sessions(
        self, candidates: Iterable[_Candidate], words: QueryWords, tuning: Tuning
    ) -> None:
        """Evidence clusters in a few past conversations: a turn's score grows with the
        strength of its session (the sum of the session's best few turns), with how much of the
        question its turns say between them, and with how much the session is about it."""
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
        about = _session_words(pool, words) if tuning.session_words else {}
        support = _session_support(pool, top) if tuning.session_support else {}
        for candidate in pool:
            session = candidate.message.session
            candidate.score += tuning.session * strength[session] / best
            candidate.score += tuning.session_support * support.get(session, 0.0)
            candidate.score += tuning.session_cover * cover.get(session, 0.0)
            candidate.score += tuning.session_words * about.get(session, 0.0)

    def _session_cover(self, pool: Sequence[_Candidate], words: QueryWords) -> dict[str, float]:
        """How much of the question each session's turns say between them (the idf share of
        its searched words they contain): a question's words are often split over a question
        and its answer, or over several turns of one conversation."""
        matches = words.matches
        if matches is None:
            return {}
        total = words.ideal(()) or 1.0
        found: dict[str, set[str]] = defaultdict(set)
        for candidate in pool:
            words_of = matches.words(candidate.message.id)
            if words_of:
                found[candidate.message.session].update(words_of)
        return {
            session: min(1.0, words.weight_of(terms) / total) for session, terms in found.items()
        }


def _session_support(pool: Sequence[_Candidate], top: int) -> dict[str, float]:
    """How well each session in ``pool`` backs up its best turn: the sum of its next best
    ``top - 1`` turns' own scores (before a neighbour's share, which every strong hit lends the
    turns around it), scaled so the best-backed session has 1. A conversation with two good
    turns on the question outranks one with a single lucky match."""
    own: dict[str, list[float]] = defaultdict(list)
    for candidate in pool:
        own[candidate.message.session].append(candidate.score - candidate.inherited)
    backing = {session: sum(heapq.nlargest(top, scores)[1:]) for session, scores in own.items()}
    best = max(backing.values(), default=0.0) or 1.0
    return {session: max(0.0, score) / best for session, score in backing.items()}


def _spread(items: list[RecallItem], repeat: float) -> list[RecallItem]:
    """``items`` (best first) with each past turn lowered by ``repeat`` for every better turn
    of the same conversation: for a question over many occasions, each occasion's best turn
    comes before a second turn of one already shown. A conversation's turns keep their order,
    and so do the conversations' best turns, which is what a greedy pick with that penalty
    gives; facts and summaries keep their scores."""
    shown: dict[str, int] = defaultdict(int)
    keyed: list[tuple[float, int, RecallItem]] = []
    for position, item in enumerate(items):
        score = item.score
        if item.kind == "message" and item.session is not None:
            score -= repeat * shown[item.session]
            shown[item.session] += 1
        keyed.append((score, -position, item))
    keyed.sort(key=lambda each: (each[0], each[1]), reverse=True)
    return [item for _, _, item in keyed]


def _session_words(pool: Sequence[_Candidate], words: QueryWords) -> dict[str, float]:
    """How much each session in ``pool`` is about the question, as if its turns were one text:
    bm25 over sessions, each searched word counted once a turn (a word and its related words
    once), saturating as more turns repeat it, and weighed by how few of the sessions in play
    hold it. A conversation that keeps coming back to the question's subject outranks one that
    mentions it in passing, and a name said in every conversation weighs next to nothing.
    Scaled so the best session has 1."""
    matches = words.matches
    if matches is None:
        return {}
    turns: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for candidate in pool:
        counted: set[str] = set()
        for word in matches.words(candidate.message.id):
            key = words.related.get(word, word)
            if key not in counted:
                counted.add(key)
                turns[key][candidate.message.session] += 1
    sessions = len({candidate.message.session for candidate in pool})
    scores: dict[str, float] = defaultdict(float)
    for per_session in turns.values():
        # Lucene's idf, never negative: a few sessions are in play, and a word most of them
        # hold still counts a little (FTS5's would floor it, and the subject with it).
        weight = math.log(1 + (sessions - len(per_session) + 0.5) / (len(per_session) + 0.5))
        for session, count in per_session.items():
            # bm25's saturation with every session of one length (its b = 0): a chat is as
            # long as it is, and a long one that keeps to the subject is the better match.
            scores[session] += weight * count * (K1 + 1) / (count + K1)
    best = max(scores.values(), default=0.0) or 1.0
    return {session: score / best for session, score in scores.items()}


def _message_id(message: StoredMessage) -> int:
    return message.id


def _message_text(message: StoredMessage) -> str:
    return message.content


def _score_of(candidate: _Candidate) -> float:
    return candidate.score


def _under(namespace: str, root: str) -> bool:
    root = root.rstrip("/")
    return namespace == root or namespace.startswith(root + "/")
