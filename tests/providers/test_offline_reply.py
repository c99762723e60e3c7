"""The offline reply as a person reads it, from the memory blocks of the system prompt."""

from __future__ import annotations

from flynn.providers import offline
from flynn.providers.offline import compose_reply, memory_in
from flynn.sessions import prompt


def test_lines_that_come_bulleted_get_one_bullet() -> None:
    system = "\n".join(
        [
            prompt.PROFILE_HEADING,
            "- name: Ana",
            "- location: Lisbon",
            "prefers tea",
            "",
            prompt.RECALL_HEADING,
            prompt.TRUST_CURRENT,
            "[Past conversations, verbatim (trust: high)]",
            "- 2026-11-17 Tue, user: the dentist moved my appointment",
        ]
    )
    lines = compose_reply(memory_in(system)).splitlines()
    assert lines[0].startswith("Hi Ana!")
    assert "- name: Ana" in lines and "- location: Lisbon" in lines and "- prefers tea" in lines
    assert "- 2026-11-17 Tue, user: the dentist moved my appointment" in lines
    assert not [line for line in lines if line.startswith("- -")]


def test_reads_the_headings_prompt_assembly_writes() -> None:
    # providers may not import sessions, so the offline provider keeps its own copies.
    assert offline.PROFILE_HEADING == prompt.PROFILE_HEADING
    assert offline.PATTERNS_HEADING == prompt.PATTERNS_HEADING
    assert offline.RECENT_HEADING == prompt.RECENT_HEADING
    assert offline.RECALL_HEADING == prompt.RECALL_HEADING
