"""What flynn remembers about one scope, gathered for ``flynn memory show`` and ``export``, and
what it believed about one field over time (``flynn memory show --history FIELD``)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from flynn.identity import MemoryScope
from flynn.memory.fact_keys import RETRACTION_PREFIX, content_words, observation_key
from flynn.memory.person_facts import active_person_facts, person_namespaces
from flynn.memory.store import Documents, Fact, Facts
from flynn.memory.working import WorkingMemory, read_working_memory, render_working_memory


class _Memory(Protocol):
    @property
    def documents(self) -> Documents: ...

    @property
    def facts(self) -> Facts: ...


@dataclass(frozen=True, slots=True)
class MemorySnapshot:
    """The person's one set of facts (whoever learnt each, ``source`` says who) in the order the
    session start shows them: ``profile`` (who they are, then preferences and ways of working)
    and ``patterns``; ``facts`` is both (``--json`` has kept the key)."""

    scope: MemoryScope
    profile: tuple[Fact, ...]
    patterns: tuple[Fact, ...]
    facts: tuple[Fact, ...]
    working: WorkingMemory | None

    def as_json(self) -> dict[str, object]:
        working = None
        if self.working is not None:
            working = {
                "content": self.working.content,
                "updated_at": _iso(self.working.updated_at),
                "expires_at": _iso(self.working.expires_at),
            }
        return {
            "namespace": self.scope.root,
            "shared": self.scope.shared,
            "profile": [_fact_json(f) for f in self.profile],
            "patterns": [_fact_json(f) for f in self.patterns],
            "working_memory": working,
            "facts": [_fact_json(f) for f in self.facts],
        }

    def as_text(self) -> str:
        lines = [f"Memory for {self.scope.root}", ""]
        for title, facts in (("Profile", self.profile), ("Patterns", self.patterns)):
            lines.append(f"{title}:")
            lines.extend(_fact_text(f) for f in facts) if facts else lines.append("  (none)")
            lines.append("")
        lines.append("Working memory:")
        if self.working is None:
            lines.append("  (none, or expired)")
        else:
            lines.append(f"  Updated: {_iso(self.working.updated_at)}")
            lines.append(f"  Expires: {_iso(self.working.expires_at)}")
            lines.extend(f"  {line}" for line in self.working.content.splitlines())
        return "\n".join(lines)

    def as_markdown(self) -> str:
        parts = [f"# Memory: {self.scope.root}"]
        for title, facts in (("Profile", self.profile), ("Patterns", self.patterns)):
            body = "\n".join(_fact_markdown(f) for f in facts) or "(none)"
            parts.append(f"## {title}\n\n{body}")
        if self.working is not None:
            # The seed's file format, verbatim, so it can be read back or diffed.
            parts.append(render_working_memory(self.working))
        return "\n\n".join(parts) + "\n"


def memory_snapshot(memory: _Memory, scope: MemoryScope, *, now: datetime) -> MemorySnapshot:
    facts = active_person_facts(memory.facts, scope)
    return MemorySnapshot(
        scope=scope,
        profile=tuple(fact for fact in facts if fact.kind != "action"),
        patterns=tuple(fact for fact in facts if fact.kind == "action"),
        facts=tuple(facts),
        working=read_working_memory(memory.documents, scope.working, now=now),
    )


@dataclass(frozen=True, slots=True)
class FactHistory:
    """Every row ever stored for one field in a scope (profile, patterns and extracted facts),
    oldest first. A row was believed from ``created_at`` until it was superseded or retired
    (``updated_at``); an active row still is; a retraction row (status ``deleted``, value
    ``no longer: ...``) records when the belief it supersedes ended and was never believed."""

    scope: MemoryScope
    field: str
    rows: tuple[Fact, ...]

    def as_json(self) -> dict[str, object]:
        return {
            "namespace": self.scope.root,
            "field": self.field,
            "history": [_history_json(fact) for fact in self.rows],
        }

    def as_text(self) -> str:
        lines = [f"History of {self.field!r} for {self.scope.root} (oldest first):"]
        if not self.rows:
            lines.append("  (nothing stored)")
        for fact in self.rows:
            start, end = _believed(fact)
            when = (
                f"recorded {_iso(fact.created_at)}"
                if _is_retraction(fact)
                else f"believed {_iso(start)} -> {_iso(end) if end else 'now'}"
            )
            replaces = f", replaces [{fact.supersedes}]" if fact.supersedes else ""
            lines.append(f"  [{fact.id}] {fact.value}")
            lines.append(
                f"      {fact.status}, {fact.source}, confidence {fact.confidence:.2f}, "
                f"{fact.namespace}; {when}{replaces}"
            )
        return "\n".join(lines)


def fact_history(memory: _Memory, scope: MemoryScope, field: str) -> FactHistory:
    """The history of ``field`` as a person would type it ("time zone", ``home_town``); when no
    field has that name, the whole chains of the observations it names: by their object
    ("sushi" for "prefers sushi" then "dislikes sushi"), their words, or their kind of predicate
    ("preference", "working on")."""
    words = field.replace("_", " ").casefold().split()
    namespaces = person_namespaces(scope)
    rows = [fact for ns in namespaces for fact in memory.facts.history(ns, "_".join(words))]
    if not rows and words:
        text = " ".join(words)
        rows = [
            fact
            for ns in namespaces
            for fact in _chains_about(memory.facts.history(ns, None), text)
        ]
        field = text if rows else field
    rows.sort(key=lambda fact: (fact.created_at, fact.id))
    return FactHistory(scope, field, tuple(rows))


# What a person may call every observation with these predicates.
_PREDICATE_NAMES = {
    "preference": ("prefers", "dislikes"),
    "preferences": ("prefers", "dislikes"),
    "like": ("prefers",),
    "likes": ("prefers",),
    "dislike": ("dislikes",),
    "working": ("working on",),
    "work": ("working on",),
}


def _chains_about(facts: list[Fact], text: str) -> list[Fact]:
    """The whole supersession chains (a chain stays in one namespace) of ``facts`` through
    the rows that are about ``text``."""
    predicates = _PREDICATE_NAMES.get(text, ())
    wanted = content_words(text)
    by_id = {fact.id: fact for fact in facts}
    successor = {fact.supersedes: fact for fact in facts if fact.supersedes is not None}
    chained: dict[int, Fact] = {}
    for fact in facts:
        value = " ".join(fact.value.removeprefix(RETRACTION_PREFIX).casefold().split())
        key = observation_key(value)
        if not (
            value == text
            or (key is not None and (key[0] == text or key[0] in predicates))
            or (wanted and wanted <= content_words(value))
        ):
            continue
        older: Fact | None = fact
        while older is not None and older.id not in chained:
            chained[older.id] = older
            older = by_id.get(older.supersedes) if older.supersedes is not None else None
        newer = successor.get(fact.id)
        while newer is not None and newer.id not in chained:
            chained[newer.id] = newer
            newer = successor.get(newer.id)
    return list(chained.values())


def _is_retraction(fact: Fact) -> bool:
    return fact.status == "deleted" and fact.value.startswith(RETRACTION_PREFIX)


def _believed(fact: Fact) -> tuple[datetime, datetime | None]:
    """When the row started and stopped being believed (``None``: it still is)."""
    return fact.created_at, None if fact.status == "active" else fact.updated_at


def _history_json(fact: Fact) -> dict[str, object]:
    start, end = _believed(fact)
    retraction = _is_retraction(fact)
    return {
        "id": fact.id,
        "namespace": fact.namespace,
        "kind": fact.kind,
        "value": fact.value,
        "status": fact.status,
        "source": fact.source,
        "confidence": fact.confidence,
        "supersedes": fact.supersedes,
        "retraction": retraction,
        "created_at": _iso(fact.created_at),
        "believed_from": None if retraction else _iso(start),
        "believed_until": None if retraction or end is None else _iso(end),
    }


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _fact_json(fact: Fact) -> dict[str, object]:
    return {
        "id": fact.id,
        "kind": fact.kind,
        "field": fact.field,
        "value": fact.value,
        "confidence": fact.confidence,
        "source": fact.source,
        "updated_at": _iso(fact.updated_at),
    }


def _fact_text(fact: Fact) -> str:
    label = f"{fact.field}: " if fact.field else ""
    return f"  [{fact.id}] {label}{fact.value}  ({fact.source}, {fact.confidence:.2f})"


def _fact_markdown(fact: Fact) -> str:
    label = f"**{fact.field}**: " if fact.field else ""
    return f"- {label}{fact.value} _(source: {fact.source}, confirmed {fact.updated_at:%Y-%m-%d})_"
