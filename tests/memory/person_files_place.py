"""Where the person-files contract runs (the ``person_files_place`` fixture of
``conftest.py``): a module of its own, so a test imports it by a name no other folder's
``conftest`` shadows."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from flynn.people.store import PersonFiles

PERSON_FILES_CLOCK = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class PersonFilesPlace:
    """A person's files in one place (``directory``, ``sqlite``, ``postgresql``)."""

    name: str
    files: PersonFiles
    forget_person: Callable[[str], None]
    """Forgets everything of a person, as ``flynn memory forget --all`` does."""
    other_worker: Callable[[], PersonFiles]
    """The same files reached as another worker reaches them (its own connection)."""
