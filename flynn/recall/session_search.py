"""Session search: one person's past turns matching a query, grouped by day (newest day
first) with highlighted excerpts; shared by ``flynn sessions search``, ``/search`` and the gateway.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo

from flynn.memory.store import History, MessageRole

MAX_RESULTS = 200
_SESSION_OVERFETCH = 10
_MARKED = re.compile(r"\[([^\[\]\n]+)\]")


@dataclass(frozen=True, slots=True)
class SessionHit:
    """One matching message; ``at`` is in the zone searched, ``excerpt`` marks matches ``[x]``."""

    message_id: int
    session: str
    role: MessageRole
    at: datetime
    excerpt: str


@dataclass(frozen=True, slots=True)
class DayResults:
    day: date
    hits: tuple[SessionHit, ...]


def search_sessions(
    history: History,
    namespace_root: str,
    query: str,
    *,
    limit: int,
    session: str | None = None,
    timezone: tzinfo | None = None,
) -> list[DayResults]:
    """The ``limit`` (at most ``MAX_RESULTS``) best matches among messages stored under
    ``namespace_root`` and nothing else, optionally of one ``session``, grouped by calendar day
    in ``timezone`` (UTC when ``None``): newest day first, each day in the order it was said.

    ``query`` is plain words (search syntax is treated as words). Raises ``ValueError`` for an
    empty ``namespace_root``.
    """
    limit = min(limit, MAX_RESULTS)
    if limit <= 0 or not query.strip():
        return []
    # History filters by namespace in SQL; a session filter comes after, so ask for more.
    wanted = limit if session is None else limit * _SESSION_OVERFETCH
    hits = history.search(namespace_root, query, limit=wanted)
    if session is not None:
        hits = [hit for hit in hits if hit.message.session == session][:limit]
    zone = timezone or UTC
    days: dict[date, list[SessionHit]] = {}
    for hit in hits:
        message = hit.message
        at = message.created_at.astimezone(zone)
        days.setdefault(at.date(), []).append(
            SessionHit(message.id, message.session, message.role, at, " ".join(hit.excerpt.split()))
        )
    return [
        DayResults(day, tuple(sorted(found, key=lambda hit: (hit.at, hit.message_id))))
        for day, found in sorted(days.items(), reverse=True)
    ]


def highlight(excerpt: str) -> str:
    """An excerpt with its ``[match]`` marks as markdown bold (``**match**``)."""
    return _MARKED.sub(r"**\1**", excerpt)


def render_results(days: Sequence[DayResults], query: str) -> str:
    """Plain text for a person: a ``YYYY-MM-DD`` heading per day, one line per message."""
    if not days:
        return f"Nothing we said before matches “{query}”."
    count = sum(len(day.hits) for day in days)
    lines = [f"{count} past message{'' if count == 1 else 's'} matching “{query}”:"]
    for day in days:
        lines.extend(("", day.day.isoformat()))
        lines.extend(
            f"- {hit.at:%H:%M} {hit.session}, {hit.role}: {highlight(hit.excerpt)}"
            for hit in day.hits
        )
    return "\n".join(lines)


def results_json(days: Sequence[DayResults]) -> list[dict[str, object]]:
    """The same results for scripts; excerpts keep their ``[`` ``]`` marks."""
    return [
        {
            "date": day.day.isoformat(),
            "results": [
                {
                    "id": hit.message_id,
                    "session": hit.session,
                    "role": hit.role,
                    "time": hit.at.isoformat(timespec="seconds"),
                    "excerpt": hit.excerpt,
                }
                for hit in day.hits
            ],
        }
        for day in days
    ]
