"""What recall returns: ranked pieces of memory (``RecallItem``), each saying where it came
from and how far to trust it, and how ranked rows become items: a past turn with the turns
around it (an *exchange*), a fact, a conversation's summary, a relation of the graph."""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from flynn.memory.graph_names import MAX_AMBIGUOUS_CHARS, USER_ENTITY, candidate_keys, name_key
from flynn.memory.graph_store import Entity, Graph, Relation
from flynn.memory.store import Fact, Facts, History, MessageRole, StoredMessage, still_in_prompt
from flynn.recall.query import QueryAnalysis
from flynn.recall.weights import Tuning

ItemKind = Literal["message", "fact", "summary", "graph", "document"]
Trust = Literal["stated", "verbatim", "extracted", "inferred", "summary", "team"]


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


def fact_item(fact: Fact, score: float) -> RecallItem:
    return RecallItem(
        kind="fact",
        ref=fact.id,
        text=f"{fact.field}: {fact.value}" if fact.field else fact.value,
        session=fact.session,
        message_ids=(fact.message_id,) if fact.message_id is not None else (),
        time=fact.updated_at,
        score=score,
        trust=fact_trust(fact),
    )


def fact_trust(fact: Fact) -> Trust:
    if fact.source == "llm":
        return "extracted"
    if fact.source == "inferred":
        return "inferred"
    return "stated"


TOKEN = re.compile(r"[a-z0-9]+")


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
    return frozenset(map(stem, TOKEN.findall(text.lower())))


def exchanges(
    history: History,
    root: str,
    best: Sequence[tuple[StoredMessage, float]],
    tuning: Tuning,
    *,
    exclude: str | None = None,
    limit: int | None = None,
) -> list[RecallItem]:
    """Each of the ``best`` turns with the turns around it (``exchange_before`` and
    ``exchange_after``), best first, at most ``limit`` items; a turn already shown in a better
    exchange is not shown again, and a candidate inside one adds nothing new. Past the first
    ``exchanges``, turns come alone: a deep hit is there for its words, and context would
    crowd out other hits from the budget. The turns of ``exclude`` still in its context are
    never shown (the prompt holds them)."""
    before, after = tuning.exchange_before, tuning.exchange_after
    radius = max(before, after)
    if radius <= 0:
        return [message_item(message, score) for message, score in best[:limit]]
    shape = (
        {message.id: _reach(message, before, after, tuning.exchange_reply) for message, _ in best}
        if tuning.exchange_by_role
        else {}
    )
    near: dict[int, list[StoredMessage]] = defaultdict(list)
    read = 0  # neighbours are read a page of anchors at a time, only for those that need them

    def neighbours(position: int) -> list[StoredMessage]:
        nonlocal read
        if position >= read:
            page = [message.id for message, _ in best[read : read + max(1, tuning.exchanges)]]
            for each in history.around(root, page, radius=radius):
                back, forward = shape.get(each.anchor, (before, after))
                if -back <= each.offset <= forward and not still_in_prompt(each.message, exclude):
                    near[each.anchor].append(each.message)
            read += len(page)
        return near.get(best[position][0].id, [])

    shown: set[int] = set()
    items: list[RecallItem] = []
    for position, (anchor, score) in enumerate(best):
        if len(items) == limit:
            break
        if anchor.id in shown:
            continue
        around = neighbours(position) if len(items) < tuning.exchanges else ()
        turns = sorted(
            (anchor, *(m for m in around if m.id not in shown)),
            key=lambda message: message.id,
        )
        shown.update(m.id for m in turns)
        if len(turns) == 1:
            items.append(message_item(anchor, score))
            continue
        items.append(
            replace(
                message_item(anchor, score),
                text="\n".join(m.content for m in turns),
                message_ids=tuple(m.id for m in turns),
                parts=tuple(message_item(m, score) for m in turns),
            )
        )
    return items


def _reach(message: StoredMessage, before: int, after: int, reply: bool) -> tuple[int, int]:
    """How far an exchange reaches back and forward from ``message`` by its role
    (``Tuning.exchange_by_role``): a person's turn forward only, to the reply, when ``reply``
    (``Tuning.exchange_reply``); an assistant's turn back only (the request it answers, when
    ``before`` is set), and forward too when it asks a question (the person's answer).
    Measured in issue 15 rounds 2 and 3 (``evals/README.md``)."""
    if message.role == "user":
        return 0, after if reply else 0
    if message.content.rstrip().endswith("?"):
        return before, after
    return before, 0


def fact_items(facts: Facts, root: str, query: QueryAnalysis, tuning: Tuning) -> list[RecallItem]:
    if not query.terms:
        return []
    wanted = {stem(term) for term in query.terms}
    items = []
    for fact in facts.search(root, " ".join(query.terms), limit=tuning.facts):
        item = fact_item(fact, 0.0)
        overlap = len(wanted & stems(item.text.replace("_", " "))) / len(wanted)
        items.append(replace(item, score=tuning.fact * (overlap + fact.confidence * 0.5)))
    return items


def summary_items(
    history: History, root: str, query: QueryAnalysis, exclude: str | None, tuning: Tuning
) -> list[RecallItem]:
    if not query.terms:
        return []
    wanted = {stem(term) for term in query.terms}
    items = []
    for summary in history.summaries(root, limit=tuning.summaries):
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


_USER_KEY = name_key(USER_ENTITY)

GRAPH_ITEMS = 6
"""Most graph lines recalled for the names in one message."""


def graph_items(graph: Graph | None, entities: Sequence[Entity], text: str) -> list[RecallItem]:
    """What the graph says about the people, projects and places ``text`` names (of
    ``entities``, see ``_named``): the chain of relations linking the first two when they are
    linked within a few steps ("How is Maya related to Acme?"), then each one's relations, most
    confident first; at most ``GRAPH_ITEMS``. Scored low, so they rank after the turns they were
    learnt from; ``Recall`` keeps them past its relevance floor (the message names them)."""
    if graph is None:
        return []
    named = _named(text, entities)[:4]
    items: list[RecallItem] = []
    shown: set[int] = set()
    if len(named) >= 2 and named[0].namespace == named[1].namespace:
        chain = graph.path(named[0].namespace, named[0].id, named[1].id, max_depth=3)
        if chain:
            items.append(
                _graph_item(
                    chain[0].id,
                    "; ".join(_said(relation) for relation in chain),
                    max(relation.updated_at for relation in chain),
                    min(relation.confidence for relation in chain),
                )
            )
            shown.update(relation.id for relation in chain)
    relations: dict[int, Relation] = {}
    for entity in named:
        for relation in graph.relations_of(entity.id, limit=4):
            relations.setdefault(relation.id, relation)
    for relation in sorted(relations.values(), key=lambda each: -each.confidence):
        if relation.id not in shown:
            items.append(
                _graph_item(relation.id, _said(relation), relation.updated_at, relation.confidence)
            )
    return items[:GRAPH_ITEMS]


def _named(text: str, entities: Sequence[Entity]) -> list[Entity]:
    """The ``entities`` that ``text`` names as a name, strictly, since graph lines come in
    however they rank: never the person themself ("User" is a common word too), and a short
    one-word name ("May", "Go") only where it is capitalised, whoever writes in lower case."""
    keys = candidate_keys(text)
    kept = []
    for entity in entities:
        key = name_key(entity.name)
        if key == _USER_KEY:
            continue
        if len(key) <= MAX_AMBIGUOUS_CHARS and " " not in key and not keys.get(key, False):
            continue
        kept.append(entity)
    return kept


def _said(relation: Relation) -> str:
    return f"{relation.source_name} {relation.type.replace('_', ' ')} {relation.target_name}"


def _graph_item(ref: int, text: str, time: datetime, confidence: float) -> RecallItem:
    return RecallItem(
        kind="graph",
        ref=ref,
        text=text,
        session=None,
        message_ids=(),
        time=time,
        score=0.5 * confidence,
        trust="inferred",
    )
