"""A person's own files under ``data_dir/<namespace>/`` (``DirectoryPersonFiles``): written
whole and atomically (a temporary file renamed over the old one) under the person's lock file,
owner-only, so a crash mid-write leaves the previous version and nobody else on the machine can
read them; a person or an admin may edit them by hand."""

from __future__ import annotations

import fcntl
import glob
import os
import secrets
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import structlog

from flynn.attachments import forget_files
from flynn.errors import UnreadableFile
from flynn.people.store import (
    FORGOTTEN_MARK,
    MEMORY_FILES,
    PERSON_TEMPLATES,
    SCRATCH_FILE,
    TASKS_FILE,
    PersonFile,
    check_name,
    redacted,
)
from flynn.persona import PERSON_FILES, clean_file_text, write_templates

log = structlog.get_logger(__name__)


def person_directory(data_dir: Path, namespace: str) -> Path:
    """Where the person whose memory root is ``namespace`` keeps their files (``user``,
    ``users/alice``, or ``sessions/<key>`` for session-scoped memory)."""
    parts = [part for part in namespace.split("/") if part not in ("", ".", "..")]
    return data_dir.joinpath(*parts)


RECENT_NS = 2_000_000_000
"""A file changed this recently (by its times) is read again at the next look even if its
times and size stay the same: an edit in place within the file system's clock tick, of the
same size, would leave them all as they were. Two seconds covers the coarsest ticks (FAT's
two seconds, ext3's and HFS+'s one); it applies where the file's change time is a whole
second."""

FINE_RECENT_NS = 100_000_000
"""As ``RECENT_NS`` where the file's change time has a fraction of a second, which a file
system with one-second ticks never records: there the tick is the kernel's (a jiffy, 1 to
10 ms) or finer (exFAT's 10 ms, NTFS's 100 ns), and a tenth of a second is ten of the
coarsest. A change time is always the kernel's own stamp (``touch`` and ``rsync -t`` set
the modification time, not it)."""


class DirectoryPersonFiles:
    """``PersonFiles`` in ``data_dir/<namespace>/``, where a person or an admin may edit them by
    hand. A file is read again only when one ``stat`` says it changed: another inode (a whole
    write renames a new file over it), other times (an edit in place, a ``chmod``) or size."""

    def __init__(self, data_dir: Path, *, clock_ns: Callable[[], int] = time.time_ns) -> None:
        """``clock_ns`` is the wall clock file times are compared with (``unsettled_ns``)."""
        self._data_dir = data_dir
        self._clock_ns = clock_ns
        # Each file's text as last read, by path, with the version (inode, times, size) it had.
        self._texts: dict[str, tuple[tuple[int, int, int, int], str]] = {}
        # Each person's folder as a path string: building it with pathlib every turn costs
        # more than the stat it is for.
        self._folders: dict[str, str] = {}

    def folder(self, namespace: str) -> Path:
        return person_directory(self._data_dir, namespace)

    def read(self, namespace: str, name: str) -> str:
        try:
            return self._read(namespace, check_name(name))
        except OSError as exc:
            raise UnreadableFile(f"{name} cannot be read ({exc.strerror or exc})") from None

    def read_each(self, namespace: str, names: Iterable[str]) -> dict[str, str | UnreadableFile]:
        found: dict[str, str | UnreadableFile] = {}
        for name in names:
            try:
                found[name] = self.read(namespace, name)
            except UnreadableFile as exc:
                found[name] = exc
        return found

    def _read(self, namespace: str, name: str) -> str:
        """The file's text, read again only when its version changed (or is too recent to
        trust); '' when there is none; ``OSError`` when it cannot be read."""
        folder = self._folders.get(namespace)
        if folder is None:
            folder = self._folders[namespace] = str(self.folder(namespace))
        path = os.path.join(folder, name)  # noqa: PTH118 (a turn's cost, see _folders)
        # Before the look: an edit after this instant gets a later tick than one before it.
        looked_ns = self._clock_ns()
        try:
            status = os.stat(path)  # noqa: PTH116
        except FileNotFoundError:
            self._texts.pop(path, None)
            return ""
        version = (status.st_ino, status.st_mtime_ns, status.st_ctime_ns, status.st_size)
        cached = self._texts.get(path)
        if cached is not None and cached[0] == version:
            return cached[1]
        text = read_text(Path(path))
        changed_ns = max(status.st_mtime_ns, status.st_ctime_ns)
        if looked_ns - changed_ns > unsettled_ns(status.st_ctime_ns):
            self._texts[path] = (version, text)
        else:
            self._texts.pop(path, None)
        return text

    def write(self, namespace: str, name: str, text: str, *, expected: str | None = None) -> bool:
        folder = self.folder(namespace)
        path = folder / check_name(name)
        with person_lock(folder):
            # Read from the disk, not the cache: another process may have written a moment ago.
            if expected is not None and read_text(path) != expected:
                return False
            write_text(path, text)
        return True

    def list_files(self, namespace: str) -> list[PersonFile]:
        try:
            entries = list(os.scandir(self.folder(namespace)))
        except (FileNotFoundError, NotADirectoryError):
            return []
        found = []
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_file(follow_symlinks=True):
                continue
            try:
                changed = entry.stat(follow_symlinks=True).st_mtime
            except OSError:
                continue
            found.append(PersonFile(entry.name, datetime.fromtimestamp(changed, UTC)))
        return sorted(found, key=lambda file: file.name)

    def where(self, namespace: str, name: str) -> str:
        return str(self.folder(namespace) / check_name(name))

    def remove(self, namespace: str, names: Iterable[str]) -> int:
        folder, names = self.folder(namespace), tuple(check_name(name) for name in names)
        with held_if_there(folder):
            return _unlink(folder, names)

    def write_templates(self, namespace: str) -> list[str]:
        # Each only where no file is, under the lock: one the person saved a moment ago stays.
        folder = self.folder(namespace)
        return [
            name
            for name, text in PERSON_TEMPLATES.items()
            if not (folder / name).exists() and self.write(namespace, name, text, expected="")
        ]

    def forget_distilled(self, namespace: str) -> int:
        folder = self.folder(namespace)
        with held_if_there(folder):
            return forget_distilled(folder)

    def forgotten_mark(self, namespace: str) -> int:
        return forget_mark(self.folder(namespace))

    def forget(self, namespace: str) -> int:
        folder = self.folder(namespace)
        with held_if_there(folder):
            return forget_person_files(folder)


def unsettled_ns(ctime_ns: int) -> int:
    """How long after a change a file whose change time is ``ctime_ns`` is read again at every
    look: ``FINE_RECENT_NS`` where that time shows the file system records fractions of a
    second, ``RECENT_NS`` where it is a whole second (a one-second tick, or one time in a
    billion a fine one: read again for longer, never too briefly)."""
    return RECENT_NS if ctime_ns % 1_000_000_000 == 0 else FINE_RECENT_NS


LOCK_FILE = ".lock"
"""In a person's folder: held (``flock``) by every write and deletion through
``DirectoryPersonFiles``, so a write over an expected text compares and renames with no other
Flynn process writing between, and no forget deletes between. Hand edits do not take it."""


@contextmanager
def person_lock(folder: Path) -> Iterator[None]:
    """Holds the person's ``LOCK_FILE`` (creating their folder, owner-only, if needed), waiting
    for another process or thread that holds it; released when the block ends."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(folder / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # which releases the flock


@contextmanager
def held_if_there(folder: Path) -> Iterator[None]:
    """``person_lock`` for a deletion in the person's folder, when there is one (a person
    with no folder gets none): a write under way (between its compare and its rename) ends
    first, so it cannot bring back what the deletion took away."""
    if not folder.is_dir():
        yield
        return
    with person_lock(folder):
        yield


def read_text(path: Path) -> str:
    """The file's text; '' when it does not exist. A file saved by hand in another encoding
    is read with its odd bytes replaced, not refused. ``OSError`` when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def write_text(path: Path, text: str) -> None:
    """Replaces the file's content atomically; creates its folder (0700) if needed. A
    credential in ``text`` is redacted first (in a JSON file, in its strings)."""
    text = redacted(path.name, text)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_person_templates(folder: Path) -> list[Path]:
    """Writes the templates ``folder`` lacks (creating it, owner-only); returns those written.
    Existing files are never overwritten."""
    return write_templates(folder, PERSON_TEMPLATES)


def forget_person_files(folder: Path) -> int:
    """Deletes what Flynn wrote in the person's folder: tasks and scratchpad (their tools), the
    distilled MEMORY_*.md, and the pictures and files they sent (``files/``); returns how many
    files. USER.md, which they write, stays."""
    written = _unlink(folder, (TASKS_FILE, SCRATCH_FILE)) + forget_distilled(folder)
    return written + forget_files(folder)


def forget_distilled(folder: Path) -> int:
    """Deletes the distilled MEMORY_*.md files: they repeat what was said and learnt, cannot be
    edited surgically when some of that is forgotten, and the next distillation writes them
    anew from what remains. Marks the forget, so a distillation running meanwhile writes
    nothing. Returns how many files."""
    if folder.is_dir():
        # Random, as ``DocumentsPersonFiles`` marks it: read back by ``forget_mark``. Not the
        # time in nanoseconds: 19 digits that one time in ten pass for a card number, and
        # are written as a redaction. Marked before the files go: a distillation writing
        # meanwhile sees the mark after its write, or has its file deleted here.
        write_text(folder / FORGOTTEN_MARK, f"{secrets.randbits(39) + 1}\n")
    return _unlink(folder, tuple(MEMORY_FILES.values()))


def forget_mark(folder: Path) -> int:
    """Changes at every forget (0 when never): the number the mark holds, not its file's
    modification time, which two forgets within one tick of the file system's clock (a second
    on ext3 or HFS+, two on FAT) leave the same. A mark without one (an older Flynn's, which
    may read as a redaction) gives that time instead."""
    path = folder / FORGOTTEN_MARK
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        return int(text.strip()) if text.strip().isdigit() else path.stat().st_mtime_ns
    except OSError:
        return 0


def _unlink(folder: Path, names: tuple[str, ...]) -> int:
    """Deletes the files ``names`` in ``folder``, and the temporary copies of them a write cut
    short left (``write_text``'s, before its rename: under the person's lock none is being
    written); how many files, not counting those copies."""
    removed = 0
    for name in names:
        for stale in folder.glob(f".{glob.escape(name)}.*.tmp"):
            stale.unlink(missing_ok=True)
        try:
            (folder / name).unlink()
        except FileNotFoundError:
            continue
        removed += 1
    return removed


def move_shared_person_files(persona: Path, owner: Path | None) -> list[str]:
    """Moves the person files an older Flynn kept in the shared persona folder ``persona``
    (USER.md, MEMORY_*.md, ...) to the owner's folder ``owner``; returns the
    names moved, and logs once what it did. A file the owner's folder already has (more than
    an unedited template) is left where it is (logged); with no single owner (``users:``, or
    memory per session) nothing is moved and the files, which no prompt reads any longer, are
    named in the log."""
    found = sorted(name for name in PERSON_FILES if (persona / name).is_file())
    if not found:
        return []
    if owner is None:
        log.warning(
            "persona.person_files_unused",
            files=found,
            folder=str(persona),
            fix="move each person's own copy to data_dir/users/<name>/",
        )
        return []
    moved: list[str] = []
    kept: list[str] = []
    # Under the owner's lock, as every write of theirs: a file saved there meanwhile (a `flynn
    # memory file edit` beside a starting daemon) is looked at before a move could replace it.
    with person_lock(owner):
        for name in found:
            source, destination = persona / name, owner / name
            if destination.exists() and not _only_guidance(destination):
                if _same_content(source, destination) or _only_guidance(source):
                    source.unlink()
                    moved.append(name)
                else:
                    kept.append(name)
                continue
            try:
                source.replace(destination)
            except OSError as exc:
                log.warning("persona.person_file_not_moved", file=str(source), error=str(exc))
                continue
            moved.append(name)
    if moved:
        log.info("persona.person_files_moved", files=moved, to=str(owner))
    if kept:
        log.warning(
            "persona.person_files_kept",
            files=kept,
            folder=str(persona),
            reason=f"{owner} has its own copies, which are the ones used",
        )
    return moved


def _only_guidance(path: Path) -> bool:
    """An unedited template: nothing but its comments."""
    try:
        return not clean_file_text(path.name, path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False


def _same_content(one: Path, other: Path) -> bool:
    try:
        return one.read_bytes() == other.read_bytes()
    except OSError:
        return False
