"""Learning from a batch of stored turns with a language model, off the reply path: extraction
(blind of stored memory), each fact tied to the turn it came from (whose time resolves relative
dates), then LLM reconciliation into the person's one set of facts (their profile and patterns,
beside what rules and the ``remember`` tool learnt); and, when given a graph, the people,
places and projects of the batch and their relations into the knowledge graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import structlog

from flynn.dates import relative_phrases
from flynn.errors import ProviderError
from flynn.identity import facts_namespace
from flynn.learning.graph_extraction import LlmGraphExtractor
from flynn.learning.graph_ingest import GraphIngestor
from flynn.learning.llm_extraction import LlmExtractor
from flynn.learning.llm_reconcile import LlmReconciler
from flynn.learning.own_words import is_injection, own_words
from flynn.learning.rules import ProposedFact
from flynn.memory.fact_keys import content_words
from flynn.memory.store import StoredMessage
from flynn.providers.base import ChatMessage

log = structlog.get_logger(__name__)

LLM_GRAPH_CONFIDENCE = 0.7
"""For what the model's graph extraction proposes without a confidence of its own."""


@dataclass(frozen=True, slots=True)
class GraphLearning:
    """The model's graph extraction and where its proposals are written."""

    extractor: LlmGraphExtractor
    ingestor: GraphIngestor


class FactLearner:
    """Extracts and reconciles facts from stored turns. One call at a time per session is the
    caller's job (the orchestrator and compaction never overlap)."""

    def __init__(
        self,
        extractor: LlmExtractor,
        reconciler: LlmReconciler,
        *,
        graph: GraphLearning | None = None,
    ) -> None:
        self._extractor = extractor
        self._reconciler = reconciler
        self._graph = graph

    async def learn(
        self,
        messages: Sequence[StoredMessage],
        root: str,
        *,
        session: str | None = None,
        channel: str | None = None,
        graph_namespace: str | None = None,
    ) -> int:
        """Learns from ``messages`` (oldest first) into the facts of the person or session at
        ``root`` (``<root>/profile`` and ``<root>/patterns``), and their entities and
        relations into the graph of ``graph_namespace`` when given (and a graph is); returns
        how many facts changed memory (ADD, UPDATE or DELETE).

        Raises ``ProviderError`` when the fact extraction call fails (then nothing was written)
        and ``StoreError`` when the store fails; reconciliation calls that fail fall back
        silently, and whatever fails in the graph step only skips the graph (the facts are in). On
        cancellation, facts reconciled so far stay (each is its own transaction).
        """
        if not messages:
            return 0
        turns = learnable_turns(messages)
        if not any(turn.role == "user" for turn in turns):
            return 0
        proposed = await self._extractor.extract(turns)
        changed = 0
        for fact in proposed:
            origin = source_message(fact, messages)
            outcome = await self._reconciler.apply(
                facts_namespace(root, fact.target),
                fact,
                source="inferred" if fact.inferred else "llm",
                session=session,
                channel=channel,
                message_id=origin.id if origin.role == "user" else None,
                said_at=origin.created_at,
            )
            changed += outcome.action != "noop"
        if self._graph is not None and graph_namespace is not None:
            await self._learn_graph(self._graph, turns, messages, graph_namespace)
        return changed

    async def _learn_graph(
        self,
        graph: GraphLearning,
        turns: Sequence[ChatMessage],
        messages: Sequence[StoredMessage],
        namespace: str,
    ) -> None:
        """The graph is learnt after the facts and never costs them: whatever fails here (the
        call, the answer, the write) is logged and skipped, so the batch still counts as learnt
        and is not sent to fact extraction again."""
        try:
            proposal = await graph.extractor.extract(turns)
            if not proposal.is_empty:
                graph.ingestor.ingest_batch(
                    namespace,
                    proposal,
                    messages,
                    now=messages[-1].created_at,
                    confidence=LLM_GRAPH_CONFIDENCE,
                )
        except ProviderError as exc:
            log.info("graph_learning.skipped", error=type(exc).__name__)
        except Exception:
            log.exception("graph_learning.failed")


def learnable_turns(messages: Sequence[StoredMessage]) -> list[ChatMessage]:
    """The turns a model may learn from: the person's own words only (what they quoted,
    forwarded or asked to have worked on is left out, as is a message giving the assistant
    orders); the assistant's turns stay, as context."""
    turns = []
    for message in messages:
        if message.role != "user":
            turns.append(ChatMessage(message.role, message.content))
        elif not is_injection(message.content) and (said := own_words(message.content)):
            turns.append(ChatMessage("user", said))
    return turns


def source_message(fact: ProposedFact, messages: Sequence[StoredMessage]) -> StoredMessage:
    """The turn a fact most likely came from: the newest person's turn containing its relative
    date phrase ("next Friday"), else the one sharing most words with it, else the newest turn."""
    said = [message for message in messages if message.role == "user"] or list(messages)
    phrases = relative_phrases(fact.value)
    if phrases:
        for message in reversed(said):
            content = message.content.casefold()
            if any(phrase in content for phrase in phrases):
                return message
    words = content_words(f"{fact.field or ''} {fact.value}")
    best, best_shared = said[-1], 0
    for message in reversed(said):
        shared = len(words & content_words(message.content))
        if shared > best_shared:
            best, best_shared = message, shared
    return best
