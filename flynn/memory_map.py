"""Where each fact sits on the memory page's map: the first two principal components of the
facts' TF-IDF vectors, in pure Python since the default install has no numpy,
or of their embeddings (numpy comes with them) when ``memory.embeddings`` is on.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from flynn.memory.fact_keys import content_words

ITERATIONS = 300
"""Block power iterations at most. On 500 facts of words drawn at random (a flat spectrum, the
slow case) the two axes agree with numpy's SVD to a correlation of 0.9999999 after about 200,
in under 0.2 s; real facts, which share topics, settle sooner."""
TOLERANCE = 1e-9

SparseRow = dict[int, float]


@dataclass(frozen=True, slots=True)
class Projection:
    """One point per input, both axes scaled into -1..1; ``explained`` is the share of the
    inputs' variance the two axes show (0..1)."""

    points: tuple[tuple[float, float], ...]
    explained: float


def tfidf_rows(texts: Sequence[str]) -> list[SparseRow]:
    """Each text's TF-IDF vector, unit length: its content words (no stopwords, no dates),
    each counted once (a fact is a line; a repeated word says little more), weighed by the
    smoothed inverse document frequency."""
    words = [content_words(text) for text in texts]
    frequency: dict[str, int] = {}
    for found in words:
        for word in found:
            frequency[word] = frequency.get(word, 0) + 1
    index = {word: number for number, word in enumerate(sorted(frequency))}
    total = len(texts)
    rows: list[SparseRow] = []
    for found in words:
        row = {index[w]: math.log((1 + total) / (1 + frequency[w])) + 1.0 for w in found}
        norm = math.sqrt(sum(value * value for value in row.values()))
        rows.append({key: value / norm for key, value in row.items()} if norm else {})
    return rows


def sparse_projection(rows: Sequence[SparseRow], *, seed: int = 1) -> Projection:
    """The rows' first two principal components by block power iteration on their covariance,
    never forming it: each step is two passes over the non-zero entries (``ITERATIONS`` at
    most), then a 2x2 Rayleigh-Ritz step orders the two axes by the variance they show."""
    count = len(rows)
    if count == 0:
        return Projection((), 0.0)
    width = 1 + max((key for row in rows for key in row), default=-1)
    mean = [0.0] * width
    for row in rows:
        for key, value in row.items():
            mean[key] += value / count
    centred_norms = sum(sum(v * v for v in row.values()) for row in rows) - count * _dot(mean, mean)
    if width == 0 or centred_norms <= 1e-12:
        return Projection(tuple((0.0, 0.0) for _ in rows), 0.0)

    def scores(vector: list[float]) -> list[float]:
        """The centred rows times ``vector``."""
        shift = _dot(mean, vector)
        return [sum(value * vector[key] for key, value in row.items()) - shift for row in rows]

    def covariance_times(vector: list[float]) -> list[float]:
        along = scores(vector)
        out = [0.0] * width
        for weight, row in zip(along, rows, strict=True):
            if weight:
                for key, value in row.items():
                    out[key] += weight * value
        total = sum(along)
        return [value - m * total for value, m in zip(out, mean, strict=True)]

    generator = random.Random(seed)
    basis = _orthonormal([[generator.uniform(-1, 1) for _ in range(width)] for _ in range(2)])
    for _ in range(ITERATIONS):
        moved = _orthonormal([covariance_times(vector) for vector in basis])
        settled = all(
            1.0 - sum(_dot(new, old) ** 2 for old in basis) < TOLERANCE for new in moved if any(new)
        )
        basis = moved
        if settled:
            break
    axes = [scores(vector) for vector in basis]
    axes = _rotated(axes)
    shown = sum(_dot(axis, axis) for axis in axes)
    return Projection(_scaled(axes[0], axes[1]), min(1.0, shown / centred_norms))


def dense_projection(rows: Sequence[Sequence[float]]) -> Projection:
    """The rows' (embeddings') first two principal components, by numpy's SVD. Needs numpy,
    which the ``embeddings`` extra brings."""
    import numpy as np

    if not rows:
        return Projection((), 0.0)
    matrix = np.asarray(rows, dtype=np.float64)
    centred = matrix - matrix.mean(axis=0)
    left, singular, _ = np.linalg.svd(centred, full_matrices=False)
    variance = float((singular**2).sum())
    if variance <= 1e-12:
        return Projection(tuple((0.0, 0.0) for _ in rows), 0.0)
    columns = [
        [float(x) for x in left[:, k] * singular[k]] if k < singular.shape[0] else [0.0] * len(rows)
        for k in range(2)
    ]
    shown = float((singular[:2] ** 2).sum())
    return Projection(_scaled(columns[0], columns[1]), min(1.0, shown / variance))


def _dot(one: Sequence[float], other: Sequence[float]) -> float:
    return sum(a * b for a, b in zip(one, other, strict=True))


def _orthonormal(vectors: list[list[float]]) -> list[list[float]]:
    """Gram-Schmidt; a vector that vanishes (the data has fewer dimensions) becomes zeros."""
    done: list[list[float]] = []
    for vector in vectors:
        for previous in done:
            if any(previous):
                along = _dot(vector, previous)
                vector = [a - along * b for a, b in zip(vector, previous, strict=True)]
        norm = math.sqrt(_dot(vector, vector))
        done.append([a / norm for a in vector] if norm > 1e-12 else [0.0] * len(vector))
    return done


def _rotated(axes: list[list[float]]) -> list[list[float]]:
    """The two score columns turned within their plane so that the first shows the most
    variance and the two are uncorrelated (the 2x2 eigenproblem, solved in closed form)."""
    one, two = axes
    a, b, c = _dot(one, one), _dot(one, two), _dot(two, two)
    angle = 0.5 * math.atan2(2 * b, a - c)
    cos, sin = math.cos(angle), math.sin(angle)
    first = [cos * x + sin * y for x, y in zip(one, two, strict=True)]
    second = [-sin * x + cos * y for x, y in zip(one, two, strict=True)]
    return [first, second]


def _scaled(xs: Sequence[float], ys: Sequence[float]) -> tuple[tuple[float, float], ...]:
    """Each axis into -1..1, its sign chosen so that its long tail points right (up): the
    picture does not mirror itself from one load to the next."""
    return tuple(zip(_unit(xs), _unit(ys), strict=True))


def _unit(values: Sequence[float]) -> list[float]:
    largest = max((abs(v) for v in values), default=0.0)
    if largest <= 1e-12:
        return [0.0] * len(values)
    sign = -1.0 if sum(v**3 for v in values) < 0 else 1.0
    return [round(sign * v / largest, 4) for v in values]
