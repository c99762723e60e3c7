"""The part of a long text that answers: a run of its sentences (or lines: a list item, a line of
code) within a token budget, holding the most of a message's words. Used for team documents'
chunks and for long past turns (an assistant's answer of twenty lines, asked about one of them),
so the budget is spent on the line that answers, not on the text around it."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from flynn.tokens import CHARS_PER_TOKEN

_SENTENCE = re.compile(r"(?<=[.!?…])\s+|\n+")
_WORD = re.compile(r"\w+")
STEM_CHARS = 5
"""Words are compared by their first letters, about what stemming keeps ("deploys", "deployed")."""


def passage(text: str, words: AbstractSet[str], *, max_tokens: int) -> str:
    """The run of sentences (or lines) of ``text`` within ``max_tokens`` that holds the most
    of ``words`` (distinct ones, compared by their first ``STEM_CHARS`` letters), the earliest
    such run on a tie, collapsed to single spaces, with '…' where it was cut. Short text is
    returned whole."""
    limit = max_tokens * CHARS_PER_TOKEN
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    sentences = [" ".join(s.split()) for s in _SENTENCE.split(text) if s.strip()]
    stems = {word[:STEM_CHARS] for word in words}
    found = [
        {
            stem
            for word in _WORD.findall(sentence.casefold())
            if (stem := word[:STEM_CHARS]) in stems
        }
        for sentence in sentences
    ]
    # One pass with two ends: the window grows at its end while it fits, then drops its
    # start; the words it holds are counted as it goes (a pasted log of 50,000 short lines
    # costs a pass, not a pass per line).
    counts: dict[str, int] = {}
    best = (-1, 0, 0)  # (words held, start, end)
    end, length = 0, 0
    for start in range(len(sentences)):
        if end < start:  # the last window was one sentence too long to keep
            end, length = start, 0
            counts.clear()
        while end < len(sentences) and length + len(sentences[end]) + 1 <= limit:
            length += len(sentences[end]) + 1
            for stem in found[end]:
                counts[stem] = counts.get(stem, 0) + 1
            end += 1
        if end == start:  # one sentence longer than the limit: it is the window
            held, stop = len(found[start]), start + 1
        else:
            held, stop = len(counts), end
        if held > best[0]:
            best = (held, start, stop)
        if end > start:
            length -= len(sentences[start]) + 1
            for stem in found[start]:
                counts[stem] -= 1
                if not counts[stem]:
                    del counts[stem]
    _, start, end = best
    cut = " ".join(sentences[start:end])
    if len(cut) > limit:
        cut = cut[:limit].rsplit(" ", 1)[0]
    return ("… " if start > 0 else "") + cut + (" …" if end < len(sentences) else "")
