"""What persisting a turn means, in one place: append to history (and embed it in its context when
embeddings are on), rule extraction reconciled into facts that remember their source message, and
graph ingest when there is a graph.

The orchestrator writes live turns through it, and ``flynn bench recall`` writes its datasets
through it, so the benchmark measures recall over exactly what live turns leave behind.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

import structlog

from flynn.memory.extraction import RuleExtractor
from flynn.memory.reconcile import Outcome, RuleReconciler
from flynn.memory.store import History, MessageRole, NewMessage, StoredMessage
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


class VectorWriter(Protocol):
    """Stores embeddings of ``(ref_id, namespace, text)`` rows (``SqliteVectors`` is one)."""

    def add(self, kind: str, rows: Sequence[tuple[int, str, str]]) -> None: ...


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
    ) -> None:
        self._history = history
        self._rules = rules
        self._reconciler = reconciler
        self._graph = graph
        self._vectors = vectors

    def message(
        self, scope: WriteScope, session: str, role: MessageRole, text: str, *, now: datetime
    ) -> StoredMessage:
        """Appends one message to the session's history under ``scope.root`` (and its
        embedding, when embeddings are on)."""
        stored = self._history.append(
            session, scope.root, role, text, tokens=estimate_tokens(text), now=now
        )
        if self._vectors is not None:
            previous = self._history.previous(session, stored.id)
            context = in_context(None if previous is None else previous.content, stored.content)
            self._vectors.add("message", [(stored.id, stored.namespace, context)])
        return stored

    def import_session(
        self,
        scope: WriteScope,
        session: str,
        turns: Sequence[tuple[MessageRole, str, datetime]],
    ) -> int:
        """Appends many ``(role, text, time)`` turns of one session at once, learning nothing
        from them (an import, or benchmark filler); returns how many. One transaction, unless
        embeddings are on: then each is stored and embedded as ``message`` does."""
        if self._vectors is not None:
            for role, text, now in turns:
                self.message(scope, session, role, text, now=now)
            return len(turns)
        batch = [NewMessage(role, text, estimate_tokens(text), now) for role, text, now in turns]
        return self._history.append_many(session, scope.root, batch)

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
        if message.role == "user":
            for fact in self._rules.extract(message.content):
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
                self._graph.ingest(scope.root, message.content, message.id, now=now)
        return changed
