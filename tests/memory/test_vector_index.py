"""Vectors in memory as int8 with a scale per row: close to the float32 answer, rows appended
while a search reads stay out of it, rows stored while a namespace loads are kept (by each of
two loads at once), the room they take is bounded, and a change to stored vectors (from the
writer's thread, as a reader's connection sees it) drops them, and what a load under way read."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from fakes.embedder import HashingEmbedder

from flynn.errors import StoreError
from flynn.memory.database import Database
from flynn.memory.stores import SqliteMemory
from flynn.memory.vector_index import BLOCK_ROWS, Snapshot, VectorIndex, quantize
from flynn.memory.vector_lists import _SEARCH_ROWS, EXACT_ROWS, PROBE_SHARE, VectorLists
from flynn.memory.vectors import SqliteVectors

np = pytest.importorskip("numpy")

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


def _unit_rows(count: int, seed: int = 3, width: int = 384) -> object:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, width))
    rows = centres[rng.integers(0, 40, count)] + 0.8 * rng.standard_normal((count, width))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_int8_rows_give_nearly_the_float32_neighbours() -> None:
    rows = _unit_rows(3 * BLOCK_ROWS + 17)  # several blocks, the last one part full
    codes, scales = quantize(rows)
    assert np.abs(codes * scales[:, None] - rows).max() <= scales.max() / 2 + 1e-7
    index = VectorIndex()
    loading = index.begin_load(("users/ana", "message"))
    ids = list(range(1, len(rows) + 1))
    snapshot = index.finish_load(loading, [(ids, rows)])
    queries = _unit_rows(20, seed=9)
    overlap = []
    for query in queries:
        exact = np.argsort(-(rows @ query))[:50] + 1
        found = snapshot.nearest(query, 50)
        assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
        assert abs(found[0][1] - float(rows[found[0][0] - 1] @ query)) < 0.01
        overlap.append(len(set(exact.tolist()) & {ref for ref, _ in found}) / 50)
    assert np.mean(overlap) >= 0.97


def test_a_search_reads_the_rows_as_they_were_and_adds_land_in_loads() -> None:
    index = VectorIndex()
    key = ("users/ana", "message")
    rows = _unit_rows(3, width=8)
    loading = index.begin_load(key)
    # Stored while the namespace was being read: kept whether or not the read saw it.
    index.add("message", [(3, "users/ana/s1", rows[2]), (9, "users/bob", rows[0])])
    before = index.finish_load(loading, [([1, 2, 3], rows)])
    assert sorted(ref for ref, _ in before.nearest(rows[0], 10)) == [1, 2, 3]
    index.add("message", [(4, "users/ana", rows[0]), (5, "users/anabel", rows[0])])
    assert len(before) == 3  # taken before: unchanged
    after = index.snapshot(key)
    assert after is not None and sorted(ref for ref, _ in after.nearest(rows[0], 10)) == [
        1,
        2,
        3,
        4,
    ]
    assert index.ids(key) == {1, 2, 3, 4}


def test_the_room_is_bounded_and_the_last_loaded_stays() -> None:
    rows = _unit_rows(10, width=8)
    index = VectorIndex(max_bytes=15 * 20)  # 8 int8, a float32 scale and an int64 id a row
    for name in ("a", "b", "c"):
        loading = index.begin_load((name, "message"))
        index.finish_load(loading, [(list(range(10)), rows)])
    assert index.snapshot(("c", "message")) is not None
    assert index.snapshot(("a", "message")) is None and index.snapshot(("b", "message")) is None


def test_many_small_namespaces_take_the_room_their_rows_take() -> None:
    # A block of 4,096 rows for each (1.6 MB with MiniLM) let 60 people of a few hundred
    # turns stay in 96 MiB; the others were loaded again, from the database, every turn.
    rows = _unit_rows(300, width=384)
    index = VectorIndex(max_bytes=120 * 300 * (384 + 4 + 8))
    for person in range(120):
        loading = index.begin_load((f"users/p{person}", "message"))
        index.finish_load(loading, [(list(range(300)), rows)])
    assert all(index.snapshot((f"users/p{p}", "message")) is not None for p in range(120))
    # Rows added one at a time later take a doubling block, not one each.
    for ref in range(300, 310):
        index.add("message", [(ref, "users/p0", rows[ref - 300])])
    snapshot = index.snapshot(("users/p0", "message"))
    assert snapshot is not None and len(snapshot) == 310 and len(snapshot.blocks) == 2


def test_a_reader_sees_what_the_writer_published(memory: SqliteMemory) -> None:
    embedder = HashingEmbedder()
    writer = SqliteVectors(memory.db, embedder)
    kept = memory.history.append("s", "users/ana", "user", "green tea", tokens=1, now=NOW)
    doomed = memory.history.append("s2", "users/ana", "user", "black tea", tokens=1, now=NOW)
    writer.add(
        "message", [(kept.id, "users/ana", "green tea"), (doomed.id, "users/ana", "black tea")]
    )
    memory.db.publish_rewrites()
    with Database.open_reader(memory.db) as db:
        reader = SqliteVectors(db, embedder, index=writer.index)
        found = {ref for ref, _ in reader.nearest("users/ana", "tea", kind="message", limit=5)}
        assert found == {kept.id, doomed.id}
        # A row the writer stores joins what the reader searches, with no reload.
        later = memory.history.append("s", "users/ana", "user", "mint tea", tokens=1, now=NOW)
        writer.add("message", [(later.id, "users/ana", "mint tea")])
        memory.db.publish_rewrites()
        assert later.id in {
            r for r, _ in reader.nearest("users/ana", "mint", kind="message", limit=5)
        }
        memory.history.forget_session("s2")
        memory.db.publish_rewrites()  # the loop does it before it hands a recall to a worker
        left = {ref for ref, _ in reader.nearest("users/ana", "tea", kind="message", limit=5)}
        assert left == {kept.id, later.id}


def test_a_load_that_began_before_a_forget_is_not_kept() -> None:
    # A recall thread reads a namespace's vectors; meanwhile the loop forgets one of them and
    # drops the cache (``check`` with the new version). What the thread read may hold the
    # forgotten row: it answers that one search, and is never kept for the next.
    index = VectorIndex()
    key = ("users/ana", "message")
    rows = _unit_rows(2, width=8)
    index.check(("embeddings", 1))
    loading = index.begin_load(key)
    read_before_the_forget = [([1, 2], rows)]
    index.check(("embeddings", 2))
    found = index.finish_load(loading, read_before_the_forget)
    assert len(found) == 2
    assert index.snapshot(key) is None
    assert index.ids(key) is None


def test_two_loads_of_a_namespace_at_once_keep_what_was_stored_meanwhile() -> None:
    # Two recall threads miss the same namespace (two conversations of one person, or the
    # team's documents) and read it at once; a row stored after both reads began is in
    # whichever entry is kept.
    index = VectorIndex()
    key = ("users/ana", "message")
    rows = _unit_rows(3, width=8)
    first = index.begin_load(key)
    second = index.begin_load(key)
    index.add("message", [(3, "users/ana", rows[2])])
    index.finish_load(first, [([1, 2], rows[:2])])
    index.finish_load(second, [([1, 2], rows[:2])])
    assert index.ids(key) == {1, 2, 3}


def test_a_load_whose_read_failed_keeps_nothing_for_later_rows() -> None:
    # The read raised (a closed or broken connection): the load ends there, and rows stored
    # in the namespace later are not gathered for it for as long as the daemon runs.
    index = VectorIndex()
    key = ("users/ana", "message")
    rows = _unit_rows(2, width=8)

    def failing_read() -> Iterator[tuple[list[int], object]]:
        yield [1], rows[:1]
        raise StoreError("database query failed: disk I/O error")

    loading = index.begin_load(key)
    with pytest.raises(StoreError):
        index.finish_load(loading, failing_read())  # type: ignore[arg-type]
    index.add("message", [(2, "users/ana", rows[1])])
    assert loading.added == []
    assert index.snapshot(key) is None


def _loaded(index: VectorIndex, key: tuple[str, str], rows: object) -> Snapshot:
    loading = index.begin_load(key)
    return index.finish_load(loading, [(list(range(1, len(rows) + 1)), rows)])  # type: ignore[arg-type]


def test_a_large_namespace_is_searched_in_the_lists_nearest_the_question() -> None:
    rows = _unit_rows(EXACT_ROWS + 500, width=64)
    index = VectorIndex()
    key = ("users/ana", "message")
    small = index.organised(key, _loaded(index, key, rows[: EXACT_ROWS - 1]))
    assert small.lists is None  # below the threshold every row is read
    snapshot = index.organised(key, _loaded(index, key, rows))
    lists = snapshot.lists
    assert lists is not None and snapshot.unlisted == 0 and len(snapshot) == len(rows)
    assert sorted(lists.ids.tolist()) == list(range(1, len(rows) + 1))
    assert index.snapshot(key) == snapshot  # kept for the next search
    found = []
    for query in rows[::1001]:
        exact = {ref for ref, _ in snapshot.nearest(query, 50, exact=True)}
        near = snapshot.nearest(query, 50)
        assert [s for _, s in near] == sorted((s for _, s in near), reverse=True)
        found.append(len(exact & {ref for ref, _ in near}) / 50)
    assert np.mean(found) >= 0.9
    # A row finds itself first: its own list is the nearest.
    assert snapshot.nearest(rows[123], 1)[0][0] == 124


def test_rows_added_after_the_lists_are_found_and_later_join_them() -> None:
    rows = _unit_rows(EXACT_ROWS + BLOCK_ROWS + 10, width=64)
    index = VectorIndex()
    key = ("users/ana", "message")
    listed = EXACT_ROWS
    first = index.organised(key, _loaded(index, key, rows[:listed]))
    assert first.lists is not None
    added = [(listed + i + 1, "users/ana/s", rows[listed + i]) for i in range(len(rows) - listed)]
    index.add("message", added[:10])
    fresh = index.snapshot(key)
    assert fresh is not None and fresh.unlisted == 10
    assert index.organised(key, fresh) is fresh  # too few to build the lists again
    assert fresh.nearest(rows[listed + 3], 1)[0][0] == listed + 4
    index.add("message", added[10:])
    grown = index.snapshot(key)
    assert grown is not None and grown.unlisted == BLOCK_ROWS + 10
    rebuilt = index.organised(key, grown)
    assert rebuilt.lists is not None and rebuilt.unlisted == 0
    assert sorted(rebuilt.lists.ids.tolist()) == list(range(1, len(rows) + 1))
    assert index.ids(key) == set(range(1, len(rows) + 1))
    assert rebuilt.nearest(rows[-1], 1)[0][0] == len(rows)


def test_lists_built_from_a_dropped_entry_answer_only_their_own_search() -> None:
    rows = _unit_rows(EXACT_ROWS, width=16)
    index = VectorIndex()
    key = ("users/ana", "message")
    snapshot = _loaded(index, key, rows)
    index.clear()  # a forget meanwhile
    organised = index.organised(key, snapshot)
    assert organised.lists is not None and len(organised) == len(rows)
    assert index.snapshot(key) is None


def test_a_row_stored_again_is_held_once_and_an_older_one_joins() -> None:
    rows = _unit_rows(EXACT_ROWS + 3, width=16)
    index = VectorIndex()
    key = ("users/ana", "message")
    ids = [ref for ref in range(1, EXACT_ROWS + 2) if ref != 7]  # 7 has no vector yet
    loading = index.begin_load(key)
    listed = index.organised(key, index.finish_load(loading, [(ids, rows[ids])]))
    assert listed.lists is not None
    newest = EXACT_ROWS + 2
    index.add("message", [(newest, "users/ana", rows[newest])])  # a new turn, unlisted
    # Stored again (one in the lists, the unlisted one), then the old turn 7, embedded only
    # now by the catch-up: its id is below the newest held.
    again = [(5, rows[0]), (newest, rows[0]), (newest, rows[1])]
    index.add("message", [(ref, "users/ana", vector) for ref, vector in again])
    index.add("message", [(7, "users/ana", rows[7])])
    snapshot = index.snapshot(key)
    assert snapshot is not None and len(snapshot) == EXACT_ROWS + 2
    assert index.ids(key) == set(range(1, newest + 1))
    assert snapshot.nearest(rows[7], 1)[0][0] == 7
    for ref in (5, newest):  # each once, with the vector it was first stored with
        found = [found for found, _ in snapshot.nearest(rows[ref], 3, exact=True)]
        assert found[0] == ref and found.count(ref) == 1


def test_every_row_is_listed_under_its_most_similar_centroid() -> None:
    # The rows are assigned (and the centroids trained) a few thousand rows a product, which
    # bounds what OpenBLAS's scratch buffer keeps resident (docs/embeddings.md): every row,
    # across those pieces, still lands in the list of its most similar centroid.
    from flynn.memory.vector_lists import partition

    rows = _unit_rows(9_000, width=16)
    scales = (np.abs(rows).max(axis=1) / 127).astype(np.float32)
    codes = np.round(rows / scales[:, None]).astype(np.int8)
    lists = partition(codes, scales, np.arange(9_000, dtype=np.int64))
    assert sorted(lists.ids.tolist()) == list(range(9_000))
    similarity = lists.codes.astype(np.float32) @ lists.centroids.T
    listed = np.repeat(np.arange(len(lists.offsets) - 1), np.diff(lists.offsets))
    # Up to float rounding between two products of the same numbers (a near tie).
    shortfall = similarity.max(axis=1) - similarity[np.arange(9_000), listed]
    assert shortfall.max() <= 1e-4


def test_each_row_a_search_reads_comes_back_with_its_own_id_and_similarity() -> None:
    # Uneven lists, some empty and some longer than a search widens at once, read a list after
    # another: the scales and ids gathered for them must be each row's own.
    sizes = [3000, 0, 1500, 7, 1024, 1025, 0, 400] + [600] * 30
    rows = _unit_rows(sum(sizes), width=32)
    codes, scales = quantize(rows)
    ids = np.arange(10, 10 + len(rows), dtype=np.int64)[::-1].copy()  # not the row order
    centroids = _unit_rows(len(sizes), seed=9, width=32)
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    lists = VectorLists(centroids, offsets, codes, scales, ids, len(rows))
    assert max(sizes) > _SEARCH_ROWS
    for query, exact in ((rows[5], False), (rows[-1], False), (rows[11], True)):
        found, similarity = lists.search(query, exact=exact)
        assert len(set(found.tolist())) == len(found)
        assert len(found) == len(rows) if exact else PROBE_SHARE * len(rows) <= len(found)
        own = (10 + len(rows) - 1) - found  # each id's row
        expected = (codes[own].astype(np.float32) @ query) * scales[own]
        assert np.allclose(similarity, expected, rtol=1e-5, atol=1e-6)
