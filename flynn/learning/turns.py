"""What persisting a turn means, in one place: append to history (and embed it in its context when
embeddings are on), rule extraction reconciled into facts that remember their source message, and
graph ingest when there is a graph.

The orchestrator writes live turns through it, and ``flynn bench recall`` writes its datasets
through it, so the benchmark measures recall over exactly what live turns leave behind.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Protocol

import structlog

from flynn.learning.embedding_queue import EmbeddingQueue, VectorWriter
from flynn.learning.own_words import is_injection, own_words
from flynn.learning.reconcile import Outcome, RuleReconciler
from flynn.learning.rules import RuleExtractor
from flynn.memory.store import History, MessageRole, StoredMessage
from flynn.memory.vectors import in_context
from flynn.tokens import estimate_tokens

log = structlog.get_logger(__name__)


class WriteScope(Protocol):
    """Where a session's memory goes (``flynn.identity.MemoryScope`` is one)."""

    @property
    def root(self) -> str: ...

    @property
    def profile(self) -> str: ...

    @property
    def patterns(self) -> str: ...


class MessageIngestor(Protocol):
    """Adds what a stored message says to the knowledge graph (``GraphIngestor`` is one)."""

    def ingest(
        self, namespace: str, text: str, message_id: int | None, *, now: datetime
    ) -> object: ...


class MemoryWriter:
    """Writes turns and what they teach. Each call is one or a few store transactions; none
    raises for any text (store failures raise ``StoreError``)."""

    def __init__(
        self,
        history: History,
        rules: RuleExtractor,
        reconciler: RuleReconciler,
        *,
        graph: MessageIngestor | None = None,
        vectors: VectorWriter | None = None,
        give_way: Callable[[], None] | None = None,
    ) -> None:
        """``give_way``: called by the background embedding before each stored message it
        embeds (``EmbeddingQueue``), to wait for the recall work in flight."""
        self._history = history
        self._rules = rules
        self._reconciler = reconciler
        self._graph = graph
        self._vectors = vectors
        self._queue = (
            EmbeddingQueue(vectors, history, self._vector_row, give_way=give_way)
            if vectors is not None
            else None
        )

    def message(
        self,
        scope: WriteScope,
        session: str,
        role: MessageRole,
        text: str,
        *,
        now: datetime,
        embed: bool = True,
        tool_steps: str | None = None,
        offline: bool = False,
    ) -> StoredMessage:
        """Appends one message to the session's history under ``scope.root``, and embeds it
        when embeddings are on (unless ``embed`` is false: then ``embed_later`` does).
        ``tool_steps`` are kept with it and count towards its tokens. An ``offline`` reply
        (the offline provider's) is stored marked and never embedded."""
        tokens = estimate_tokens(text) + (estimate_tokens(tool_steps) if tool_steps else 0)
        stored = self._history.append(
            session,
            scope.root,
            role,
            text,
            tokens=tokens,
            now=now,
            tool_steps=tool_steps,
            offline=offline,
        )
        if self._vectors is not None and self._vectors.ready and embed and not offline:
            self._vectors.add("message", [self._vector_row(stored)])
        return stored

    @property
    def embeds(self) -> bool:
        """Whether stored messages are embedded (embeddings are on)."""
        return self._vectors is not None

    async def embed_later(self, stored: StoredMessage) -> None:
        """Embeds a message ``message(..., embed=False)`` stored, in the background queue
        (``flynn.learning.embedding_queue``); returns once it has its vector, or was left to a
        later catch-up. A forget meanwhile wins. Never raises but on cancellation: a message
        left without a vector is found by words until it is embedded. While the model is
        still loading it returns at once: the catch-up after the load embeds it."""
        if self._queue is not None and self._vectors is not None and self._vectors.ready:
            await self._queue.embed(stored)

    async def embed_missing(self, namespace_prefix: str | None) -> int:
        """Embeds the messages under ``namespace_prefix`` (``None``: anywhere) that have no
        vector, such as the one after a forgotten message (its context changed), in a
        catch-up pass of the background queue; returns how many. Never raises but on
        cancellation. Nothing (0) while the model is not loaded."""
        if self._queue is None or self._vectors is None or not self._vectors.ready:
            return 0
        return await self._queue.catch_up(namespace_prefix)

    def embed_missing_later(self, namespace_prefix: str | None) -> None:
        """``embed_missing`` without waiting: the queue owns the pass."""
        if self._queue is not None and self._vectors is not None and self._vectors.ready:
            self._queue.catch_up_later(namespace_prefix)

    def unembedded(self) -> int:
        """How many stored messages have no vector yet (0 with embeddings off)."""
        return 0 if self._vectors is None else self._vectors.unembedded()

    async def rested(self) -> None:
        """Returns once the embedding queue, quiet since its last work, has handed the freed
        heap back (``EmbeddingQueue.rested``); at once with embeddings off."""
        if self._queue is not None:
            await self._queue.rested()

    async def aclose(self) -> None:
        """Stops embedding in the background; what is left waits for the next catch-up."""
        if self._queue is not None:
            await self._queue.aclose()

    def _vector_row(self, stored: StoredMessage) -> tuple[int, str, str]:
        """What ``stored`` is embedded as (``in_context``): after the message before it, when
        that one is of the same namespace (a session can hold more than one after a change of
        identity mapping, and one person's words never shape another's vectors)."""
        previous = self._history.previous(stored.session, stored.id)
        context = (
            previous.content
            if previous is not None and previous.namespace == stored.namespace
            else None
        )
        return (stored.id, stored.namespace, in_context(context, stored.content))

    def learn(
        self,
        scope: WriteScope,
        message: StoredMessage,
        *,
        now: datetime,
        channel: str | None = None,
    ) -> list[Outcome]:
        """What a stored message teaches: for a person's own words, rule-extracted facts
        reconciled into their profile or patterns (each fact keeps ``message.id``) and their
        entities in the graph. Returns the fact outcomes that changed something."""
        changed = []
        # Only the person's own words teach: not what they quote, forward or ask to have
        # translated, and nothing from a message that tries to give the assistant orders.
        said = own_words(message.content) if message.role == "user" else ""
        if said and not is_injection(message.content):
            for fact in self._rules.extract(said):
                namespace = scope.patterns if fact.target == "patterns" else scope.profile
                outcome = self._reconciler.apply(
                    namespace,
                    fact,
                    source="rule",
                    now=now,
                    session=message.session,
                    channel=channel,
                    message_id=message.id,
                )
                if outcome.action != "noop":
                    log.info("memory.fact", action=outcome.action, field=fact.field, kind=fact.kind)
                    changed.append(outcome)
            if self._graph is not None:
                self._graph.ingest(scope.root, said, message.id, now=now)
        return changed
