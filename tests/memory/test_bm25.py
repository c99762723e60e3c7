"""BM25 over posting lists: weights, the order rows are read in, paging past rows out of scope."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from flynn.memory.bm25 import TermMatches, idf, length_factor, read_best
from flynn.memory.store import Postings


def test_rare_words_weigh_more_and_short_rows_score_higher() -> None:
    assert idf(1000, 1) > idf(1000, 10) > idf(1000, 400) > 0
    assert idf(10, 9) > 0  # a word in most rows still counts, a little
    assert length_factor(5, 10.0) > length_factor(10, 10.0) == 1.0 > length_factor(30, 10.0)


def _matches() -> TermMatches:
    return TermMatches(
        Postings(documents=100, terms={"kayak": (3, 7), "lake": (1, 3, 5, 7, 9), "sam": (1, 5, 9)})
    )


def test_rows_are_ranked_by_the_words_they_contain_newest_first_among_equals() -> None:
    matches = _matches()
    assert set(matches.words(7)) == {"kayak", "lake"}
    assert matches.words(2) == ()
    assert len(matches) == 5
    assert matches.weight(7) == matches.weights["kayak"] + matches.weights["lake"]
    ranked = [row for row, _ in matches.best(10)]
    assert ranked == [7, 3, 9, 5, 1]
    # Leaving a name out ranks by the topic alone; rows left with nothing are dropped.
    assert [row for row, _ in matches.best(10, leave_out={"sam"})] == [7, 3, 9, 5, 1]
    assert [row for row, _ in matches.best(10, leave_out={"lake", "kayak"})] == [9, 5, 1]
    assert [row for row, _ in matches.best(10, leave_out={"lake", "sam"})] == [7, 3]
    assert [row for row, _ in matches.best(2)] == [7, 3]


def test_read_best_reads_pages_until_enough_is_in_scope_and_scores_lengths() -> None:
    texts = {1: "lake", 3: "kayak on the lake " * 5, 5: "sam at the lake", 7: "kayak lake", 9: "x"}
    reads: list[list[int]] = []

    def read(ids: Sequence[int]) -> list[int]:
        reads.append(list(ids))
        return [row for row in ids if row != 7]  # 7 is another namespace's

    scored = read_best(_matches(), read, lambda row: row, texts.__getitem__, limit=2)

    # Half of the first page was in scope, so no second page was read.
    assert reads == [[7, 3]]
    assert [row for _, row in scored] == [3]

    def read_far(ids: Sequence[int]) -> list[int]:
        reads.append(list(ids))
        return [row for row in ids if row not in (7, 3)]

    reads.clear()
    scored = read_best(_matches(), read_far, lambda row: row, texts.__getitem__, limit=2)
    assert reads == [[7, 3], [9, 5]]
    assert [row for _, row in scored] == [9, 5]  # equal words: the shorter row first
    assert scored[0][0] > scored[1][0] > 0
    assert read_best(_matches(), read, lambda row: row, texts.__getitem__, limit=0) == []


def test_a_word_and_its_alternatives_count_once_the_heaviest() -> None:
    # The lighter alternatives come first: rows must count the heaviest whatever the order.
    postings = Postings(
        documents=100, terms={"cats": (2, 4), "dogs": (2, 3), "pets": (1, 2), "lake": (2, 5)}
    )
    stands_for = {"dogs": "pets", "cats": "pets"}
    matches = TermMatches(postings, {"dogs": 0.4, "cats": 0.3}, stands_for)
    pets, dogs, cats, lake = (matches.weights[w] for w in ("pets", "dogs", "cats", "lake"))
    assert dogs == pytest.approx(0.4 * pets) and cats == pytest.approx(0.3 * pets)
    # Row 2 holds "pets" and two of its alternatives: "pets" counts, they add nothing.
    assert matches.weight(2) == pytest.approx(pets + lake)
    assert matches.weight(3) == pytest.approx(dogs) and matches.weight(4) == pytest.approx(cats)
    # Left out, the word gives way to its heaviest alternative.
    assert matches.weight(2, leave_out={"pets"}) == pytest.approx(dogs + lake)
    assert [row for row, _ in matches.best(3)] == [2, 5, 1]  # 1 and 5 tie: newest first
    # Without alternatives every word counts.
    plain = TermMatches(postings, {"dogs": 0.4, "cats": 0.3})
    assert plain.weight(2) == pytest.approx(pets + dogs + cats + lake)
