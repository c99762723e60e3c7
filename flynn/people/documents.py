"""A person's files as documents of a ``Documents`` store (``DocumentsPersonFiles``), each
under the person's memory root (``users/alice/files/USER.md``): on PostgreSQL every worker
reads and writes the same files, and forgetting the person's rows forgets them too."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from datetime import datetime

from flynn.errors import UnreadableFile
from flynn.memory.store import Documents
from flynn.people.store import (
    FORGOTTEN_MARK,
    MEMORY_FILES,
    PERSON_TEMPLATES,
    WRITTEN_BY_FLYNN,
    PersonFile,
    check_name,
    redacted,
)

FILES = "files"
"""The part of a person's namespace their files are kept under."""


def file_namespace(namespace: str, name: str) -> str:
    """The document that holds ``namespace``'s file ``name``."""
    return f"{files_prefix(namespace)}/{check_name(name)}"


def files_prefix(namespace: str) -> str:
    root = namespace.strip("/")
    if not root:
        raise ValueError("a person's files need their namespace")
    return f"{root}/{FILES}"


class DocumentsPersonFiles:
    """``PersonFiles`` on a ``Documents`` store (SQLite's or PostgreSQL's). A write replaces the
    document in one statement, so readers see the old text or the new; a write over an
    ``expected`` text compares and writes in that one statement too."""

    def __init__(self, documents: Documents, clock: Callable[[], datetime]) -> None:
        self._documents = documents
        self._clock = clock

    def read(self, namespace: str, name: str) -> str:
        document = self._documents.read(file_namespace(namespace, name))
        return "" if document is None else document.content

    def read_each(self, namespace: str, names: Iterable[str]) -> dict[str, str | UnreadableFile]:
        wanted = [check_name(name) for name in names]
        prefix = files_prefix(namespace) + "/"
        # One query for the person's files: they are few and small, and a turn reads most.
        kept = {
            document.namespace.removeprefix(prefix): document.content
            for document in self._documents.list(files_prefix(namespace))
            if document.namespace.startswith(prefix)
        }
        return {name: kept.get(name, "") for name in wanted}

    def write(self, namespace: str, name: str, text: str, *, expected: str | None = None) -> bool:
        key, kept = file_namespace(namespace, name), redacted(name, text)
        if expected is None:
            self._documents.replace(key, kept, now=self._clock())
            return True
        return self._documents.replace_if(key, kept, expected, now=self._clock()) is not None

    def list_files(self, namespace: str) -> list[PersonFile]:
        prefix = files_prefix(namespace) + "/"
        found = [
            PersonFile(document.namespace.removeprefix(prefix), document.updated_at)
            for document in self._documents.list(files_prefix(namespace))
            if document.namespace.startswith(prefix)
        ]
        return sorted(
            (file for file in found if "/" not in file.name and not file.name.startswith(".")),
            key=lambda file: file.name,
        )

    def where(self, namespace: str, name: str) -> str:
        return f"the database's document {file_namespace(namespace, name)}"

    def remove(self, namespace: str, names: Iterable[str]) -> int:
        keys = [file_namespace(namespace, name) for name in names]
        return sum(1 for key in keys if self._documents.delete(key))

    def write_templates(self, namespace: str) -> list[str]:
        # Looked up, then each written only where no file is (in one statement): one the
        # person saved in between (at their very first message) stays.
        have = {file.name for file in self.list_files(namespace)}
        return [
            name
            for name, text in PERSON_TEMPLATES.items()
            if name not in have and self.write(namespace, name, text, expected="")
        ]

    def forget_distilled(self, namespace: str) -> int:
        # Random, not a time or a count: two forgets in the same instant, on workers with skewed
        # clocks, or around a forget of everything (which deletes the mark) still change it. At
        # most 12 digits: a longer number may pass as a card number and be redacted on write.
        # Marked before the files go: a distillation writing meanwhile sees the mark after its
        # write, or has its file deleted here.
        mark = secrets.randbits(39) + 1
        self._documents.replace(
            file_namespace(namespace, FORGOTTEN_MARK), f"{mark}\n", now=self._clock()
        )
        return self.remove(namespace, MEMORY_FILES.values())

    def forgotten_mark(self, namespace: str) -> int:
        document = self._documents.read(file_namespace(namespace, FORGOTTEN_MARK))
        try:
            return 0 if document is None else int(document.content.strip())
        except ValueError:
            return 0

    def forget(self, namespace: str) -> int:
        written = [name for name in WRITTEN_BY_FLYNN if name not in MEMORY_FILES.values()]
        return self.remove(namespace, written) + self.forget_distilled(namespace)
