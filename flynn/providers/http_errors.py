"""Reading a vendor's HTTP error at the provider edge: how long it asked us to wait, and a message
that is safe to log (it never carries the API key).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

REDACTED = "[redacted]"


def utc_now() -> datetime:
    return datetime.now(UTC)


def retry_after_seconds(headers: Mapping[str, str], now: datetime) -> float | None:
    """Seconds the server asked us to wait, from ``retry-after-ms`` or ``retry-after``.

    ``retry-after`` is either delta-seconds or an HTTP date (RFC 9110); a date in the past means
    "now". Returns None when the server gave no usable hint.
    """
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    value = headers.get("retry-after")
    if not value:
        return None
    seconds = _number(value)
    if seconds is not None:
        return seconds
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    if not math.isfinite(number) or number < 0:
        return None
    return number


def safe_message(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of ``secret`` replaced, for servers that echo the key."""
    if secret:
        text = text.replace(secret, REDACTED)
    return text
