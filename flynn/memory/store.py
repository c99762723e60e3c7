"""The memory seams: small Protocols per concern and the typed rows they return.

Everything above ``flynn.memory`` talks to these, never to SQL, so a PostgreSQL implementation can
follow. Namespaces are plain strings such as ``user/profile`` or ``sessions/telegram:42/facts``;
every read filters by namespace (or by a ``namespace/`` prefix) in the query itself.

The calls are synchronous on purpose: each is a sub-millisecond SQLite statement on the event
loop's thread, cheaper than a hop to a worker thread, and one connection used from one thread needs
no lock.
Each call that writes is one transaction: it lands whole or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

FactKind = Literal["profile", "pattern", "action", "observation"]
FactSource = Literal["explicit", "inferred", "rule", "llm", "tool"]
FactStatus = Literal["active", "superseded", "deleted"]
MessageRole = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class Document:
    namespace: str
    content: str
    updated_at: datetime
    expires_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class NewFact:
    """A fact to store. ``field`` is set for field/value facts (``name`` = ``Ana``), ``None`` for
    free-text observations."""

    namespace: str
    kind: FactKind
    value: str
    field: str | None = None
    confidence: float = 1.0
    source: FactSource = "explicit"
    session: str | None = None
    channel: str | None = None


@dataclass(frozen=True, slots=True)
class Fact:
    id: int
    namespace: str
    kind: FactKind
    field: str | None
    value: str
    confidence: float
    source: FactSource
    status: FactStatus
    supersedes: int | None
    session: str | None
    channel: str | None
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class StoredMessage:
    id: int
    session: str
    namespace: str
    role: MessageRole
    content: str
    tokens: int
    created_at: datetime
    summarized: bool = False


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A past message found by full-text search, with a highlighted excerpt (``[`` ``]`` marks)."""

    message: StoredMessage
    excerpt: str
    score: float


class Documents(Protocol):
    def read(self, namespace: str) -> Document | None: ...

    def replace(
        self, namespace: str, content: str, *, now: datetime, expires_at: datetime | None = None
    ) -> Document: ...

    def append(self, namespace: str, content: str, *, now: datetime) -> Document:
        """Adds ``content`` on a new line after what is there (or creates the document)."""
        ...

    def delete(self, namespace: str) -> bool: ...

    def list(self, prefix: str) -> list[Document]:
        """Documents whose namespace is ``prefix`` or starts with ``prefix/``."""
        ...


class Facts(Protocol):
    def generation(self) -> tuple[int, int]:
        """A value that differs after any change to any fact (made by this store or by another
        process), so readers can cache what they derive from facts."""
        ...

    def add(self, fact: NewFact, *, now: datetime) -> Fact: ...

    def supersede(self, old_id: int, new: NewFact, *, now: datetime) -> Fact:
        """Marks ``old_id`` superseded and stores ``new`` linked to it, in one transaction."""
        ...

    def retire(self, fact_id: int, *, now: datetime) -> None:
        """Marks an active fact ``deleted`` (kept for provenance; ``forget`` removes for real)."""
        ...

    def get(self, fact_id: int) -> Fact | None: ...

    def active(
        self, namespace: str, *, kind: FactKind | None = None, field: str | None = None
    ) -> list[Fact]:
        """Active facts of exactly this namespace, newest first."""
        ...

    def find(self, namespace: str, value: str) -> list[Fact]:
        """Active facts of exactly this namespace whose value equals ``value`` (case ignored)."""
        ...

    def history(self, namespace: str, field: str) -> list[Fact]:
        """Every row ever stored for ``field`` in ``namespace`` (any status), oldest first."""
        ...

    def search(self, namespace_prefix: str, query: str, *, limit: int) -> list[Fact]:
        """Active facts under ``namespace_prefix`` matching the FTS5 ``query``, best first."""
        ...

    def forget(self, namespace_prefix: str, *, field: str | None = None) -> int:
        """Deletes rows (and their index rows) for real; returns how many."""
        ...


class History(Protocol):
    def append(
        self,
        session: str,
        namespace: str,
        role: MessageRole,
        content: str,
        *,
        tokens: int,
        now: datetime,
    ) -> StoredMessage: ...

    def recent(self, session: str) -> list[StoredMessage]:
        """The session's messages not yet summarised by compaction, oldest first."""
        ...

    def summary(self, session: str) -> str | None:
        """The session's running compaction summary, if it was ever compacted."""
        ...

    def save_summary(self, session: str, summary: str, *, through_id: int, now: datetime) -> int:
        """Stores the session summary and marks messages up to ``through_id`` summarised, in one
        transaction; returns how many were marked. Rows are never deleted here."""
        ...

    def search(
        self,
        namespace_prefix: str,
        query: str,
        *,
        limit: int,
        exclude_session: str | None = None,
    ) -> list[SearchHit]:
        """Messages under ``namespace_prefix`` matching the FTS5 ``query``, best first."""
        ...

    def forget(self, namespace_prefix: str) -> int: ...

    def forget_session(self, session: str) -> int:
        """Deletes one session's messages (and index rows) and its summary for real."""
        ...


class Costs(Protocol):
    def record(
        self,
        *,
        provider: str,
        model: str,
        task: str,
        input_tokens: int,
        output_tokens: int,
        now: datetime,
    ) -> None: ...

    def totals(self) -> dict[str, tuple[int, int]]:
        """Input and output tokens per task."""
        ...


class InboundLog(Protocol):
    """Which inbound message ids were already handled, so a redelivery is answered once."""

    def claim(self, channel: str, message_id: str, session: str, *, now: datetime) -> bool:
        """Records the message as being handled; ``False`` if it was seen before."""
        ...

    def complete(self, channel: str, message_id: str, *, now: datetime) -> None:
        """Records that the reply was sent."""
        ...

    def prune(self, *, before: datetime) -> int:
        """Forgets ids received before ``before``; returns how many."""
        ...
