"""Keys and card numbers shaped like one are removed wherever they sit in a line: the shape
patterns only run where a line holds a word long enough or digits enough, which every one of
them has."""

from __future__ import annotations

import pytest

from flynn.credentials import REDACTED_SECRET, redact

SHAPED = [
    "Xk9mP2qR7vL4nB8wT3yZ6cF1",  # a generated key, 24 characters
    "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",  # a Telegram bot token
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",  # an AWS secret access key
]


@pytest.mark.parametrize("secret", SHAPED)
def test_a_shaped_key_in_a_line_with_a_date_is_removed(secret: str) -> None:
    text, found = redact(f"On 2026-05-01 at 10:30 I used {secret} for the deploy")
    assert secret not in text
    assert REDACTED_SECRET in text
    assert found >= 1


def test_a_card_number_is_removed_with_or_without_spaces() -> None:
    for card in ("4111 1111 1111 1111", "4111-1111-1111-1111", "4111111111111111"):
        text, found = redact(f"my card is {card}, expires 12/27")
        assert card not in text
        assert found == 1


def test_lines_with_short_words_and_few_digits_are_left_alone() -> None:
    line = "Call Ana at 10:30 on 2026-05-01 about the 3 boxes"
    assert redact(line) == (line, 0)
