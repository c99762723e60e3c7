"""The offline reply as a person reads it, from memory as the orchestrator hands it over."""

from __future__ import annotations

from flynn.providers.base import MemoryView
from flynn.providers.offline import compose_reply


def test_lines_that_come_bulleted_get_one_bullet() -> None:
    memory = MemoryView(
        user_name="Ana",
        facts=("- name: Ana", "- location: Lisbon", "prefers tea"),
        recalled=("- 2026-11-17 Tue, user: the dentist moved my appointment",),
    )
    lines = compose_reply(memory).splitlines()
    assert "- name: Ana" in lines and "- location: Lisbon" in lines and "- prefers tea" in lines
    assert "- 2026-11-17 Tue, user: the dentist moved my appointment" in lines
    assert not [line for line in lines if line.startswith("- -")]
