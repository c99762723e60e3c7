"""The memory seams: small Protocols per concern and the typed rows they return (the knowledge
graph's are in ``flynn.memory.graph_store``).

Everything above ``flynn.memory`` talks to these, never to SQL, so a PostgreSQL implementation can
follow. Namespaces are plain strings such as ``user/profile`` or ``sessions/telegram:42/facts``;
every read filters by namespace (or by a ``namespace/`` prefix) in the query itself.

The calls are synchronous on purpose: each is a sub-millisecond SQLite statement on the event
loop's thread, cheaper than a hop to a worker thread, and one connection used from one thread needs
no lock.
Each call that writes is one transaction: it lands whole or not at all.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Literal, Protocol

from flynn.messages import InboundMessage, IntakeKey

if TYPE_CHECKING:
    from flynn.memory.inbound import Intake, Unfinished

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
    message_id: int | None = None
    """The stored message the fact was extracted from (turn-level provenance), if known."""


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
    message_id: int | None = None


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
    offline: bool = False
    """A reply made by the offline provider (no language model): kept in its conversation,
    never searched, distilled or embedded."""


def still_in_prompt(message: StoredMessage, session: str | None) -> bool:
    """Whether ``message`` is one of ``session``'s turns not yet summarised by compaction: the
    conversation's prompt still holds it, so recall for that conversation leaves it out. Its
    compacted turns are recalled like any past turn (a chat that never ends, a Telegram DM, is
    one session for good)."""
    return message.session == session and not message.summarized


@dataclass(frozen=True, slots=True)
class Postings:
    """For each searched word, the ids of the stored messages containing it, in every namespace,
    as the full-text index matches words (stemmed, any case): a ranker can score every match
    from these lists and then read only the rows it keeps. ``documents`` is how many messages
    the index holds (or the namespace root holds, when the lists are its own), what the rarity
    of a word is measured against."""

    documents: int
    terms: Mapping[str, tuple[int, ...]]
    absent: frozenset[str] = frozenset()
    """Words of the query found in no row searched (the namespace root's, when the lists are
    its own): told apart from words left out of ``terms`` as too common for the search's
    budget, which do occur."""


@dataclass(frozen=True, slots=True)
class Neighbour:
    """A message near an ``anchor`` message in the same session: ``offset`` is its position
    relative to the anchor among that session's messages (-1 just before, 1 just after)."""

    anchor: int
    offset: int
    message: StoredMessage


@dataclass(frozen=True, slots=True)
class NewMessage:
    """A message to store in bulk (``History.append_many``)."""

    role: MessageRole
    content: str
    tokens: int
    created_at: datetime


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A past message found by full-text search, with a highlighted excerpt (``[`` ``]`` marks)."""

    message: StoredMessage
    excerpt: str
    score: float


@dataclass(frozen=True, slots=True)
class MessageMatch:
    """A past message found by full-text search for recall: no excerpt; ``score`` is the negated
    bm25 rank (higher is better)."""

    message: StoredMessage
    score: float


@dataclass(frozen=True, slots=True)
class SessionSummary:
    """A session's running compaction summary and the newest message it covers."""

    session: str
    namespace: str
    summary: str
    through_id: int
    updated_at: datetime


class Documents(Protocol):
    def read(self, namespace: str) -> Document | None: ...

    def replace(
        self, namespace: str, content: str, *, now: datetime, expires_at: datetime | None = None
    ) -> Document: ...

    def replace_if(
        self, namespace: str, content: str, expected: str, *, now: datetime
    ) -> Document | None:
        """Replaces the document only if it still holds ``expected`` ('' for none or an empty
        one), atomically against every other writer; ``None``, writing nothing, otherwise."""
        ...

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

    def retract(self, old_id: int, retraction: NewFact, *, now: datetime) -> Fact:
        """Marks ``old_id`` superseded and stores ``retraction`` linked to it with status
        ``deleted``, in one transaction: the chain records when the belief ended, and nothing of
        it reaches a prompt. Raises ``StoreError`` (changing nothing) if ``old_id`` is not active.
        """
        ...

    def confirm(self, fact_id: int, *, now: datetime) -> bool:
        """Records that an active fact was learnt again (its ``updated_at`` becomes ``now``):
        the profile shows the most recently confirmed first. False if it is not active."""
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

    def history(self, namespace: str, field: str | None) -> list[Fact]:
        """Every row ever stored for ``field`` in ``namespace`` (any status), oldest first;
        ``None`` for the observations ("prefers tea", free text), which have no field."""
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
        tool_steps: str | None = None,
        offline: bool = False,
    ) -> StoredMessage:
        """Stores one message; ``tool_steps`` (encoded by the session) are the tool calls and
        results that led to it, kept with it; ``offline`` marks the offline provider's reply."""
        ...

    def save_tool_steps(self, message_id: int, steps: str) -> None:
        """Stores (or replaces) the tool steps kept with message ``message_id``."""
        ...

    def tool_steps(self, message_ids: Sequence[int]) -> dict[int, str]:
        """The tool steps stored with each of ``message_ids`` that has any."""
        ...

    def append_many(self, session: str, namespace: str, messages: Sequence[NewMessage]) -> int:
        """Stores many messages of one session in one transaction (an import); returns how
        many. Several times cheaper per message than ``append``."""
        ...

    def recent(self, session: str) -> list[StoredMessage]:
        """The session's messages not yet summarised by compaction, oldest first."""
        ...

    def previous(self, session: str, before_id: int) -> StoredMessage | None:
        """The session's message just before message ``before_id``, if any."""
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
        """Messages under ``namespace_prefix`` matching the FTS5 ``query``, best first, but
        ``exclude_session``'s turns still in its context (``still_in_prompt``)."""
        ...

    def match(
        self,
        namespace_prefix: str,
        query: str,
        *,
        limit: int,
        exclude_session: str | None = None,
        wide: bool = False,
    ) -> list[MessageMatch]:
        """Like ``search`` without excerpts, best first. ``wide`` ranks more rows (recall's
        budget rather than interactive search's), still a bounded number."""
        ...

    def messages(self, ids: Sequence[int]) -> list[StoredMessage]:
        """The messages with these ids that exist, in id order (callers check namespaces)."""
        ...

    def postings(
        self,
        query: str,
        *,
        wide: bool = False,
        max_terms: int = 0,
        namespace_prefix: str | None = None,
        search: Hashable = None,
    ) -> Postings | None:
        """The words of ``query`` that ``match`` would search for (no more than ``max_terms``,
        the rarest, unless 0), each with the messages that contain it (with
        ``namespace_prefix``, at least those under it: candidates, to be filtered); ``None``
        when no word occurs. Bounded as ``match`` is, but reading only the index: no row is
        ranked or read. Calls with the same ``search`` (one question's several searches) may
        reuse what an earlier one counted and read."""
        ...

    def messages_under(
        self, namespace_prefix: str, ids: Sequence[int], *, exclude_session: str | None = None
    ) -> list[StoredMessage]:
        """The messages with these ids under ``namespace_prefix`` but ``exclude_session``'s
        turns still in its context (``still_in_prompt``), in no particular order."""
        ...

    def around(
        self, namespace_prefix: str, message_ids: Sequence[int], *, radius: int
    ) -> list[Neighbour]:
        """For each id, up to ``radius`` messages of the same session just before and just after
        it (under ``namespace_prefix`` only), in one read. A message near several anchors is
        listed once per anchor; an anchor may be another anchor's neighbour."""
        ...

    def between(
        self,
        namespace_prefix: str,
        start: datetime,
        end: datetime,
        *,
        limit: int,
        exclude_session: str | None = None,
    ) -> list[StoredMessage]:
        """Messages under ``namespace_prefix`` written in ``[start, end)``, newest first, but
        ``exclude_session``'s turns still in its context (``still_in_prompt``)."""
        ...

    def summaries(self, namespace_prefix: str, *, limit: int) -> list[SessionSummary]:
        """Non-empty compaction summaries of sessions under ``namespace_prefix``, newest first."""
        ...

    def forget(self, namespace_prefix: str) -> int: ...

    def forget_session(self, session: str) -> int:
        """Deletes one session's messages (and index rows) and its summary for real."""
        ...


class InboundLog(Protocol):
    """Durable intake (``flynn.memory.inbound``): accepted messages, stored before the channel
    confirms them, until their reply is delivered."""

    def accept(
        self,
        message: InboundMessage,
        session: str,
        namespace: str | None,
        *,
        keep_text: bool,
        now: datetime,
    ) -> Intake:
        """Records the message, or says what became of the same id before."""
        ...

    def answered(
        self,
        key: IntakeKey,
        *,
        reply: str,
        error_code: str | None,
        now: datetime,
    ) -> None:
        """Records the reply, before it is sent."""
        ...

    def delivered(self, key: IntakeKey, *, now: datetime) -> bool:
        """Records that the person has the reply; False when it already was (or is unknown)."""
        ...

    def give_up(self, key: IntakeKey, *, now: datetime) -> None:
        """Closes a message that cannot be answered."""
        ...

    def unfinished(self) -> list[Unfinished]:
        """What a restart must finish, in the order it was accepted."""
        ...

    def undelivered(self, channel: str, chat_id: str) -> list[Unfinished]:
        """The replies stored for one chat and not delivered yet, oldest first."""
        ...

    def prune(self, *, before: datetime) -> int:
        """Forgets finished messages received before ``before``; returns how many."""
        ...


class Forgetter(Protocol):
    """Forgetting for real beyond whole rows: a field with every mention of its values."""

    def forget_field(self, prefix: str, field: str) -> dict[str, int]:
        """Deletes every row of ``field`` under ``prefix`` and redacts its values wherever
        messages, summaries and documents there mention them; counts per kind of row."""
        ...


class DerivedRelations(Protocol):
    """Where else a fact was recorded (the knowledge graph: ``FactRelations``), so that what
    stops being believed stops being offered there too."""

    def transaction(self) -> AbstractContextManager[None]: ...

    def retire(self, namespace: str, field: str | None, value: str, *, still: str = "") -> int:
        """Retires what ``field`` = ``value`` stated, except what ``still`` states again."""
        ...


class NoDerivedRelations:
    """``DerivedRelations`` where facts are recorded nowhere else."""

    def transaction(self) -> AbstractContextManager[None]:
        return nullcontext()

    def retire(self, namespace: str, field: str | None, value: str, *, still: str = "") -> int:
        return 0
