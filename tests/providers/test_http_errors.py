"""Retry-After parsing and key scrubbing, shared by the HTTP providers."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from flynn.providers.http_errors import REDACTED, retry_after_seconds, safe_message

NOW = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "3"}, 3.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after": "Mon, 02 Nov 2026 09:31:00 GMT"}, 60.0),
        ({"retry-after": "Mon, 02 Nov 2026 09:00:00 GMT"}, 0.0),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-4"}, None),
        ({"retry-after": "nan"}, None),
        ({}, None),
    ],
)
def test_retry_after_seconds(headers: dict[str, str], expected: float | None) -> None:
    assert retry_after_seconds(headers, NOW) == expected


def test_safe_message_scrubs_the_key() -> None:
    assert safe_message("bad key sk-123 given", "sk-123") == f"bad key {REDACTED} given"
    assert safe_message("nothing to hide", None) == "nothing to hide"
