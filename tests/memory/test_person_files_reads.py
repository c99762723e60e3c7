"""A turn's reading of a person's files costs a look when nothing changed: in a folder a ``stat``
per file (the text is read again only when the file's inode, times or size changed), as
documents one query for all of them; and an edit, however it is made, is seen at the next read."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from flynn.errors import UnreadableFile
from flynn.memory.facts import SqliteFacts
from flynn.memory.store import Document, Documents
from flynn.memory.stores import SqliteMemory
from flynn.people import files as files_module
from flynn.people.documents import DocumentsPersonFiles
from flynn.people.files import FINE_RECENT_NS, RECENT_NS, DirectoryPersonFiles, unsettled_ns
from flynn.people.store import (
    MEMORY_FILES,
    PERSON_FILE_NAMES,
    REMINDERS_FILE,
    SCRATCH_FILE,
    TASKS_FILE,
    USER_FILE,
)
from flynn.sessions.personal import PersonalFiles

ALICE = "users/alice"
NOW = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
LONG_AGO_NS = 1_700_000_000 * 10**9
"""When the tests' files were last changed, set with ``os.utime`` so that a file's version is
the test's to choose, not the clock's."""


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every path a ``DirectoryPersonFiles`` opens to read, in order."""
    opened: list[Path] = []
    read_text = files_module.read_text

    def counting(path: Path) -> str:
        opened.append(path)
        return read_text(path)

    monkeypatch.setattr(files_module, "read_text", counting)
    return opened


def _later() -> Callable[[], int]:
    """A clock an hour after the files' times (their ctime is now), so none is too recent to
    be kept."""
    return lambda: time.time_ns() + 3600 * 10**9


def _write(path: Path, text: str, *, mtime_ns: int = LONG_AGO_NS) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(mtime_ns, mtime_ns))


def _read_alices(data_dir: Path) -> tuple[DirectoryPersonFiles, Path]:
    """Alice's USER.md, written long ago and read once (so kept), and where it is."""
    files = DirectoryPersonFiles(data_dir, clock_ns=_later())
    path = files.folder(ALICE) / USER_FILE
    _write(path, "- Name: Alice\n")
    assert files.read(ALICE, USER_FILE) == "- Name: Alice\n"
    return files, path


def test_an_unchanged_file_is_not_read_again(tmp_path: Path, reads: list[Path]) -> None:
    files = DirectoryPersonFiles(tmp_path, clock_ns=_later())
    for name in PERSON_FILE_NAMES:
        _write(files.folder(ALICE) / name, f"{name} of Alice\n")
    for _ in range(3):
        found = files.read_each(ALICE, PERSON_FILE_NAMES)
        assert found == {name: f"{name} of Alice\n" for name in PERSON_FILE_NAMES}
    assert len(reads) == len(PERSON_FILE_NAMES)


def test_a_file_changed_just_now_is_read_again_until_it_settles(
    tmp_path: Path, reads: list[Path]
) -> None:
    # An edit in place within the file system's clock tick, of the same size, would change
    # none of the file's times: a file this recent is not trusted to stay as it was read. Where
    # its change time has a fraction of a second the tick is a jiffy at most, and it settles in
    # a tenth of a second, not two (a turn's four files were read again for two seconds after
    # every write).
    now = [0]
    files = DirectoryPersonFiles(tmp_path, clock_ns=lambda: now[0])
    path = files.folder(ALICE) / USER_FILE
    _write(path, "- Name: Alice\n")
    changed = path.stat().st_ctime_ns
    settles = unsettled_ns(changed)
    assert settles == (RECENT_NS if changed % 1_000_000_000 == 0 else FINE_RECENT_NS)
    now[0] = changed + 1
    assert files.read(ALICE, USER_FILE) == files.read(ALICE, USER_FILE) == "- Name: Alice\n"
    assert len(reads) == 2
    now[0] = changed + settles + 1
    assert files.read(ALICE, USER_FILE) == files.read(ALICE, USER_FILE) == "- Name: Alice\n"
    assert len(reads) == 3


def test_a_whole_second_change_time_is_trusted_only_after_two_seconds() -> None:
    assert unsettled_ns(1_700_000_000 * 10**9) == RECENT_NS
    assert unsettled_ns(1_700_000_000 * 10**9 + 4_000_000) == FINE_RECENT_NS
    assert FINE_RECENT_NS < RECENT_NS


def test_an_edit_in_place_of_the_same_size_in_the_same_second_is_seen(tmp_path: Path) -> None:
    files, path = _read_alices(tmp_path)
    inode = path.stat().st_ino
    with path.open("r+", encoding="utf-8") as handle:  # as an editor saving in place
        handle.write("- Name: Alyx ")
    os.utime(path, ns=(LONG_AGO_NS, LONG_AGO_NS + 1))
    assert path.stat().st_ino == inode
    assert files.read(ALICE, USER_FILE) == "- Name: Alyx \n"


def test_a_file_renamed_over_with_the_same_times_and_size_is_seen(tmp_path: Path) -> None:
    files, path = _read_alices(tmp_path)
    replacement = path.with_name("USER.md.new")
    _write(replacement, "- Name: Alyx \n")
    replacement.replace(path)
    assert files.read(ALICE, USER_FILE) == "- Name: Alyx \n"
    # And through the seam, as another worker writes (a new file renamed over the old).
    DirectoryPersonFiles(tmp_path).write(ALICE, USER_FILE, "- Name: Alice\n")
    assert files.read(ALICE, USER_FILE) == "- Name: Alice\n"


def test_a_deleted_or_unreadable_file_reads_as_before(tmp_path: Path) -> None:
    files, path = _read_alices(tmp_path)
    path.unlink()
    assert files.read(ALICE, USER_FILE) == ""
    path.mkdir()
    with pytest.raises(UnreadableFile, match=r"USER\.md cannot be read \(Is a directory\)"):
        files.read(ALICE, USER_FILE)
    [found] = files.read_each(ALICE, [USER_FILE]).values()
    assert isinstance(found, UnreadableFile)
    path.rmdir()
    _write(path, "- Name: Alice\n")
    assert files.read(ALICE, USER_FILE) == "- Name: Alice\n"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a file whatever its mode")
def test_a_file_made_unreadable_is_reported_at_the_next_read(tmp_path: Path) -> None:
    files, path = _read_alices(tmp_path)
    path.chmod(0)  # changes the ctime only
    try:
        with pytest.raises(UnreadableFile, match="Permission denied"):
            files.read(ALICE, USER_FILE)
    finally:
        path.chmod(0o600)


class CountingDocuments:
    """``Documents`` that counts the reads a person's files make of the real store."""

    def __init__(self, documents: Documents) -> None:
        self._documents = documents
        self.queries = 0

    def read(self, namespace: str) -> Document | None:
        self.queries += 1
        return self._documents.read(namespace)

    def replace(
        self, namespace: str, content: str, *, now: datetime, expires_at: datetime | None = None
    ) -> Document:
        return self._documents.replace(namespace, content, now=now, expires_at=expires_at)

    def replace_if(
        self, namespace: str, content: str, expected: str, *, now: datetime
    ) -> Document | None:
        return self._documents.replace_if(namespace, content, expected, now=now)

    def append(self, namespace: str, content: str, *, now: datetime) -> Document:
        return self._documents.append(namespace, content, now=now)

    def delete(self, namespace: str) -> bool:
        return self._documents.delete(namespace)

    def list(self, prefix: str) -> list[Document]:
        self.queries += 1
        return self._documents.list(prefix)


@pytest.fixture
def facts(memory: SqliteMemory) -> Iterator[SqliteFacts]:
    yield SqliteFacts(memory.db)


def test_a_turn_reads_a_persons_documents_in_one_query(
    documents: Documents, facts: SqliteFacts, tmp_path: Path
) -> None:
    counted = CountingDocuments(documents)
    files = DocumentsPersonFiles(counted, lambda: NOW)
    personal = PersonalFiles(tmp_path, facts, files=files, schedule=None, default_timezone="UTC")
    files.write(ALICE, USER_FILE, "- Name: Alice\n")
    files.write(ALICE, MEMORY_FILES["short"], "Talked about plants.\n")
    files.write(ALICE, TASKS_FILE, '["water the plants"]\n')
    files.write("users/alicia", USER_FILE, "- Name: Alicia\n")  # a prefix of hers, not hers
    texts = personal.prompt_files(ALICE, PERSON_FILE_NAMES, now=NOW)
    assert counted.queries == 1
    assert texts[USER_FILE] == "- Name: Alice"
    assert texts[MEMORY_FILES["short"]] == "Talked about plants."
    assert texts[TASKS_FILE] == "1. water the plants"
    assert texts[REMINDERS_FILE] == texts[SCRATCH_FILE] == ""
