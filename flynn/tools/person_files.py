"""A person's own files under ``data_dir/<namespace>/`` (DESIGN.md section 15): written whole and
atomically (a temporary file renamed over the old one), owner-only, so a crash mid-write leaves
the previous version and nobody else on the machine can read them."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

TASKS_FILE = "TASKS.json"
SCRATCH_FILE = "SCRATCH.md"
REMINDERS_FILE = "REMINDERS.md"


def person_directory(data_dir: Path, namespace: str) -> Path:
    """Where the person whose memory root is ``namespace`` keeps their files (``user``,
    ``users/alice``, or ``sessions/<key>`` for session-scoped memory)."""
    parts = [part for part in namespace.split("/") if part not in ("", ".", "..")]
    return data_dir.joinpath(*parts)


def read_text(path: Path) -> str:
    """The file's text; '' when it does not exist. A file saved by hand in another encoding
    is read with its odd bytes replaced, not refused. ``OSError`` when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""


def write_text(path: Path, text: str) -> None:
    """Replaces the file's content atomically; creates its folder (0700) if needed."""
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


def forget_person_files(folder: Path) -> int:
    """Deletes the person's tasks and scratchpad (what their tools wrote); returns how many
    files. Their persona-like files (USER.md, MEMORY_*.md) are theirs to edit and stay."""
    removed = 0
    for name in (TASKS_FILE, SCRATCH_FILE):
        try:
            (folder / name).unlink()
        except FileNotFoundError:
            continue
        removed += 1
    return removed
