"""Splitting long replies to a channel's limit without breaking code blocks.

Telegram counts UTF-16 code units (an emoji is two), Discord counts characters. Splits prefer a
paragraph break, then a line break, then a space; a code fence open at a split is closed at the end
of that part and reopened, with its language, at the start of the next.
"""

from __future__ import annotations

import re

from flynn.channels.base import LengthUnit

_FENCE = re.compile(r"^\s*```(\S*)")


def measure(text: str, unit: LengthUnit) -> int:
    if unit == "utf16":
        return len(text.encode("utf-16-le")) // 2
    return len(text)


def _cut_index(text: str, limit: int, unit: LengthUnit) -> int:
    """The largest prefix length (in characters) whose measure fits ``limit``."""
    if unit == "chars":
        return min(len(text), limit)
    total = 0
    for index, char in enumerate(text):
        total += 2 if ord(char) > 0xFFFF else 1
        if total > limit:
            return index
    return len(text)


def _open_fence(text: str, fence: str | None) -> str | None:
    """The fence language still open after ``text`` (``""`` for a bare fence), given the fence
    open before it."""
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if match:
            fence = None if fence is not None else match.group(1)
    return fence


def split_text(text: str, limit: int, unit: LengthUnit = "chars") -> list[str]:
    """``text`` in parts that each measure at most ``limit``; ``[]`` for blank text."""
    if not text.strip():
        return []
    if limit < 32:
        raise ValueError("limit too small to split sensibly")
    parts: list[str] = []
    rest = text
    fence: str | None = None
    while rest:
        prefix = f"```{fence}\n" if fence is not None else ""
        if measure(prefix + rest, unit) <= limit:
            parts.append(prefix + rest)
            break
        # Room for the reopening prefix and a closing fence, if one turns out to be needed.
        budget = limit - measure(prefix, unit) - len("\n```")
        window = rest[: _cut_index(rest, budget, unit)]
        cut = -1
        for separator in ("\n\n", "\n", " "):
            position = window.rfind(separator)
            if position > len(window) // 3:
                cut = position + len(separator)
                break
        if cut <= 0:
            cut = len(window)
            # Do not split a surrogate-free character pair such as a flag emoji's halves.
            while 0 < cut < len(rest) and 0xDC00 <= ord(rest[cut]) <= 0xDFFF:
                cut -= 1
        chunk, rest = rest[:cut], rest[cut:]
        after = _open_fence(chunk, fence)
        body = prefix + chunk.rstrip("\n")
        if after is not None:
            body += "\n```"
        parts.append(body)
        fence = after
        rest = rest.lstrip("\n") if fence is None else rest
    return [part for part in parts if part.strip()]
