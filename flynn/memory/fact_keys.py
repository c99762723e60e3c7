"""How stored facts are told apart and matched: the key of an observation ("prefers green tea"
is about "green tea"), the words that say what a fact is about, and how a retraction is written.
Shared by the stores (forgetting, the overview) and reconciliation."""

from __future__ import annotations

import re

from flynn.memory.fts import STOPWORDS

RETRACTION_PREFIX = "no longer: "
"""How DELETE is recorded: nothing is physically deleted here. The old row is marked superseded
and a retraction row supersedes it: status ``deleted`` (so it never reaches a prompt), the old
row's kind and field, value ``no longer: <old value>``. The chain then says when the belief ended.
"""

# Keyed observations: the predicate is the relation, the rest is the object it is about.
PREDICATES = ("prefers", "dislikes", "working on")
_WORD = re.compile(r"\w+")
_DATE = re.compile(
    r"\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)day\s+)?\d{4}-\d\d-\d\d\b", re.IGNORECASE
)


def normalised(text: str) -> str:
    return " ".join(text.casefold().split())


def observation_key(value: str) -> tuple[str, str] | None:
    """``(predicate, object)`` of a keyed observation ("prefers green tea" -> ("prefers",
    "green tea")), or ``None`` for free text."""
    lowered = normalised(value)
    for predicate in PREDICATES:
        if lowered.startswith(predicate + " ") and len(lowered) > len(predicate) + 1:
            return predicate, lowered[len(predicate) + 1 :]
    return None


def content_words(text: str) -> frozenset[str]:
    """Words that say what a fact is about: no stopwords, and no resolved dates, which would
    make any two facts about the same day look alike."""
    text = _DATE.sub(" ", text.casefold())
    return frozenset(word for word in _WORD.findall(text) if word not in STOPWORDS)
