"""Where people's files are kept (``PersonFiles``), decided here once for the daemon and the
commands: in ``data_dir`` (the default), or in the database every worker shares."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from flynn.memory.store import Documents
from flynn.people.documents import DocumentsPersonFiles
from flynn.people.files import DirectoryPersonFiles, person_directory
from flynn.people.store import PersonFiles
from flynn.settings import Settings


def person_files(
    settings: Settings,
    documents: Documents,
    clock: Callable[[], datetime],
    *,
    shared_database: bool = False,
) -> PersonFiles:
    """Each person's files: in their folder under ``data_dir`` (where they and an admin may
    edit them by hand), or, with ``shared_database`` (workers sharing one PostgreSQL, possibly
    on machines with a ``data_dir`` each), as documents in ``documents``, so every worker reads
    and writes the same files."""
    if shared_database:
        return DocumentsPersonFiles(documents, clock)
    return DirectoryPersonFiles(settings.data_dir)


def owner_directory(settings: Settings) -> Path | None:
    """The single owner's folder (``memory.user_namespace``), ``None`` with ``users:`` (each
    person has their own) or with memory per session."""
    if settings.users or not settings.memory.user_namespace:
        return None
    return person_directory(settings.data_dir, settings.memory.user_namespace)
