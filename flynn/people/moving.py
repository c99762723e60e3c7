"""Moving a person's own files from one place to another (``flynn storage copy``): their files
(USER.md, MEMORY_*.md, ...) from one ``PersonFiles`` to another, and the pictures and files they
sent from one ``FileShelf`` to another, each written only where the target lacks it, so a rerun
writes nothing. Credentials are redacted on the way, as every write redacts them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from flynn.attachments import FILES_FOLDER, FileShelf, kept_bytes
from flynn.people.files import person_directory
from flynn.people.store import FORGOTTEN_MARK, PERSON_FILE_NAMES, PersonFiles, redacted


def person_namespaces(data_dir: Path) -> list[str]:
    """The memory roots with a folder of their own under ``data_dir``: every folder holding one
    of a person's files, their forget mark or the files they sent (``files/``), as the namespace
    it stands for (``user``, ``users/alice``, ``sessions/<key>``)."""
    marks = {*PERSON_FILE_NAMES, FORGOTTEN_MARK, FILES_FOLDER}
    found = []
    for folder in sorted(path for path in data_dir.rglob("*") if path.is_dir()):
        relative = folder.relative_to(data_dir)
        if relative.parts[0] == "persona" or relative.name == FILES_FOLDER:
            continue
        if any((folder / name).exists() for name in marks):
            found.append(relative.as_posix())
    return found


class PersonFilesCopy:
    """Each person's files from ``source`` to ``target`` (a folder's to documents): a file is
    written when the target lacks it or holds other text (credentials redacted, as every write
    does)."""

    kind = "person files"

    def __init__(self, source: PersonFiles, target: PersonFiles, namespaces: Sequence[str]):
        self._source = source
        self._target = target
        self._namespaces = namespaces
        self.redacted = 0

    def copy(self) -> int:
        written = self.redacted = 0
        for namespace in self._namespaces:
            held = {file.name for file in self._target.list_files(namespace)}
            for file in self._source.list_files(namespace):
                kept = self._source.read(namespace, file.name)
                text = redacted(file.name, kept)
                self.redacted += text != kept
                there = self._target.read(namespace, file.name) if file.name in held else ""
                # Only over what was just read there: a worker started on the target that
                # wrote the file meanwhile keeps its text (the copy refuses a live database).
                if (file.name not in held or there != text) and self._target.write(
                    namespace, file.name, text, expected=there
                ):
                    written += 1
        return written

    def counts(self) -> tuple[int, int]:
        return (
            sum(len(self._source.list_files(namespace)) for namespace in self._namespaces),
            sum(len(self._target.list_files(namespace)) for namespace in self._namespaces),
        )


class UploadsCopy:
    """The pictures and files each person sent, from ``source`` to ``target`` under the same
    names, their bytes as they are but a text file's credentials (an older install kept them:
    ``kept_bytes``); one the target already has is left alone."""

    kind = "uploaded files"

    def __init__(
        self, source: FileShelf, target: FileShelf, data_dir: Path, namespaces: Sequence[str]
    ) -> None:
        self._source = source
        self._target = target
        self._folders = [person_directory(data_dir, namespace) for namespace in namespaces]
        self.redacted = 0

    def copy(self) -> int:
        written = self.redacted = 0
        for folder in self._folders:
            for name, _ in self._source.names(folder):
                data = self._source.read(folder, name)
                if data is None:
                    continue
                kept = kept_bytes(name, data)
                self.redacted += kept != data
                if self._target.read(folder, name) is None:
                    self._target.add(folder, name, kept)
                    written += 1
        return written

    def counts(self) -> tuple[int, int]:
        return (
            sum(len(self._source.names(folder)) for folder in self._folders),
            sum(len(self._target.names(folder)) for folder in self._folders),
        )
