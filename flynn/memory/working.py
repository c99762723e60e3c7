"""Working memory: the "what has been happening lately" snapshot written on every compaction.

Stored as one document in the seed's file format (``# Working Memory`` / ``Updated:`` /
``Expires:`` / blank line / content), replaced on each write and expired lazily on read.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import structlog

from flynn.memory.store import Documents
from flynn.tokens import truncate_to_tokens

HEADER = "# Working Memory"
_UPDATED = "Updated: "
_EXPIRES = "Expires: "

_log = structlog.get_logger(__name__)


@dataclass(frozen=True, slots=True)
class WorkingMemory:
    content: str
    updated_at: datetime
    expires_at: datetime

    def is_expired(self, now: datetime) -> bool:
        return self.expires_at <= now


def write_working_memory(
    documents: Documents,
    namespace: str,
    content: str,
    *,
    ttl_days: int,
    max_tokens: int,
    now: datetime,
) -> WorkingMemory:
    """Replaces the working memory at ``namespace`` with ``content``, cut to ``max_tokens``.

    Times are kept to the second, as the file format writes them, so the returned value equals
    what ``read_working_memory`` gives back. Raises ``StoreError`` if the write fails.
    """
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    updated_at = now.astimezone(UTC).replace(microsecond=0)
    memory = WorkingMemory(
        content=truncate_to_tokens(content.strip(), max_tokens),
        updated_at=updated_at,
        expires_at=updated_at + timedelta(days=ttl_days),
    )
    documents.replace(
        namespace, render_working_memory(memory), now=updated_at, expires_at=memory.expires_at
    )
    return memory


def read_working_memory(
    documents: Documents, namespace: str, *, now: datetime
) -> WorkingMemory | None:
    """The working memory at ``namespace``, or ``None`` when it is absent, malformed or expired.

    Those cases are normal (no compaction yet, an old snapshot) and only logged at debug level.
    Raises ``StoreError`` only if the database read itself fails.
    """
    document = documents.read(namespace)
    if document is None:
        _log_skipped(namespace, "absent")
        return None
    memory = parse_working_memory(document.content)
    if memory is None:
        _log_skipped(namespace, "malformed")
        return None
    if memory.is_expired(now):
        _log_skipped(namespace, "expired")
        return None
    return memory


def parse_working_memory(text: str) -> WorkingMemory | None:
    """Reads the seed's file format; ``None`` if the header or either time is missing or invalid.

    As in the seed, header lines are read until the blank line that follows ``Expires:``; the
    rest, stripped, is the content.
    """
    lines = text.split("\n")
    if not lines or lines[0].rstrip("\r") != HEADER:
        return None
    updated_at: datetime | None = None
    expires_at: datetime | None = None
    content_start = len(lines)
    for index, line in enumerate(lines[1:], start=1):
        line = line.rstrip("\r")
        if line.startswith(_UPDATED):
            updated_at = _parse_time(line[len(_UPDATED) :])
        elif line.startswith(_EXPIRES):
            expires_at = _parse_time(line[len(_EXPIRES) :])
        elif line == "" and expires_at is not None:
            content_start = index + 1
            break
    if updated_at is None or expires_at is None:
        return None
    content = "\n".join(lines[content_start:]).strip()
    return WorkingMemory(content=content, updated_at=updated_at, expires_at=expires_at)


def render_working_memory(memory: WorkingMemory) -> str:
    """The seed's file format, as stored and as exported."""
    return "\n".join(
        (
            HEADER,
            _UPDATED + format_time(memory.updated_at),
            _EXPIRES + format_time(memory.expires_at),
            "",
            memory.content,
        )
    )


def format_time(moment: datetime) -> str:
    """``2026-02-25T11:30:00Z``: UTC, to the second."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse_time(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    # The seed writes UTC with 'Z'; a hand-edited time without an offset is read as UTC too.
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _log_skipped(namespace: str, reason: str) -> None:
    _log.debug("working_memory.skipped", namespace=namespace, reason=reason)
