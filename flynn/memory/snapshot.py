"""What flynn remembers about one scope, gathered for ``flynn memory show`` and ``export``."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from flynn.identity import MemoryScope
from flynn.memory.store import Documents, Fact, Facts
from flynn.memory.working import WorkingMemory, read_working_memory, render_working_memory


class _Memory(Protocol):
    @property
    def documents(self) -> Documents: ...

    @property
    def facts(self) -> Facts: ...


@dataclass(frozen=True, slots=True)
class MemorySnapshot:
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
        lines.append("")
        lines.append("Facts:")
        lines.extend(_fact_text(f) for f in self.facts) if self.facts else lines.append("  (none)")
        return "\n".join(lines)

    def as_markdown(self) -> str:
        parts = [f"# Memory: {self.scope.root}"]
        for title, facts in (
            ("Profile", self.profile),
            ("Patterns", self.patterns),
            ("Facts", self.facts),
        ):
            body = "\n".join(_fact_markdown(f) for f in facts) or "(none)"
            parts.append(f"## {title}\n\n{body}")
        if self.working is not None:
            # The seed's file format, verbatim, so it can be read back or diffed.
            parts.append(render_working_memory(self.working))
        return "\n\n".join(parts) + "\n"


def memory_snapshot(memory: _Memory, scope: MemoryScope, *, now: datetime) -> MemorySnapshot:
    return MemorySnapshot(
        scope=scope,
        profile=tuple(memory.facts.active(scope.profile)),
        patterns=tuple(memory.facts.active(scope.patterns)),
        facts=tuple(memory.facts.active(scope.facts)),
        working=read_working_memory(memory.documents, scope.working, now=now),
    )


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
    return f"- {label}{fact.value} _(source: {fact.source}, since {fact.updated_at:%Y-%m-%d})_"
