"""The few rules of English that several parts read text with, each written once: what is not the
person's own prose (code, quoted lines), counting words, the days and months, an e-mail address,
"call me", the words that deny or suppose what follows them, and a cheap look before a
case-insensitive search."""

from __future__ import annotations

import re
from collections.abc import Iterable

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
"""Monday first, as ``date.weekday()`` counts; lower case (``calendar.day_name`` follows the
locale)."""
MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
"""January first: ``MONTHS[month - 1]``; lower case."""

# --- what is not prose -----------------------------------------------------------------------

_CODE_BLOCK = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
# Spaces and tabs only before the ">": "\s" would reach back over blank lines.
_QUOTED_LINE = re.compile(r"^[ \t]*>.*$", re.MULTILINE)


def without_code(text: str) -> str:
    """``text`` with each fenced code block (an unclosed one runs to the end) made one space:
    code is not something the person says."""
    return _CODE_BLOCK.sub(" ", text) if "```" in text else text


def without_quoted_lines(text: str) -> str:
    """``text`` without its ``>`` quoted lines (e-mail and Markdown quotes: someone else's
    words)."""
    return _QUOTED_LINE.sub("", text) if ">" in text else text


def without_code_or_quotes(text: str) -> str:
    """``text`` without code blocks and quoted lines: what rules may read as the person's."""
    return without_quoted_lines(without_code(text))


# --- counting --------------------------------------------------------------------------------

_COUNTS = {"a": 1, "an": 1, "a couple of": 2, "couple of": 2, "half an": 0.5, "half a": 0.5}
_COUNTS.update(
    (word, number)
    for number, word in enumerate(
        "one two three four five six seven eight nine ten eleven twelve".split(), start=1
    )
)
NUMBER_WORDS = frozenset(word for word in _COUNTS if " " not in word and len(word) > 2)
""""one" to "twelve": the counts people spell out."""
_ROUGH = {"a few": 3, "few": 3, "several": 4}
"""Not counts at all: what a rough stretch of time ("a few days ago") is taken to mean."""
AMOUNT = r"\d{1,6}|" + "|".join(
    # Longest first, so "a couple of" wins over "a"; spaces match any run of them.
    word.replace(" ", r"\s+")
    for word in sorted((*_COUNTS, *_ROUGH), key=len, reverse=True)
)
"""A regex alternation for an amount: digits, a number word, "a", "a couple of", "half an",
"a few", "several". Which of these a caller takes is ``amount``'s ``rough``."""


def amount(text: str, *, rough: bool = False) -> float | None:
    """The number ``text`` (an ``AMOUNT`` match) says; ``None`` when it is not one, or is a
    rough one ("a few", "several") and ``rough`` is not set: a date written for later must not
    turn "in a few days" into an exact day."""
    text = " ".join(text.casefold().split())
    if text.isdigit():
        return int(text)
    if text in _COUNTS:
        return _COUNTS[text]
    return _ROUGH.get(text) if rough else None


# --- names and addresses ---------------------------------------------------------------------

EMAIL = r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"
"""A regex for an e-mail address: a dotted domain ending in a name of letters
(``ana@example.com``; not ``root@localhost``, not ``a@b.c``)."""


def call_me(*, other_tenses: bool = False) -> str:
    """A regex for "call me " before a name. ``other_tenses`` also takes "called me" and
    "calling me": a name to disbelieve ("nobody ever called me Bob") as well as one to learn."""
    verb = r"call(?:ed|ing)?" if other_tenses else "call"
    return rf"\b{verb}\s+me\s+"


# --- denying and supposing -------------------------------------------------------------------

SUPPOSING = frozenset(
    """
    if unless whether suppose supposing imagine pretend wish hope wonder wondering asked ask said
    says thinks whatever were maybe perhaps doubt let's lets assume assuming hypothetically
    """.split()
)
"""Words before a statement that make it hypothetical or someone else's claim ("if my name were
Bob", "she said she lives in Rome")."""


def negates(word: str, *, bare_no: bool = False) -> bool:
    """Whether the lower-case ``word`` denies what follows it ("not", "never", "don't").
    ``bare_no`` counts "no" too: in a run of words it denies ("no, that is not my name" asks
    for it to count), while a reader of whole clauses meets it as an answer ("no, I'm Bob")."""
    return word in ("not", "never") or word.endswith("n't") or (bare_no and word == "no")


# --- looking before searching ----------------------------------------------------------------


def folded(text: str) -> str | None:
    """``text`` in lower case, for ``holds_any`` to look in before a case-insensitive search;
    ``None`` when ``text`` is not ASCII (case-insensitive matching pairs some other letters
    with ASCII ones, 'ſ' with 's' and 'İ' with 'i', which ``str.lower`` keeps apart)."""
    return text.lower() if text.isascii() else None


def holds_any(lowered: str | None, words: Iterable[str]) -> bool:
    """Whether ``lowered`` (from ``folded``) holds one of ``words`` (lower case); always for
    ``None``. A case-insensitive search through a long alternation costs tens of microseconds
    a line; where a pattern cannot match without one of a few words, a line holding none of
    them is not searched."""
    return lowered is None or any(map(lowered.__contains__, words))
