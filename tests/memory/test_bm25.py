"""BM25 over posting lists: weights, the order rows are read in, paging past rows out of scope."""

from __future__ import annotations

from collections.abc import Sequence

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
