"""The session start's "who you're talking to" block for a person with 300 varied facts (rules,
the ``remember`` tool and the extraction model; identity, relatives, preferences, projects,
patterns; learnt over 300 days): its estimated tokens against ``memory.profile_max_tokens``, how
many facts it shows, and the block itself. Run from the repository root:

    .venv/bin/python tools/profile_figures.py [BUDGET]
"""

from __future__ import annotations

import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from flynn.identity import MemoryScope
from flynn.memory.store import FactKind, FactSource, NewFact
from flynn.memory.stores import SqliteMemory
from flynn.sessions.profile import ProfileCache
from flynn.sessions.prompt import PROFILE_MAX_TOKENS, build_session_context
from flynn.tokens import estimate_tokens

START = datetime(2025, 6, 1, 9, 0, tzinfo=UTC)
SCOPE = MemoryScope("users/ana", shared=True, user="ana")
IDENTITY = [
    ("name", "Ana Ribeiro", "rule"),
    ("location", "Porto, Portugal", "llm"),
    ("employer", "Acme Logistics", "llm"),
    ("job_title", "staff engineer", "llm"),
    ("partner_name", "Joao", "llm"),
    ("daughter_name", "Ines", "tool"),
    ("dog_name", "Rex", "llm"),
    ("timezone", "Europe/Lisbon", "rule"),
    ("birthday", "14 May", "tool"),
    ("hometown", "Braga", "llm"),
]
TOPICS = [
    "green tea",
    "hiking in Geres",
    "Rust",
    "jazz records",
    "sourdough",
    "board games",
    "cycling to work",
    "sci-fi novels",
    "the billing migration",
    "Postgres tuning",
    "short answers",
    "bullet points",
    "morning meetings",
    "code review on Fridays",
    "Portuguese poetry",
]
TOOLS = ["neovim", "tmux", "Linear", "Figma", "Obsidian", "Grafana", "Terraform", "k9s"]


def facts() -> list[tuple[str, FactKind, str | None, str, FactSource]]:
    """300 facts: (namespace, kind, field, value, source), oldest first."""
    made: list[tuple[str, FactKind, str | None, str, FactSource]] = []
    for field, value, source in IDENTITY:
        made.append((SCOPE.profile, "profile", field, value, source))  # type: ignore[arg-type]
    number = 0
    while len(made) < 300:
        topic = TOPICS[number % len(TOPICS)]
        turn = number % 6
        if turn == 0:
            made.append((SCOPE.profile, "observation", None, f"prefers {topic}", "llm"))
        elif turn == 1:
            made.append(
                (SCOPE.profile, "observation", None, f"working on {topic} ({number})", "llm")
            )
        elif turn == 2:
            tool = TOOLS[number % len(TOOLS)]
            made.append((SCOPE.profile, "profile", f"tool_{number}", tool, "llm"))
        elif turn == 3:
            said = f"mentioned {topic} on day {number}"
            made.append((SCOPE.profile, "observation", None, said, "tool" if number % 4 else "llm"))
        elif turn == 4:
            made.append((SCOPE.patterns, "action", f"do {number}", f"run task {number}", "llm"))
        else:
            made.append((SCOPE.profile, "observation", None, f"dislikes {topic} #{number}", "llm"))
        number += 1
    return made


def main() -> None:
    budget = int(sys.argv[1]) if len(sys.argv) > 1 else PROFILE_MAX_TOKENS
    with (
        tempfile.TemporaryDirectory() as folder,
        SqliteMemory.open(Path(folder) / "f.db") as memory,
    ):
        for day, (namespace, kind, field, value, source) in enumerate(facts()):
            new = NewFact(namespace, kind, value, field=field, source=source, confidence=0.85)
            memory.facts.add(new, now=START + timedelta(days=day))
        lines = ProfileCache(memory.facts, SCOPE).current().lines
        block = build_session_context(
            lines, None, proactive_greeting=False, profile_max_tokens=budget
        )
    shown = sum(1 for line in block.splitlines() if line.startswith("- "))
    print(f"facts: {len(lines)}, budget: {budget} tokens")
    print(f"block: {estimate_tokens(block)} tokens (estimate), {shown} facts shown")
    print("all facts:", sum(estimate_tokens(line) + 1 for line in lines), "tokens")
    print()
    print(block)


if __name__ == "__main__":
    main()
