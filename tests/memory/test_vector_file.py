"""A namespace's listed vectors read from a mapped file (``VectorIndex(mapped_in=...)``): searched
as the same rows in memory are, also after ``rest`` handed the pages back; the file never has a
name in its directory and is private while open; a write that fails leaves them in memory; a
dropped, evicted, rebuilt or forgotten namespace closes its file, and a forgotten row is never
found in it."""

from __future__ import annotations

import asyncio
import errno
import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import structlog
from fakes.embedder import HashingEmbedder

from flynn.learning.embedding_queue import EmbeddingQueue
from flynn.memory import vector_file, vector_index
from flynn.memory.stores import SqliteMemory
from flynn.memory.vector_index import BLOCK_ROWS, Snapshot, VectorIndex
from flynn.memory.vector_lists import EXACT_ROWS
from flynn.memory.vectors import SqliteVectors
from flynn.storage_place import _SqliteStorage

np = pytest.importorskip("numpy")

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
KEY = ("users/ana", "message")


def _unit_rows(count: int, seed: int = 5, width: int = 64) -> object:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((40, width))
    rows = centres[rng.integers(0, 40, count)] + 0.8 * rng.standard_normal((count, width))
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _organised(index: VectorIndex, rows: object, key: tuple[str, str] = KEY) -> Snapshot:
    loading = index.begin_load(key)
    ids = list(range(1, len(rows) + 1))  # type: ignore[arg-type]
    return index.organised(key, index.finish_load(loading, [(ids, rows)]))  # type: ignore[list-item]


def _open_files(directory: Path) -> list[Path]:
    """This process's descriptors of files that were in ``directory``."""
    found = []
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = fd.readlink()
        except OSError:
            continue  # the listing's own descriptor, closed by now
        if str(target).startswith(f"{directory}/"):
            found.append(fd)
    return found


def _mapped_rss_kib(directory: Path) -> list[int]:
    """The resident size of each mapping of a file of ``directory`` (``/proc/self/smaps``)."""
    sizes, inside = [], False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        if line[:1] in "0123456789abcdef" and "-" in line.split(" ", 1)[0]:
            inside = f" {directory}/" in line
        elif inside and line.startswith("Rss:"):
            sizes.append(int(line.split()[1]))
    return sizes


@pytest.fixture
def linux() -> Iterator[None]:
    if not Path("/proc/self/smaps").exists():
        pytest.skip("reads /proc/self")
    yield


def test_mapped_rows_answer_as_the_rows_in_memory_also_after_rest(
    tmp_path: Path, linux: None
) -> None:
    rows = _unit_rows(EXACT_ROWS + 500)
    directory = tmp_path / "mapped"
    index = VectorIndex(mapped_in=directory)
    mapped = _organised(index, rows)
    in_memory = _organised(VectorIndex(), rows)
    assert mapped.lists is not None and in_memory.lists is not None
    assert not mapped.lists.codes.flags.writeable  # read from the file
    assert in_memory.lists.codes.flags.owndata
    queries = rows[::997]  # type: ignore[index]
    expected = [in_memory.nearest(query, 50) for query in queries]
    assert [mapped.nearest(query, 50) for query in queries] == expected
    assert sum(_mapped_rss_kib(directory)) > 0
    index.rest()
    assert _mapped_rss_kib(directory) == [0]  # handed back to the page cache
    snapshot = index.snapshot(KEY)
    assert snapshot is not None and snapshot.lists is mapped.lists
    assert [snapshot.nearest(query, 50) for query in queries] == expected
    assert sum(_mapped_rss_kib(directory)) > 0  # read again from the page cache
    # Rows added since, joined to the lists (``with_rows``): still the same answers.
    more = _unit_rows(BLOCK_ROWS + 100, seed=6)
    grown = []
    for each in (index, plain := VectorIndex()):
        if each is plain:
            _organised(plain, rows)
        each.add("message", [(len(rows) + 1 + i, KEY[0], row) for i, row in enumerate(more)])  # type: ignore[arg-type]
        before = each.snapshot(KEY)
        assert before is not None and before.needs_lists
        grown.append(each.organised(KEY, before))
    assert grown[0].lists is not None and not grown[0].lists.codes.flags.writeable
    assert grown[0].lists.nbytes == grown[1].lists.nbytes  # type: ignore[union-attr]
    assert [grown[0].nearest(q, 50) for q in queries] == [grown[1].nearest(q, 50) for q in queries]


def test_the_file_has_no_name_and_is_private(
    tmp_path: Path, linux: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _unit_rows(EXACT_ROWS)
    for unnamed in (True, False):  # O_TMPFILE, and a named file unlinked at once without it
        if not unnamed:
            monkeypatch.delattr(vector_file.os, "O_TMPFILE", raising=False)
        directory = tmp_path / f"mapped-{unnamed}"
        index = VectorIndex(mapped_in=directory)
        snapshot = _organised(index, rows)
        assert snapshot.lists is not None and not snapshot.lists.codes.flags.writeable
        assert list(directory.iterdir()) == []
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        [fd] = _open_files(directory)
        info = fd.stat()
        assert stat.S_IMODE(info.st_mode) == 0o600 and info.st_nlink == 0
        assert info.st_size >= rows.nbytes // 4  # type: ignore[attr-defined]


def test_a_write_that_fails_keeps_the_rows_in_memory(
    tmp_path: Path, linux: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = _unit_rows(EXACT_ROWS)
    expected = _organised(VectorIndex(), rows).nearest(rows[10], 20)  # type: ignore[index]

    def full(fd: int, offset: int, length: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    directory = tmp_path / "mapped"
    with monkeypatch.context() as patched:
        patched.setattr(vector_file.os, "posix_fallocate", full)
        with structlog.testing.capture_logs() as logs:
            snapshot = _organised(VectorIndex(mapped_in=directory), rows)
    assert [log["event"] for log in logs] == ["memory.vectors_unmapped"]
    assert logs[0]["error"] == os.strerror(errno.ENOSPC)
    assert snapshot.lists is not None and snapshot.lists.codes.flags.owndata
    assert snapshot.nearest(rows[10], 20) == expected  # type: ignore[index]
    assert list(directory.iterdir()) == [] and _open_files(directory) == []
    # A data dir where the directory cannot be (a file is there): the same.
    blocked = tmp_path / "blocked"
    blocked.write_text("")
    with structlog.testing.capture_logs() as logs:
        index = VectorIndex(mapped_in=blocked / "mapped")
        snapshot = _organised(index, rows)
    assert [log["event"] for log in logs] == ["memory.vectors_unmapped"]
    assert snapshot.nearest(rows[10], 20) == expected  # type: ignore[index]
    index.rest()  # nothing mapped: only the heap


def test_a_namespace_dropped_evicted_or_rebuilt_closes_its_file(
    tmp_path: Path, linux: None
) -> None:
    rows = _unit_rows(EXACT_ROWS + BLOCK_ROWS + 100)
    directory = tmp_path / "mapped"
    index = VectorIndex(mapped_in=directory)
    _organised(index, rows[:EXACT_ROWS])  # type: ignore[index]
    assert len(_open_files(directory)) == 1
    index.clear()
    assert _open_files(directory) == []
    # Rows added since the lists were built, past an eighth of them: built again, in a new file.
    _organised(index, rows[:EXACT_ROWS])  # type: ignore[index]
    [before] = _open_files(directory)
    rest = rows[EXACT_ROWS:]  # type: ignore[index]
    index.add("message", [(EXACT_ROWS + 1 + i, KEY[0], row) for i, row in enumerate(rest)])
    snapshot = index.snapshot(KEY)
    assert snapshot is not None and snapshot.needs_lists
    rebuilt = index.organised(KEY, snapshot)
    del snapshot
    assert rebuilt.lists is not None and len(rebuilt.lists) == len(rows)  # type: ignore[arg-type]
    [after] = _open_files(directory)
    assert after != before  # opened while the old lists were still searched, then that closed
    # Evicted: another namespace loaded past the room.
    index = VectorIndex(mapped_in=directory, max_bytes=rows.nbytes // 4 + (1 << 20))  # type: ignore[attr-defined]
    del rebuilt
    _organised(index, rows)
    assert len(_open_files(directory)) == 1
    _organised(index, rows, key=("users/bo", "message"))
    assert index.snapshot(KEY) is None
    assert len(_open_files(directory)) == 1  # bo's
    # A change to the stored vectors (a forget) drops every namespace, and its file.
    index.check(("embeddings", 2))
    assert _open_files(directory) == []


def test_a_forgotten_turn_is_never_found_in_the_mapped_rows(
    memory: SqliteMemory, tmp_path: Path, linux: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_index, "EXACT_ROWS", 60)  # lists past 60 rows, not 20,000
    directory = tmp_path / "mapped"
    vectors = SqliteVectors(memory.db, HashingEmbedder(), index=VectorIndex(mapped_in=directory))
    stored = []
    for n in range(80):
        session = "doomed" if n % 10 == 3 else "kept"
        text = f"tea number {n} in the {session} session"
        stored.append(memory.history.append(session, KEY[0], "user", text, tokens=5, now=NOW))
    vectors.add("message", [(m.id, KEY[0], m.content) for m in stored])
    memory.db.publish_rewrites()
    question = HashingEmbedder().embed(["tea"])[0]

    def candidates() -> set[int]:
        """Every row a search may find (``exact``: every list read)."""
        vectors.nearest(KEY[0], "tea", kind="message", limit=5)
        snapshot = vectors.index.snapshot(KEY)
        assert snapshot is not None and snapshot.lists is not None
        assert not snapshot.lists.codes.flags.writeable  # from the file
        return {ref for ref, _ in snapshot.nearest(question, 1000, exact=True)}

    doomed = {m.id for m in stored if m.session == "doomed"}
    assert candidates() == {m.id for m in stored}
    memory.history.forget_session("doomed")
    memory.db.publish_rewrites()
    assert candidates() == {m.id for m in stored} - doomed
    assert len(_open_files(directory)) == 1  # the rows read again, in a new file


async def test_the_daemon_s_store_hands_the_mapped_rows_back_once_embedding_rests(
    memory: SqliteMemory, tmp_path: Path, linux: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As the daemon builds it (``Storage.vectors(embedder, data_dir=...)``): the index's files
    # in the data dir, and the embedding queue resting through it.
    monkeypatch.setattr(vector_index, "EXACT_ROWS", 60)
    storage = _SqliteStorage(memory)
    vectors = storage.vectors(HashingEmbedder(), data_dir=tmp_path)
    directory = tmp_path / vector_index.MAPPED_DIRECTORY
    stored = [
        memory.history.append("s", KEY[0], "user", f"tea number {n}", tokens=3, now=NOW)
        for n in range(80)
    ]
    vectors.add("message", [(m.id, KEY[0], m.content) for m in stored])
    memory.db.publish_rewrites()
    assert vectors.nearest(KEY[0], "tea", kind="message", limit=5)
    assert sum(_mapped_rss_kib(directory)) > 0
    queue = EmbeddingQueue(
        vectors, memory.history, lambda m: (m.id, m.namespace, m.content), quiet_seconds=0
    )
    await queue.embed(memory.history.append("s", KEY[0], "user", "and one more", tokens=3, now=NOW))
    await asyncio.wait_for(queue.rested(), timeout=10)
    await queue.aclose()
    assert _mapped_rss_kib(directory) == [0]
