"""A person's own files wherever they are kept (``PersonFiles``): USER.md, the distilled
MEMORY_*.md, REMINDERS.md, TASKS.json and SCRATCH.md, their names and the templates a person
starts with. Kept in ``data_dir/<namespace>/`` (``flynn.people.files``) or, when workers share a
database, as documents in it (``flynn.people.documents``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, TypeVar

from flynn.credentials import redact_file
from flynn.errors import FileBusy, UnreadableFile

T = TypeVar("T")

TASKS_FILE = "TASKS.json"
SCRATCH_FILE = "SCRATCH.md"
REMINDERS_FILE = "REMINDERS.md"
USER_FILE = "USER.md"
MEMORY_FILES = {
    "short": "MEMORY_SHORT.md",
    "mid": "MEMORY_MID.md",
    "long": "MEMORY_LONG.md",
}
"""Each distillation tier's file."""

PERSON_FILE_NAMES = (
    USER_FILE,
    *MEMORY_FILES.values(),
    REMINDERS_FILE,
    TASKS_FILE,
    SCRATCH_FILE,
)
"""Every file a person has, in the order they are shown."""

WRITTEN_BY_FLYNN = (TASKS_FILE, SCRATCH_FILE, *MEMORY_FILES.values())
"""What forgetting a person deletes: their tools' files and the distilled notes. USER.md and
REMINDERS.md, which they write, stay."""

FORGOTTEN_MARK = ".forgotten"
"""Written by every forget: a distillation that read the person's memory before it cannot
write what it made from it (``PersonFiles.forgotten_mark``)."""

PERSON_TEMPLATES: dict[str, str] = {
    "USER.md": """\
<!--
USER.md: what you want the assistant to know about you from the start. Loaded from tier 2.
This file is yours alone: nobody else's conversations load it. Facts learned in
conversation are kept in flynn's memory database, not here; use this file for things you
would rather state once, e.g.:

# About me
- Name: Ana
- Works as: backend engineer, Europe/Lisbon time
- Prefers: short answers, metric units
-->
""",
    "REMINDERS.md": """\
<!--
REMINDERS.md: things to bring up when relevant, written by hand. Loaded from tier 2, with
the reminders Flynn will send (set by asking, e.g. "remind me tomorrow at 9 to call Ana")
listed after them. One per line, e.g. "- 2026-06-01: renew the passport".
-->
""",
    "MEMORY_SHORT.md": """\
<!--
MEMORY_SHORT.md: digest of recent days (what was said, learnt and decided). Rewritten daily
and by `flynn distill short`; edits are overwritten at the next distillation. Loaded from
tier 2.
-->
""",
    "MEMORY_MID.md": """\
<!--
MEMORY_MID.md: concise summary of recent weeks. Rewritten weekly and by
`flynn distill mid`. Loaded from tier 2.
-->
""",
    "MEMORY_LONG.md": """\
<!--
MEMORY_LONG.md: long-term memory integrated over months. Updated monthly and by
`flynn distill long`; review it after the first run. Loaded from tier 3.
-->
""",
}
"""What a person's files start with (``flynn init`` for the owner; anyone else at their first
message): guidance in comments, which prompts never show. TASKS.json and SCRATCH.md are made by
the tools that write them."""


@dataclass(frozen=True, slots=True)
class PersonFile:
    """One of a person's files, as ``PersonFiles.list_files`` finds it."""

    name: str
    updated_at: datetime
    """When it was last written (aware)."""


class PersonFiles(Protocol):
    """One person's files, by their memory root ``namespace`` (``user``, ``users/alice``,
    ``sessions/<key>``) and a file name without a folder (``USER.md``). Nothing reaches another
    namespace's files. A name with a ``/`` (or ``.``, ``..``, '') raises ``ValueError``."""

    def read(self, namespace: str, name: str) -> str:
        """The file's text, '' when there is none. Raises ``UnreadableFile`` (why, in words
        for the person) when it exists and cannot be read, ``StoreError`` when the database
        cannot be reached."""
        ...

    def read_each(self, namespace: str, names: Iterable[str]) -> dict[str, str | UnreadableFile]:
        """Each of ``names`` as ``read`` finds it, its text or the ``UnreadableFile`` ``read``
        would raise, at the cost of one look (a turn's prompt reads them all): in a folder a
        stat per file that did not change, in a database one query. Raises ``StoreError`` when
        the database cannot be reached."""
        ...

    def write(self, namespace: str, name: str, text: str, *, expected: str | None = None) -> bool:
        """Replaces the file whole (a reader sees the old text or the new, never a mix). A
        credential in ``text`` is redacted first (in a ``.json`` file, in its strings). With
        ``expected`` (the text ``read`` gave, '' for no file), writes only if the file still
        holds it, atomically against every other Flynn writer (another process, another
        worker on the database), and returns False, writing nothing, when it does not; True
        when written. Raises ``OSError`` or ``StoreError`` when it cannot be written."""
        ...

    def list_files(self, namespace: str) -> list[PersonFile]:
        """The files the person has, by name."""
        ...

    def where(self, namespace: str, name: str) -> str:
        """Where the file is kept, as a person or an admin looks for it: a path, or the
        document in the database."""
        ...

    def remove(self, namespace: str, names: Iterable[str]) -> int:
        """Deletes those of ``names`` that exist; returns how many."""
        ...

    def write_templates(self, namespace: str) -> list[str]:
        """Writes the ``PERSON_TEMPLATES`` the person lacks, never over a file they have;
        returns the names written."""
        ...

    def forget_distilled(self, namespace: str) -> int:
        """Deletes the distilled MEMORY_*.md (they repeat what was said and learnt, cannot be
        edited surgically when some of it is forgotten, and the next distillation writes them
        from what remains) and marks the forget, so a distillation running meanwhile writes
        nothing. Returns how many files."""
        ...

    def forgotten_mark(self, namespace: str) -> int:
        """When the person last forgot something (0 when never): a distillation compares it
        before and after its run."""
        ...

    def forget(self, namespace: str) -> int:
        """``flynn memory forget --all``: deletes what Flynn wrote for the person
        (``WRITTEN_BY_FLYNN``, marking the forget as ``forget_distilled`` does, and in a folder
        the pictures and files they sent); returns how many files."""
        ...


UPDATE_ATTEMPTS = 5
"""How many times ``update_file`` reads, changes and writes again when another writer changed
the file between its read and its write: each retry means another write landed, so five in a
row would take five writers on one person's file within a few milliseconds."""


def update_file(
    files: PersonFiles,
    namespace: str,
    name: str,
    change: Callable[[str], tuple[str | None, T]],
) -> T:
    """Reads the file, applies ``change`` to its text (the text to write, or ``None`` for no
    write, and what to answer) and writes the result only if the file still holds what was
    read; when another writer (a turn on another worker, the memory page) changed it
    meanwhile, applies ``change`` again to the fresh text, up to ``UPDATE_ATTEMPTS`` times.
    Raises what ``read``, ``change`` and ``write`` raise, and ``FileBusy`` when every attempt
    met a change."""
    for _ in range(UPDATE_ATTEMPTS):
        loaded = files.read(namespace, name)
        changed, answer = change(loaded)
        if changed is None or files.write(namespace, name, changed, expected=loaded):
            return answer
    raise FileBusy(f"{name} kept changing while it was being written; try again")


def check_name(name: str) -> str:
    """``name`` if it names a file without a folder; ``ValueError`` otherwise, so no name
    reaches outside the person's files."""
    if name in ("", ".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise ValueError(f"not a person's file name: {name!r}")
    return name


def redacted(name: str, text: str) -> str:
    """``text`` as the file ``name`` keeps it: credentials redacted (in a ``.json`` file, in
    its strings, so it stays JSON)."""
    return redact_file(name, text)[0]


class PersonFileRedaction:
    """``flynn.memory.redaction.FileRedaction`` on ``PersonFiles``: each of a person's files
    redacted with today's gate (``redacted``), written back only when that changed it and
    nobody wrote it since it was read (a person's edit meanwhile wins; the next pass looks
    again)."""

    def __init__(self, files: PersonFiles) -> None:
        self._files = files

    def redact_files(self, root: str, *, dry_run: bool) -> int:
        changed = 0
        for found in self._files.list_files(root):
            try:
                text = self._files.read(root, found.name)
            except (UnreadableFile, ValueError):
                continue
            cleaned = redacted(found.name, text)
            if cleaned == text:
                continue
            if dry_run or self._files.write(root, found.name, cleaned, expected=text):
                changed += 1
        return changed
