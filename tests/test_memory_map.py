"""The memory page's map: the pure-Python principal components of TF-IDF vectors agree with
numpy's SVD, place facts that share words together, and stay put from one load to the next."""

from __future__ import annotations

import random

import pytest

from flynn.memory_map import dense_projection, sparse_projection, tfidf_rows

TOPICS = {
    "food": "sushi ramen nigiri salmon tea coffee breakfast",
    "work": "billing postgres migration kafka deploy invoices rust",
    "family": "sister maya mother porto lisbon visit birthday",
}


def facts(count: int, seed: int = 7) -> list[tuple[str, str]]:
    generator = random.Random(seed)
    made = []
    for number in range(count):
        topic = list(TOPICS)[number % len(TOPICS)]
        words = generator.sample(TOPICS[topic].split(), 3)
        made.append((topic, f"likes {' '.join(words)}"))
    return made


def test_tfidf_rows_are_unit_length_and_skip_stopwords() -> None:
    rows = tfidf_rows(["I prefer green tea", "the tea is green", "", "and the of"])
    for row in rows[:2]:
        assert sum(value * value for value in row.values()) == pytest.approx(1.0)
    assert rows[2] == {} and rows[3] == {}
    # "green" and "tea" are in both: rarer "prefer" weighs more.
    assert max(rows[0], key=rows[0].__getitem__) != min(rows[0], key=rows[0].__getitem__)


def test_sparse_components_agree_with_numpys_svd() -> None:
    np = pytest.importorskip("numpy")
    rows = tfidf_rows([text for _, text in facts(300)])
    ours = sparse_projection(rows)
    width = 1 + max(key for row in rows for key in row)
    matrix = np.zeros((len(rows), width))
    for number, row in enumerate(rows):
        for key, value in row.items():
            matrix[number, key] = value
    theirs = dense_projection(matrix.tolist())
    assert ours.explained == pytest.approx(theirs.explained, rel=1e-3)
    for axis in (0, 1):
        mine = np.array([point[axis] for point in ours.points])
        numpy = np.array([point[axis] for point in theirs.points])
        assert abs(np.corrcoef(mine, numpy)[0, 1]) > 0.999


def test_facts_about_one_topic_land_together() -> None:
    made = facts(90)
    points = sparse_projection(tfidf_rows([text for _, text in made])).points
    centres = {}
    for topic in TOPICS:
        mine = [point for (kind, _), point in zip(made, points, strict=True) if kind == topic]
        centres[topic] = (sum(x for x, _ in mine) / len(mine), sum(y for _, y in mine) / len(mine))
        spread = max(abs(x - centres[topic][0]) + abs(y - centres[topic][1]) for x, y in mine)
        assert spread < 0.9
    distances = [
        abs(centres[a][0] - centres[b][0]) + abs(centres[a][1] - centres[b][1])
        for a in TOPICS
        for b in TOPICS
        if a < b
    ]
    assert min(distances) > 0.9


def test_the_map_does_not_mirror_itself_between_loads() -> None:
    texts = [text for _, text in facts(60)]
    first = sparse_projection(tfidf_rows(texts))
    again = sparse_projection(tfidf_rows(texts))
    assert first == again
    # Another start vector converges to the same axes, signs included.
    other = sparse_projection(tfidf_rows(texts), seed=99)
    for mine, theirs in zip(first.points, other.points, strict=True):
        assert mine == pytest.approx(theirs, abs=1e-3)


@pytest.mark.parametrize(
    ("texts", "points"),
    [
        ([], ()),
        (["only one fact"], ((0.0, 0.0),)),
        (["same words", "same words"], ((0.0, 0.0), (0.0, 0.0))),
        (["the", "and"], ((0.0, 0.0), (0.0, 0.0))),
    ],
)
def test_degenerate_inputs_are_drawn_at_the_centre(
    texts: list[str], points: tuple[tuple[float, float], ...]
) -> None:
    projection = sparse_projection(tfidf_rows(texts))
    assert projection.points == points
    assert projection.explained == 0.0


def test_two_different_facts_lie_on_one_axis() -> None:
    projection = sparse_projection(tfidf_rows(["green tea", "postgres migration"]))
    assert sorted(projection.points) == [(-1.0, 0.0), (1.0, 0.0)]
    assert projection.explained == pytest.approx(1.0)
