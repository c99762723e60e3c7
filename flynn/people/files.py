"""A person's own files under ``data_dir/<namespace>/``: written whole and
atomically (a temporary file renamed over the old one), owner-only, so a crash mid-write leaves
the previous version and nobody else on the machine can read them."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import structlog

from flynn.attachments import forget_files
from flynn.credentials import redact, redact_json
from flynn.persona import PERSON_FILES, clean_file_text, write_templates

log = structlog.get_logger(__name__)

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
"""What a person's folder starts with (``flynn init`` for the owner; anyone else at their first
message): guidance in comments, which prompts never show. TASKS.json and SCRATCH.md are made by
the tools that write them."""


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
    """Replaces the file's content atomically; creates its folder (0700) if needed. A
    credential in ``text`` is redacted first (in a JSON file, in its strings)."""
    if path.suffix == ".json":
        cleaned, count = redact_json(text)
        text = cleaned + "\n" if count else text
    else:
        text = redact(text)[0]
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
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    return write_templates(folder, PERSON_TEMPLATES)


def forget_person_files(folder: Path) -> int:
    """Deletes what Flynn wrote in the person's folder: tasks and scratchpad (their tools), the
    distilled MEMORY_*.md, and the pictures and files they sent (``files/``); returns how many
    files. USER.md, which they write, stays."""
    written = _unlink(folder, (TASKS_FILE, SCRATCH_FILE)) + forget_distilled(folder)
    return written + forget_files(folder)


FORGOTTEN_MARK = ".forgotten"
"""Touched by every forget: a distillation that read the person's memory before it cannot
write what it made from it (``forgotten_since``)."""


def forget_distilled(folder: Path) -> int:
    """Deletes the distilled MEMORY_*.md files: they repeat what was said and learnt, cannot be
    edited surgically when some of that is forgotten, and the next distillation writes them
    anew from what remains. Marks the forget, so a distillation running meanwhile writes
    nothing. Returns how many files."""
    removed = _unlink(folder, tuple(MEMORY_FILES.values()))
    if folder.is_dir():
        write_text(folder / FORGOTTEN_MARK, f"{time.time_ns()}\n")
    return removed


def forget_mark(folder: Path) -> int:
    """When the person last forgot something (0 when never), to compare with ``forgotten_since``."""
    try:
        return (folder / FORGOTTEN_MARK).stat().st_mtime_ns
    except OSError:
        return 0


def _unlink(folder: Path, names: tuple[str, ...]) -> int:
    removed = 0
    for name in names:
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
    owner.mkdir(mode=0o700, parents=True, exist_ok=True)
    moved: list[str] = []
    kept: list[str] = []
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
