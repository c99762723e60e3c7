"""Counts read as English: one of a thing is singular."""

from __future__ import annotations

from flynn.plurals import counted


def test_one_is_singular_and_every_other_count_plural() -> None:
    assert counted(1, "facts") == "1 fact"
    assert counted(1, "summaries") == "1 summary"
    assert counted(1, "distilled notes") == "1 distilled note"
    assert counted(0, "chunks") == "0 chunks"
    assert counted(2, "mentions") == "2 mentions"
