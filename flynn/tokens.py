"""Token estimation without a tokenizer: about four characters per token.

Exact counts come from the provider's reported usage; this estimate only covers what was added since
(and budgets such as ``working_memory_max_tokens``). tiktoken is not used: it downloads its
encodings on first use, which fails on an offline machine.
"""

from __future__ import annotations

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    """Estimated token count of ``text``; never zero for non-empty text."""
    if not text:
        return 0
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def truncate_to_tokens(text: str, max_tokens: int) -> str:
    """``text`` cut to at most ``max_tokens`` estimated tokens, preferably at a line or word
    boundary."""
    limit = max_tokens * CHARS_PER_TOKEN
    if len(text) <= limit:
        return text
    cut = text[:limit]
    boundary = max(cut.rfind("\n"), cut.rfind(" "))
    if boundary >= limit * 3 // 4:
        cut = cut[:boundary]
    return cut.rstrip()
