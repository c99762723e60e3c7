"""Counted nouns as a person reads them: "1 fact", "2 facts", "0 chunks"."""

from __future__ import annotations


def counted(count: int, nouns: str) -> str:
    """``count`` and ``nouns`` (a regular English plural: "facts", "summaries", "distilled
    notes"), made singular for a count of one."""
    if count != 1:
        return f"{count} {nouns}"
    if nouns.endswith("ies"):
        return f"{count} {nouns[:-3]}y"
    return f"{count} {nouns.removesuffix('s')}"
