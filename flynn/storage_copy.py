"""Moving house (``flynn storage copy --to URL``): an SQLite install, its ``flynn.db`` and the
people's folders in ``data_dir``, copied into PostgreSQL and counted on both sides. It sits
beside the composition root: the one other place that builds both backends, since it reads one
and writes the other."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from flynn.app import database_path
from flynn.attachments import FolderShelf
from flynn.datadir import PRIVATE_FILE_MODE, DataDirLock
from flynn.errors import StoreError
from flynn.gateway_token import kept_gateway_token, token_digest
from flynn.memory.database import Database
from flynn.people.files import DirectoryPersonFiles
from flynn.people.moving import PersonFilesCopy, UploadsCopy, person_namespaces
from flynn.people_place import person_files
from flynn.postgres.copy import COPY_WRITER, CopiedKind, KindCount, Progress, copy_install
from flynn.postgres.gateway_token import PostgresGatewayToken
from flynn.postgres.memory import PostgresMemory
from flynn.schedule.migrations import SCHEMA
from flynn.settings import Settings


@dataclass(frozen=True, slots=True)
class CopyReport:
    """What a copy found: each kind counted on both sides."""

    source: Path
    target: str
    """The database's URL without its password."""
    kinds: list[KindCount]

    @property
    def matches(self) -> bool:
        return all(kind.matches for kind in self.kinds)

    @property
    def copied(self) -> int:
        return sum(kind.copied for kind in self.kinds)

    @property
    def redacted(self) -> int:
        """Rows and files whose credentials were removed on the way (``KindCount.redacted``)."""
        return sum(kind.redacted for kind in self.kinds)


INSTALL_FILE = "install-id"
"""In ``data_dir``: the name this install gives itself, written by its first copy; a database
filled from it records the name, so a copy into one filled from another install is refused."""


def copy_to_postgres(
    settings: Settings,
    url: str,
    *,
    progress: Progress | None = None,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> CopyReport:
    """Copies the install in ``settings.data_dir`` into the database at ``url`` (migrated
    first) under the data dir's lock, so no daemon runs meanwhile; reports each kind counted on
    both sides. Raises ``DataDirLocked`` when a daemon runs, ``StoreError`` when there is no
    install to copy or a database fails, ``StorageUnusable`` when the server cannot be reached,
    ``CopyRefused`` when it holds another install's rows; none of them shows the password."""
    data_dir = settings.data_dir
    path = database_path(settings)
    if not path.is_file():
        raise StoreError(f"no flynn install to copy in {data_dir}: {path} does not exist")
    with DataDirLock(data_dir):
        install = install_name(data_dir)
        with (
            Database.open(path, SCHEMA) as source,
            PostgresMemory.open(url, writer=COPY_WRITER) as target,
        ):
            namespaces = person_namespaces(data_dir)
            documents = person_files(settings, target.documents, clock, shared_database=True)
            also: list[CopiedKind] = [
                PersonFilesCopy(DirectoryPersonFiles(data_dir), documents, namespaces),
                UploadsCopy(FolderShelf(), target.uploads(data_dir), data_dir, namespaces),
                GatewayTokenCopy(data_dir, PostgresGatewayToken(target.db), clock),
            ]
            kinds = copy_install(source, target.db, install, also=also, progress=progress)
            # Indexed here, by the copy, rather than by the next open (a worker's, a
            # command's), which would count as going live (``claim``).
            target.facts.index.index_missing()
            target.team.index.index_missing()
            return CopyReport(path, target.db.shown_url, kinds)


class GatewayTokenCopy:
    """The gateway token generated into the data dir, kept in the database as its digest (as a
    worker on PostgreSQL keeps one), so the web chat's address people saved keeps working; a
    database holding another token's digest is left alone, and the count says so."""

    kind = "gateway token"
    redacted = 0

    def __init__(
        self, data_dir: Path, target: PostgresGatewayToken, clock: Callable[[], datetime]
    ) -> None:
        self._token = kept_gateway_token(data_dir)
        self._target = target
        self._clock = clock

    def copy(self) -> int:
        if self._token is None:
            return 0
        return int(self._target.add_if_absent(token_digest(self._token), now=self._clock()))

    def counts(self) -> tuple[int, int]:
        if self._token is None:
            return 0, 0
        return 1, int(self._target.digest() == token_digest(self._token))


def install_name(data_dir: Path) -> str:
    """This install's name (``INSTALL_FILE``), made and kept (0600) the first time."""
    path = data_dir / INSTALL_FILE
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
    except FileExistsError:
        return path.read_text(encoding="utf-8").strip()
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        name = secrets.token_hex(16)
        handle.write(name + "\n")
    return name
