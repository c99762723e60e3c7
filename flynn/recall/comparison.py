"""Questions that compare two things that happened: "Which came first, buying my bike or the
book club night?", "How long was it between my flu and the dentist?", "Did the wedding happen
before or after I moved?". Each of the two is said in a conversation of its own, in its own
words, so the question is searched as its two parts as well as whole (``parts``), and the
rankings are merged (``merge``): otherwise the part whose words match best fills the first items
with its turn, its neighbours and its look-alikes, and the other is never shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from flynn.recall.items import RecallItem

_END = r"\s*[?.!]*\s*$"
_ORDER = (
    r"(?:first|earlier|earliest|sooner|later|last|latest|before"
    r"|(?:more|most)\s+recent(?:ly)?)"
)
# Each pattern names the two parts ``a`` and ``b``; the first that matches is used.
_PATTERNS = tuple(
    re.compile(pattern, re.IGNORECASE | re.DOTALL)
    for pattern in (
        # "Which came first, A or B?", "What did I do first: A or B?", "Who did I meet first,
        # A or B?"
        rf"\b(?:which|what|who|where)\b[^,:?]{{0,40}}?\b{_ORDER}\b\s*[,:;-]?\s*(?P<a>[^,]+?),?\s+or\s+"
        rf"(?P<b>.+?){_END}",
        # "Did I start the job or move house first?"
        r"^(?:did|was|were|had|have)\s+(?P<a>[^,]+?),?\s+or\s+(?P<b>.+?)\s+"
        rf"(?:first|earlier|sooner|before){_END}",
        # "Was the wedding earlier than the move?"
        r"^(?:was|were|did)\s+(?P<a>.+?)\s+(?:happen\s+|come\s+)?(?:earlier|later|sooner)\s+"
        rf"than\s+(?P<b>.+?){_END}",
        # "A or B: which came first?"
        rf"^(?P<a>.+?),?\s+or\s+(?P<b>.+?)\s*[,:;-]\s*(?:which|what)\b[^?]*\b{_ORDER}\b",
        # "Did A happen before or after B?", "Was A before or after B?"
        r"\b(?:did|was|were|is|has|had)\s+(?P<a>.+?)\s+(?:(?:happen|come|take\s+place)\s+)?"
        rf"(?:before|after)\s+or\s+(?:before|after)\s+(?P<b>.+?){_END}",
        # "How long after A did B?", "How many days before A was B?"
        r"\bhow\s+(?:long|much\s+time|many\s+\w+)\s+(?:after|before)\s+(?P<a>.+?)\s+"
        rf"(?:did|was|were|had|have)\s+(?P<b>.+?){_END}",
        # "How much time passed between A and B?", "How many weeks between A and B?"
        r"\bhow\s+(?:long|much\s+time|many\s+(?:days|weeks|months|years))\b"
        rf"[^?]*?\bbetween\s+(?P<a>.+?)\s+and\s+(?P<b>.+?){_END}",
        # "Did A happen after B?", "Did I A before I B?"
        r"^\s*(?:did|was|were)\s+(?P<a>.+?)\s+(?:(?:happen|come|take\s+place)\s+"
        rf"(?:before|after)\s+|(?:before|after)\s+(?=(?:i|we)\b))(?P<b>.+?){_END}",
    )
)
_QUESTION = re.compile(
    r"\?$|^(?:which|what|who|where|did|was|were|is|has|had|how|when)\b", re.IGNORECASE
)
"""A question ends with a question mark or starts as one; a statement is never split."""
_MIN_CHARS = 3
_MAX_CHARS = 200
"""A part longer than this is not one event but a pattern matched across sentences."""


def parts(text: str) -> tuple[str, str] | None:
    """The two things a comparing question asks about, or None for any other question or a
    statement."""
    # One space between words first: a run of spaces or newlines would let the patterns'
    # neighbouring spaces share it out in ever more ways (seconds for a few hundred).
    text = " ".join(text.split())
    if len(text) > 2 * _MAX_CHARS or not _QUESTION.search(text):
        return None
    for pattern in _PATTERNS:
        match = pattern.search(text)
        if match is None:
            continue
        a, b = (match.group(name).strip(" ,;:-?!.") for name in ("a", "b"))
        if _MIN_CHARS <= len(a) <= _MAX_CHARS and _MIN_CHARS <= len(b) <= _MAX_CHARS:
            return a, b
    return None


def merge(
    rankings: Sequence[Sequence[RecallItem]], limit: int, *, damp: float = 1.0
) -> list[RecallItem]:
    """One ranking from several of the same question (the whole first, then its parts), at
    most ``limit`` items: each ranking's scores are taken relative to its own best, so the best
    of each comes first, then the second best of each, and so on. A part whose best scores
    below the whole's best counts for that much less (to the power ``damp``): a part that
    matched nothing in particular (a question split where it compares nothing) has flat, weak
    scores, which would otherwise all pass the relevance floor (``Recall.relevant``). A turn
    already shown as the one an item ranked for is not shown again (the turns around it may
    be: ``Recall.pack`` leaves out lines already packed). Scores are put back on the first
    ranking's scale."""
    if limit <= 0:
        return []
    tops = [items[0].score if items else 0.0 for items in rankings]
    scale = tops[0] if tops and tops[0] > 0 else max(tops, default=0.0)
    if scale <= 0:
        return []
    relative: list[tuple[float, int, RecallItem]] = []
    for which, (items, best) in enumerate(zip(rankings, tops, strict=True)):
        if best <= 0:
            continue
        weight = 1.0 if which == 0 else min(1.0, best / scale) ** damp
        relative.extend((weight * item.score / best, -which, item) for item in items)
    relative.sort(key=lambda each: (each[0], each[1]), reverse=True)
    merged: list[RecallItem] = []
    shown: set[tuple[str, int]] = set()
    for score, _, item in relative:
        key = (item.kind, item.ref)
        if key in shown:
            continue
        shown.add(key)
        merged.append(replace(item, score=score * scale))
        if len(merged) >= limit:
            break
    return merged
