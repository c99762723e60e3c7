"""Okapi BM25 in Python over the full-text index's posting lists: recall weighs every message that
matches a question's words from the lists alone, and reads only the rows it keeps.

The weights are FTS5's (``bm25()`` with its defaults), with each word counted once per message:
in a chat turn a content word rarely occurs twice, and the lists do not say.
"""

from __future__ import annotations

import functools
import heapq
import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from operator import itemgetter
from typing import TypeVar

from flynn.memory.store import Postings

Row = TypeVar("Row")

K1 = 1.2
B = 0.75
_FLOOR = 1e-6
"""FTS5's floor for the idf of a word found in most rows: it still counts, a little."""


def idf(documents: int, containing: int) -> float:
    """How much finding a word says, when ``containing`` of ``documents`` rows have it."""
    value = math.log((documents - containing + 0.5) / (containing + 0.5))
    return value if value > 0 else _FLOOR


def length_factor(length: int, average: float) -> float:
    """What one occurrence of a word is worth in a row of ``length`` words: more in a short
    row than in a long one, 1.0 at the average length."""
    return (K1 + 1) / (1 + K1 * (1 - B + B * length / average))


class TermMatches:
    """Posting lists turned around: the searched words each matching row contains, what each
    word weighs, and what each row's words weigh together.

    ``scale`` multiplies a word's weight (a related word counts for less than an asked one), and
    ``stands_for`` makes a word an alternative to another: a row holding both ("kitchen" and
    "cabinets" for "kitchen") counts only the heavier, once."""

    def __init__(
        self,
        postings: Postings,
        scale: Mapping[str, float] | None = None,
        stands_for: Mapping[str, str] | None = None,
    ) -> None:
        scale = scale or {}
        self._group = stands_for or {}
        self.weights = {
            term: idf(max(postings.documents, len(ids)), len(ids)) * scale.get(term, 1.0)
            for term, ids in postings.terms.items()
        }
        words: dict[int, list[str]] = {}
        totals: dict[int, float] = {}
        # Heaviest first, so each row's list is in that order and an alternative found after
        # its word adds nothing.
        ordered = sorted(postings.terms.items(), key=lambda item: -self.weights[item[0]])
        group = self._group
        for term, ids in ordered:
            weight = self.weights[term]
            key = group.get(term, term)
            for row in ids:
                found = words.get(row)
                if found is None:
                    words[row] = [term]
                    totals[row] = weight
                    continue
                if not group or all(group.get(other, other) != key for other in found):
                    totals[row] += weight
                found.append(term)
        self._words = words
        self._totals = totals

    def __len__(self) -> int:
        """How many rows matched some word."""
        return len(self._totals)

    def words(self, row: int) -> Collection[str]:
        """The searched words row ``row`` contains (none if it matched no list)."""
        return self._words.get(row, ())

    def weight(self, row: int, leave_out: Collection[str] = ()) -> float:
        """The summed idf of the words row ``row`` contains, but those in ``leave_out``."""
        if not leave_out:
            return self._totals.get(row, 0.0)
        total = 0.0
        counted: set[str] = set()
        group = self._group
        for term in self._words.get(row, ()):  # heaviest first
            key = group.get(term, term)
            if term in leave_out or key in counted:
                continue
            counted.add(key)
            total += self.weights[term]
        return total

    def best(self, limit: int, *, leave_out: Collection[str] = ()) -> list[tuple[int, float]]:
        """At most ``limit`` row ids with their summed idf, best first (newest first among
        equals): the rows worth reading, before their lengths are known."""
        if leave_out:
            totals = {row: self.weight(row, leave_out) for row in self._words}
            weighed = [(row, total) for row, total in totals.items() if total > 0]
        else:
            weighed = list(self._totals.items())
        # A sort beats a heap unless the limit is a small part of the rows.
        if limit * 8 < len(weighed):
            return heapq.nlargest(limit, weighed, key=_WEIGHT_THEN_ROW)
        weighed.sort(key=_WEIGHT_THEN_ROW, reverse=True)
        return weighed[:limit]


_WEIGHT_THEN_ROW = itemgetter(1, 0)


def read_best(
    matches: TermMatches,
    read: Callable[[Sequence[int]], Iterable[Row]],
    key: Callable[[Row], int],
    text: Callable[[Row], str],
    *,
    limit: int,
    leave_out: Collection[str] = (),
    pages: int = 4,
    max_length: int = 0,
) -> list[tuple[float, Row]]:
    """The best rows by bm25, best first, at most ``limit``.

    Ids are ranked by summed idf and read ``limit`` at a time through ``read``, which leaves out
    rows out of scope (another namespace's, say), until half a page was kept or ``pages`` were
    read; what was read is then scored with its length (in words of ``text``), at most
    ``max_length`` when set (a passage of a long row is what matches)."""
    if limit <= 0:
        return []
    ranking = [row for row, _ in matches.best(limit * pages, leave_out=leave_out)]
    found: list[Row] = []
    for start in range(0, len(ranking), limit):
        found.extend(read(ranking[start : start + limit]))
        if 2 * len(found) >= limit:
            break
    if not found:
        return []
    lengths = [word_count(text(row)) for row in found]
    if max_length:
        lengths = [min(length, max_length) for length in lengths]
    average = max(1.0, sum(lengths) / len(lengths))
    scored = []
    for row, length in zip(found, lengths, strict=True):
        row_id = key(row)
        weight = matches.weight(row_id, leave_out)
        # ``length_factor``, inline: this runs for every row read.
        scored.append(
            (weight * ((K1 + 1) / (1 + K1 * (1 - B + B * length / average))), row_id, row)
        )
    scored.sort(key=_SCORE_THEN_ID, reverse=True)
    return [(score, row) for score, _, row in scored[:limit]]


_SCORE_THEN_ID = itemgetter(0, 1)


@functools.lru_cache(maxsize=1 << 14)
def word_count(text: str) -> int:
    """Words in ``text``, as bm25 weighs a row's length; the same turns are weighed again and
    again, so counts are remembered."""
    return len(text.split())
