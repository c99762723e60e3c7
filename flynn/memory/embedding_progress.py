"""How far embedding the stored messages has come, person by person: what ``flynn memory embed``
shows, and the order the daemon's catch-up goes in (the most recently active person first)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from flynn.memory.database import Database
from flynn.memory.namespaces import namespace_root
from flynn.memory.sql import NamedRow
from flynn.memory.windows import LONG_CHARS, passage_id

# One pass over the messages; the embeddings' primary key (kind, ref_id, model) finds each
# message's vector, so a message counts once. A long message counts once its later windows have
# theirs too (``flynn.memory.windows``): the catch-up embeds those of turns stored before them.
_BY_NAMESPACE = f"""
SELECT m.namespace, count(*) AS messages, count(e.ref_id) AS embedded, max(m.id) AS newest
FROM messages AS m
LEFT JOIN embeddings AS e ON e.kind = 'message' AND e.ref_id = m.id AND e.model = ?
    AND (length(m.content) <= {LONG_CHARS} OR EXISTS (
        SELECT 1 FROM embeddings AS w WHERE w.kind = 'passage'
        AND w.ref_id = {passage_id(0, 1)} + m.id * {passage_id(1, 0)} AND w.model = e.model
    ))
WHERE m.offline = 0
GROUP BY m.namespace
"""


@dataclass(frozen=True, slots=True)
class PersonProgress:
    """One person's (or one session's, with memory per session) messages and their vectors."""

    root: str
    """The namespace root (``namespace_root``): ``user``, ``users/alice``, ``sessions/x``."""
    messages: int
    """Stored messages that are embedded (the offline provider's replies never are)."""
    embedded: int
    """Of those, how many have a vector of the model (a long one: and its later windows)."""
    newest: int
    """The id of their newest message: when they were last active, in the database's order."""

    @property
    def missing(self) -> int:
        return self.messages - self.embedded


def embedding_progress(db: Database, model: str) -> list[PersonProgress]:
    """Every person with stored messages, the most recently active first, with how many of
    their messages have a vector of ``model``."""
    return people_of(db.fetchall(_BY_NAMESPACE, (model,)))


def people_of(rows: Iterable[NamedRow]) -> list[PersonProgress]:
    """``embedding_progress`` from rows of namespaces (any backend's): ``namespace``,
    ``messages``, ``embedded`` and ``newest``."""
    totals: dict[str, list[int]] = {}
    for row in rows:
        counts = totals.setdefault(namespace_root(row["namespace"]), [0, 0, 0])
        counts[0] += int(row["messages"])
        counts[1] += int(row["embedded"])
        counts[2] = max(counts[2], int(row["newest"]))
    people = [PersonProgress(root, *counts) for root, counts in totals.items()]
    return sorted(people, key=lambda person: person.newest, reverse=True)
