"""What a distillation reads of one person: their recent messages (in every session, on every
channel), their active facts, their working memory and their open tasks; and the digest made
of it without a model (the short tier, and the mid and long tiers when no model is configured).

Only the person's own words are quoted: forwarded or quoted material, and lines that try to
give the assistant orders, are left out, since these notes reach every later prompt.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, tzinfo

from flynn.errors import UnreadableFile
from flynn.learning.own_words import is_injection, own_words
from flynn.learning.secrets import redact_secrets
from flynn.memory.store import Documents, Fact, Facts, History, StoredMessage
from flynn.memory.working import read_working_memory
from flynn.people.store import PersonFiles
from flynn.people.tasks import load_tasks
from flynn.tokens import estimate_tokens

MAX_MESSAGES = 5000
"""The most recent messages read for one distillation; more would not fit any budget."""


@dataclass(frozen=True, slots=True)
class Material:
    """One person's memory, as of ``now``."""

    namespace: str
    name: str | None
    messages: tuple[StoredMessage, ...]
    """Newest first."""
    facts: tuple[Fact, ...]
    """Active profile facts, patterns and observations, newest first."""
    working: str
    """Their working memory ("what we were doing"), '' when there is none or it expired."""
    open_tasks: tuple[str, ...]
    now: datetime

    @property
    def is_empty(self) -> bool:
        return not (self.messages or self.facts or self.working or self.open_tasks)


def gather(
    namespace: str,
    *,
    facts: Facts,
    history: History,
    documents: Documents,
    files: PersonFiles,
    now: datetime,
    days: int,
) -> Material:
    """The person's material: messages of the last ``days`` days, facts, working memory, tasks.
    Raises ``StoreError`` when the database cannot be read."""
    messages = history.between(
        namespace, now - timedelta(days=days), now + timedelta(seconds=1), limit=MAX_MESSAGES
    )
    rows: list[Fact] = []
    for kind in ("profile", "patterns", "facts"):
        rows += facts.active(f"{namespace}/{kind}")
    rows.sort(key=lambda fact: fact.updated_at, reverse=True)
    names = [fact.value for fact in rows if fact.field == "name"]
    working = read_working_memory(documents, f"{namespace}/working", now=now)
    return Material(
        namespace=namespace,
        name=names[0] if names else None,
        messages=tuple(
            m for m in messages if m.role in ("user", "assistant") and m.content and not m.offline
        ),
        facts=tuple(rows),
        working=working.content.strip() if working is not None else "",
        open_tasks=_open_tasks(files, namespace),
        now=now,
    )


def _open_tasks(files: PersonFiles, namespace: str) -> tuple[str, ...]:
    try:
        tasks = load_tasks(files, namespace)
    except UnreadableFile:
        return ()  # a broken list is the tasks tools' to report, not the notes'
    return tuple(task.text for task in tasks if not task.done)


@dataclass(frozen=True, slots=True)
class Shape:
    """How a digest without a model reads its material."""

    replies: bool
    """Quote the assistant's replies too (the short tier), or only the person."""
    clip: int
    """Characters kept of each message."""
    by_month: bool = False
    """Group the messages by month (the long tier) rather than by day."""


SHORT = Shape(replies=True, clip=300)
MID = Shape(replies=False, clip=160)
LONG = Shape(replies=False, clip=120, by_month=True)


def digest(material: Material, *, budget: int, zone: tzinfo, shape: Shape) -> str:
    """The person's material as notes within ``budget`` tokens: what we were doing, open tasks,
    what was learnt (newest first), then the most recent messages that fit, oldest first under
    their day's (or month's) heading. '' when there is nothing to say."""
    sections: list[str] = []
    left = budget
    if material.working:
        text = _clip_tokens(material.working, budget // 4)
        sections.append(f"## What we were doing\n{text}")
        left -= estimate_tokens(sections[-1])
    for title, lines, share in (
        ("Open tasks", [f"- {task}" for task in material.open_tasks], budget // 10),
        ("What I know about them", [_fact_line(fact) for fact in material.facts], budget // 4),
    ):
        kept = _lines_within(lines, min(share, left))
        if kept:
            sections.append(f"## {title}\n" + "\n".join(kept))
            left -= estimate_tokens(sections[-1])
    talk = _conversation(material, left - 10, zone, shape)
    if talk:
        heading = "## Recent months" if shape.by_month else "## Recent days"
        sections.append(f"{heading}\n{talk}")
    return "\n\n".join(sections)


def _conversation(material: Material, budget: int, zone: tzinfo, shape: Shape) -> str:
    """The newest messages that fit ``budget``, grouped oldest first."""
    who = material.name or "They"
    chosen: list[tuple[datetime, str]] = []
    seen: set[tuple[str, str]] = set()
    spent = 0
    for message in material.messages:
        if message.role == "assistant" and not shape.replies:
            continue
        # Replies are the assistant's own words, kept shorter: what was asked matters most.
        clip = shape.clip if message.role == "user" else shape.clip // 2
        line = _message_line(message, who, clip, zone, with_time=not shape.by_month)
        said = (message.role, line.partition(": ")[2])
        if not line or said in seen:
            continue  # the same words again (a repeated question, a stock reply) add nothing
        seen.add(said)
        cost = estimate_tokens(line) + 1
        if spent + cost > budget:
            break
        spent += cost
        chosen.append((message.created_at.astimezone(zone), line))
    chosen.reverse()
    out: list[str] = []
    heading = ""
    for when, line in chosen:
        group = f"### {when:%B %Y}" if shape.by_month else f"### {when:%A %Y-%m-%d}"
        if group != heading:
            if out:
                out.append("")
            out.append(group)
            heading = group
        out.append(line)
    return "\n".join(out)


def _message_line(
    message: StoredMessage, who: str, clip: int, zone: tzinfo, *, with_time: bool
) -> str:
    text = own_words(message.content) if message.role == "user" else message.content
    text = " ".join(text.split())
    if not text or is_injection(text):
        return ""
    text, _ = redact_secrets(text)
    if len(text) > clip:
        text = text[: clip - 1].rstrip() + "…"
    speaker = who if message.role == "user" else "Flynn"
    when = f"{message.created_at.astimezone(zone):%H:%M} " if with_time else ""
    return f"- {when}{speaker}: {text}"


def _fact_line(fact: Fact) -> str:
    if fact.kind == "action" and fact.field:
        return f"- when they say {fact.field!r}: {fact.value}"
    return f"- {fact.field}: {fact.value}" if fact.field else f"- {fact.value}"


def _lines_within(lines: list[str], budget: int) -> list[str]:
    kept: list[str] = []
    spent = 0
    for raw in lines:
        if is_injection(raw):
            continue
        line, _ = redact_secrets(raw)
        cost = estimate_tokens(line) + 1
        if spent + cost > budget:
            break
        kept.append(line)
        spent += cost
    return kept


def _clip_tokens(text: str, budget: int) -> str:
    kept = _lines_within(text.splitlines(), budget)
    return "\n".join(kept).strip()
