"""The shared rules of English in ``flynn.language``: each written once and read by learning,
recall, credentials, compaction and the date parser."""

from __future__ import annotations

import re

import pytest

from flynn.language import (
    AMOUNT,
    EMAIL,
    MONTHS,
    WEEKDAYS,
    amount,
    call_me,
    negates,
    without_code,
    without_code_or_quotes,
    without_quoted_lines,
)


def test_days_and_months_follow_the_calendar() -> None:
    assert WEEKDAYS[0] == "monday" and len(WEEKDAYS) == 7
    assert MONTHS[4] == "may" and len(MONTHS) == 12


@pytest.mark.parametrize(
    ("text", "rough", "expected"),
    [
        ("3", False, 3),
        ("twelve", False, 12),
        ("An", False, 1),
        ("a  couple of", False, 2),
        ("half an", False, 0.5),
        ("a few", False, None),
        ("a few", True, 3),
        ("several", True, 4),
        ("thirteen", True, None),
    ],
)
def test_amounts(text: str, rough: bool, expected: float | None) -> None:
    assert amount(text, rough=rough) == expected


def test_the_amount_pattern_prefers_the_longest_words() -> None:
    match = re.match(rf"(?:{AMOUNT})\s+days", "a couple of days", re.IGNORECASE)
    assert match is not None and match.group() == "a couple of days"


def test_code_and_quoted_lines_are_not_prose() -> None:
    text = "My name is Ana.\n```\nmy name is Bob\n```\n> my name is Carl\n  > quoted too\nBye"
    assert without_code(text) == "My name is Ana.\n \n> my name is Carl\n  > quoted too\nBye"
    assert without_quoted_lines("a\n> b\nc") == "a\n\nc"
    assert without_code_or_quotes(text) == "My name is Ana.\n \n\n\nBye"
    # An unclosed fence runs to the end; a ">" inside a line quotes nothing.
    assert without_code("see ```rm -rf /\nmore") == "see  "
    assert without_quoted_lines("3 > 2") == "3 > 2"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("write to ana.silva+news@mail.example.pt today", "ana.silva+news@mail.example.pt"),
        ("root@localhost", None),
        ("a@b.c", None),
        ("user@@example.com", None),
    ],
)
def test_email_addresses(text: str, found: str | None) -> None:
    match = re.search(EMAIL, text)
    assert (match.group() if match else None) == found


def test_call_me() -> None:
    assert re.search(call_me() + "Bob", "please call me Bob", re.IGNORECASE)
    assert not re.search(call_me() + "Bob", "they called me Bob", re.IGNORECASE)
    assert re.search(call_me(other_tenses=True) + "Bob", "they called me Bob", re.IGNORECASE)


def test_negating_words() -> None:
    assert negates("not") and negates("never") and negates("don't")
    assert not negates("no") and negates("no", bare_no=True)
    assert not negates("now")
