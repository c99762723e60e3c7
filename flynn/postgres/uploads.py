"""The pictures and files people send, kept in PostgreSQL (``PostgresUploads``, a
``flynn.attachments.FileShelf``): a row of ``uploaded_files`` each, keyed by the person's memory
root and the file's name, so every worker reads what any one of them kept, on whatever machine.

A shelf is handed the person's folder (``person_directory(data_dir, namespace)``, as the folder
shelf is): its path under this worker's ``data_dir`` is the namespace the rows are kept under,
the same on every worker whatever its ``data_dir``."""

from __future__ import annotations

from pathlib import Path, PurePath

from flynn.memory.namespaces import scope_params
from flynn.postgres.database import PostgresDatabase

_NAMES = """
SELECT name, octet_length(data) AS size FROM uploaded_files WHERE namespace = %s
ORDER BY name COLLATE "C"
"""
_READ = "SELECT data FROM uploaded_files WHERE namespace = %s AND name = %s"
_ADD = """
INSERT INTO uploaded_files (namespace, name, data) VALUES (%s, %s, %s)
ON CONFLICT (namespace, name) DO NOTHING
"""
_REMOVE = "DELETE FROM uploaded_files WHERE namespace = %s AND name = %s"
_FORGET = """
DELETE FROM uploaded_files WHERE namespace = %s OR (namespace >= %s AND namespace < %s)
"""


class PostgresUploads:
    """``FileShelf`` on the ``uploaded_files`` table. A folder outside ``data_dir`` is nobody's:
    it holds nothing and takes nothing."""

    def __init__(self, db: PostgresDatabase, data_dir: Path) -> None:
        self._db = db
        self._data_dir = data_dir

    def names(self, folder: Path) -> list[tuple[str, int]]:
        namespace = self._namespace(folder)
        if namespace is None:
            return []
        rows = self._db.fetchall(_NAMES, (namespace,))
        return [(str(row["name"]), int(row["size"])) for row in rows]

    def read(self, folder: Path, name: str) -> bytes | None:
        namespace = self._namespace(folder)
        if namespace is None:
            return None
        row = self._db.fetchone(_READ, (namespace, name))
        return None if row is None else bytes(row["data"])

    def add(self, folder: Path, name: str, data: bytes) -> str:
        """Keeps ``data`` under the first free name of ``name``, ``stem-2``...: an insert
        that does nothing when another worker took the name first."""
        namespace = self._namespace(folder)
        if namespace is None:
            raise ValueError(f"{folder} is no person's folder under {self._data_dir}")
        path = PurePath(name)
        candidate, number = name, 1
        while not self._db.execute(_ADD, (namespace, candidate, data)):
            number += 1
            candidate = f"{path.stem}-{number}{path.suffix}"
        return candidate

    def remove(self, folder: Path, name: str) -> None:
        namespace = self._namespace(folder)
        if namespace is not None:
            self._db.execute(_REMOVE, (namespace, name))

    def _namespace(self, folder: Path) -> str | None:
        try:
            relative = folder.relative_to(self._data_dir)
        except ValueError:
            return None
        parts = [part for part in relative.parts if part not in ("", ".", "..")]
        return "/".join(parts) or None


def forget_uploads(db: PostgresDatabase, prefix: str) -> int:
    """Deletes the files of every namespace under ``prefix`` (``prefix`` or ``prefix/...``);
    returns how many. ``ValueError`` for an empty prefix."""
    return db.execute(_FORGET, scope_params(prefix))
