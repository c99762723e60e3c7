"""A turn's reading of a person's files costs one look: as documents, one query for all of them."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from flynn.memory.facts import SqliteFacts
from flynn.memory.store import Document, Documents
from flynn.memory.stores import SqliteMemory
from flynn.people.documents import DocumentsPersonFiles
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
