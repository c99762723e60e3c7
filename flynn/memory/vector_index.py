"""The vectors of recently searched namespaces, held in memory as int8 rows with a scale each
(``VectorIndex``): a quarter of float32's room, searched as fast, and shared between the event
loop's thread (which adds what it stores) and the recall workers' (which load and search).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from flynn.memory.vector_file import FileRoom, MappedArrays
from flynn.memory.vector_lists import EXACT_ROWS, Room, VectorLists, partition

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]
    Codes = npt.NDArray[np.int8]
    Ids = npt.NDArray[np.int64]

BLOCK_ROWS = 4096
"""Rows a block holds: a search converts one block at a time to float32 (6 MiB with 384
dimensions), and an added row never moves the ones before it."""
MAX_BYTES = 96 << 20
"""What the cached namespaces may take together (a namespace of 100,000 MiniLM vectors takes
38 MiB); the least recently searched go first, the one just loaded always stays."""

MAPPED_DIRECTORY = "mapped-vectors"
"""The directory of the data dir that holds the files of ``VectorIndex``'s ``mapped_in``: never
a name, only open files (``flynn.memory.vector_file``)."""

HEAP_TRIM_BYTES = 1 << 20
"""Free bytes at the top of this thread's glibc arena past which ``trim_thread_arena`` hands
them back (a page's worth would do; a megabyte leaves the next small allocations their room)."""
BUSY_TRIM_BYTES = 64 << 20
"""The top of an arena kept otherwise (``keep_heap_trimmed``): glibc's own threshold grows to
this once a block of 32 MiB is freed. Lower, the model's activations were handed back after
each batch and faulted in again for the next: 1 MiB cost 25.0 ms of CPU a stored turn against
19.1 (``flynn bench embed --dataset assistant_small``)."""
HEAP_MMAP_BYTES = 32 << 20
"""Blocks from this size are mapped on their own, smaller ones come from the arenas: glibc's
largest dynamic threshold, which a daemon reaches after its first large free anyway."""
_TRIGGER_BYTES = 256 << 10
"""A block freed to make glibc look at its arena's top (it does for a free of 64 KiB or more)."""
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3

Key = tuple[str, str]
"""A namespace prefix (without its trailing slash) and a kind of row."""


def quantize(vectors: Matrix) -> tuple[Codes, Matrix]:
    """Each row as int8 codes and the float32 scale that turns them back: ``codes * scale``
    is the row to within half a step of its largest component (a zero row has scale 0)."""
    import numpy as np

    peaks = np.abs(vectors).max(axis=1) if vectors.shape[0] else np.zeros(0, np.float32)
    scales = (peaks / 127.0).astype(np.float32)
    safe = np.where(scales > 0, scales, 1.0).astype(np.float32)
    codes = np.rint(vectors / safe[:, None]).clip(-127, 127).astype(np.int8)
    return codes, scales


@dataclass(slots=True)
class _Block:
    codes: Codes
    scales: Matrix
    ids: Ids
    used: int = 0


@dataclass(slots=True)
class _Entry:
    """One namespace's rows: those partitioned into lists (``lists``, once there are
    ``EXACT_ROWS``), then the rows added since, in blocks filled in order. Rows are only ever
    appended, so a search that read ``used`` under the lock reads the rest without it.

    Which ids it holds is read from the rows' own id arrays (``holds``), not kept in a set of
    Python ints beside them: that set took 7 MiB at 100,000 rows, a fifth of the int8 rows."""

    blocks: list[_Block] = field(default_factory=list)
    lists: VectorLists | None = None
    listed: Ids | None = None
    """The ids in ``lists``, sorted (8 bytes a row), for ``holds``."""
    file: MappedArrays | None = None
    """The file ``lists`` and ``listed`` are read from, when they are (``VectorIndex``'s
    ``mapped_in``)."""
    newest: int = -1
    """The largest id held: a row stored after the load has a larger one, and needs no look."""

    @property
    def nbytes(self) -> int:
        listed = 0 if self.lists is None else self.lists.nbytes
        if self.listed is not None:
            listed += self.listed.nbytes
        return listed + sum(
            block.codes.nbytes + block.scales.nbytes + block.ids.nbytes for block in self.blocks
        )

    def holds(self, ref_id: int) -> bool:
        """Whether a row of ``ref_id`` is here: a binary search of the listed ids, then a
        read of the unlisted ones (at most an eighth of the rows, or ``EXACT_ROWS``)."""
        import numpy as np

        if ref_id > self.newest:
            return False
        if self.listed is not None:
            at = int(np.searchsorted(self.listed, ref_id))
            if at < len(self.listed) and int(self.listed[at]) == ref_id:
                return True
        return any(bool((block.ids[: block.used] == ref_id).any()) for block in self.blocks)

    def all_ids(self) -> Ids:
        import numpy as np

        parts = [block.ids[: block.used] for block in self.blocks]
        if self.listed is not None:
            parts.insert(0, self.listed)
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def append(self, ids: Sequence[int], vectors: Matrix) -> None:
        """Appends the rows not held already (stored while a load read them, or again)."""
        fresh = [i for i, ref in enumerate(ids) if not self.holds(ref)]
        if not fresh:
            return
        if len(fresh) < len(ids):
            ids, vectors = [ids[i] for i in fresh], vectors[fresh]
        self.extend(ids, vectors)

    def extend(self, ids: Sequence[int], vectors: Matrix) -> None:
        """Appends rows none of which is held (a load's read: one row per id)."""
        import numpy as np

        codes, scales = quantize(np.asarray(vectors, dtype=np.float32))
        self.append_codes(np.asarray(ids, np.int64), codes, scales)

    def append_codes(self, ids: Ids, codes: Codes, scales: Matrix) -> None:
        """Appends rows already quantized, none of them held."""
        import numpy as np

        if len(ids):
            self.newest = max(self.newest, int(ids.max()))
        done = 0
        while done < len(ids):
            if not self.blocks or self.blocks[-1].used == self.blocks[-1].codes.shape[0]:
                # Sized to the rows appended, then doubling up to a block for rows added one at
                # a time: the room bound counts what is allocated, and a block of 4,096 rows for
                # each person's few hundred (1.6 MB with MiniLM) let only 60 people stay in
                # 96 MiB, so with more the least recent were loaded again at their next turn.
                last = self.blocks[-1].codes.shape[0] if self.blocks else 0
                rows = min(BLOCK_ROWS, max(len(ids) - done, 2 * last))
                self.blocks.append(
                    _Block(
                        np.zeros((rows, codes.shape[1]), np.int8),
                        np.zeros(rows, np.float32),
                        np.zeros(rows, np.int64),
                    )
                )
            block = self.blocks[-1]
            take = min(block.codes.shape[0] - block.used, len(ids) - done)
            end = block.used + take
            block.codes[block.used : end] = codes[done : done + take]
            block.scales[block.used : end] = scales[done : done + take]
            block.ids[block.used : end] = ids[done : done + take]
            # Rows first, then the count that makes them visible to a search.
            block.used = end
            done += take


@dataclass(eq=False, slots=True)
class Loading:
    """One read of a namespace from the database (``VectorIndex.begin_load``): the rows stored
    since it began, which the read may not have seen."""

    key: Key
    added: list[tuple[int, Matrix]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What a search reads: the namespace's rows as they were when it was taken, those in
    ``lists`` and those added since, in ``blocks`` (each its codes, scales and ids)."""

    blocks: tuple[tuple[Codes, Matrix, Ids], ...]
    lists: VectorLists | None = None
    source: object = None
    """The entry it was taken of (``VectorIndex.organised`` keeps lists only for it)."""

    def __len__(self) -> int:
        return self.unlisted + (0 if self.lists is None else len(self.lists))

    @property
    def unlisted(self) -> int:
        """Rows not in ``lists``, each read by every search."""
        return sum(codes.shape[0] for codes, _, _ in self.blocks)

    @property
    def needs_lists(self) -> bool:
        """Whether it is large enough to partition (``EXACT_ROWS``), or its lists should take
        in the rows added since they were built (an eighth more, at least a block)."""
        if self.lists is None:
            return len(self) >= EXACT_ROWS
        return self.unlisted > max(BLOCK_ROWS, len(self.lists) // 8)

    def partitioned(self, room: Room | None = None) -> VectorLists:
        """Lists over every row: the rows added to the lists there are, or new ones; their rows
        in ``room``."""
        import numpy as np

        codes = np.concatenate([codes for codes, _, _ in self.blocks])
        scales = np.concatenate([scales for _, scales, _ in self.blocks])
        ids = np.concatenate([ids for _, _, ids in self.blocks])
        if self.lists is None:
            return partition(codes, scales, ids, room=room)
        return self.lists.with_rows(codes, scales, ids, room=room)

    def nearest(self, query: Matrix, limit: int, *, exact: bool = False) -> list[tuple[int, float]]:
        """Up to ``limit`` ``(id, similarity)`` pairs, most similar first: the dot product of
        ``query`` with each row as stored (the cosine, for unit rows and query), among the rows
        of the lists nearest it and those added since (among every row, with ``exact``)."""
        import numpy as np

        total = len(self)
        if limit <= 0 or total == 0:
            return []
        query = np.asarray(query, dtype=np.float32)
        unlisted = self.unlisted
        similarity = np.empty(unlisted, np.float32)
        buffer = np.empty((min(BLOCK_ROWS, unlisted), query.shape[0]), np.float32)
        start = 0
        for codes, scales, _ in self.blocks:
            rows = codes.shape[0]
            part = buffer[:rows]
            part[...] = codes  # int8 to float32, then one BLAS product per block
            np.matmul(part, query, out=similarity[start : start + rows])
            similarity[start : start + rows] *= scales
            start += rows
        ids = (
            np.concatenate([ids for _, _, ids in self.blocks])
            if self.blocks
            else np.zeros(0, np.int64)
        )
        if self.lists is not None:
            listed_ids, listed = self.lists.search(query, exact=exact)
            ids = np.concatenate([listed_ids, ids])
            similarity = np.concatenate([listed, similarity])
        count = min(limit, len(ids))
        if count == 0:
            return []
        top = np.argpartition(-similarity, count - 1)[:count]
        top = top[np.argsort(-similarity[top], kind="stable")]
        return list(zip(ids[top].tolist(), similarity[top].tolist(), strict=True))


class VectorIndex:
    """Namespaces' vectors in memory, for any thread: one lock guards the table of entries and
    is held only to look up, append or swap, never for a search or a load from the database.

    A change to a stored vector (``version`` moving: a forget, a rollback, another process's
    write) drops everything, loads under way included: what they read may hold the rows just
    deleted, so it answers their own search and is not kept. New rows join the namespaces they
    belong to (``add``), also each load of them under way."""

    def __init__(self, *, max_bytes: int = MAX_BYTES, mapped_in: Path | None = None) -> None:
        """``mapped_in``: a directory on a disk (not a ``tmpfs``, which is memory) where the
        rows a namespace's lists hold are written once built, and read through a mapping
        (``flynn.memory.vector_file``) that ``rest`` hands back to the page cache; ``None``,
        or a directory that cannot be written: they stay in the process's memory."""
        self._mapped_in = mapped_in
        self._lock = threading.Lock()
        self._entries: dict[Key, _Entry] = {}
        # Loads under way by namespace (two threads may read one at once); dropped with the
        # entries, so a load that is no longer here finds its read out of date.
        self._loading: dict[Key, list[Loading]] = {}
        self._version: object = None
        self._max_bytes = max_bytes

    def check(self, version: object) -> None:
        """Drops every entry unless ``version`` (the rows' ``Database.rewrites``) is the one
        they were read at."""
        with self._lock:
            if version != self._version:
                self._version = version
                self._entries.clear()
                self._loading.clear()

    def advance(self, version: object, newer: object) -> None:
        """Takes ``newer`` as the version the entries were read at, when they were read at
        ``version``: what a store knows when the only change since is its own insert."""
        with self._lock:
            if self._version == version:
                self._version = newer

    def snapshot(self, key: Key) -> Snapshot | None:
        """The namespace's rows as of now, or ``None`` when they are not in memory."""
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is None:
                return None
            self._entries[key] = entry  # most recently used last
            return _snapshot_of(entry)

    def organised(self, key: Key, snapshot: Snapshot) -> Snapshot:
        """``snapshot`` (of ``key``), its rows partitioned into lists first when it
        ``needs_lists``: built in the calling thread, without the lock, then kept for later
        searches unless the entry was dropped or organised by another thread meanwhile. Rows
        added meanwhile stay outside the lists, for the next time."""
        import numpy as np

        if not snapshot.needs_lists:
            return snapshot
        room = None if self._mapped_in is None else FileRoom(self._mapped_in)
        lists = snapshot.partitioned(room)
        listed_ids = np.sort(lists.ids)
        file = None if room is None else room.sealed()
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry is not snapshot.source or entry.lists is not snapshot.lists:
                return Snapshot((), lists)  # answers this search only
            listed = snapshot.unlisted
            blocks, entry.blocks, entry.lists = entry.blocks, [], lists
            entry.listed, entry.file = listed_ids, file
            before = 0  # rows in the blocks before this one
            for block in blocks:
                begin = max(0, listed - before)
                if begin < block.used:
                    entry.append_codes(
                        block.ids[begin : block.used],
                        block.codes[begin : block.used],
                        block.scales[begin : block.used],
                    )
                before += block.used
            self._evict(keep=key)
            return _snapshot_of(entry)

    def ids(self, key: Key) -> set[int] | None:
        with self._lock:
            entry = self._entries.get(key)
            return None if entry is None else set(entry.all_ids().tolist())

    def begin_load(self, key: Key) -> Loading:
        """Starts a read of ``key`` from the database: rows ``add``ed from now on are kept for
        its ``finish_load``, which may not see them in what it read. Call it before reading."""
        loading = Loading(key)
        with self._lock:
            self._loading.setdefault(key, []).append(loading)
        return loading

    def finish_load(
        self, loading: Loading, parts: Iterable[tuple[Sequence[int], Matrix]]
    ) -> Snapshot:
        """The snapshot of what was read for ``loading``'s namespace (``(ids, vectors)``
        batches, quantized one at a time so a large namespace never exists in float32 whole)
        with the rows added since ``begin_load``. It is kept for later searches unless the
        entries were dropped (``check``, ``clear``) since ``begin_load``. When reading
        ``parts`` raises, the load ends there and the error propagates."""
        entry = _Entry()
        try:
            for ids, vectors in parts:
                entry.extend(ids, vectors)  # the database holds one row per id
        except BaseException:
            with self._lock:
                self._end(loading)  # else it would gather the namespace's new rows for good
            raise
        key = loading.key
        with self._lock:
            for ref_id, vector in loading.added:
                entry.append([ref_id], vector.reshape(1, -1))
            if self._end(loading):
                self._entries.pop(key, None)
                self._entries[key] = entry
                self._evict(keep=key)
            snapshot = _snapshot_of(entry)
        if len(snapshot) >= BLOCK_ROWS:  # a small load leaves little behind: no heap walk
            return_free_memory()
        return snapshot

    def add(self, kind: str, rows: Sequence[tuple[int, str, Matrix]]) -> None:
        """Adds stored ``(ref_id, namespace, vector)`` rows of ``kind`` to the entries (and
        loads) of the namespaces that hold them."""
        with self._lock:
            for (prefix, entry_kind), entry in self._entries.items():
                if entry_kind == kind:
                    mine = [(r, v) for r, ns, v in rows if _under(ns, prefix)]
                    for ref_id, vector in mine:
                        entry.append([ref_id], vector.reshape(1, -1))
            for (prefix, entry_kind), loads in self._loading.items():
                if entry_kind == kind:
                    mine = [(r, v) for r, ns, v in rows if _under(ns, prefix)]
                    for loading in loads:
                        loading.added.extend(mine)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._loading.clear()

    def hand_back(self) -> None:
        """After a namespace was organised in the calling thread: the free heap back to the
        system (``return_free_memory``), and the top of this thread's arena when the rows went
        to a file (``trim_thread_arena``). Never raises."""
        return_free_memory()
        if self._mapped_in is not None:
            trim_thread_arena()

    def rest(self) -> None:
        """What the process does at rest (the embedding queue quiet): the namespaces' mapped
        rows handed back to the page cache, then the C heap's free pages to the system
        (``return_free_memory``). A search then reads its lists from the page cache again (from
        the disk, if the kernel took them meanwhile). Never raises."""
        with self._lock:
            files = [entry.file for entry in self._entries.values() if entry.file is not None]
        for file in files:
            file.release()
        return_free_memory()
        if self._mapped_in is not None:
            trim_thread_arena()  # the embedding thread's: the model's activations

    def _end(self, loading: Loading) -> bool:
        """Takes ``loading`` off the loads under way (the lock held); whether it still was."""
        under_way = self._loading.get(loading.key, [])
        if loading not in under_way:
            return False
        under_way.remove(loading)
        if not under_way:
            del self._loading[loading.key]
        return True

    def _evict(self, *, keep: Key) -> None:
        total = sum(entry.nbytes for entry in self._entries.values())
        for key in list(self._entries):
            if total <= self._max_bytes:
                break
            if key != keep:
                total -= self._entries.pop(key).nbytes


def return_free_memory() -> None:
    """Hands the C heap's free pages back to the system (glibc's ``malloc_trim``, in every
    thread's arena). Loading or partitioning a namespace frees tens of megabytes of float32
    batches, which glibc keeps resident otherwise, scattered between the rows kept (88 MB at
    100,000 rows, measured: ``docs/recall-performance.md``); so do loading the embedding model
    and running it on long texts. Elsewhere than glibc it does nothing; it never raises."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)


def in_files(data_dir: Path) -> VectorIndex:
    """The daemon's index: the rows of large namespaces in files of ``data_dir``'s
    ``MAPPED_DIRECTORY`` (``mapped_in``), and glibc's heap kept trimmed (``keep_heap_trimmed``)
    so that what building them frees leaves the process too."""
    keep_heap_trimmed()
    return VectorIndex(mapped_in=data_dir / MAPPED_DIRECTORY)


def keep_heap_trimmed() -> None:
    """Fixes glibc's thresholds where a daemon ends up anyway (``HEAP_MMAP_BYTES``,
    ``BUSY_TRIM_BYTES``): setting them stops glibc from moving them, so ``trim_thread_arena``
    can lower the trim threshold for a moment and put it back. Elsewhere than glibc it does
    nothing; it never raises."""
    mallopt = _libc_function("mallopt")
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, HEAP_MMAP_BYTES)
        mallopt(_M_TRIM_THRESHOLD, BUSY_TRIM_BYTES)


def trim_thread_arena() -> None:
    """Hands back the free top of the calling thread's glibc arena, which ``malloc_trim`` never
    does for a thread's arena (only for the main one): the trim threshold lowered to
    ``HEAP_TRIM_BYTES``, a block freed (glibc then trims the arena's top), the threshold put back
    (``keep_heap_trimmed``, which it sets too). Building a person's lists in a recall thread
    frees tens of megabytes there (the load's blocks, the k-means sample); with the rows in a
    file and nothing live above them, that stayed resident at the top of the arena, and the
    daemon at rest held as much as with the rows in the heap (docs/embeddings.md). Elsewhere
    than glibc it does nothing; it never raises."""
    mallopt, malloc, free = (_libc_function(name) for name in ("mallopt", "malloc", "free"))
    if mallopt is None or malloc is None or free is None:
        return
    malloc.restype = ctypes.c_void_p
    free.argtypes = [ctypes.c_void_p]
    mallopt(_M_MMAP_THRESHOLD, HEAP_MMAP_BYTES)
    mallopt(_M_TRIM_THRESHOLD, HEAP_TRIM_BYTES)
    try:
        free(malloc(_TRIGGER_BYTES))  # free(NULL), should malloc fail, does nothing
    finally:
        mallopt(_M_TRIM_THRESHOLD, BUSY_TRIM_BYTES)


def _libc_function(name: str) -> ctypes._NamedFuncPointer | None:
    try:
        function: ctypes._NamedFuncPointer = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None
    return function


def _under(namespace: str, prefix: str) -> bool:
    return namespace == prefix or namespace.startswith(prefix + "/")


def _snapshot_of(entry: _Entry) -> Snapshot:
    blocks = tuple(
        (b.codes[: b.used], b.scales[: b.used], b.ids[: b.used]) for b in entry.blocks if b.used
    )
    return Snapshot(blocks, entry.lists, entry)
