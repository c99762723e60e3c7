"""A person's files with another writer let in between a read and the next write
(``WriterBetween``): the race of two workers serving one person, made to happen every time."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from flynn.errors import UnreadableFile
from flynn.people.store import PersonFile, PersonFiles


class WriterBetween:
    """``files``, except that the first read of ``name`` after ``arm`` runs the armed writer
    (to its end) after reading and before answering: whoever read goes on with a text that is
    no longer the file's. ``at="write"``: the first write of ``name`` runs it just before
    writing, after every look the writer took."""

    def __init__(
        self, files: PersonFiles, name: str, *, at: Literal["read", "write"] = "read"
    ) -> None:
        self._files = files
        self._name = name
        self._at = at
        self._between: Callable[[], None] | None = None

    def arm(self, between: Callable[[], None]) -> None:
        self._between = between

    @property
    def ran(self) -> bool:
        return self._between is None

    def read(self, namespace: str, name: str) -> str:
        text = self._files.read(namespace, name)
        if self._at == "read":
            self._run(name)
        return text

    def _run(self, name: str) -> None:
        if name == self._name and self._between is not None:
            between, self._between = self._between, None
            between()

    def read_each(self, namespace: str, names: Iterable[str]) -> dict[str, str | UnreadableFile]:
        return self._files.read_each(namespace, names)

    def write(self, namespace: str, name: str, text: str, *, expected: str | None = None) -> bool:
        if self._at == "write":
            self._run(name)
        return self._files.write(namespace, name, text, expected=expected)

    def list_files(self, namespace: str) -> list[PersonFile]:
        return self._files.list_files(namespace)

    def where(self, namespace: str, name: str) -> str:
        return self._files.where(namespace, name)

    def remove(self, namespace: str, names: Iterable[str]) -> int:
        return self._files.remove(namespace, names)

    def write_templates(self, namespace: str) -> list[str]:
        return self._files.write_templates(namespace)

    def forget_distilled(self, namespace: str) -> int:
        return self._files.forget_distilled(namespace)

    def forgotten_mark(self, namespace: str) -> int:
        return self._files.forgotten_mark(namespace)

    def forget(self, namespace: str) -> int:
        return self._files.forget(namespace)
