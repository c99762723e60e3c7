"""The files people send, kept by ``FileStore`` on either shelf: a person's folder (files 0600)
or PostgreSQL's ``uploaded_files`` (read by every worker): the same names, caps, redaction and
forgetting on both."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from flynn.attachments import FileLimits, FileShelf, FileStore, FolderShelf, RefusedFile
from flynn.credentials import REDACTED_SECRET
from flynn.messages import Attachment
from flynn.people.files import person_directory
from flynn.postgres.memory import PostgresMemory

SECRET = "sk-ant-api03-" + "x" * 40


@dataclass(frozen=True, slots=True)
class Shelves:
    name: str
    data_dir: Path
    shelf: FileShelf


@pytest.fixture(params=["folder", "postgresql"])
def shelves(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Shelves]:
    data_dir = tmp_path / "data"
    if request.param == "folder":
        yield Shelves("folder", data_dir, FolderShelf())
        return
    url: str = request.getfixturevalue("postgres_url")
    with PostgresMemory.open(url) as memory:
        yield Shelves("postgresql", data_dir, memory.uploads(data_dir))


def _sent(name: str, data: bytes, media_type: str = "application/octet-stream") -> Attachment:
    return Attachment(name, media_type, data)


def test_a_kept_file_is_read_back_by_name_and_a_taken_name_is_numbered(shelves: Shelves) -> None:
    store = FileStore(FileLimits(), shelves.shelf)
    folder = person_directory(shelves.data_dir, "users/alice")
    first = store.keep(folder, _sent("../plan.txt", b"step one", "text/plain"), store=True)
    second = store.keep(folder, _sent("plan.txt", b"step two", "text/plain"), store=True)
    assert (first.name, second.name) == ("plan.txt", "plan-2.txt")
    assert store.list(folder) == [("plan-2.txt", 8), ("plan.txt", 8)]
    assert store.read_text(folder, "plan.txt") == "step one"
    with pytest.raises(LookupError):
        store.read_text(folder, "../plan.txt")
    with pytest.raises(LookupError):
        store.read_text(person_directory(shelves.data_dir, "users/bob"), "plan.txt")


def test_another_worker_reads_what_one_kept(tmp_path: Path, postgres_url: str) -> None:
    with PostgresMemory.open(postgres_url) as one, PostgresMemory.open(postgres_url) as two:
        store = FileStore(FileLimits(), one.uploads(tmp_path / "here"))
        kept = store.keep_now(
            person_directory(tmp_path / "here", "user"), _sent("boiler.jpg", b"\xff\xd8jpeg")
        )
        assert kept.kept
        elsewhere = two.uploads(tmp_path / "elsewhere")
        found = elsewhere.read(person_directory(tmp_path / "elsewhere", "user"), "boiler.jpg")
        assert found == b"\xff\xd8jpeg"


def test_the_caps_count_what_the_person_has_kept(shelves: Shelves) -> None:
    store = FileStore(FileLimits(max_files=2, max_total_bytes=10), shelves.shelf)
    folder = person_directory(shelves.data_dir, "user")
    assert not isinstance(store.keep(folder, _sent("a.bin", b"12345"), store=True), RefusedFile)
    too_big = store.keep(folder, _sent("b.bin", b"123456"), store=True)
    assert isinstance(too_big, RefusedFile) and "more than" in too_big.reason
    assert not isinstance(store.keep(folder, _sent("c.bin", b"1"), store=True), RefusedFile)
    too_many = store.keep(folder, _sent("d.bin", b"1"), store=True)
    assert isinstance(too_many, RefusedFile) and "2 files" in too_many.reason
    assert [name for name, _ in store.list(folder)] == ["a.bin", "c.bin"]


def test_a_text_file_is_kept_without_its_credentials(shelves: Shelves) -> None:
    store = FileStore(FileLimits(), shelves.shelf)
    folder = person_directory(shelves.data_dir, "user")
    kept = store.keep(folder, _sent("env.txt", f"KEY={SECRET}".encode(), "text/plain"), store=True)
    assert not isinstance(kept, RefusedFile) and kept.redacted == 1
    stored = shelves.shelf.read(folder, "env.txt")
    assert stored is not None and SECRET.encode() not in stored


def test_a_json_file_is_kept_as_json_without_its_credentials(shelves: Shelves) -> None:
    # Read as text, a value named by the field beside it was kept ('"field": "password"').
    sent = json.dumps(
        {"wifi": [{"field": "password", "value": "GuestNet2024"}], "note": "guests welcome"},
        indent=4,
    )
    store = FileStore(FileLimits(), shelves.shelf)
    folder = person_directory(shelves.data_dir, "user")
    kept = store.keep(folder, _sent("home.json", sent.encode(), "application/json"), store=True)
    assert not isinstance(kept, RefusedFile) and kept.redacted == 1
    stored = shelves.shelf.read(folder, "home.json")
    assert stored is not None and b"GuestNet2024" not in stored
    expected = {"wifi": [{"field": "password", "value": REDACTED_SECRET}], "note": "guests welcome"}
    assert stored.decode() == json.dumps(expected, indent=4)  # still JSON, as it was laid out


def test_a_redelivered_message_discards_its_second_copy(shelves: Shelves) -> None:
    store = FileStore(FileLimits(), shelves.shelf)
    folder = person_directory(shelves.data_dir, "user")
    first = store.keep_now(folder, _sent("scan.pdf", b"%PDF"))
    again = store.keep_now(folder, _sent("scan.pdf", b"%PDF"))
    store.discard(folder, [again])
    assert [name for name, _ in store.list(folder)] == [first.name]
    replayed = store.keep(
        folder, Attachment(first.name, "application/pdf", b"", kept=True), store=True
    )
    assert not isinstance(replayed, RefusedFile) and replayed.size == 4


def test_forgetting_a_person_in_postgresql_forgets_their_files(
    tmp_path: Path, postgres_url: str
) -> None:
    with PostgresMemory.open(postgres_url) as memory:
        shelf = memory.uploads(tmp_path)
        for namespace in ("users/alice", "users/alicea"):
            shelf.add(person_directory(tmp_path, namespace), "a.bin", b"1")
        memory.forget_namespace("users/alice")
        assert shelf.names(person_directory(tmp_path, "users/alice")) == []
        assert shelf.names(person_directory(tmp_path, "users/alicea")) == [("a.bin", 1)]


def test_the_folder_shelf_writes_owner_only_files(tmp_path: Path) -> None:
    folder = tmp_path / "user"
    name = FolderShelf().add(folder, "a.bin", b"1")
    assert (folder / "files" / name).stat().st_mode & 0o777 == 0o600
    assert (folder / "files").stat().st_mode & 0o777 == 0o700
