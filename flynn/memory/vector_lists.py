"""An inverted-file partition of one namespace's int8 vectors (``VectorLists``): k-means centroids
over the rows, and the rows sorted by their nearest centroid, so that a search reads the lists
nearest the question (a fifth of the rows) instead of every row.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
    Codes = npt.NDArray[np.int8]
    Ids = npt.NDArray[np.int64]

Room = Callable[[Sequence[tuple[tuple[int, ...], str]]], "list[npt.NDArray[Any]]"]
"""Where built lists keep their rows: empty arrays of the ``(shape, dtype)`` asked, in order (a
file's mapping: ``flynn.memory.vector_file.FileRoom``); without one, numpy's own memory."""

EXACT_ROWS = 20_000
"""Below this many rows a namespace is searched row by row: reading them all is then as quick
as choosing lists (``docs/recall-performance.md``, measured at 5,000 to 100,000 rows)."""
PROBE_SHARE = 0.2
"""The share of the rows a search reads, in the lists nearest the question. On real vectors
(``python -m evals.vector_search --real assistant``: 107,182 turns, questions and filler of
``assistant`` in one namespace) it finds .971 of the exact 300 nearest and .986 of the exact 10
(``docs/recall-performance.md``)."""
MIN_PROBES = 8
TRAIN_ROWS_PER_LIST = 32
"""Rows sampled per list to train the centroids (k-means over all rows costs seconds, over a
sample a fraction of one, and places the centroids as well)."""
TRAIN_ROUNDS = 6
IMBALANCE = 3.0
"""Lists are trained again when rows added since make them this uneven (faiss's imbalance
factor: 1 when every list holds as many rows; a search's cost grows with it)."""
_CHUNK = 2048
"""Rows widened to float32 at a time when assigning them to lists (and when training them)."""
_SEARCH_ROWS = 1024
"""Rows a search widens to float32 at a time (1.5 MiB with 384 dimensions): as fast as 8,192
rows, whose 12 MiB buffer glibc kept in each recall thread's heap once freed (``flynn bench
turn`` at 100,000 messages: 375 MiB resident, 352 with this)."""


@dataclass(frozen=True, slots=True)
class VectorLists:
    """Rows sorted by list: list ``i`` is rows ``offsets[i]:offsets[i + 1]``. Never changed
    once built (``with_rows`` builds another), so a search reads it without a lock."""

    centroids: Matrix
    offsets: Ids
    codes: Codes
    scales: Matrix
    ids: Ids
    trained: int
    """How many rows there were when the centroids were trained."""

    def __len__(self) -> int:
        return int(self.codes.shape[0])

    @property
    def nbytes(self) -> int:
        return int(
            self.centroids.nbytes
            + self.offsets.nbytes
            + self.codes.nbytes
            + self.scales.nbytes
            + self.ids.nbytes
        )

    def search(self, query: Matrix, *, exact: bool = False) -> tuple[Ids, Matrix]:
        """The ids and similarities of the rows in the lists nearest ``query``, nearest first
        until they hold ``PROBE_SHARE`` of the rows (every row, with ``exact``), unordered."""
        import numpy as np

        if exact:
            starts, stops = [0], [len(self)]
        else:
            order = np.argsort(-(self.centroids @ query))
            sizes = np.cumsum(np.diff(self.offsets)[order])
            # However uneven the lists, a search reads about the same number of rows.
            wanted = min(len(order), int(np.searchsorted(sizes, PROBE_SHARE * len(self))) + 1)
            chosen = np.sort(order[: max(wanted, min(MIN_PROBES, len(order)))])
            starts, stops = self.offsets[chosen].tolist(), self.offsets[chosen + 1].tolist()
        total = sum(stops) - sum(starts)
        similarity = np.empty(total, np.float32)
        buffer = np.empty((min(_SEARCH_ROWS, total), query.shape[0]), np.float32)
        capacity = buffer.shape[0]
        codes = self.codes
        first = filled = 0  # the buffer holds rows first to first + filled
        for start, stop in zip(starts, stops, strict=True):
            for begin in range(start, stop, capacity):
                end = min(begin + capacity, stop)
                rows = end - begin
                if filled + rows > capacity:
                    np.matmul(buffer[:filled], query, out=similarity[first : first + filled])
                    first, filled = first + filled, 0
                # Widened into one buffer, a list after another: a fresh float32 copy of all
                # the rows read would cost more than the product.
                buffer[filled : filled + rows] = codes[begin:end]
                filled += rows
        if filled:
            np.matmul(buffer[:filled], query, out=similarity[first : first + filled])
        # The rows' scales and ids gathered at once, not copied a list at a time: 1.51 ms a
        # search of 100,000 rows instead of 1.62 (``docs/recall-performance.md``).
        positions = _positions(starts, stops, total)
        similarity *= self.scales[positions]
        return self.ids[positions], similarity

    def is_balanced(self) -> bool:
        import numpy as np

        sizes = np.diff(self.offsets).astype(np.float64)
        total = float(sizes.sum())
        if total == 0:
            return True
        return float(len(sizes) * np.square(sizes).sum() / total**2) <= IMBALANCE

    def with_rows(
        self, codes: Codes, scales: Matrix, ids: Ids, *, room: Room | None = None
    ) -> VectorLists:
        """These lists with more rows: each joins the list of its nearest centroid; trained
        again when the rows have doubled since training or the lists grew uneven. Their rows
        in ``room`` (``Room``)."""
        import numpy as np

        total = len(self) + codes.shape[0]
        all_codes = np.concatenate([self.codes, codes])
        all_scales = np.concatenate([self.scales, scales])
        all_ids = np.concatenate([self.ids, ids])
        if total > 2 * self.trained:
            return partition(all_codes, all_scales, all_ids, room=room)
        labels = np.concatenate(
            [
                np.repeat(np.arange(len(self.offsets) - 1), np.diff(self.offsets)),
                _assign(codes, self.centroids),
            ]
        )
        grown = _sorted(self.centroids, labels, all_codes, all_scales, all_ids, self.trained, room)
        if grown.is_balanced():
            return grown
        return partition(all_codes, all_scales, all_ids, room=room)


def partition(
    codes: Codes, scales: Matrix, ids: Ids, *, seed: int = 0, room: Room | None = None
) -> VectorLists:
    """Lists over the rows: twice the square root of their number, their centroids trained by
    spherical k-means (the rows are unit vectors; similarity is their dot product) on a
    sample. Their rows in ``room`` (``Room``)."""
    import numpy as np

    count = codes.shape[0]
    lists = max(1, min(count, round(2 * math.sqrt(count))))
    rng = np.random.default_rng(seed)
    sample = rng.choice(count, size=min(count, lists * TRAIN_ROWS_PER_LIST), replace=False)
    train = codes[np.sort(sample)].astype(np.float32) * scales[np.sort(sample), None]
    centroids = train[rng.choice(train.shape[0], size=lists, replace=False)].copy()
    for _ in range(TRAIN_ROUNDS):
        labels = _assign(train, centroids)
        order = np.argsort(labels, kind="stable")
        chosen, starts = np.unique(labels[order], return_index=True)
        sums = np.add.reduceat(train[order], starts, axis=0)
        norms = np.linalg.norm(sums, axis=1)
        filled = norms > 0
        # A list no sample row chose keeps its centroid (the rows assigned later may fill it).
        centroids[chosen[filled]] = sums[filled] / norms[filled, None]
    return _sorted(centroids, _assign(codes, centroids), codes, scales, ids, count, room)


def _positions(starts: list[int], stops: list[int], total: int) -> Ids:
    """The row numbers of the runs ``starts[i]:stops[i]``, one run after another."""
    import numpy as np

    begin = np.asarray(starts, np.int64)
    sizes = np.asarray(stops, np.int64) - begin
    # Each run's rows are its start plus their place in it: the place in the whole, less the
    # rows of the runs before it.
    before = np.cumsum(sizes) - sizes
    positions: Ids = np.arange(total, dtype=np.int64) + np.repeat(begin - before, sizes)
    return positions


def _assign(rows: Codes | Matrix, centroids: Matrix) -> Ids:
    """Each row's nearest centroid (a row's scale is positive, so it cannot change which),
    ``_CHUNK`` rows a product: OpenBLAS packs a product's rows into its 32 MiB scratch buffer
    and keeps what it touched resident for the process's life (15 MiB after one 20,000-row
    product at 100,000 turns; docs/embeddings.md)."""
    import numpy as np

    labels = np.empty(rows.shape[0], np.int64)
    for start in range(0, rows.shape[0], _CHUNK):
        part = rows[start : start + _CHUNK].astype(np.float32, copy=False)
        labels[start : start + _CHUNK] = np.argmax(part @ centroids.T, axis=1)
    return labels


def _sorted(
    centroids: Matrix,
    labels: Ids,
    codes: Codes,
    scales: Matrix,
    ids: Ids,
    trained: int,
    room: Room | None = None,
) -> VectorLists:
    import numpy as np

    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels, minlength=centroids.shape[0])
    offsets = np.zeros(centroids.shape[0] + 1, np.int64)
    np.cumsum(counts, out=offsets[1:])
    if room is None:
        return VectorLists(
            centroids.astype(np.float32),
            offsets,
            codes[order],
            scales[order],
            ids[order].astype(np.int64),
            trained,
        )
    kept_centroids, kept_codes, kept_scales, kept_ids = room(
        [
            (centroids.shape, "float32"),
            (codes.shape, "int8"),
            (scales.shape, "float32"),
            (ids.shape, "int64"),
        ]
    )
    kept_centroids[...] = centroids
    # Gathered straight into the room, never a copy of the rows in the heap first: freed, that
    # copy stayed resident in the recall thread's arena (glibc trims no thread arena's top).
    # "clip" takes ``out`` as it is ("raise" gathers into a buffer first).
    np.take(codes.astype(np.int8, copy=False), order, axis=0, out=kept_codes, mode="clip")
    np.take(scales.astype(np.float32, copy=False), order, out=kept_scales, mode="clip")
    np.take(ids.astype(np.int64, copy=False), order, out=kept_ids, mode="clip")
    return VectorLists(kept_centroids, offsets, kept_codes, kept_scales, kept_ids, trained)
